// Serving the web UI next to the API (platform/ui/serve.ts), over real HTTP; the UI is built in memory as under
// `bun run start`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gunzipSync, brotliDecompressSync } from "node:zlib";
import { startTestServer, type TestServer } from "../../tests/harness";
import { inlineScriptHashes } from "../http/page-policy";
import { uiAssets } from "./assets";
import { isApiPath } from "./serve";

let srv: TestServer;
let indexHtml = "";
let entryJs = "";
beforeAll(async () => {
  srv = await startTestServer();
  indexHtml = await (await fetch(`${srv.url}/`)).text();
  entryJs = /src="(\/assets\/[^"]+\.js)"/.exec(indexHtml)?.[1] ?? "";
}, 60_000);
afterAll(() => srv.stop());

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(srv.url + path, { headers, redirect: "manual", decompress: false } as RequestInit);

describe("web UI serving", () => {
  test("/ and any app route answer index.html, no-cache, with the hardening headers", async () => {
    for (const path of ["/", "/tags", "/scripts/0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f40", "/recover?token=abc", "/settings/"]) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toContain("text/html");
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      expect(res.headers.get("referrer-policy")).toBe("no-referrer");
      expect(res.headers.get("x-frame-options")).toBe("DENY");
      const csp = res.headers.get("content-security-policy") ?? "";
      for (const d of ["default-src 'self'", "object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'", "connect-src 'self'"])
        expect(csp).toContain(d);
      expect(csp).not.toContain("unsafe-eval");
      expect(/script-src [^;]*unsafe-inline/.test(csp)).toBe(false);
      expect(await res.text()).toBe(indexHtml);
    }
  });

  test("the CSP pins scripts and styles to <origin>/assets/ plus the inline theme script's hash (§28.1)", async () => {
    const csp = (await get("/")).headers.get("content-security-policy")!;
    const hashes = inlineScriptHashes(indexHtml);
    expect(hashes.length).toBe(1);
    const directives = Object.fromEntries(csp.split("; ").map((d) => [d.split(" ")[0], d]));
    // Not 'self': that would also run a path-form responder's /api/webhooks/<handle>/x.js on the UI's origin.
    expect(directives["script-src"]).toBe(`script-src ${srv.url}/assets/ ${hashes[0]}`);
    expect(directives["style-src"]).toBe(`style-src ${srv.url}/assets/ 'unsafe-inline'`);
    // The built page's hash (computed when the UI was built) is the one of the page served.
    expect((await uiAssets()).scriptHashes).toEqual(hashes);
    // The page itself references only our own origin, and its scripts and styles only /assets/.
    const urls = [...indexHtml.matchAll(/\b(?:src|href)="([^"]*)"/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThan(1);
    for (const u of urls) expect(u.startsWith("/assets/")).toBe(true);
  });

  test("the CSP's origin is the request's host, public_url's origin (scheme included) for its own host, never a bad Host", async () => {
    const raw = async (host: string) => {
      const res = await fetch(`${srv.url}/`, { headers: { host } });
      return `${res.status} ${res.headers.get("content-security-policy")}`;
    };
    expect(await raw("secbox.lan:8080")).toContain("script-src http://secbox.lan:8080/assets/ ");
    // server.public_url is http://localhost:7070 here.
    expect(await raw("localhost:7070")).toContain("script-src http://localhost:7070/assets/ ");
    // CSP cannot name an IPv6 literal: such a page falls back to 'self' rather than a source Chromium would drop.
    expect(await raw("[::1]:7070")).toContain("script-src 'self' 'sha256-");
    for (const bad of ["x.test; script-src *", "x.test/assets/ 'unsafe-inline'"]) {
      const answer = await raw(bad);
      expect(answer).not.toContain("x.test");
      if (answer.startsWith("200")) expect(answer).toContain("script-src http://localhost:7070/assets/ ");
    }
  });

  test("index.html revalidates with its ETag (304)", async () => {
    const etag = (await get("/")).headers.get("etag")!;
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await get("/tags", { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
  });

  test("assets are immutable and served brotli or gzip per Accept-Encoding", async () => {
    expect(entryJs).toMatch(/^\/assets\/index-[a-z0-9]+\.js$/);
    const plain = await get(entryJs, { "accept-encoding": "identity" });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(plain.headers.get("content-type")).toContain("javascript");
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("vary")).toBe("Accept-Encoding");
    const raw = new Uint8Array(await plain.arrayBuffer());

    const br = await get(entryJs, { "accept-encoding": "gzip, deflate, br" });
    expect(br.headers.get("content-encoding")).toBe("br");
    const brBytes = new Uint8Array(await br.arrayBuffer());
    expect(brBytes.byteLength).toBeLessThan(raw.byteLength / 2);
    expect(new Uint8Array(brotliDecompressSync(brBytes))).toEqual(raw);

    const gz = await get(entryJs, { "accept-encoding": "gzip, br;q=0" });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(new Uint8Array(gunzipSync(new Uint8Array(await gz.arrayBuffer())))).toEqual(raw);
  });

  test("a missing asset or a file-like path is a 404, not the HTML shell; /favicon.ico is the icon", async () => {
    for (const path of ["/assets/nope-123.js", "/assets/", "/robots.txt", "/wp-login.php"]) {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/json");
    }
    const icon = await get("/favicon.ico", { "accept-encoding": "identity" });
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toContain("image/svg+xml");
    expect(await icon.text()).toContain("<svg");
  });

  test("HEAD answers the headers without a body", async () => {
    const res = await fetch(`${srv.url}/tags`, { method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(await res.text()).toBe("");
  });

  test("/api and /api-docs stay the API's: JSON 404s, docs, and other methods on UI paths are JSON 404s", async () => {
    for (const path of ["/api", "/api/", "/api/nope", "/api/user/nope"]) {
      const res = await get(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ message: "Not found", code: "NOT_FOUND" });
    }
    expect((await get("/api-docs")).headers.get("content-type")).toContain("text/html");
    expect((await get("/api-docs/openapi.json")).headers.get("content-type")).toContain("application/json");
    const post = await fetch(`${srv.url}/tags`, { method: "POST", body: "{}", headers: { "content-type": "application/json" } });
    expect(post.status).toBe(404);
    expect(((await post.json()) as { code: string }).code).toBe("NOT_FOUND");
  });

  test("isApiPath", () => {
    for (const p of ["/api", "/api/", "/api/x", "/api-docs", "/api-docs/openapi.json"]) expect(isApiPath(p)).toBe(true);
    for (const p of ["/", "/apis", "/api-docsx", "/tags", "/assets/a.js"]) expect(isApiPath(p)).toBe(false);
  });
});
