// Capture through real HTTP (supplement §11.4 steps 7–8, §11.5 step 5, §11.10–§11.12, §18.2): tracked
// records, rolling eviction, trimming, truncation, `_clear`, `_stats`, HAR, the concurrency limit, the body
// cap, batching (respond first, write later, flush on stop) and hit-summary emails through a real SMTP sink.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { startSmtpSink, type SmtpSink } from "../../tests/smtp-sink";
import { quickUser } from "../../tests/fixtures/quick-users";

let nowMs = 1_767_225_600_000;
const clock = { now: () => nowMs };
const tick = (sec: number) => (nowMs += sec * 1000);

let smtp: SmtpSink;
let srv: TestServer;
let port: number;

const BASE = "/api/webhooks/responders";
const MiB = 1024 * 1024;

beforeAll(async () => {
  smtp = await startSmtpSink();
  srv = await startTestServer({
    clock,
    env: {
      SECBOX_SMTP_HOST: "127.0.0.1",
      SECBOX_SMTP_PORT: String(smtp.port),
      // standard: one hit in flight per responder; professional: tracked bodies cut at 16 bytes.
      SECBOX_SUBSCRIPTIONS_TIERS_STANDARD_MAX_CONCURRENT_HITS: "1",
      SECBOX_SUBSCRIPTIONS_TIERS_PROFESSIONAL_MAX_TRACKED_BODY_BYTES: "16",
    },
  });
  port = Number(new URL(srv.url).port);
});
afterAll(async () => {
  await srv.stop();
  await smtp.close();
});

let seq = 0;
async function create(user: TestUser, fields: Record<string, unknown>) {
  const res = await user.client.post(BASE, { name: `cap-${++seq}`, ...fields });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json;
}

function hit(user: TestUser, path: string, init: RequestInit & { prefix?: string } = {}) {
  const host = `${init.prefix ? `${init.prefix}-` : ""}${user.handle}.localhost:7070`;
  return fetch(srv.url + path, { ...init, headers: { host, ...(init.headers as Record<string, string>) } });
}

const history = async (user: TestUser, id: string) => {
  const res = await user.client.get(`${BASE}/${id}/_history`);
  expect(res.status).toBe(200);
  return res.json as any[];
};

const rowCount = async (id: string) =>
  (await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM responder_requests WHERE responder_id = ?", [id]))!.n;

/** A raw HTTP/1.1 connection we can write to in steps. */
async function openSocket() {
  let text = "";
  let closedResolve!: () => void;
  const closed = new Promise<void>((r) => (closedResolve = r));
  const sock = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, d) {
        text += Buffer.from(d).toString("latin1");
      },
      close: () => closedResolve(),
      error: () => closedResolve(),
    },
  });
  return {
    write: (s: string | Uint8Array) => sock.write(s),
    end: () => sock.end(),
    closed,
    get text() {
      return text;
    },
  };
}

async function raw(request: string): Promise<string> {
  const s = await openSocket();
  s.write(Buffer.from(request, "latin1")); // one byte per char: lets tests send raw non-ASCII bytes
  await Promise.race([s.closed, Bun.sleep(2000)]);
  s.end();
  return s.text;
}

const b64 = (s: string | Uint8Array) => Buffer.from(s).toString("base64");

