// Responder management through real HTTP (supplement §11.1, §11.2, §11.3 URLs, §7.1 selectors, §22 limits).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { quickUser } from "../../tests/fixtures/quick-users";

let nowMs = 1_767_225_600_000;
const clock = { now: () => nowMs };
const tick = (sec = 10) => (nowMs += sec * 1000);

let srv: TestServer;
let a: TestUser;
let b: TestUser;
let pro: TestUser;
let ult: TestUser;
let std: TestUser;
let std2: TestUser;
let lister: TestUser;

const MISSING = "01890000-0000-7000-8000-000000000000";
const BASE = "/api/webhooks/responders";

beforeAll(async () => {
  srv = await startTestServer({
    clock,
    env: {
      // New users get basic here (the built-in default is ultimate, §27): the tests below name basic's limits.
      SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
      SECBOX_SUBSCRIPTIONS_TIERS_STANDARD_MAX_RESPONDERS: "2",
      SECBOX_SUBSCRIPTIONS_TIERS_STANDARD_NOTIFICATION_THROTTLES: "60,120",
    },
  });
  [a, b, pro, ult, std, std2, lister] = await Promise.all([
    quickUser(srv),
    quickUser(srv),
    quickUser(srv, "professional"),
    quickUser(srv, "ultimate"),
    quickUser(srv, "standard"),
    quickUser(srv, "standard"),
    quickUser(srv),
  ]);
});
afterAll(() => srv.stop());

let seq = 0;
const uniquePath = () => `/p${++seq}`;

async function create(user: TestUser, fields: Record<string, unknown> = {}) {
  const res = await user.client.post(BASE, { name: `responder-${++seq}`, location: { pathType: "=", path: uniquePath() }, ...fields });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json;
}

async function mkSecret(user: TestUser, name: string) {
  const res = await user.client.post("/api/user/secrets", { name, value: `value-of-${name}` });
  expect(res.status).toBe(201);
  return res.json.id as string;
}

