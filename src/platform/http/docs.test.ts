import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../tests/harness";
import { API_VERSION, DOCS_ASSETS } from "./docs";

// The resource groups of interface.md's table: each is an API tag.
const INTERFACE_TAGS = [
  "webhooks",
  "certificates",
  "web_scraping",
  "web_security",
  "api_keys",
  "tags",
  "secrets",
  "scripts",
  "settings",
  "user-data",
  "notifications",
  "users",
  "scheduler",
  "search",
  "messages",
  "status",
];

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.stop());

/** Every URL the page refers to: src/href attributes, the Swagger UI `url`, and anything that looks absolute. */
function referencedUrls(html: string): string[] {
  const urls = [...html.matchAll(/\b(?:src|href|action)\s*=\s*["']([^"']*)["']/gi)].map((m) => m[1]!);
  urls.push(...[...html.matchAll(/"url"\s*:\s*"([^"]*)"/g)].map((m) => m[1]!));
  return urls;
}

describe("API docs", () => {
  test("GET /api-docs/openapi.json is an OpenAPI 3.1 document with the interface version and tags", async () => {
    const res = await srv.anon.get("/api-docs/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    const doc = res.json;
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.version).toBe(API_VERSION);
    expect(API_VERSION).toBe("1.0.0-beta.2");
    expect(doc.info.title).toBe("Secbox API");
    const tagNames = doc.tags.map((t: { name: string }) => t.name);
    for (const tag of INTERFACE_TAGS) expect(tagNames).toContain(tag);
    expect(new Set(tagNames).size).toBe(tagNames.length);
  });

  test("the document lists API routes only, not the docs' own routes", async () => {
    const doc = (await srv.anon.get("/api-docs/openapi.json")).json;
    const paths = Object.keys(doc.paths);
    expect(paths).toContain("/api/status");
    expect(doc.paths["/api/status"].get.tags).toEqual(["status"]);
    for (const p of paths) {
      expect(p.startsWith("/api/")).toBe(true);
      expect(p.startsWith("/api-docs")).toBe(false);
    }
  });

  test("request bodies are documented as JSON with their schema", async () => {
    const doc = (await srv.anon.get("/api-docs/openapi.json")).json;
    const body = doc.paths["/api/status"].post.requestBody;
    expect(Object.keys(body.content)).toEqual(["application/json"]);
    expect(body.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/SetStatusAPIParams" });
    expect(doc.components.schemas.SetStatusAPIParams.properties.level.enum).toEqual(["available", "unavailable"]);
    // Every documented body, whatever the feature, names a JSON media type (no empty `content: {}`).
    for (const ops of Object.values<any>(doc.paths))
      for (const op of Object.values<any>(ops)) if (op.requestBody) expect(Object.keys(op.requestBody.content)).toContain("application/json");
  });

  test("GET /api-docs renders Swagger UI from local assets only", async () => {
    const res = await srv.anon.get("/api-docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = res.text;
    expect(html).toContain("SwaggerUIBundle(");
    expect(html).toContain('"url":"/api-docs/openapi.json"');
    expect(html).toContain('"validatorUrl":null');
    // Nothing absolute or protocol-relative anywhere in the page: no request can leave the machine.
    expect(html).not.toMatch(/https?:\/\//i);
    const urls = referencedUrls(html);
    expect(urls.length).toBeGreaterThanOrEqual(3);
    for (const url of urls) {
      expect(url.startsWith("/")).toBe(true);
      expect(url.startsWith("//")).toBe(false);
    }
    for (const asset of Object.keys(DOCS_ASSETS)) expect(urls).toContain(asset);
  });

  test("every URL the page refers to answers 200 with the right content type", async () => {
    const html = (await srv.anon.get("/api-docs")).text;
    const expected: Record<string, string> = { ".js": "text/javascript", ".css": "text/css", ".json": "application/json" };
    for (const url of referencedUrls(html)) {
      const res = await fetch(srv.url + url);
      const body = await res.arrayBuffer();
      expect(res.status).toBe(200);
      const ext = url.slice(url.lastIndexOf("."));
      expect(res.headers.get("content-type")).toContain(expected[ext]!);
      expect(body.byteLength).toBeGreaterThan(0);
    }
    const js = await (await fetch(`${srv.url}/api-docs/assets/swagger-ui-bundle.js`)).text();
    expect(js).toContain("SwaggerUIBundle");
    const css = await (await fetch(`${srv.url}/api-docs/assets/swagger-ui.css`)).text();
    expect(css).toContain(".swagger-ui");
    // The stylesheet pulls nothing from elsewhere (its url()s are data: URIs).
    for (const m of css.matchAll(/url\(\s*["']?([^"')]*)/g)) expect(m[1]!.startsWith("data:")).toBe(true);
  });

  test("the docs need no authentication; invalid credentials are ignored", async () => {
    for (const path of ["/api-docs", "/api-docs/openapi.json", ...Object.keys(DOCS_ASSETS)]) {
      const res = await srv.anon.get(path, { token: "garbage", session: "garbage" });
      expect(res.status).toBe(200);
    }
  });

  test("the page cannot be framed and runs only its own assets and its start script (supplement §28.1)", async () => {
    const res = await fetch(`${srv.url}/api-docs`);
    const html = await res.text();
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    const csp = res.headers.get("content-security-policy") ?? "";
    const directives = Object.fromEntries(csp.split("; ").map((d) => [d.split(" ")[0], d]));
    expect(directives["frame-ancestors"]).toBe("frame-ancestors 'none'");
    expect(directives["default-src"]).toBe("default-src 'none'");
    // Scripts: the Swagger UI bundle's folder (not 'self', which would run /api/webhooks/<handle>/x.js) and the
    // page's one inline script by its hash.
    const inline = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
    expect(inline.length).toBe(1);
    const hash = `'sha256-${new Bun.CryptoHasher("sha256").update(inline[0]!).digest("base64")}'`;
    expect(directives["script-src"]).toBe(`script-src ${srv.url}/api-docs/assets/ ${hash}`);
    expect(directives["style-src"]).toBe(`style-src ${srv.url}/api-docs/assets/ 'unsafe-inline'`);
    expect(directives["connect-src"]).toBe("connect-src 'self'");
    expect(csp).not.toContain("unsafe-eval");
  });

  test("an unknown asset is a 404", async () => {
    const res = await srv.anon.get("/api-docs/assets/nope.js");
    expect(res.status).toBe(404);
  });
});