describe("tracked request records (§11.10)", () => {
  let u: TestUser;
  let r: any;
  beforeAll(async () => {
    u = await quickUser(srv);
    r = await create(u, {
      location: { pathType: "*", path: "/orders" },
      settings: { requestsToTrack: 10, statusCode: 201, headers: [["content-type", "application/json"]], body: '{"ok":true}' },
    });
  });

  test("method, raw path, rawQuery, sorted lower-case headers, base64 body, bodySize, client address, status sent; no response for defaults", async () => {
    const res = await hit(u, "/orders/7?debug=1&x=a+b", {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Custom": "yes" },
      body: '{"qty":2}',
    });
    expect(res.status).toBe(201);
    const [rec] = await history(u, r.id);
    expect(Object.keys(rec)).toEqual([
      "id",
      "createdAt",
      "durationMs",
      "clientAddress",
      "method",
      "path",
      "rawQuery",
      "headers",
      "body",
      "bodySize",
      "statusCode",
    ]);
    expect(rec).toMatchObject({
      createdAt: Math.floor(nowMs / 1000),
      clientAddress: "127.0.0.1",
      method: "POST",
      path: "/orders/7",
      rawQuery: "debug=1&x=a+b",
      body: b64('{"qty":2}'),
      bodySize: 9,
      statusCode: 201,
    });
    expect(Number.isInteger(rec.durationMs) && rec.durationMs >= 0).toBe(true);
    const names = rec.headers.map(([n]: [string, string]) => n);
    expect(names).toEqual([...names].sort());
    expect(rec.headers).toContainEqual(["content-type", "application/json"]);
    expect(rec.headers).toContainEqual(["x-custom", "yes"]);
    expect(rec.headers).toContainEqual(["host", `${u.handle}.localhost:7070`]);
    expect(rec.response).toBeUndefined();
  });

  test("repeated headers joined with ', ' (cookie with '; '); UTF-8 header values; percent-encoding kept in the path", async () => {
    const text = await raw(
      `GET /orders/a%2Fb/%7E?q=%20 HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nZeta: z\r\nX-Dup: 1\r\nCookie: a=1\r\nX-Dup: 2\r\nCookie: b=2\r\nAlpha: a\r\nX-Utf: caf\u00c3\u00a9 \u00ff\r\nConnection: close\r\n\r\n`,
    );
    expect(text.startsWith("HTTP/1.1 201")).toBe(true);
    const [rec] = await history(u, r.id);
    expect(rec.path).toBe("/orders/a%2Fb/%7E");
    expect(rec.rawQuery).toBe("q=%20");
    expect(rec.headers).toEqual([
      ["alpha", "a"],
      ["connection", "close"],
      ["cookie", "a=1; b=2"],
      ["host", `${u.handle}.localhost`],
      ["x-dup", "1, 2"],
      ["x-utf", "café \ufffd"],
      ["zeta", "z"],
    ]);
    expect(rec.body).toBeUndefined();
    expect(rec.bodySize).toBe(0);
  });

  test("clientAddress: X-Real-IP, else the first X-Forwarded-For entry, else the socket; proxy headers kept", async () => {
    await hit(u, "/orders", { headers: { "X-Forwarded-For": "198.51.100.1, 10.0.0.1", "X-Real-IP": "203.0.113.7" } });
    await hit(u, "/orders", { headers: { "X-Forwarded-For": " 198.51.100.1 , 10.0.0.1", "X-Forwarded-Proto": "https" } });
    const [fwd, real] = await history(u, r.id);
    expect(real.clientAddress).toBe("203.0.113.7");
    expect(real.headers).toContainEqual(["x-real-ip", "203.0.113.7"]);
    expect(fwd.clientAddress).toBe("198.51.100.1");
    expect(fwd.headers).toContainEqual(["x-forwarded-proto", "https"]);
    expect(fwd.headers).toContainEqual(["x-forwarded-for", "198.51.100.1 , 10.0.0.1"]);
  });

  test("clientAddress is IP text without a port; a proxy header that holds no IP address is passed over", async () => {
    await hit(u, "/orders", { headers: { "X-Real-IP": "203.0.113.9:5678" } });
    await hit(u, "/orders", { headers: { "X-Real-IP": "<script>", "X-Forwarded-For": "[2001:db8::1]:443, 10.0.0.1" } });
    await hit(u, "/orders", { headers: { "X-Real-IP": "unknown", "X-Forwarded-For": "not-an-ip" } });
    const [socket, v6, withPort] = await history(u, r.id);
    expect(withPort.clientAddress).toBe("203.0.113.9");
    expect(v6.clientAddress).toBe("2001:db8::1");
    expect(v6.headers).toContainEqual(["x-real-ip", "<script>"]); // the header itself is kept as received
    expect(socket.clientAddress).toBe("127.0.0.1");
  });

  test("createdAt is the request's arrival, not the moment its response was ready", async () => {
    const arrived = Math.floor(nowMs / 1000);
    const s = await openSocket();
    s.write(`POST /orders/slow HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nContent-Length: 4\r\nConnection: close\r\n\r\nab`);
    await Bun.sleep(100);
    tick(100); // the body's second half arrives "100 s later"
    s.write("cd");
    await Promise.race([s.closed, Bun.sleep(2000)]);
    expect(s.text.startsWith("HTTP/1.1 201")).toBe(true);
    const [rec] = await history(u, r.id);
    expect(rec.path).toBe("/orders/slow");
    expect(rec.bodySize).toBe(4);
    expect(rec.createdAt).toBe(arrived);
  });

  test("requestsToTrack 0 records nothing; rejected requests (404) are not tracked", async () => {
    const off = await create(u, { location: { pathType: "=", path: "/untracked" } });
    await hit(u, "/untracked");
    expect(await history(u, off.id)).toEqual([]);
    const before = (await history(u, r.id)).length;
    await hit(u, "/nomatch");
    expect((await history(u, r.id)).length).toBe(before);
  });
});