describe("create and get", () => {
  test("POST 201 returns the stored responder (§11.1) with url, defaults and omitted optionals; GET returns it", async () => {
    const res = await a.client.post(BASE, {
      name: "  orders-mock  ",
      location: { pathType: "*", path: "/Orders/", subdomainPrefix: "shop" },
      method: "GET",
      settings: {
        requestsToTrack: 5,
        statusCode: 200,
        headers: [
          ["content-type", "application/json"],
          ["x-dup", "1"],
          ["x-dup", "2"],
        ],
        body: '{"ok":true}',
        notifications: { enabled: true, throttleSeconds: 3600 },
      },
      extra: "ignored",
    });
    expect(res.status).toBe(201);
    const r = res.json;
    expect(Object.keys(r)).toEqual(["id", "name", "url", "location", "method", "enabled", "settings", "tags", "tagIds", "createdAt", "updatedAt"]);
    expect(r.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    expect(r).toMatchObject({
      name: "orders-mock",
      url: `http://shop-${a.handle}.localhost:7070/Orders`,
      location: { pathType: "*", path: "/Orders", subdomainPrefix: "shop" },
      method: "GET",
      enabled: true,
      settings: {
        requestsToTrack: 5,
        statusCode: 200,
        headers: [
          ["content-type", "application/json"],
          ["x-dup", "1"],
          ["x-dup", "2"],
        ],
        body: '{"ok":true}',
        secrets: "none",
        notifications: { enabled: true, throttleSeconds: 3600 },
      },
      tags: [],
      tagIds: [],
      createdAt: Math.floor(nowMs / 1000),
      updatedAt: Math.floor(nowMs / 1000),
    });
    const got = await a.client.get(`${BASE}/${r.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(r);
  });

  test("defaults: method ANY, enabled, requestsToTrack 0, status 200, secrets none; empty optionals omitted", async () => {
    const res = await a.client.post(BASE, { name: "minimal", location: { pathType: "=", path: "/" } });
    expect(res.status).toBe(201);
    expect(res.json.method).toBe("ANY");
    expect(res.json.enabled).toBe(true);
    expect(res.json.url).toBe(`http://${a.handle}.localhost:7070/`);
    expect(res.json.location).toEqual({ pathType: "=", path: "/" });
    expect(res.json.settings).toEqual({ requestsToTrack: 0, statusCode: 200, secrets: "none" });
    const nulls = await create(a, {
      location: { pathType: "^", path: "/nulls", subdomainPrefix: null },
      settings: { headers: null, body: "", script: null, notifications: null },
    });
    expect(nulls.location).toEqual({ pathType: "^", path: "/nulls" });
    expect(nulls.settings).toEqual({ requestsToTrack: 0, statusCode: 200, secrets: "none" });
  });

  test("path: trailing slashes removed except for /, case kept; RFC 3986 characters accepted", async () => {
    expect((await create(a, { location: { pathType: "=", path: "/A/b//" } })).location.path).toBe("/A/b");
    expect((await create(a, { location: { pathType: "*", path: "//" } })).location.path).toBe("/");
    const odd = "/a-._~!$&'()*+,;=:@/%2F%c3%a9";
    expect((await create(a, { location: { pathType: "=", path: odd } })).location.path).toBe(odd);
  });

  test("401 without credentials on every endpoint", async () => {
    const calls = [
      srv.anon.get(BASE),
      srv.anon.post(BASE, { name: "x", location: { pathType: "=", path: "/" } }),
      srv.anon.get(`${BASE}/_stats`),
      srv.anon.get(`${BASE}/${MISSING}`),
      srv.anon.put(`${BASE}/${MISSING}`, { name: "x" }),
      srv.anon.delete(`${BASE}/${MISSING}`),
      srv.anon.get(`${BASE}/${MISSING}/_history`),
      srv.anon.post(`${BASE}/${MISSING}/_clear`),
      srv.anon.get(`${BASE}/${MISSING}/_har`),
    ];
    for (const res of await Promise.all(calls)) {
      expect(res.status).toBe(401);
      expect(res.json.code).toBe("UNAUTHENTICATED");
    }
  });
});

describe("validation (§11.2) → 400 INVALID_INPUT naming the field", () => {
  const loc = { pathType: "=", path: "/valid" };
  const cases: [string, Record<string, unknown>, string][] = [
    ["missing name", { location: loc }, "name"],
    ["blank name", { name: "   ", location: loc }, "name"],
    ["name of 101 characters", { name: "n".repeat(101), location: loc }, "name"],
    ["name not a string", { name: 7, location: loc }, "name"],
    ["missing location", { name: "v" }, "location"],
    ["location not an object", { name: "v", location: "/x" }, "location"],
    ["missing pathType", { name: "v", location: { path: "/x" } }, "location.pathType"],
    ["unknown pathType", { name: "v", location: { pathType: "~", path: "/x" } }, "location.pathType"],
    ["missing path", { name: "v", location: { pathType: "=" } }, "location.path"],
    ["path not starting with /", { name: "v", location: { pathType: "=", path: "x" } }, "location.path"],
    ["empty path", { name: "v", location: { pathType: "=", path: "" } }, "location.path"],
    ["path of 256 characters", { name: "v", location: { pathType: "=", path: `/${"a".repeat(255)}` } }, "location.path"],
    ["path with a space", { name: "v", location: { pathType: "=", path: "/a b" } }, "location.path"],
    ["path with a query", { name: "v", location: { pathType: "=", path: "/a?b" } }, "location.path"],
    ["path with #", { name: "v", location: { pathType: "=", path: "/a#b" } }, "location.path"],
    ["path with bad percent escape", { name: "v", location: { pathType: "=", path: "/a%zz" } }, "location.path"],
    ["path with non-ASCII", { name: "v", location: { pathType: "=", path: "/é" } }, "location.path"],
    ["upper-case prefix", { name: "v", location: { ...loc, subdomainPrefix: "Shop" } }, "location.subdomainPrefix"],
    ["prefix ending with -", { name: "v", location: { ...loc, subdomainPrefix: "shop-" } }, "location.subdomainPrefix"],
    ["prefix starting with -", { name: "v", location: { ...loc, subdomainPrefix: "-shop" } }, "location.subdomainPrefix"],
    ["prefix of 37 characters", { name: "v", location: { ...loc, subdomainPrefix: "a".repeat(37) } }, "location.subdomainPrefix"],
    ["empty prefix", { name: "v", location: { ...loc, subdomainPrefix: "" } }, "location.subdomainPrefix"],
    ["prefix with a dot", { name: "v", location: { ...loc, subdomainPrefix: "a.b" } }, "location.subdomainPrefix"],
    ["unknown method", { name: "v", location: loc, method: "FETCH" }, "method"],
    ["lower-case method", { name: "v", location: loc, method: "get" }, "method"],
    ["enabled not boolean", { name: "v", location: loc, enabled: "yes" }, "enabled"],
    ["settings not an object", { name: "v", location: loc, settings: [] }, "settings"],
    ["requestsToTrack negative", { name: "v", location: loc, settings: { requestsToTrack: -1 } }, "settings.requestsToTrack"],
    ["requestsToTrack fractional", { name: "v", location: loc, settings: { requestsToTrack: 1.5 } }, "settings.requestsToTrack"],
    ["requestsToTrack above the basic tier max (30)", { name: "v", location: loc, settings: { requestsToTrack: 31 } }, "settings.requestsToTrack"],
    ["statusCode 199", { name: "v", location: loc, settings: { statusCode: 199 } }, "settings.statusCode"],
    ["statusCode 600", { name: "v", location: loc, settings: { statusCode: 600 } }, "settings.statusCode"],
    ["statusCode as text", { name: "v", location: loc, settings: { statusCode: "200" } }, "settings.statusCode"],
    ["body not a string", { name: "v", location: loc, settings: { body: { a: 1 } } }, "settings.body"],
    ["body over 1 MiB", { name: "v", location: loc, settings: { body: "x".repeat(1024 * 1024 + 1) } }, "settings.body"],
    ["headers as an object", { name: "v", location: loc, settings: { headers: { a: "b" } } }, "settings.headers"],
    ["header pair of 3", { name: "v", location: loc, settings: { headers: [["a", "b", "c"]] } }, "settings.headers[0]"],
    ["header value not a string", { name: "v", location: loc, settings: { headers: [["a", 1]] } }, "settings.headers[0]"],
    [
      "header name not a token",
      {
        name: "v",
        location: loc,
        settings: {
          headers: [
            ["ok", "1"],
            ["bad name", "x"],
          ],
        },
      },
      "settings.headers[1]",
    ],
    ["header name empty", { name: "v", location: loc, settings: { headers: [["", "x"]] } }, "settings.headers[0]"],
    ["header value with LF", { name: "v", location: loc, settings: { headers: [["x-a", "1\nx-b: 2"]] } }, "settings.headers[0]"],
    ["header value with CR", { name: "v", location: loc, settings: { headers: [["x-a", "1\r"]] } }, "settings.headers[0]"],
    ["header value with NUL", { name: "v", location: loc, settings: { headers: [["x-a", "1\u0000"]] } }, "settings.headers[0][1]"],
    ["header value over 8 KiB", { name: "v", location: loc, settings: { headers: [["x-a", "v".repeat(8193)]] } }, "settings.headers[0]"],
    ["101 headers", { name: "v", location: loc, settings: { headers: Array.from({ length: 101 }, (_, i) => [`x-${i}`, "1"]) } }, "settings.headers"],
    ["empty script", { name: "v", location: loc, settings: { script: "" } }, "settings.script"],
    ["script over 51,200 bytes", { name: "v", location: loc, settings: { script: "€".repeat(17_067) } }, "settings.script"],
    ["script not a string", { name: "v", location: loc, settings: { script: 5 } }, "settings.script"],
    ["notifications not an object", { name: "v", location: loc, settings: { requestsToTrack: 1, notifications: true } }, "settings.notifications"],
    [
      "notifications without enabled",
      { name: "v", location: loc, settings: { requestsToTrack: 1, notifications: {} } },
      "settings.notifications.enabled",
    ],
    [
      "notifications enabled with requestsToTrack 0",
      { name: "v", location: loc, settings: { requestsToTrack: 0, notifications: { enabled: true } } },
      "settings.notifications.enabled",
    ],
    [
      "throttleSeconds not in the tier list",
      { name: "v", location: loc, settings: { requestsToTrack: 1, notifications: { enabled: true, throttleSeconds: 60 } } },
      "settings.notifications.throttleSeconds",
    ],
    ["secrets selector of a wrong shape", { name: "v", location: loc, settings: { secrets: 5 } }, "settings.secrets"],
    [
      "secrets selector naming an unknown secret",
      { name: "v", location: loc, settings: { secrets: { selected: ["NOPE"] } } },
      "settings.secrets.selected[0]",
    ],
    ["secrets unknown type", { name: "v", location: loc, settings: { secrets: { type: "some" } } }, "settings.secrets.type"],
    ["tagIds not an array", { name: "v", location: loc, tagIds: "x" }, "tagIds"],
    ["unknown tag id", { name: "v", location: loc, tagIds: [MISSING] }, "tagIds"],
  ];
  for (const [label, body, field] of cases) {
    test(label, async () => {
      const res = await a.client.post(BASE, body);
      expect(res.status, JSON.stringify(res.json)).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
      expect(res.json.message.startsWith(`${field}:`), res.json.message).toBe(true);
    });
  }

  test("limits at their edges are accepted: 100 headers, 8 KiB value, 1 MiB body, 51,200-byte script, 36-char prefix", async () => {
    const r = await create(a, {
      location: { pathType: "=", path: "/edges", subdomainPrefix: `a${"-".repeat(34)}z` },
      settings: {
        headers: Array.from({ length: 100 }, (_, i) => [`x-${i}`, i === 0 ? "v".repeat(8192) : "1"]),
        body: "b".repeat(1024 * 1024),
        script: "€".repeat(17_066) + "ab",
        requestsToTrack: 30,
      },
    });
    expect(r.settings.headers).toHaveLength(100);
    expect(r.settings.body).toHaveLength(1024 * 1024);
    expect(r.settings.script).toHaveLength(17_068);
    expect(r.location.subdomainPrefix).toHaveLength(36);
  });

  test("nothing was stored by the rejected requests", async () => {
    const list = await a.client.get(`${BASE}?q=v&pageSize=100`);
    expect(list.json.items.filter((r: any) => r.name === "v")).toEqual([]);
  });
});

describe("requestsToTrack and max_responders follow the tier (§22)", () => {
  test("professional allows 100, not 101; ultimate 1000", async () => {
    expect((await create(pro, { settings: { requestsToTrack: 100 } })).settings.requestsToTrack).toBe(100);
    const over = await pro.client.post(BASE, { name: "over", location: { pathType: "=", path: "/over" }, settings: { requestsToTrack: 101 } });
    expect(over.status).toBe(400);
    expect(over.json.message).toContain("100");
    expect((await create(ult, { settings: { requestsToTrack: 1000 } })).settings.requestsToTrack).toBe(1000);
  });

  test("a tier with max_responders 2 → third create 400 LIMIT_REACHED", async () => {
    await create(std);
    await create(std);
    const res = await std.client.post(BASE, { name: "third", location: { pathType: "=", path: "/third" } });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("LIMIT_REACHED");
  });

  test("notification_throttles follow the tier list; throttleSeconds defaults to 3600 when listed", async () => {
    const r = await create(std2, { settings: { requestsToTrack: 1, notifications: { enabled: true, throttleSeconds: 120 } } });
    expect(r.settings.notifications).toEqual({ enabled: true, throttleSeconds: 120 });
    const bad = await std2.client.post(BASE, {
      name: "thr",
      location: { pathType: "=", path: "/thr" },
      settings: { requestsToTrack: 1, notifications: { enabled: true, throttleSeconds: 3600 } },
    });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain("60, 120");
    const def = await create(a, { settings: { requestsToTrack: 1, notifications: { enabled: false } } });
    expect(def.settings.notifications).toEqual({ enabled: false, throttleSeconds: 3600 });
  });
});

describe("names and location conflicts", () => {
  test("duplicate name → 409 DUPLICATE_NAME (after trimming)", async () => {
    await create(a, { name: "dup" });
    const res = await a.client.post(BASE, { name: " dup ", location: { pathType: "=", path: "/dup-other" } });
    expect(res.status).toBe(409);
    expect(res.json.code).toBe("DUPLICATE_NAME");
  });

  test("same prefix, pathType and path (ignoring case) with overlapping methods → 409 CONFLICT", async () => {
    await create(a, { location: { pathType: "*", path: "/Conflict" }, method: "GET" });
    for (const [method, location] of [
      ["GET", { pathType: "*", path: "/conflict" }],
      ["ANY", { pathType: "*", path: "/CONFLICT/" }],
    ] as const) {
      const res = await a.client.post(BASE, { name: `c-${method}`, location, method });
      expect(res.status).toBe(409);
      expect(res.json.code).toBe("CONFLICT");
    }
    // Not conflicts: other method, other pathType, other prefix, other path.
    await create(a, { location: { pathType: "*", path: "/conflict" }, method: "POST" });
    await create(a, { location: { pathType: "=", path: "/conflict" }, method: "GET" });
    await create(a, { location: { pathType: "*", path: "/conflict", subdomainPrefix: "x" }, method: "GET" });
    await create(a, { location: { pathType: "*", path: "/conflict2" }, method: "GET" });
    // ANY overlaps every method.
    await create(a, { location: { pathType: "^", path: "/any-first" }, method: "ANY" });
    const res = await a.client.post(BASE, { name: "any-clash", location: { pathType: "^", path: "/ANY-first" }, method: "DELETE" });
    expect(res.status).toBe(409);
    expect(res.json.code).toBe("CONFLICT");
    // Another user has a separate space.
    await create(b, { location: { pathType: "*", path: "/conflict" }, method: "GET" });
  });

  test("update into a conflict → 409; updating a responder onto its own location is fine", async () => {
    const one = await create(a, { location: { pathType: "=", path: "/upd-one" }, method: "PUT" });
    const two = await create(a, { location: { pathType: "=", path: "/upd-two" }, method: "PUT" });
    const res = await a.client.put(`${BASE}/${two.id}`, { location: { pathType: "=", path: "/UPD-ONE" } });
    expect(res.status).toBe(409);
    expect(res.json.code).toBe("CONFLICT");
    const self = await a.client.put(`${BASE}/${one.id}`, { location: { pathType: "=", path: "/upd-one" }, method: "ANY" });
    expect(self.status).toBe(200);
    const dupName = await a.client.put(`${BASE}/${two.id}`, { name: one.name });
    expect(dupName.status).toBe(409);
    expect(dupName.json.code).toBe("DUPLICATE_NAME");
  });
});

describe("secrets selector (§7.1)", () => {
  test("all accepted spellings; stored as ids; echoed as none / all / {selected}", async () => {
    const s1 = await mkSecret(a, "SEL_ONE");
    const s2 = await mkSecret(a, "SEL_TWO");
    const spellings: [unknown, unknown][] = [
      ["none", "none"],
      [{ type: "none" }, "none"],
      [null, "none"],
      ["all", "all"],
      [{ type: "all" }, "all"],
      [{ selected: [s1, "SEL_TWO", s1] }, { selected: [s1, s2] }],
      [{ selected: [s1.toUpperCase()] }, { selected: [s1] }],
      [{ type: "selected", secrets: ["SEL_TWO"] }, { selected: [s2] }],
      [{ selected: [] }, "none"],
    ];
    for (const [input, echoed] of spellings) {
      const r = await create(a, { settings: { secrets: input } });
      expect(r.settings.secrets).toEqual(echoed);
    }
    const absent = await create(a, { settings: {} });
    expect(absent.settings.secrets).toBe("none");
  });

  test("another user's secret cannot be selected", async () => {
    await mkSecret(b, "B_ONLY");
    const res = await a.client.post(BASE, {
      name: "foreign-secret",
      location: { pathType: "=", path: "/fs" },
      settings: { secrets: { selected: ["B_ONLY"] } },
    });
    expect(res.status).toBe(400);
    expect(res.json.message).toStartWith("settings.secrets.selected[0]");
  });

  test("deleting a secret removes it from selectors; an emptied selector becomes none", async () => {
    const keep = await mkSecret(a, "DEL_KEEP");
    const gone = await mkSecret(a, "DEL_GONE");
    const both = await create(a, { settings: { secrets: { selected: [keep, gone] } } });
    const only = await create(a, { settings: { secrets: { selected: [gone] } } });
    const all = await create(a, { settings: { secrets: "all" } });
    expect((await a.client.delete(`/api/user/secrets/${gone}`)).status).toBe(204);
    expect((await a.client.get(`${BASE}/${both.id}`)).json.settings.secrets).toEqual({ selected: [keep] });
    expect((await a.client.get(`${BASE}/${only.id}`)).json.settings.secrets).toBe("none");
    expect((await a.client.get(`${BASE}/${all.id}`)).json.settings.secrets).toBe("all");
  });
});

describe("update", () => {
  test("{} and all-null bodies → 400", async () => {
    const r = await create(a);
    for (const body of [{}, { name: null, settings: null }]) {
      const res = await a.client.put(`${BASE}/${r.id}`, body);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
    }
  });

  test("present members replace, absent ones are kept; settings is replaced as a whole; updatedAt moves", async () => {
    const r = await create(a, {
      method: "POST",
      enabled: true,
      settings: { requestsToTrack: 3, statusCode: 201, body: "old", headers: [["x-a", "1"]], notifications: { enabled: true } },
    });
    tick(30);
    const res = await a.client.put(`${BASE}/${r.id}`, { enabled: false, settings: { statusCode: 202 } });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: r.id, name: r.name, method: "POST", enabled: false, location: r.location, createdAt: r.createdAt });
    expect(res.json.updatedAt).toBe(r.createdAt + 30);
    // Omitted settings members take create defaults (no body, no headers, requestsToTrack 0, no notifications).
    expect(res.json.settings).toEqual({ requestsToTrack: 0, statusCode: 202, secrets: "none" });
    expect((await a.client.get(`${BASE}/${r.id}`)).json).toEqual(res.json);

    const renamed = await a.client.put(`${BASE}/${r.id}`, {
      name: "renamed-one",
      location: { pathType: "^", path: "/renamed", subdomainPrefix: "pre" },
    });
    expect(renamed.json.name).toBe("renamed-one");
    expect(renamed.json.location).toEqual({ pathType: "^", path: "/renamed", subdomainPrefix: "pre" });
    expect(renamed.json.url).toBe(`http://pre-${a.handle}.localhost:7070/renamed`);
    expect(renamed.json.settings.statusCode).toBe(202);
    // A location without a prefix removes the prefix.
    const noPrefix = await a.client.put(`${BASE}/${r.id}`, { location: { pathType: "^", path: "/renamed" } });
    expect(noPrefix.json.location).toEqual({ pathType: "^", path: "/renamed" });
  });

  test("validation applies to update bodies; body errors come before 404", async () => {
    const r = await create(a);
    const bad = await a.client.put(`${BASE}/${r.id}`, { settings: { statusCode: 99 } });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toStartWith("settings.statusCode:");
    const badMissing = await a.client.put(`${BASE}/${MISSING}`, { method: "NOPE" });
    expect(badMissing.status).toBe(400);
  });

  test("stored-data rules come after 404: an unknown secret or tag in the body of a PUT to a missing or foreign id → 404", async () => {
    const mine = await create(a);
    for (const [user, id] of [
      [a, MISSING],
      [b, mine.id],
    ] as const) {
      const secret = await user.client.put(`${BASE}/${id}`, { settings: { secrets: { selected: ["NO_SUCH_SECRET"] } } });
      expect(secret.status, JSON.stringify(secret.json)).toBe(404);
      expect((await user.client.put(`${BASE}/${id}`, { tagIds: [MISSING] })).status).toBe(404);
    }
    // the shape of the selector is still a body error, before 404
    expect((await a.client.put(`${BASE}/${MISSING}`, { settings: { secrets: 42 } })).status).toBe(400);
    // and on an existing responder the unknown secret is the 400 it always was
    const own = await a.client.put(`${BASE}/${mine.id}`, { settings: { secrets: { selected: ["NO_SUCH_SECRET"] } } });
    expect(own.status).toBe(400);
    expect(own.json.message).toStartWith("settings.secrets.selected[0]: unknown secret");
  });

  test("unknown, malformed and foreign ids → 404 on every id route", async () => {
    const mine = await create(a);
    for (const id of [MISSING, "not-a-uuid"]) {
      expect((await a.client.get(`${BASE}/${id}`)).status).toBe(404);
      expect((await a.client.put(`${BASE}/${id}`, { name: "x" })).status).toBe(404);
      expect((await a.client.delete(`${BASE}/${id}`)).status).toBe(404);
      expect((await a.client.get(`${BASE}/${id}/_history`)).status).toBe(404);
      expect((await a.client.post(`${BASE}/${id}/_clear`)).status).toBe(404);
      expect((await a.client.get(`${BASE}/${id}/_har`)).status).toBe(404);
    }
    // User B: A's responder does not exist for them.
    expect((await b.client.get(`${BASE}/${mine.id}`)).status).toBe(404);
    expect((await b.client.put(`${BASE}/${mine.id}`, { name: "stolen" })).status).toBe(404);
    expect((await b.client.delete(`${BASE}/${mine.id}`)).status).toBe(404);
    expect((await b.client.get(`${BASE}/${mine.id}/_history`)).status).toBe(404);
    expect((await b.client.post(`${BASE}/${mine.id}/_clear`)).status).toBe(404);
    expect((await b.client.get(`${BASE}/${mine.id}/_har`)).status).toBe(404);
    const bList = await b.client.get(`${BASE}?pageSize=100`);
    expect(bList.json.items.some((r: any) => r.id === mine.id)).toBe(false);
    const bStats = await b.client.get(`${BASE}/_stats`);
    expect(bStats.json.some((s: any) => s.responderId === mine.id)).toBe(false);
    expect((await a.client.get(`${BASE}/${mine.id}`)).json.name).toBe(mine.name);
  });
});

