// Page trackers on a server where private targets are NOT allowed (the default), with the real Chromium: literal
// private targets are refused at the API (400 TARGET_NOT_ALLOWED); a host name that resolves to a private address
// is refused at run time by the guard proxy Chromium goes through (failed run, blocked request in the `_debug`
// logs); a missing Chromium executable fails runs with a clear error. One server per file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { isPrivateAddress } from "../../../platform/net/guard";
import { startTestServer, type TestServer, type TestUser } from "../../../tests/harness";

const BASE = "/api/web_scraping/page_trackers";
let srv: TestServer;
let pages: ReturnType<typeof Bun.serve>;
let u: TestUser;
let hits = 0;

beforeAll(async () => {
  pages = Bun.serve({
    hostname: "0.0.0.0",
    port: 0,
    fetch() {
      hits++;
      return new Response("<!doctype html><p>internal page</p>", { headers: { "content-type": "text/html" } });
    },
  });
  srv = await startTestServer();
  u = await srv.createUser();
});
afterAll(async () => {
  await srv.stop();
  pages.stop(true);
});

describe("private targets not allowed", () => {
  test("literal private targets → 400 TARGET_NOT_ALLOWED on create, update and _debug", async () => {
    const ok = (await u.client.post(BASE, { name: "public", target: { url: "https://example.com/" } })).json;
    expect(ok.id).toBeString();
    for (const url of [
      `http://127.0.0.1:${pages.port}/`,
      "http://localhost/",
      "http://169.254.169.254/latest",
      "http://[::1]/",
      "http://10.1.2.3/",
      "http://app.localhost/",
    ]) {
      const created = await u.client.post(BASE, { name: "x", target: { url } });
      expect({ url, status: created.status, code: created.json.code }).toEqual({ url, status: 400, code: "TARGET_NOT_ALLOWED" });
      expect(created.json.message).toStartWith("target.url:");
      const updated = await u.client.put(`${BASE}/${ok.id}`, { target: { url } });
      expect(updated.json.code).toBe("TARGET_NOT_ALLOWED");
      const debugged = await u.client.post(`${BASE}/_debug`, { target: { url } });
      expect(debugged.json.code).toBe("TARGET_NOT_ALLOWED");
    }
    expect((await u.client.get(`${BASE}/${ok.id}`)).json.target.url).toBe("https://example.com/");
    expect(hits).toBe(0);
  });

  test("a host name resolving to a private address is blocked when the page loads", async () => {
    const host = hostname();
    const resolved = await lookup(host).catch(() => undefined);
    if (!resolved || !isPrivateAddress(resolved.address)) {
      console.warn(`skipped: ${host} does not resolve to a private address`);
      return;
    }
    const url = `http://${host}:${pages.port}/`;
    const t = (await u.client.post(BASE, { name: "via-dns", target: { url } })).json;
    expect(t.target.url).toBe(url); // names are only checked when a run resolves them
    expect(await (await u.client.post(`${BASE}/${t.id}/_history`, { refresh: true })).json).toEqual([]);
    const [log] = (await u.client.get(`${BASE}/${t.id}/_logs`)).json;
    expect(log.status).toBe("failure");
    expect(log.error).toBe("URL not allowed (private address)");
    expect(log.phases.find((p: any) => p.phase === "navigate")).toMatchObject({ status: "failure", error: "URL not allowed (private address)" });

    const d = (await u.client.post(`${BASE}/_debug`, { target: { url } })).json;
    expect(d.error).toBe("URL not allowed (private address)");
    expect(d.logs.some((l: any) => l.level === "warn" && l.message.startsWith("Blocked request to") && l.message.includes(host))).toBe(true);
    expect(hits).toBe(0); // the page server never saw a request
  });

  test("a failed document fails the run with the same error whatever the URL's #fragment or user:pass@", async () => {
    // .invalid never resolves: the proxy answers 502 "Failed to connect to upstream: could not resolve host", which
    // must be the run's error — never a revision holding the proxy's text.
    const message = "Failed to connect to upstream: could not resolve host";
    for (const url of ["http://down.example.invalid/", "http://down.example.invalid/#news", "http://user:pw@down.example.invalid/"]) {
      const t = (await u.client.post(BASE, { name: `down-${crypto.randomUUID().slice(0, 8)}`, target: { url } })).json;
      expect(t.target.url).toBe(url);
      const revisions = (await u.client.post(`${BASE}/${t.id}/_history`, { refresh: true })).json;
      expect({ url, revisions }).toEqual({ url, revisions: [] });
      const [log] = (await u.client.get(`${BASE}/${t.id}/_logs`)).json;
      expect({ url, status: log.status, error: log.error }).toEqual({ url, status: "failure", error: message });
      const d = (await u.client.post(`${BASE}/_debug`, { target: { url } })).json;
      expect({ url, error: d.error, result: d.result }).toEqual({ url, error: message, result: undefined });
    }
  });

  test("a missing Chromium executable fails runs with a clear error", async () => {
    // (GET /api/status probes features.chromium once at start; the page service checks before every run.)
    const original = srv.config.chromium.executable;
    srv.config.chromium.executable = "/nonexistent/chromium";
    try {
      const t = (await u.client.post(BASE, { name: "no-browser", target: { url: "https://example.com/" } })).json;
      await u.client.post(`${BASE}/${t.id}/_history`, { refresh: true });
      const [log] = (await u.client.get(`${BASE}/${t.id}/_logs`)).json;
      const message = "Chromium is not available: /nonexistent/chromium not found (install chromium or set [chromium] executable)";
      expect(log).toMatchObject({ status: "failure", error: message });
      expect(log.phases.map((p: any) => [p.phase, p.status])).toEqual([
        ["browser", "failure"],
        ["navigate", "skipped"],
        ["extract", "skipped"],
        ["compare", "skipped"],
        ["persist", "skipped"],
        ["notify", "skipped"],
      ]);
      const d = await u.client.post(`${BASE}/_debug`, { target: { url: "https://example.com/" } });
      expect(d.status).toBe(200);
      expect(d.json).toEqual({ error: message, logs: [], screenshots: [], elapsedMs: 0 });
    } finally {
      srv.config.chromium.executable = original;
    }
  });
});