describe("rolling history, trimming, _clear, _stats, lastRequestedAt", () => {
  test("only the newest requestsToTrack records are kept, across batches", async () => {
    const u = await quickUser(srv);
    const r = await create(u, { location: { pathType: "^", path: "/e" }, settings: { requestsToTrack: 3 } });
    await hit(u, "/e1");
    await srv.services.responders.flushCaptures();
    await hit(u, "/e2");
    await Promise.all([hit(u, "/e3").then(() => hit(u, "/e4")), Bun.sleep(1)]);
    await hit(u, "/e5");
    expect((await history(u, r.id)).map((x) => x.path)).toEqual(["/e5", "/e4", "/e3"]);
    expect(await rowCount(r.id)).toBe(3);
    // Many in one batch: still 3.
    await Promise.all(Array.from({ length: 20 }, (_, i) => hit(u, `/e-batch-${i}`)));
    expect(await history(u, r.id)).toHaveLength(3);
    expect(await rowCount(r.id)).toBe(3);
  });

  test("lowering requestsToTrack trims the oldest at once; 0 deletes them; history survives other updates", async () => {
    const u = await quickUser(srv);
    const r = await create(u, { location: { pathType: "^", path: "/t" }, settings: { requestsToTrack: 5 } });
    for (let i = 1; i <= 5; i++) await hit(u, `/t${i}`);
    await u.client.put(`${BASE}/${r.id}`, { name: "renamed-keeps-history" });
    expect(await history(u, r.id)).toHaveLength(5);
    await u.client.put(`${BASE}/${r.id}`, { settings: { requestsToTrack: 2 } });
    expect((await history(u, r.id)).map((x) => x.path)).toEqual(["/t5", "/t4"]);
    await u.client.put(`${BASE}/${r.id}`, { settings: { requestsToTrack: 0 } });
    expect(await history(u, r.id)).toEqual([]);
    expect(await rowCount(r.id)).toBe(0);
  });

  test("a hit still in progress when requestsToTrack is raised is kept under the new depth (nothing trimmed by the old one)", async () => {
    const u = await quickUser(srv);
    const r = await create(u, { location: { pathType: "^", path: "/d" }, settings: { requestsToTrack: 3 } });
    for (let i = 1; i <= 3; i++) await hit(u, `/d${i}`);
    const s = await openSocket();
    s.write(`POST /d-slow HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nContent-Length: 2\r\nConnection: close\r\n\r\na`);
    await Bun.sleep(50);
    expect((await u.client.put(`${BASE}/${r.id}`, { settings: { requestsToTrack: 10 } })).status).toBe(200);
    for (let i = 4; i <= 8; i++) await hit(u, `/d${i}`);
    expect(await history(u, r.id)).toHaveLength(8);
    s.write("b");
    await Promise.race([s.closed, Bun.sleep(2000)]);
    expect(s.text.startsWith("HTTP/1.1 200")).toBe(true);
    const paths = (await history(u, r.id)).map((x) => x.path);
    expect(paths).toEqual(["/d-slow", "/d8", "/d7", "/d6", "/d5", "/d4", "/d3", "/d2", "/d1"]);
  });

  test("_clear → 204 and an empty history; _stats counts stored records, name order, lastRequestedAt omitted when none", async () => {
    const u = await quickUser(srv);
    const zed = await create(u, { name: "zed", location: { pathType: "=", path: "/zed" }, settings: { requestsToTrack: 5 } });
    const alpha = await create(u, { name: "Alpha", location: { pathType: "=", path: "/alpha" }, settings: { requestsToTrack: 5 } });
    const mid = await create(u, { name: "mid", location: { pathType: "=", path: "/mid" }, settings: { requestsToTrack: 5 } });
    await hit(u, "/zed");
    tick(5);
    await hit(u, "/zed");
    await hit(u, "/alpha");
    const stats = await u.client.get(`${BASE}/_stats`);
    expect(stats.status).toBe(200);
    const t = Math.floor(nowMs / 1000);
    expect(stats.json).toEqual([
      { responderId: alpha.id, requestCount: 1, lastRequestedAt: t },
      { responderId: mid.id, requestCount: 0 },
      { responderId: zed.id, requestCount: 2, lastRequestedAt: t },
    ]);
    const cleared = await u.client.post(`${BASE}/${zed.id}/_clear`);
    expect(cleared.status).toBe(204);
    expect(await history(u, zed.id)).toEqual([]);
    expect((await u.client.get(`${BASE}/_stats`)).json[2]).toEqual({ responderId: zed.id, requestCount: 0 });
    expect(await history(u, alpha.id)).toHaveLength(1);
  });

  test("sort=lastRequestedAt orders by the newest record (none = 0)", async () => {
    const u = await quickUser(srv);
    const r1 = await create(u, { name: "r1", location: { pathType: "=", path: "/r1" }, settings: { requestsToTrack: 5 } });
    const r2 = await create(u, { name: "r2", location: { pathType: "=", path: "/r2" }, settings: { requestsToTrack: 5 } });
    const r3 = await create(u, { name: "r3", location: { pathType: "=", path: "/r3" }, settings: { requestsToTrack: 5 } });
    await hit(u, "/r2");
    tick(10);
    await hit(u, "/r1");
    const asc = await u.client.get(`${BASE}?sort=lastRequestedAt`);
    expect(asc.json.items.map((x: any) => x.id)).toEqual([r3.id, r2.id, r1.id]);
    const desc = await u.client.get(`${BASE}?sort=lastRequestedAt&order=desc`);
    expect(desc.json.items.map((x: any) => x.id)).toEqual([r1.id, r2.id, r3.id]);
  });

  test("deleting a responder deletes its history", async () => {
    const u = await quickUser(srv);
    const r = await create(u, { location: { pathType: "=", path: "/gone" }, settings: { requestsToTrack: 5 } });
    await hit(u, "/gone");
    await srv.services.responders.flushCaptures();
    expect(await rowCount(r.id)).toBe(1);
    expect((await u.client.delete(`${BASE}/${r.id}`)).status).toBe(204);
    expect(await rowCount(r.id)).toBe(0);
    expect((await u.client.get(`${BASE}/${r.id}/_history`)).status).toBe(404);
  });

  test("another user's DELETE of your responder (404) leaves your records not yet written", async () => {
    const [owner, other] = await Promise.all([quickUser(srv), quickUser(srv)]);
    const r = await create(owner, { location: { pathType: "=", path: "/kept" }, settings: { requestsToTrack: 10 } });
    for (let i = 0; i < 3; i++) expect((await hit(owner, `/kept?i=${i}`)).status).toBe(200);
    // within the capture delay: the records are still pending
    expect((await other.client.delete(`${BASE}/${r.id}`)).status).toBe(404);
    expect((await history(owner, r.id)).map((rec) => rec.rawQuery).sort()).toEqual(["i=0", "i=1", "i=2"]);
  });

  test("hits on another user's handle never reach your history", async () => {
    const [x, y] = await Promise.all([quickUser(srv), quickUser(srv)]);
    const rx = await create(x, { location: { pathType: "=", path: "/iso" }, settings: { requestsToTrack: 5 } });
    const ry = await create(y, { location: { pathType: "=", path: "/iso" }, settings: { requestsToTrack: 5 } });
    await hit(y, "/iso");
    await hit(y, "/iso");
    await hit(x, "/iso");
    expect(await history(x, rx.id)).toHaveLength(1);
    expect(await history(y, ry.id)).toHaveLength(2);
    expect((await x.client.get(`${BASE}/${ry.id}/_history`)).status).toBe(404);
  });
});

