// Scripted responders end to end through real HTTP and the real QuickJS pool that app.ts wires into
// RespondersService (supplement §11.5–§11.8). Skipped on a tree without the sandbox (src/sandbox/pool.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { quickUser } from "../../tests/fixtures/quick-users";

const hasSandbox = existsSync(join(import.meta.dir, "../../sandbox/pool.ts"));

let srv: TestServer;
let u: TestUser;
let slow: TestUser;

const BASE = "/api/webhooks/responders";

beforeAll(async () => {
  if (!hasSandbox) return;
  srv = await startTestServer({
    env: {
      // standard: 1 s scripts and one hit in flight per responder.
      SECBOX_SUBSCRIPTIONS_TIERS_STANDARD_SCRIPT_TIMEOUT_SEC: "1",
      SECBOX_SUBSCRIPTIONS_TIERS_STANDARD_MAX_CONCURRENT_HITS: "1",
    },
  });
  [u, slow] = await Promise.all([quickUser(srv), quickUser(srv, "standard")]);
});
afterAll(async () => {
  if (hasSandbox) await srv.stop();
});

let seq = 0;
async function create(user: TestUser, path: string, script: string, settings: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  const res = await user.client.post(BASE, {
    name: `script-${++seq}`,
    location: { pathType: "=", path },
    ...extra,
    settings: {
      requestsToTrack: 10,
      statusCode: 201,
      headers: [
        ["content-type", "text/plain"],
        ["x-default", "1"],
      ],
      body: "default-body",
      script,
      ...settings,
    },
  });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json;
}

function hit(user: TestUser, path: string, init: RequestInit = {}) {
  return fetch(srv.url + path, { ...init, headers: { host: `${user.handle}.localhost:7070`, ...(init.headers as Record<string, string>) } });
}

const history = async (user: TestUser, id: string) => (await user.client.get(`${BASE}/${id}/_history`)).json as any[];

