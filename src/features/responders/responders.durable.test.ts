// Hits and captures through real HTTP (supplement §11.3–§11.5, §11.10, §11.12): records of body-less answers
// (HEAD, 204, 304) as sent, millisecond arrival times in the HAR, cookies of the path form and of responder
// hosts, and strict capture (the record is in the database before the response leaves).
// Long hits (> the server's 10 s idle timeout) are in responders.long.test.ts; crash tests in src/tests/crash.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { failingTrigger } from "../../tests/backend";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { quickUser } from "../../tests/fixtures/quick-users";

const BASE = "/api/webhooks/responders";

let nowMs = 1_767_225_600_123;
const clock = { now: () => nowMs };

let srv: TestServer;
let port: number;

beforeAll(async () => {
  srv = await startTestServer({ clock });
  port = Number(new URL(srv.url).port);
});
afterAll(() => srv.stop());

let seq = 0;
async function create(user: TestUser, fields: Record<string, unknown>) {
  const res = await user.client.post(BASE, { name: `dur-${++seq}`, ...fields });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json;
}

function hit(user: TestUser, path: string, init: RequestInit = {}, server = srv) {
  return fetch(server.url + path, { ...init, headers: { host: `${user.handle}.localhost:7070`, ...(init.headers as Record<string, string>) } });
}

/** Raw HTTP/1.1 (fetch cannot show what a HEAD or 204 answer carried on the wire). */
async function raw(text: string): Promise<string> {
  let out = "";
  let closed!: () => void;
  const done = new Promise<void>((r) => (closed = r));
  const sock = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data: (_s, d) => void (out += Buffer.from(d).toString("latin1")),
      close: () => closed(),
      error: () => closed(),
    },
  });
  sock.write(text);
  await Promise.race([done, Bun.sleep(3000)]);
  sock.end();
  return out;
}

const history = async (user: TestUser, id: string) => {
  const res = await user.client.get(`${BASE}/${id}/_history`);
  expect(res.status).toBe(200);
  return res.json as any[];
};