describe("truncation and failure capture", () => {
  test("request and failure-response bodies are stored up to max_tracked_body_bytes; the client gets everything", async () => {
    const pro = await quickUser(srv, "professional"); // tier override: 16 bytes
    const r = await create(pro, {
      location: { pathType: "=", path: "/cut" },
      settings: { requestsToTrack: 5, script: 'throw new Error("boom-" + "x".repeat(40))' },
    });
    const body = "0123456789abcdefGHIJKLMNOP"; // 26 bytes
    const res = await hit(pro, "/cut", { method: "PUT", body });
    // Scripts fail here either way (the runtime throws, or no runtime is wired): a 500 plain-text failure.
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const text = await res.text();
    expect(text).toStartWith("Script failed: ");
    const [rec] = await history(pro, r.id);
    expect(rec.bodySize).toBe(26);
    expect(Buffer.from(rec.body, "base64").toString()).toBe("0123456789abcdef");
    expect(rec.response.statusCode).toBe(500);
    expect(rec.response.headers).toEqual([["content-type", "text/plain; charset=utf-8"]]);
    expect(rec.response.bodySize).toBe(Buffer.byteLength(text));
    expect(rec.response.truncated).toBe(true);
    expect(Buffer.from(rec.response.body, "base64").toString()).toBe(text.slice(0, 16));
  });

  test("a secret that puts a line break into a header value: a recorded 500 failure, nothing injected; other responders unaffected", async () => {
    const u = await quickUser(srv);
    expect((await u.client.post("/api/user/secrets", { name: "MULTI", value: "a\r\nX-Injected: 1" })).status).toBe(201);
    const bad = await create(u, {
      location: { pathType: "=", path: "/inj" },
      settings: { requestsToTrack: 2, secrets: "all", headers: [["x-t", "${secrets.MULTI}"]], body: "hi" },
    });
    await create(u, { location: { pathType: "=", path: "/fine" }, settings: { body: "fine" } });
    const res = await hit(u, "/inj");
    expect(res.status).toBe(500);
    expect(res.headers.get("x-injected")).toBeNull();
    expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await res.text()).toBe("Response header x-t: a substituted secret put a line break or NUL in its value");
    expect(await (await hit(u, "/fine")).text()).toBe("fine");
    const [rec] = await history(u, bad.id);
    expect(rec.response.statusCode).toBe(500);
    expect(Buffer.from(rec.response.body, "base64").toString()).not.toContain("X-Injected");
  });

  test("a 10 MiB body is accepted; the stored copy is cut at the default 1 MiB", async () => {
    const u = await quickUser(srv);
    const r = await create(u, { location: { pathType: "=", path: "/ten" }, settings: { requestsToTrack: 2 } });
    const res = await hit(u, "/ten", { method: "POST", body: new Uint8Array(10 * MiB).fill(97) });
    expect(res.status).toBe(200);
    const [rec] = await history(u, r.id);
    expect(rec.bodySize).toBe(10 * MiB);
    expect(Buffer.from(rec.body, "base64").byteLength).toBe(MiB);
  });
});