describe.skipIf(!hasSandbox)("scripted responders (real sandbox)", () => {
  test("app.ts wires the pool and the KV cleanup", () => {
    expect(srv.services.responders.hasScriptRunner).toBe(true);
    expect(srv.services.responders.hasKvCleanup).toBe(true);
  });

  test("context: clientAddress, method, headers, raw path, rawQuery, decoded query, body bytes, secrets", async () => {
    await u.client.post("/api/user/secrets", { name: "API_KEY", value: "k-123" });
    await u.client.post("/api/user/secrets", { name: "OTHER", value: "hidden" });
    const sel = (await u.client.get("/api/user/secrets?q=API_KEY")).json.items[0].id;
    await create(
      u,
      "/ctx",
      `(() => ({ headers: { "content-type": "application/json" }, body: {
          clientAddress: context.clientAddress, method: context.method, ua: context.headers["x-test"], cookie: context.headers.cookie,
          path: context.path, rawQuery: context.rawQuery, query: context.query,
          isBytes: context.body instanceof Uint8Array, text: Sandbox.core.decode(context.body),
          secrets: context.secrets, absent: typeof context.secrets.NOPE } }))()`,
      { secrets: { selected: [sel] } },
      { location: { pathType: "^", path: "/ctx" } },
    );
    const res = await hit(u, "/ctx/a%2Fb?x=1&x=2&s=a+b%21&flag", {
      method: "PATCH",
      headers: { "x-test": "yes", "X-Forwarded-For": "198.51.100.9, 10.0.0.1", cookie: "a=1" },
      body: "héllo",
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({
      clientAddress: "198.51.100.9",
      method: "PATCH",
      ua: "yes",
      cookie: "a=1",
      path: "/ctx/a%2Fb",
      rawQuery: "x=1&x=2&s=a+b%21&flag",
      query: { x: "2", s: "a b!", flag: "" },
      isBytes: true,
      text: "héllo",
      secrets: { API_KEY: "k-123" },
      absent: "undefined",
    });
  });

  test("query keys are plain fields, __proto__ and constructor included", async () => {
    await create(
      u,
      "/qproto",
      `({ headers: { "content-type": "application/json" }, body: { keys: Object.keys(context.query), proto: Object.getOwnPropertyDescriptor(context.query, "__proto__")?.value ?? null, ctor: context.query.constructor } })`,
    );
    const res = await hit(u, "/qproto?__proto__=p&a=1&constructor=c");
    expect(await res.json()).toEqual({ keys: ["__proto__", "a", "constructor"], proto: "p", ctor: "c" });
  });

  test("non-ASCII header values a script returns go out as UTF-8 bytes; the record keeps the text", async () => {
    const r = await create(u, "/utf-hdr", `({ headers: { "x-u": "日本 é", "content-type": "text/plain" }, body: "ok", trackResponse: true })`);
    const res = await hit(u, "/utf-hdr");
    expect(res.status).toBe(201); // the default status
    expect(await res.text()).toBe("ok");
    // fetch shows a header's bytes one char per byte
    expect(Buffer.from(res.headers.get("x-u")!, "latin1").toString("utf8")).toBe("日本 é");
    const [rec] = await history(u, r.id);
    expect(rec.response.headers).toContainEqual(["x-u", "日本 é"]);
  });

  test("path form: the script sees the path without /api/webhooks/<handle>", async () => {
    await create(u, "/pf", "({ body: context.path })", {}, { location: { pathType: "*", path: "/pf" } });
    const res = await fetch(`${srv.url}/api/webhooks/${u.handle}/pf/deep`);
    expect(await res.text()).toBe("/pf/deep");
    expect(res.headers.get("content-security-policy")).toContain("sandbox");
  });

  test("null → defaults; partial results fall back per field; headers replace the default list", async () => {
    await create(u, "/null", "null");
    const n = await hit(u, "/null");
    expect(n.status).toBe(201);
    expect(n.headers.get("x-default")).toBe("1");
    expect(await n.text()).toBe("default-body");
    await create(u, "/partial", "return { statusCode: 202 }");
    const p = await hit(u, "/partial");
    expect(p.status).toBe(202);
    expect(await p.text()).toBe("default-body");
    await create(u, "/hdrs", `({ headers: { "x-new": 7 } })`);
    const h = await hit(u, "/hdrs");
    expect(h.headers.get("x-new")).toBe("7");
    expect(h.headers.get("x-default")).toBeNull();
    expect(h.headers.get("content-type")).toBeNull();
  });

  test("body conversions: byte arrays, Uint8Array, objects, numbers", async () => {
    await create(u, "/bytes", "({ body: [72, 105, 256 + 33] })");
    expect(await (await hit(u, "/bytes")).text()).toBe("Hi!");
    await create(u, "/u8", "({ body: Sandbox.core.encode('ü') })");
    expect(await (await hit(u, "/u8")).text()).toBe("ü");
    await create(u, "/obj", "({ body: { a: [1, true] } })");
    expect(await (await hit(u, "/obj")).text()).toBe('{"a":[1,true]}');
    await create(u, "/num", "({ body: 42 })");
    expect(await (await hit(u, "/num")).text()).toBe("42");
  });

  test("skipRequest, trackResponse, and skipRequest winning over trackResponse", async () => {
    const skip = await create(u, "/skip", "({ skipRequest: true })");
    const track = await create(u, "/track", "({ trackResponse: true, body: 'tracked!' })");
    const both = await create(u, "/both", "({ skipRequest: true, trackResponse: true })");
    await hit(u, "/skip");
    await hit(u, "/track");
    await hit(u, "/both");
    expect(await history(u, skip.id)).toEqual([]);
    expect(await history(u, both.id)).toEqual([]);
    const [rec] = await history(u, track.id);
    expect(rec.response).toEqual({
      statusCode: 201,
      headers: [
        ["content-type", "text/plain"],
        ["x-default", "1"],
      ],
      body: Buffer.from("tracked!").toString("base64"),
      bodySize: 8,
      truncated: false,
    });
  });

  test("failures are plain-text responses captured in history", async () => {
    const cases: [string, string, number, (t: string) => void][] = [
      ["/throw", "throw new Error('kaboom')", 500, (t) => expect(t).toContain("kaboom")],
      ["/syntax", "return {{{", 500, (t) => expect(t).toStartWith("Script failed: ")],
      ["/badret", "return 42", 500, (t) => expect(t).toBe("Script failed: Script must return an object or null")],
      ["/badstatus", "({ statusCode: 100 })", 500, (t) => expect(t).toStartWith("Script failed: ")],
      [
        "/blocked",
        "await Sandbox.core.ops.op_proxy_request({ url: 'http://127.0.0.1:9/' })",
        502,
        (t) => expect(t).toStartWith("URL not allowed (private address)"),
      ],
    ];
    for (const [path, script, status, check] of cases) {
      const r = await create(u, path, script);
      const res = await hit(u, path);
      expect(res.status, path).toBe(status);
      expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      const text = await res.text();
      check(text);
      const [rec] = await history(u, r.id);
      expect(rec.response.statusCode).toBe(status);
      expect(Buffer.from(rec.response.body, "base64").toString()).toBe(text);
    }
  });

  test("a script that runs a worker's native stack out fails alone: other users' scripts waiting on the workers answer", async () => {
    const waiting = await Promise.all(
      [1, 2, 3, 4].map((i) => create(u, `/nap-${i}`, `await new Promise((r) => setTimeout(r, 700)); return { body: 'awake ${i}' }`)),
    );
    const deep = await create(slow, "/deep", "eval('('.repeat(100000) + '1' + ')'.repeat(100000))");
    const naps = waiting.map((_, i) => hit(u, `/nap-${i + 1}`));
    await Bun.sleep(200); // parked on the workers
    const res = await hit(slow, "/deep");
    expect(res.status).toBe(500);
    expect(await res.text()).toBe("Script failed: InternalError: stack overflow");
    const answers = await Promise.all(
      naps.map(async (p) => {
        const r = await p;
        return [r.status, await r.text()];
      }),
    );
    expect(answers).toEqual([1, 2, 3, 4].map((i) => [201, `awake ${i}`]));
    expect((await history(slow, deep.id))[0].response.statusCode).toBe(500);
    // and scripts keep running
    const again = await hit(u, "/nap-1");
    expect(await again.text()).toBe("awake 1");
  });

  test("script time limit → 504 Script timed out", async () => {
    const r = await create(slow, "/forever", "while (true) {}");
    const res = await hit(slow, "/forever");
    expect(res.status).toBe(504);
    expect(await res.text()).toBe("Script timed out");
    expect((await history(slow, r.id))[0].response.statusCode).toBe(504);
  });

  test("a slow script holds the concurrency slot → the next hit gets 429", async () => {
    await create(slow, "/sleepy", "await new Promise((r) => setTimeout(r, 600)); return { body: 'awake' }");
    const first = hit(slow, "/sleepy");
    await Bun.sleep(150);
    const second = await hit(slow, "/sleepy");
    expect(second.status).toBe(429);
    expect(second.headers.get("retry-after")).toBe("1");
    expect(await (await first).text()).toBe("awake");
  });

  test("Secbox.kv is scoped to the responder", async () => {
    const counter = "const n = Number((await Secbox.kv.get('n')) ?? 0) + 1; await Secbox.kv.set('n', String(n)); return { body: String(n) }";
    await create(u, "/kv-a", counter);
    await create(u, "/kv-b", counter);
    expect(await (await hit(u, "/kv-a")).text()).toBe("1");
    expect(await (await hit(u, "/kv-a")).text()).toBe("2");
    expect(await (await hit(u, "/kv-b")).text()).toBe("1");
  });

  test("deleting a responder deletes its KV data; _clear keeps it", async () => {
    expect(srv.services.responders.hasKvCleanup).toBe(true);
    const r = await create(u, "/kv-del", "await Secbox.kv.set('k', 'v'); return { body: (await Secbox.kv.get('k')) ?? 'none' }");
    expect(await (await hit(u, "/kv-del")).text()).toBe("v");
    const kvRows = async () => (await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM kv_entries WHERE owner_id = ?", [r.id]))!.n;
    expect(await kvRows()).toBe(1);
    expect((await u.client.post(`${BASE}/${r.id}/_clear`)).status).toBe(204);
    expect(await kvRows()).toBe(1);
    expect((await u.client.delete(`${BASE}/${r.id}`)).status).toBe(204);
    expect(await kvRows()).toBe(0);
  });

  test("removing the user deletes the KV data of all their responders (§4.2)", async () => {
    const gone = await quickUser(srv);
    const kvOf = async (id: string) => (await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM kv_entries WHERE owner_id = ?", [id]))!.n;
    const script = "await Secbox.kv.set('k', 'private'); return { body: 'ok' }";
    const [r1, r2] = [await create(gone, "/kv-u1", script), await create(gone, "/kv-u2", script)];
    const kept = await create(u, "/kv-other", script);
    for (const [user, path] of [
      [gone, "/kv-u1"],
      [gone, "/kv-u2"],
      [u, "/kv-other"],
    ] as const)
      expect(await (await hit(user, path)).text()).toBe("ok");
    expect([await kvOf(r1.id), await kvOf(r2.id), await kvOf(kept.id)]).toEqual([1, 1, 1]);
    expect(await srv.services.users.removeUser(gone.id)).toBe(true);
    expect([await kvOf(r1.id), await kvOf(r2.id), await kvOf(kept.id)]).toEqual([0, 0, 1]);
  });
});