describe("list, tags and delete", () => {
  test("common list query: q, paging, sort/order, tags", async () => {
    const u = lister;
    const tag = (await u.client.post("/api/user/tags", { name: "prod" })).json.id;
    const names = ["Charlie", "alpha", "Bravo"];
    const made: any[] = [];
    for (const name of names) {
      tick();
      made.push(await create(u, { name, tagIds: name === "alpha" ? [tag] : [] }));
    }
    const byName = await u.client.get(BASE);
    expect(byName.json.total).toBe(3);
    expect(byName.json.items.map((r: any) => r.name)).toEqual(["alpha", "Bravo", "Charlie"]);
    const desc = await u.client.get(`${BASE}?sort=createdAt&order=desc`);
    expect(desc.json.items.map((r: any) => r.name)).toEqual(["Bravo", "alpha", "Charlie"]);
    const page = await u.client.get(`${BASE}?pageSize=1&page=1`);
    expect(page.json).toMatchObject({ total: 3, items: [{ name: "Bravo" }] });
    expect((await u.client.get(`${BASE}?q=RAV`)).json.items.map((r: any) => r.name)).toEqual(["Bravo"]);
    const tagged = await u.client.get(`${BASE}?tags=${tag}`);
    expect(tagged.json.items.map((r: any) => r.name)).toEqual(["alpha"]);
    expect(tagged.json.items[0].tags).toEqual([{ id: tag, name: "prod", color: "default" }]);
    expect(tagged.json.items[0].tagIds).toEqual([tag]);
    expect((await u.client.get(`${BASE}?order=up`)).status).toBe(400);
    // lastRequestedAt is accepted as a sort key (no hits: all sort as 0, then by id).
    const last = await u.client.get(`${BASE}?sort=lastRequestedAt`);
    expect(last.json.items.map((r: any) => r.id)).toEqual(made.map((r) => r.id));
  });

  test("tagIds: update replaces, absent keeps; deleting removes the responder and its tag links", async () => {
    const tag = (await a.client.post("/api/user/tags", { name: "tagged-responder" })).json.id;
    const r = await create(a, { tagIds: [tag] });
    expect(r.tagIds).toEqual([tag]);
    expect((await a.client.put(`${BASE}/${r.id}`, { enabled: false })).json.tagIds).toEqual([tag]);
    expect((await a.client.put(`${BASE}/${r.id}`, { tagIds: [] })).json.tagIds).toEqual([]);
    await a.client.put(`${BASE}/${r.id}`, { tagIds: [tag] });
    const del = await a.client.delete(`${BASE}/${r.id}`);
    expect(del.status).toBe(204);
    expect((await a.client.get(`${BASE}/${r.id}`)).status).toBe(404);
    const links = await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM entity_tags WHERE entity_type = 'responder' AND entity_id = ?", [
      r.id,
    ]);
    expect(links!.n).toBe(0);
    expect((await a.client.delete(`${BASE}/${r.id}`)).status).toBe(404);
  });
});