describe("limits (§11.4 steps 7–8)", () => {
  test("body over 10 MiB → 413 text/plain, on Content-Length and while reading a chunked body; not tracked", async () => {
    const u = await quickUser(srv);
    const r = await create(u, { location: { pathType: "=", path: "/cap" }, settings: { requestsToTrack: 5 } });
    const declared = await raw(`POST /cap HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nContent-Length: ${10 * MiB + 1}\r\nConnection: close\r\n\r\n`);
    expect(declared.startsWith("HTTP/1.1 413")).toBe(true);
    expect(declared.toLowerCase()).toContain("content-type: text/plain; charset=utf-8");

    const chunk = new Uint8Array(MiB).fill(98);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent++ < 11) c.enqueue(chunk);
        else c.close();
      },
    });
    const res = await hit(u, "/cap", { method: "POST", body: stream, duplex: "half" } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.text()).toBe("Request body too large");
    expect(await history(u, r.id)).toEqual([]);
  });

  test("more than max_concurrent_hits in flight → 429 with Retry-After: 1; not tracked", async () => {
    const std = await quickUser(srv, "standard"); // tier override: 1 in flight
    const r = await create(std, {
      location: { pathType: "=", path: "/slow" },
      settings: { requestsToTrack: 10, body: "done", headers: [["content-type", "text/plain"]] },
    });
    // First request: headers and half of the body; the engine holds it in flight while waiting for the rest.
    const first = await openSocket();
    first.write(`POST /slow HTTP/1.1\r\nHost: ${std.handle}.localhost\r\nContent-Length: 10\r\nConnection: close\r\n\r\n12345`);
    let limited: Response | undefined;
    for (let i = 0; i < 80 && !limited; i++) {
      const res = await hit(std, "/slow");
      if (res.status === 429) limited = res;
      else await Bun.sleep(25);
    }
    expect(limited).toBeDefined();
    expect(limited!.headers.get("retry-after")).toBe("1");
    expect(limited!.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await limited!.text()).toBe("Too many concurrent requests");
    first.write("67890");
    await Promise.race([first.closed, Bun.sleep(2000)]);
    expect(first.text.startsWith("HTTP/1.1 200")).toBe(true);
    expect(first.text.endsWith("done")).toBe(true);
    // The slot is free again.
    expect((await hit(std, "/slow")).status).toBe(200);
    const recs = await history(std, r.id);
    expect(recs.some((x) => x.bodySize === 10 && Buffer.from(x.body, "base64").toString() === "1234567890")).toBe(true);
    // Other responders of the same user are not affected by another one's limit.
    expect(recs.every((x) => x.response === undefined)).toBe(true);
  });
});

