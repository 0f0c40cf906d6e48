// The web UI's additions to the responders API, through real HTTP: the `_history` window (after, before, limit),
// `_info` (URL bases, tier limits) and `_test` ("Try it": a request to the caller's own responder served in-process
// as a hit; the response and the record it left; never another user's handle, also on the path form).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { quickUser } from "../../tests/fixtures/quick-users";

let srv: TestServer;
let pathSrv: TestServer;
let a: TestUser;
let b: TestUser;
let p: TestUser;
let q: TestUser;

const BASE = "/api/webhooks/responders";
const MISSING = "01890000-0000-7000-8000-000000000000";

beforeAll(async () => {
  [srv, pathSrv] = await Promise.all([
    // New users get basic (the built-in default is ultimate, §27): `_info` below names basic's limits.
    startTestServer({ env: { SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic", SECBOX_SUBSCRIPTIONS_TIERS_STANDARD_NOTIFICATION_THROTTLES: "60,120" } }),
    startTestServer({ env: { SECBOX_RESPONDERS_URL_STYLE: "path" } }),
  ]);
  [a, b] = await Promise.all([quickUser(srv), quickUser(srv, "standard")]);
  [p, q] = await Promise.all([quickUser(pathSrv), quickUser(pathSrv)]);
}, 30_000);
afterAll(async () => {
  await srv?.stop();
  await pathSrv?.stop();
});

let seq = 0;
async function create(user: TestUser, fields: Record<string, unknown>) {
  const res = await user.client.post(BASE, { name: `ui-${++seq}`, ...fields });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json;
}

const hit = (user: TestUser, path: string, init: RequestInit = {}) =>
  fetch(srv.url + path, { ...init, headers: { host: `${user.handle}.localhost:7070`, ...(init.headers as Record<string, string>) } });

const b64 = (s: string) => Buffer.from(s).toString("base64");
const text = (b64text: string | undefined) => Buffer.from(b64text ?? "", "base64").toString("utf8");

describe("_history window", () => {
  test("after / before / limit select newest-first windows; no parameter is the whole history", async () => {
    const r = await create(a, { location: { pathType: "*", path: "/win" }, settings: { requestsToTrack: 20 } });
    for (let i = 0; i < 6; i++) expect((await hit(a, `/win/${i}`)).status).toBe(200);
    const all = (await a.client.get(`${BASE}/${r.id}/_history`)).json as any[];
    expect(all.map((x) => x.path)).toEqual(["/win/5", "/win/4", "/win/3", "/win/2", "/win/1", "/win/0"]);

    const newest2 = (await a.client.get(`${BASE}/${r.id}/_history?limit=2`)).json as any[];
    expect(newest2.map((x) => x.path)).toEqual(["/win/5", "/win/4"]);
    const older = (await a.client.get(`${BASE}/${r.id}/_history?before=${newest2[1].id}&limit=3`)).json as any[];
    expect(older.map((x) => x.path)).toEqual(["/win/3", "/win/2", "/win/1"]);
    const newer = (await a.client.get(`${BASE}/${r.id}/_history?after=${all[3].id}`)).json as any[];
    expect(newer.map((x) => x.path)).toEqual(["/win/5", "/win/4", "/win/3"]);
    // a poll with nothing new is an empty array
    expect((await a.client.get(`${BASE}/${r.id}/_history?after=${all[0].id}&limit=50`)).json).toEqual([]);
    // a hit after the last poll shows up on the next one
    await hit(a, "/win/6");
    const next = (await a.client.get(`${BASE}/${r.id}/_history?after=${all[0].id}&limit=50`)).json as any[];
    expect(next.map((x) => x.path)).toEqual(["/win/6"]);
    // both bounds
    const between = (await a.client.get(`${BASE}/${r.id}/_history?after=${all[4].id}&before=${all[1].id}`)).json as any[];
    expect(between.map((x) => x.path)).toEqual(["/win/3", "/win/2"]);
  });

  test("bad parameters are 400 naming them, before the 404 of an unknown responder; another user's is 404", async () => {
    const r = await create(a, { location: { pathType: "=", path: "/win-bad" }, settings: { requestsToTrack: 5 } });
    for (const [query, field] of [
      ["after=nope", "after"],
      ["before=1", "before"],
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["limit=2.5", "limit"],
      ["limit=x", "limit"],
    ]) {
      const res = await a.client.get(`${BASE}/${r.id}/_history?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
      expect(res.json.message.startsWith(`${field}: `)).toBe(true);
      expect((await a.client.get(`${BASE}/${MISSING}/_history?${query}`)).status).toBe(400);
    }
    expect((await a.client.get(`${BASE}/${MISSING}/_history?limit=5`)).status).toBe(404);
    expect((await b.client.get(`${BASE}/${r.id}/_history?limit=5`)).status).toBe(404);
    expect((await srv.anon.get(`${BASE}/${r.id}/_history?limit=5`)).status).toBe(401);
  });
});

describe("_info", () => {
  test("subdomain style: base URLs with and without a prefix, the tier's limits", async () => {
    const res = await a.client.get(`${BASE}/_info`);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      urlStyle: "subdomain",
      baseUrl: `http://${a.handle}.localhost:7070`,
      prefixedBaseUrl: `http://{prefix}-${a.handle}.localhost:7070`,
      maxRequestsToTrack: 30,
      notificationThrottles: [300, 900, 3600, 21600, 86400],
    });
    const std = (await b.client.get(`${BASE}/_info`)).json;
    expect(std.notificationThrottles).toEqual([60, 120]);
    // the base URL is what a created responder's url starts with
    const r = await create(a, { location: { pathType: "=", path: "/info-check", subdomainPrefix: "shop" } });
    expect(r.url).toBe(res.json.prefixedBaseUrl.replace("{prefix}", "shop") + "/info-check");
    expect((await srv.anon.get(`${BASE}/_info`)).status).toBe(401);
  });

  test("path style: the path-form base, no prefixed form", async () => {
    const res = await p.client.get(`${BASE}/_info`);
    expect(res.json.urlStyle).toBe("path");
    expect(res.json.baseUrl).toBe(`http://localhost:7070/api/webhooks/${p.handle}`);
    expect(res.json.prefixedBaseUrl).toBeUndefined();
  });
});

describe("_test (Try it)", () => {
  test("a static tracked responder: the response as sent and the record it left, which the history has too", async () => {
    const r = await create(a, {
      method: "POST",
      location: { pathType: "*", path: "/try" },
      settings: {
        requestsToTrack: 5,
        statusCode: 201,
        headers: [
          ["x-b", "1"],
          ["content-type", "application/json"],
          ["x-b", "2"],
        ],
        body: '{"ok":true}',
      },
    });
    const res = await a.client.post(`${BASE}/${r.id}/_test`, {
      path: "/try/7?debug=1",
      headers: [
        ["content-type", "application/json"],
        ["x-one", "é"],
      ],
      body: '{"qty":2}',
    });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const out = res.json;
    expect(out.responderId).toBe(r.id);
    expect(out.request).toEqual({ method: "POST", url: `http://${a.handle}.localhost:7070/try/7?debug=1` });
    expect(out.response.statusCode).toBe(201);
    expect(text(out.response.body)).toBe('{"ok":true}');
    expect(out.response.bodySize).toBe(11);
    expect(out.response.truncated).toBe(false);
    // as a client reads them: lower-case names, repeats joined in their order
    expect(out.response.headers).toContainEqual(["x-b", "1, 2"]);
    expect(typeof out.durationMs).toBe("number");
    const rec = out.record;
    expect(rec.method).toBe("POST");
    expect(rec.path).toBe("/try/7");
    expect(rec.rawQuery).toBe("debug=1");
    expect(text(rec.body)).toBe('{"qty":2}');
    expect(rec.headers).toContainEqual(["x-one", "é"]);
    expect(rec.headers).toContainEqual(["host", `${a.handle}.localhost:7070`]);
    expect(rec.clientAddress).toBeUndefined();
    const [latest] = (await a.client.get(`${BASE}/${r.id}/_history?limit=1`)).json;
    expect(latest).toEqual(rec);
  });

  test("defaults: the responder's method (ANY → GET) and path; a script sees the request and its headers", async () => {
    const r = await create(a, {
      location: { pathType: "=", path: "/try-script" },
      settings: { script: "return { statusCode: 202, body: { method: context.method, path: context.path, h: context.headers['x-test'] ?? null } };" },
    });
    const res = await a.client.post(`${BASE}/${r.id}/_test`, { headers: [["X-Test", "yes"]] });
    expect(res.status).toBe(200);
    expect(res.json.response.statusCode).toBe(202);
    expect(JSON.parse(text(res.json.response.body))).toEqual({ method: "GET", path: "/try-script", h: "yes" });
    expect(res.json.record).toBeUndefined(); // requestsToTrack 0: nothing recorded
    // no body at all is {} (supplement §1)
    expect((await a.client.request("POST", `${BASE}/${r.id}/_test`)).json.response.statusCode).toBe(202);
  });

  test("the real match answers: a more specific responder of the same user, a disabled one (404, none answered)", async () => {
    const broad = await create(a, { location: { pathType: "*", path: "/area" } });
    const narrow = await create(a, { location: { pathType: "=", path: "/area/inner" }, settings: { statusCode: 299 } });
    const res = await a.client.post(`${BASE}/${broad.id}/_test`, { path: "/area/inner" });
    expect(res.json.responderId).toBe(narrow.id);
    expect(res.json.response.statusCode).toBe(299);
    const off = await create(a, { location: { pathType: "=", path: "/try-off" }, enabled: false });
    const res2 = await a.client.post(`${BASE}/${off.id}/_test`, {});
    expect(res2.status).toBe(200);
    expect(res2.json.responderId).toBeUndefined();
    expect(res2.json.response.statusCode).toBe(404);
  });

  test("bad input is 400 naming the field, before the 404; another user's responder is 404", async () => {
    const r = await create(a, { location: { pathType: "=", path: "/try-bad" } });
    for (const [body, field] of [
      [{ method: "ANY" }, "method"],
      [{ method: "get" }, "method"],
      [{ path: "relative" }, "path"],
      [{ path: "/a b" }, "path"],
      [{ path: "/x/../y" }, "path"],
      [{ path: "/x/%2E%2e/y" }, "path"],
      [{ headers: [["host", "evil.localhost"]] }, "headers[0]"],
      [
        {
          headers: [
            ["x-ok", "1"],
            ["Content-Length", "5"],
          ],
        },
        "headers[1]",
      ],
      [{ headers: [["bad name", "1"]] }, "headers[0]"],
      [{ headers: [["x", "a\r\nb: c"]] }, "headers[0]"],
      [{ headers: { x: "1" } }, "headers"],
      [{ body: 5 }, "body"],
    ] as const) {
      const res = await a.client.post(`${BASE}/${r.id}/_test`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
      expect(res.json.message.startsWith(`${field}: `), res.json.message).toBe(true);
      expect((await a.client.post(`${BASE}/${MISSING}/_test`, body)).status).toBe(400);
    }
    expect((await a.client.post(`${BASE}/${MISSING}/_test`, {})).status).toBe(404);
    expect((await b.client.post(`${BASE}/${r.id}/_test`, {})).status).toBe(404);
    expect((await srv.anon.post(`${BASE}/${r.id}/_test`, {})).status).toBe(401);
  });

  test("path style: served through the path form; dot segments cannot reach another user's handle", async () => {
    const mine = await create(p, { location: { pathType: "*", path: "/" }, settings: { requestsToTrack: 5, body: "mine" } });
    const theirs = await create(q, { location: { pathType: "*", path: "/" }, settings: { requestsToTrack: 5, body: "theirs" } });
    const res = await p.client.post(`${BASE}/${mine.id}/_test`, { path: "/hello" });
    expect(res.json.request.url).toBe(`http://localhost:7070/api/webhooks/${p.handle}/hello`);
    expect(text(res.json.response.body)).toBe("mine");
    expect(res.json.response.headers).toContainEqual([
      "content-security-policy",
      "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads",
    ]);
    for (const path of [`/../${q.handle}/x`, `/%2e%2e/${q.handle}/x`, `/.%2E/${q.handle}`]) {
      const bad = await p.client.post(`${BASE}/${mine.id}/_test`, { path });
      expect(bad.status, path).toBe(400);
    }
    expect((await q.client.get(`${BASE}/${theirs.id}/_history`)).json).toEqual([]);
    // a query may hold dots
    expect((await p.client.post(`${BASE}/${mine.id}/_test`, { path: "/x?next=../y" })).status).toBe(200);
  });

  test("a binary response comes back as base64; the cross-site guard applies (cookie POST from another origin)", async () => {
    const r = await create(a, { location: { pathType: "=", path: "/try-bin" }, settings: { script: "return { body: [0, 255, 1, 2] };" } });
    const res = await a.client.post(`${BASE}/${r.id}/_test`, {});
    expect([...Buffer.from(res.json.response.body, "base64")]).toEqual([0, 255, 1, 2]);
    const guarded = await a.client.post(`${BASE}/${r.id}/_test`, {}, { headers: { origin: "http://evil.example" } });
    expect(guarded.status).toBe(403);
    expect(b64("x")).toBe("eA==");
  });
});