describe("url_style = path", () => {
  test("url is <public_url>/api/webhooks/<handle><path>; a subdomainPrefix → 400", async () => {
    const ps = await startTestServer({ env: { SECBOX_RESPONDERS_URL_STYLE: "path", SECBOX_SERVER_PUBLIC_URL: "https://secbox.example.com" } });
    try {
      const u = await quickUser(ps);
      const root = await u.client.post(BASE, { name: "root", location: { pathType: "=", path: "/" } });
      expect(root.json.url).toBe(`https://secbox.example.com/api/webhooks/${u.handle}/`);
      const sub = await u.client.post(BASE, { name: "sub", location: { pathType: "=", path: "/hooks/In" } });
      expect(sub.json.url).toBe(`https://secbox.example.com/api/webhooks/${u.handle}/hooks/In`);
      const pre = await u.client.post(BASE, { name: "pre", location: { pathType: "=", path: "/x", subdomainPrefix: "shop" } });
      expect(pre.status).toBe(400);
      expect(pre.json.message).toStartWith("location.subdomainPrefix:");
    } finally {
      await ps.stop();
    }
  });

  test("subdomain style with an https public_url on the default port omits the port", async () => {
    const hs = await startTestServer({
      env: { SECBOX_SERVER_PUBLIC_URL: "https://secbox.example.com", SECBOX_RESPONDERS_DOMAIN: "hooks.example.com" },
    });
    try {
      const u = await quickUser(hs);
      const r = await u.client.post(BASE, { name: "r", location: { pathType: "=", path: "/x", subdomainPrefix: "api" } });
      expect(r.json.url).toBe(`https://api-${u.handle}.hooks.example.com/x`);
    } finally {
      await hs.stop();
    }
  });
});