describe("HAR export (§11.12)", () => {
  /** Required members of HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/). */
  function checkHarShape(har: any) {
    expect(har.log.version).toBe("1.2");
    expect(har.log.creator).toEqual({ name: "Secbox", version: expect.any(String) });
    expect(Array.isArray(har.log.entries)).toBe(true);
    for (const e of har.log.entries) {
      expect(new Date(e.startedDateTime).toISOString()).toBe(e.startedDateTime);
      expect(typeof e.time).toBe("number");
      for (const k of ["method", "url", "httpVersion", "cookies", "headers", "queryString", "headersSize", "bodySize"])
        expect(e.request).toHaveProperty(k);
      for (const k of ["status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL", "headersSize", "bodySize"])
        expect(e.response).toHaveProperty(k);
      expect(e.response.content).toHaveProperty("size");
      expect(e.response.content).toHaveProperty("mimeType");
      expect(e.cache).toEqual({});
      expect(e.timings).toEqual({ send: 0, wait: e.time, receive: 0 });
      for (const h of [...e.request.headers, ...e.response.headers]) expect(Object.keys(h).sort()).toEqual(["name", "value"]);
      new URL(e.request.url);
    }
  }

  test("entries oldest first, URL from the responder base, text vs base64 bodies, not-tracked and failure responses, attachment name", async () => {
    const u = await quickUser(srv);
    const r = await create(u, {
      name: "Orders mock é",
      location: { pathType: "*", path: "/har", subdomainPrefix: "shop" },
      settings: { requestsToTrack: 10 },
    });
    const failing = await create(u, {
      name: "fails",
      location: { pathType: "=", path: "/fail" },
      settings: { requestsToTrack: 10, script: "throw new Error('nope')" },
    });

    await hit(u, "/har/orders/7?debug=1&name=a+b%21", {
      prefix: "shop",
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"qty":2}',
    });
    tick(1);
    await hit(u, "/har/bin", {
      prefix: "shop",
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: new Uint8Array([0, 1, 2, 255]),
    });
    tick(1);
    await hit(u, "/har/bad-utf8", {
      prefix: "shop",
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: new Uint8Array([0x61, 0xff, 0x62]),
    });
    tick(1);
    await hit(u, "/har", { prefix: "shop" });

    const res = await u.client.get(`${BASE}/${r.id}/_har`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    expect(res.headers.get("content-disposition")).toBe(
      `attachment; filename="Orders_mock__-history.har"; filename*=UTF-8''Orders%20mock%20%C3%A9-history.har`,
    );
    const har = JSON.parse(res.text);
    checkHarShape(har);
    const e = har.log.entries;
    expect(e.map((x: any) => x.request.url)).toEqual([
      `http://shop-${u.handle}.localhost:7070/har/orders/7?debug=1&name=a+b%21`,
      `http://shop-${u.handle}.localhost:7070/har/bin`,
      `http://shop-${u.handle}.localhost:7070/har/bad-utf8`,
      `http://shop-${u.handle}.localhost:7070/har`,
    ]);
    expect(e[0].startedDateTime < e[1].startedDateTime).toBe(true);
    expect(e[0].request.method).toBe("POST");
    expect(e[0].request.queryString).toEqual([
      { name: "debug", value: "1" },
      { name: "name", value: "a b!" },
    ]);
    expect(e[0].request.postData).toEqual({ mimeType: "application/json", text: '{"qty":2}' });
    expect(e[0].request.bodySize).toBe(9);
    expect(e[1].request.postData).toEqual({ mimeType: "application/octet-stream", text: b64(new Uint8Array([0, 1, 2, 255])), encoding: "base64" });
    expect(e[2].request.postData).toEqual({ mimeType: "text/plain", text: b64(new Uint8Array([0x61, 0xff, 0x62])), encoding: "base64" });
    expect(e[3].request.postData).toBeUndefined();
    expect(e[3].request.method).toBe("GET");
    for (const x of e) expect(x.response).toMatchObject({ status: 0, statusText: "Not tracked", content: { size: 0, mimeType: "" } });

    await hit(u, "/fail", { headers: { "x-test": "1" } });
    const fh = JSON.parse((await u.client.get(`${BASE}/${failing.id}/_har`)).text);
    checkHarShape(fh);
    const [fe] = fh.log.entries;
    expect(fe.request.url).toBe(`http://${u.handle}.localhost:7070/fail`);
    expect(fe.response.status).toBe(500);
    expect(fe.response.headers).toEqual([{ name: "content-type", value: "text/plain; charset=utf-8" }]);
    expect(fe.response.content.mimeType).toBe("text/plain; charset=utf-8");
    expect(fe.response.content.text).toStartWith("Script failed: ");
    expect(fe.response.content.encoding).toBeUndefined();
    expect(fe.response.content.size).toBe(Buffer.byteLength(fe.response.content.text));
  });

  test("an empty history is a valid HAR with no entries", async () => {
    const u = await quickUser(srv);
    const r = await create(u, { name: "empty", location: { pathType: "=", path: "/e" } });
    const har = JSON.parse((await u.client.get(`${BASE}/${r.id}/_har`)).text);
    checkHarShape(har);
    expect(har.log.entries).toEqual([]);
  });
});