describe("body-less answers are recorded as sent (§11.10)", () => {
  test("HEAD, 204 and 304: no body and bodySize 0 in the history and the HAR; a GET of the same responder keeps its body", async () => {
    const u = await quickUser(srv);
    const script = "({statusCode: Number(context.query.s || 200), headers: {'content-type': 'text/plain'}, body: 'never sent', trackResponse: true})";
    const r = await create(u, { location: { pathType: "=", path: "/bodyless" }, settings: { requestsToTrack: 10, script } });

    const head = await raw(`HEAD /bodyless HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
    expect(head).toStartWith("HTTP/1.1 200");
    expect(head).toContain("content-length: 10"); // what a GET would carry (RFC 9110 §9.3.2) ...
    expect(head.endsWith("\r\n\r\n")).toBe(true); // ... but no body
    const noContent = await raw(`GET /bodyless?s=204 HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
    expect(noContent).toStartWith("HTTP/1.1 204");
    expect(noContent.endsWith("\r\n\r\n")).toBe(true);
    const notModified = await raw(`GET /bodyless?s=304 HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
    expect(notModified).toStartWith("HTTP/1.1 304");
    expect(notModified.endsWith("\r\n\r\n")).toBe(true);
    const get = await hit(u, "/bodyless");
    expect(await get.text()).toBe("never sent");

    const recs = (await history(u, r.id)).reverse();
    expect(recs.map((x) => [x.method, x.response.statusCode])).toEqual([
      ["HEAD", 200],
      ["GET", 204],
      ["GET", 304],
      ["GET", 200],
    ]);
    for (const x of recs.slice(0, 3)) {
      expect(x.response.body).toBeUndefined();
      expect(x.response).toMatchObject({ bodySize: 0, truncated: false });
    }
    expect(recs[3].response).toMatchObject({ body: Buffer.from("never sent").toString("base64"), bodySize: 10 });

    const har = (await u.client.get(`${BASE}/${r.id}/_har`)).json;
    const res = har.log.entries.map((e: any) => e.response);
    for (const x of res.slice(0, 3)) {
      expect(x.bodySize).toBe(0);
      expect(x.content).toEqual({ size: 0, mimeType: "text/plain" });
    }
    expect(res[3]).toMatchObject({ bodySize: 10, content: { size: 10, mimeType: "text/plain", text: "never sent" } });
  });

  test("a failure answered to HEAD is recorded without its text", async () => {
    const u = await quickUser(srv);
    const r = await create(u, {
      method: "HEAD",
      location: { pathType: "=", path: "/boom" },
      settings: { requestsToTrack: 5, script: "throw new Error('x')" },
    });
    const head = await raw(`HEAD /boom HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
    expect(head).toStartWith("HTTP/1.1 500");
    const [rec] = await history(u, r.id);
    expect(rec.response).toMatchObject({ statusCode: 500, bodySize: 0, truncated: false });
    expect(rec.response.body).toBeUndefined();
  });
});

describe("arrival time in milliseconds (§11.12)", () => {
  test("HAR startedDateTime carries the milliseconds of the arrival; createdAt stays unix seconds", async () => {
    const u = await quickUser(srv);
    const r = await create(u, { location: { pathType: "=", path: "/ms" }, settings: { requestsToTrack: 5 } });
    nowMs = 1_767_225_600_123;
    await hit(u, "/ms");
    nowMs = 1_767_225_600_987;
    await hit(u, "/ms");
    nowMs = 1_767_225_601_005;
    await hit(u, "/ms");
    const entries = (await u.client.get(`${BASE}/${r.id}/_har`)).json.log.entries;
    expect(entries.map((e: any) => e.startedDateTime)).toEqual(["2026-01-01T00:00:00.123Z", "2026-01-01T00:00:00.987Z", "2026-01-01T00:00:01.005Z"]);
    expect((await history(u, r.id)).map((x) => x.createdAt)).toEqual([1_767_225_601, 1_767_225_600, 1_767_225_600]);
  });
});

describe("cookies (§11.3, §11.5 step 4)", () => {
  const cookieHeaders: [string, string][] = [
    ["set-cookie", "a=1; Path=/"],
    ["set-cookie", "b=2; Domain=localhost; Path=/; HttpOnly"],
    ["set-cookie", "c=3; path=/x; DOMAIN = .localhost ; Secure"],
    ["clear-site-data", '"cookies", "storage"'],
    ["content-type", "text/plain"],
  ];

  test("the path form (the API's origin) sends no Set-Cookie and no Clear-Site-Data, and records what it sent", async () => {
    const u = await quickUser(srv);
    await create(u, { location: { pathType: "=", path: "/cookies" }, settings: { requestsToTrack: 5, headers: cookieHeaders, body: "hi" } });
    const scripted = await create(u, {
      location: { pathType: "=", path: "/cookies-script" },
      settings: {
        requestsToTrack: 5,
        script: `({headers: ${JSON.stringify(
          Object.fromEntries([
            ["set-cookie", "s=1; Path=/"],
            ["clear-site-data", '"*"'],
          ]),
        )}, body: "hi", trackResponse: true})`,
      },
    });
    const res = await fetch(`${srv.url}/api/webhooks/${u.handle}/cookies`);
    expect(res.status).toBe(200);
    expect(res.headers.getSetCookie()).toEqual([]);
    expect(res.headers.get("clear-site-data")).toBeNull();
    expect(res.headers.get("content-type")).toBe("text/plain");
    const res2 = await fetch(`${srv.url}/api/webhooks/${u.handle}/cookies-script`);
    expect(res2.headers.getSetCookie()).toEqual([]);
    expect(res2.headers.get("clear-site-data")).toBeNull();
    const [rec] = await history(u, scripted.id);
    expect(rec.response.headers).toEqual([]);
    // HEAD on the path form too
    const head = await raw(`HEAD /api/webhooks/${u.handle}/cookies HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    expect(head).toStartWith("HTTP/1.1 200");
    expect(head.toLowerCase()).not.toContain("set-cookie");
    expect(head.toLowerCase()).not.toContain("clear-site-data");
  });

  test("on a responder host cookies are sent host-only (Domain removed) and recorded that way", async () => {
    const u = await quickUser(srv);
    const r = await create(u, {
      location: { pathType: "=", path: "/cookies" },
      settings: {
        requestsToTrack: 5,
        script: `({headers: {"set-cookie": "d=4; Domain=localhost; Path=/", "x-a": "1"}, body: "", trackResponse: true})`,
      },
    });
    await create(u, { location: { pathType: "=", path: "/static-cookies" }, settings: { headers: cookieHeaders, body: "hi" } });
    const res = await hit(u, "/static-cookies");
    expect(res.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/; HttpOnly", "c=3; path=/x; Secure"]);
    expect(res.headers.get("clear-site-data")).toBe('"cookies", "storage"'); // clears the responder host only
    const scripted = await hit(u, "/cookies");
    expect(scripted.headers.getSetCookie()).toEqual(["d=4; Path=/"]);
    const [rec] = await history(u, r.id);
    expect(rec.response.headers).toEqual([
      ["set-cookie", "d=4; Path=/"],
      ["x-a", "1"],
    ]);
  });
});

describe("strict capture (§11.10 durability)", () => {
  let strict: TestServer;
  beforeAll(async () => {
    strict = await startTestServer({ env: { SECBOX_RESPONDERS_CAPTURE: "strict" } });
  });
  afterAll(() => strict.stop());

  test("every answered hit's record is in the database before its response arrives (static and scripted)", async () => {
    const u = await quickUser(strict);
    const stat = await create(u, { location: { pathType: "=", path: "/s" }, settings: { requestsToTrack: 30, body: "ok" } });
    const scr = await create(u, { location: { pathType: "=", path: "/x" }, settings: { requestsToTrack: 30, script: "({body: 'ok'})" } });
    const count = async (id: string) =>
      (await strict.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM responder_requests WHERE responder_id = ?", [id]))!.n;
    for (let round = 0; round < 3; round++) {
      const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => hit(u, i % 2 ? "/s" : "/x", {}, strict)));
      expect(responses.every((r) => r.status === 200)).toBe(true);
      // read straight from the database: no flush, nothing pending
      expect(strict.services.responders.pendingCaptures).toBe(0);
      expect(await count(stat.id)).toBe(5 * (round + 1));
      expect(await count(scr.id)).toBe(5 * (round + 1));
    }
  });
});

describe("hit summaries (§18.2) are queued exactly once", () => {
  test("a failure between queueing the email and resetting the count (a crash stand-in) leaves neither: the next run sends one email, not two", async () => {
    const u = await quickUser(srv);
    const r = await create(u, {
      location: { pathType: "=", path: "/summary" },
      settings: { requestsToTrack: 5, notifications: { enabled: true, throttleSeconds: 300 } },
    });
    await hit(u, "/summary");
    await hit(u, "/summary");
    const emails = async () =>
      (await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM outbox WHERE user_id = ? AND kind = 'responder_summary'", [u.id]))!.n;
    // The count reset fails in the email's transaction (the database aborts the statement, as a crash would end the
    // process).
    const dropTrigger = await failingTrigger(
      srv.rt.db,
      "fail_mark_notified",
      "UPDATE OF notified_at",
      "responders",
      `NEW.id = '${r.id}'`,
      "simulated failure",
    );
    try {
      expect(await srv.services.responders.runHitSummaries().catch(() => -1)).toBe(0);
      expect(await emails()).toBe(0);
    } finally {
      await dropTrigger();
    }
    expect(await srv.services.responders.runHitSummaries()).toBe(1);
    expect(await srv.services.responders.runHitSummaries()).toBe(0);
    expect(await emails()).toBe(1);
  });
});