describe("capture batching: respond first, write in batches, flush on stop", () => {
  test("a hit is answered while the database is locked for writing; the record appears after the batch write", async () => {
    const u = await quickUser(srv);
    const r = await create(u, {
      location: { pathType: "=", path: "/fast" },
      settings: { requestsToTrack: 5, body: "ok", headers: [["content-type", "text/plain"]] },
    });
    await hit(u, "/fast"); // warm the handle cache
    await srv.services.responders.flushCaptures();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // SQLite: a transaction holds the single writer lock; PostgreSQL: the table lock a write needs.
    let held!: () => void;
    const lockHeld = new Promise<void>((resolve) => (held = resolve));
    const locked = srv.rt.db.tx(async (tx) => {
      if (tx.dialect === "postgres") await tx.exec("LOCK TABLE responder_requests IN EXCLUSIVE MODE");
      held();
      await gate;
    });
    await lockHeld; // on PostgreSQL the lock is taken over the network: hit only once it is held
    try {
      // answered while the lock is still held (it is released only below): the capture's write does not hold it
      const res = await hit(u, "/fast");
      expect(res.status).toBe(200);
      expect(await res.text()).toBe("ok");
      await Bun.sleep(150); // the batch timer (100 ms) fired; its write waits for the lock
      expect(await rowCount(r.id)).toBe(1);
    } finally {
      release();
      await locked;
    }
    await srv.services.responders.flushCaptures();
    expect(await rowCount(r.id)).toBe(2);
  });

  test("many hits are written in few transactions", async () => {
    const u = await quickUser(srv);
    const r = await create(u, { location: { pathType: "^", path: "/" }, settings: { requestsToTrack: 30 } });
    await srv.services.responders.flushCaptures();
    const before = (srv.services.responders as any).capture.batchesWritten as number;
    await Promise.all(Array.from({ length: 60 }, (_, i) => hit(u, `/many-${i}`)));
    await srv.services.responders.flushCaptures();
    const batches = (srv.services.responders as any).capture.batchesWritten - before;
    expect(batches).toBeGreaterThanOrEqual(1);
    expect(batches).toBeLessThan(30);
    expect(await rowCount(r.id)).toBe(30);
  });

  test("records pending at shutdown are flushed by stop() and survive a restart", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "secbox-responders-stop-"));
    try {
      const one = await startTestServer({ dataDir });
      const u = await quickUser(one);
      const r = await create(u, { location: { pathType: "=", path: "/pending" }, settings: { requestsToTrack: 5 } });
      // In-process dispatch: the answer is ready while the record is still only in the batch.
      const res = await one.services.responders.dispatch(
        new Request("http://x/pending", {
          method: "POST",
          headers: { host: `${u.handle}.localhost`, "content-type": "text/plain" },
          body: "keep me",
        }),
        null,
      );
      expect(res!.status).toBe(200);
      expect(one.services.responders.pendingCaptures).toBe(1);
      await one.stop();

      const two = await startTestServer({ dataDir });
      try {
        const [rec] = await new (u.client.constructor as any)(two.url, { session: u.session })
          .get(`${BASE}/${r.id}/_history`)
          .then((x: any) => x.json);
        expect(rec.path).toBe("/pending");
        expect(Buffer.from(rec.body, "base64").toString()).toBe("keep me");
        expect(rec.clientAddress).toBeUndefined();
      } finally {
        await two.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("a scripted hit still running at shutdown finishes and is recorded; one past the grace period ends as a failure", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "secbox-responders-stop-"));
    try {
      const one = await startTestServer({ dataDir });
      const u = await quickUser(one);
      const settings = { requestsToTrack: 5 };
      const slow = await create(u, {
        location: { pathType: "=", path: "/slow" },
        settings: {
          ...settings,
          script: `(async () => { await new Promise((r) => setTimeout(r, 300)); return { statusCode: 201, body: "late" }; })()`,
        },
      });
      const hit = (path: string) =>
        one.services.responders.dispatch(new Request(`http://x${path}`, { headers: { host: `${u.handle}.localhost` } }), null)!;
      const answer = hit("/slow");
      await Bun.sleep(50);
      expect(await one.services.responders.drain(0)).toBe(1);
      await one.stop();
      expect((await answer).status).toBe(201);

      const two = await startTestServer({ dataDir });
      try {
        const client = new (u.client.constructor as any)(two.url, { session: u.session });
        const [rec] = await client.get(`${BASE}/${slow.id}/_history`).then((x: any) => x.json);
        expect(rec.path).toBe("/slow");
        expect(rec.response).toBeUndefined();
        // A script that outlives the grace period: the pool's close ends it, the hit is recorded as failed.
        const stuck = await create(
          { ...u, client },
          {
            location: { pathType: "=", path: "/stuck" },
            settings: { ...settings, script: `(async () => { await new Promise((r) => setTimeout(r, 60000)); return "never"; })()` },
          },
        );
        const pending = two.services.responders.dispatch(new Request("http://x/stuck", { headers: { host: `${u.handle}.localhost` } }), null)!;
        await Bun.sleep(50);
        expect(await two.services.responders.drain(100)).toBe(1);
        await two.services.sandbox.close();
        await two.services.responders.stop();
        expect((await pending).status).toBe(500);
        expect(two.services.responders.pendingCaptures).toBe(0);
        const [failed] = await client.get(`${BASE}/${stuck.id}/_history`).then((x: any) => x.json);
        expect(failed.path).toBe("/stuck");
        expect(failed.response.statusCode).toBe(500);
      } finally {
        await two.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("hit summary emails (§18.2) through the SMTP sink", () => {
  const mailsTo = (addr: string) => smtp.messages.filter((m) => m.to.includes(addr));

  test("one email per throttle window with the count since the last one; individual hits never each send one", async () => {
    const u = await quickUser(srv);
    const r = await create(u, {
      name: "orders-mock",
      location: { pathType: "^", path: "/n" },
      settings: { requestsToTrack: 2, notifications: { enabled: true, throttleSeconds: 300 } },
    });
    expect(await srv.services.responders.runHitSummaries()).toBe(0);
    const countFrom = Math.floor(nowMs / 1000);
    tick(5);
    for (let i = 0; i < 3; i++) await hit(u, `/n${i}`);
    expect(await srv.services.responders.runHitSummaries()).toBe(1);
    const [first] = await smtp.waitForTo(u.email, 1);
    expect(first!.subject).toBe('[Secbox] Responder "orders-mock" received 3 request(s)');
    expect(first!.text).toContain("3 request(s)");
    expect(first!.text).toContain(new Date(countFrom * 1000).toISOString().replace(".000Z", "Z"));
    expect(first!.text).toContain(`http://localhost:7070/responders/${r.id}`);
    expect(first!.headers.get("list-unsubscribe")).toContain("/api/notifications/unsubscribe?token=");

    // Inside the window: counted, not sent.
    await hit(u, "/n3");
    await hit(u, "/n4");
    tick(299);
    expect(await srv.services.responders.runHitSummaries()).toBe(0);
    tick(1);
    expect(await srv.services.responders.runHitSummaries()).toBe(1);
    const mails = await smtp.waitForTo(u.email, 2);
    expect(mails[1]!.subject).toBe('[Secbox] Responder "orders-mock" received 2 request(s)');
    // Nothing new: no email, even after the window.
    tick(600);
    expect(await srv.services.responders.runHitSummaries()).toBe(0);
    await Bun.sleep(100);
    expect(mailsTo(u.email)).toHaveLength(2);
  });

  test("counting starts when notifications are enabled; disabled or untracked responders never send", async () => {
    const u = await quickUser(srv);
    const r = await create(u, { name: "late", location: { pathType: "=", path: "/late" }, settings: { requestsToTrack: 5 } });
    await create(u, { name: "off", location: { pathType: "=", path: "/off" }, settings: { requestsToTrack: 5, notifications: { enabled: false } } });
    await hit(u, "/late");
    await hit(u, "/off");
    expect(await srv.services.responders.runHitSummaries()).toBe(0);
    await u.client.put(`${BASE}/${r.id}`, { settings: { requestsToTrack: 5, notifications: { enabled: true, throttleSeconds: 900 } } });
    expect(await srv.services.responders.runHitSummaries()).toBe(0);
    await hit(u, "/late");
    expect(await srv.services.responders.runHitSummaries()).toBe(1);
    const [mail] = await smtp.waitForTo(u.email, 1);
    expect(mail!.subject).toBe('[Secbox] Responder "late" received 1 request(s)');
    await hit(u, "/off");
    tick(3600);
    expect(await srv.services.responders.runHitSummaries()).toBe(0);
  });

  test("an update that keeps notifications on keeps the count of hits not yet summarized", async () => {
    const u = await quickUser(srv);
    const r = await create(u, {
      name: "renamed-later",
      location: { pathType: "=", path: "/keep" },
      settings: { requestsToTrack: 5, notifications: { enabled: true, throttleSeconds: 300 } },
    });
    for (let i = 0; i < 3; i++) await hit(u, "/keep");
    // right away, while the hits are still pending in the capture batch
    expect((await u.client.put(`${BASE}/${r.id}`, { name: "renamed" })).status).toBe(200);
    expect(
      (await u.client.put(`${BASE}/${r.id}`, { settings: { requestsToTrack: 4, notifications: { enabled: true, throttleSeconds: 300 } } })).status,
    ).toBe(200);
    expect(await srv.services.responders.runHitSummaries()).toBe(1);
    const [mail] = await smtp.waitForTo(u.email, 1);
    expect(mail!.subject).toBe('[Secbox] Responder "renamed" received 3 request(s)');
  });

  test("each responder has its own window; another user's hits are not counted", async () => {
    const [x, y] = await Promise.all([quickUser(srv), quickUser(srv)]);
    const settings = { requestsToTrack: 3, notifications: { enabled: true, throttleSeconds: 300 } };
    await create(x, { name: "x-one", location: { pathType: "=", path: "/one" }, settings });
    await create(x, { name: "x-two", location: { pathType: "=", path: "/two" }, settings });
    await create(y, { name: "y-one", location: { pathType: "=", path: "/one" }, settings });
    await hit(x, "/one");
    await hit(x, "/two");
    await hit(x, "/two");
    for (let i = 0; i < 4; i++) await hit(y, "/one");
    expect(await srv.services.responders.runHitSummaries()).toBe(3);
    const xs = (await smtp.waitForTo(x.email, 2)).map((m) => m.subject).sort();
    expect(xs).toEqual(['[Secbox] Responder "x-one" received 1 request(s)', '[Secbox] Responder "x-two" received 2 request(s)']);
    const [ym] = await smtp.waitForTo(y.email, 1);
    expect(ym!.subject).toBe('[Secbox] Responder "y-one" received 4 request(s)');
  });
});
