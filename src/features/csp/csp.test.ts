// Content security policies through HTTP: CRUD, the `directives` variant with every value rule, updates,
// `_serialize` per delivery, a serialize → import round trip, sharing and two-user isolation. The `serialized`
// import: csp-fidelity.test.ts; remote import: csp-remote.test.ts; the evaluator: csp-evaluate.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newId } from "../../platform/core/ids";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { SANDBOX_TOKENS } from "./directives";
import { OTHER_DIRECTIVES, SOURCE_LIST_DIRECTIVES } from "./shared-rules";

let nowMs = 1_767_225_600_000;
const clock = { now: () => nowMs };
const tick = (sec = 10) => (nowMs += sec * 1000);

let srv: TestServer;
let a: TestUser;
let b: TestUser;

beforeAll(async () => {
  srv = await startTestServer({ clock });
  a = await srv.createUser();
  b = await srv.createUser();
});
afterAll(() => srv.stop());

const BASE = "/api/web_security/csp";

async function insertTag(userId: string, name: string, color = "default"): Promise<string> {
  const id = newId();
  const now = Math.floor(nowMs / 1000);
  await srv.rt.db.run("INSERT INTO tags (id, user_id, name, color, created_at, updated_at) VALUES (?,?,?,?,?,?)", [
    id,
    userId,
    name,
    color,
    now,
    now,
  ]);
  return id;
}

let seq = 0;
type Dir = { name: string; value?: string[] };

async function createDirectives(user: TestUser, directives: Dir[], extra: Record<string, unknown> = {}) {
  const res = await user.client.post(BASE, { name: `policy-${++seq}`, content: { type: "directives", value: directives }, ...extra });
  expect(res.status).toBe(201);
  return res.json;
}

async function createSerialized(user: TestUser, text: string) {
  const res = await user.client.post(BASE, { name: `policy-${++seq}`, content: { type: "serialized", value: text } });
  expect(res.status).toBe(201);
  return res.json;
}

const serialize = (user: TestUser | undefined, id: string, source: string, headers: Record<string, string> = {}) =>
  (user ? user.client : srv.anon).post(`${BASE}/${id}/_serialize`, { source }, { headers });

describe("csp: create from directives", () => {
  test("201 with the stored policy; GET returns {policy} without userShare", async () => {
    const directives = [
      { name: "default-src", value: ["'self'"] },
      { name: "script-src", value: ["'self'", "https://cdn.example.com"] },
      { name: "upgrade-insecure-requests" },
    ];
    const res = await a.client.post(BASE, { name: "  site  ", content: { type: "directives", value: directives }, ignored: true });
    expect(res.status).toBe(201);
    const p = res.json;
    expect(Object.keys(p)).toEqual(["id", "name", "directives", "tags", "tagIds", "createdAt", "updatedAt"]);
    expect(p.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    expect(p).toMatchObject({ name: "site", directives, tags: [], tagIds: [] });
    expect(p.createdAt).toBe(Math.floor(nowMs / 1000));
    expect(p.updatedAt).toBe(p.createdAt);

    const got = await a.client.get(`${BASE}/${p.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual({ policy: p });
  });

  test("every directive value rule of §13.1: accepted values and their stored form", async () => {
    const cases: [Dir, Dir][] = [
      // source lists: keywords and schemes lower-cased, repeats dropped keeping the first, order kept
      [
        { name: "script-src", value: ["'SELF'", "https://A.example.com", "'self'", "HTTPS:", "'Unsafe-Eval'"] },
        { name: "script-src", value: ["'self'", "https://A.example.com", "https:", "'unsafe-eval'"] },
      ],
      [
        { name: "Script-Src", value: ["'self'"] },
        { name: "script-src", value: ["'self'"] },
      ],
      [
        {
          name: "img-src",
          value: ["*", "data:", "blob:", "https://*.example.com:443/img/", "example.com:*", "127.0.0.1:8080", "wss://live.example.com"],
        },
        {
          name: "img-src",
          value: ["*", "data:", "blob:", "https://*.example.com:443/img/", "example.com:*", "127.0.0.1:8080", "wss://live.example.com"],
        },
      ],
      // a path may hold any printable character but ? and # (browsers ignore a query or fragment)
      [
        { name: "script-src", value: ['https://cdn.example.com/a[1]{2}"x', "https://www.example.com/recaptcha/"] },
        { name: "script-src", value: ['https://cdn.example.com/a[1]{2}"x', "https://www.example.com/recaptcha/"] },
      ],
      [
        { name: "fenced-frame-src", value: ["https://ads.example"] },
        { name: "fenced-frame-src", value: ["https://ads.example"] },
      ],
      [
        { name: "script-src-elem", value: ["'inline-speculation-rules'", "'wasm-eval'", "'trusted-types-eval'", "'report-sha256'"] },
        { name: "script-src-elem", value: ["'inline-speculation-rules'", "'wasm-eval'", "'trusted-types-eval'", "'report-sha256'"] },
      ],
      [
        { name: "frame-ancestors", value: ["'NONE'", "https:", "*"] },
        { name: "frame-ancestors", value: ["'none'", "https:", "*"] },
      ],
      [
        {
          name: "script-src",
          value: [
            "'nonce-abc+/_-09='",
            "'SHA256-Abc='",
            "'sha384-xyz'",
            "'sha512-Q=='",
            "'strict-dynamic'",
            "'unsafe-hashes'",
            "'report-sample'",
            "'wasm-unsafe-eval'",
            "'inline-speculation-rules'",
          ],
        },
        {
          name: "script-src",
          value: [
            "'nonce-abc+/_-09='",
            "'sha256-Abc='",
            "'sha384-xyz'",
            "'sha512-Q=='",
            "'strict-dynamic'",
            "'unsafe-hashes'",
            "'report-sample'",
            "'wasm-unsafe-eval'",
            "'inline-speculation-rules'",
          ],
        },
      ],
      [
        { name: "object-src", value: ["'none'"] },
        { name: "object-src", value: ["'none'"] },
      ],
      [
        { name: "frame-ancestors", value: ["'self'", "https://partner.example.org"] },
        { name: "frame-ancestors", value: ["'self'", "https://partner.example.org"] },
      ],
      [
        { name: "form-action", value: ["'self'"] },
        { name: "form-action", value: ["'self'"] },
      ],
      // report-uri: URI references, absolute or relative
      [
        { name: "report-uri", value: ["/csp-report", "https://r.example.com/c?x=1", "/csp-report"] },
        { name: "report-uri", value: ["/csp-report", "https://r.example.com/c?x=1"] },
      ],
      // sandbox: 0+ tokens (lower-cased); value-less echoes []
      [{ name: "sandbox" }, { name: "sandbox", value: [] }],
      [
        { name: "sandbox", value: [] },
        { name: "sandbox", value: [] },
      ],
      [
        { name: "sandbox", value: ["allow-scripts", "ALLOW-FORMS", "allow-scripts"] },
        { name: "sandbox", value: ["allow-scripts", "allow-forms"] },
      ],
      [
        { name: "sandbox", value: [...SANDBOX_TOKENS] },
        { name: "sandbox", value: [...SANDBOX_TOKENS] },
      ],
      // upgrade-insecure-requests: no value, echoed without value
      [{ name: "upgrade-insecure-requests", value: [] }, { name: "upgrade-insecure-requests" }],
      [{ name: "upgrade-insecure-requests" }, { name: "upgrade-insecure-requests" }],
      // webrtc, require-trusted-types-for, trusted-types, report-to
      [
        { name: "webrtc", value: ["'allow'"] },
        { name: "webrtc", value: ["'allow'"] },
      ],
      [
        { name: "webrtc", value: ["'BLOCK'", "'block'"] },
        { name: "webrtc", value: ["'block'"] },
      ],
      [
        { name: "require-trusted-types-for", value: ["'script'"] },
        { name: "require-trusted-types-for", value: ["'script'"] },
      ],
      [{ name: "trusted-types" }, { name: "trusted-types", value: [] }],
      [
        { name: "trusted-types", value: ["default", "my-policy#1", "'allow-duplicates'", "'none'", "*", "dompurify"] },
        { name: "trusted-types", value: ["default", "my-policy#1", "'allow-duplicates'", "'none'", "*", "dompurify"] },
      ],
      [
        { name: "report-to", value: ["csp-endpoint"] },
        { name: "report-to", value: ["csp-endpoint"] },
      ],
    ];
    for (const [input, stored] of cases) {
      const p = await createDirectives(a, [input]);
      expect(p.directives).toEqual([stored]);
      if (stored.value === undefined) expect("value" in p.directives[0]).toBe(false);
    }
  });

  test("every directive value rule of §13.1: rejected values → 400 INVALID_INPUT naming the field", async () => {
    const cases: [unknown, string][] = [
      [[{ name: "default-src", value: [] }], "content.value[0].value"],
      [[{ name: "default-src" }], "content.value[0].value"],
      [[{ name: "script-src", value: ["'self'", "'unsafe_inline'"] }], "content.value[0].value[1]"],
      [[{ name: "script-src", value: ["a b"] }], "content.value[0].value[0]"],
      [[{ name: "script-src", value: ["a;b"] }], "content.value[0].value[0]"],
      [[{ name: "script-src", value: ["a,b"] }], "content.value[0].value[0]"],
      [[{ name: "script-src", value: [""] }], "content.value[0].value[0]"],
      [[{ name: "script-src", value: ["exämple.com"] }], "content.value[0].value[0]"],
      [[{ name: "script-src", value: [5] }], "content.value[0].value[0]"],
      [[{ name: "script-src", value: "'self'" }], "content.value[0].value"],
      [[{ name: "script-src", value: ["'nonce-a$b'"] }], "content.value[0].value[0]"],
      [[{ name: "script-src", value: ["'sha1-abc='"] }], "content.value[0].value[0]"],
      [[{ name: "script-src", value: ["https://exa_mple.com:99999999"] }], "content.value[0].value[0]"],
      [[{ name: "report-uri", value: [] }], "content.value[0].value"],
      [[{ name: "report-uri", value: ["http://[bad"] }], "content.value[0].value[0]"],
      [[{ name: "sandbox", value: ["allow-everything"] }], "content.value[0].value[0]"],
      [[{ name: "upgrade-insecure-requests", value: ["yes"] }], "content.value[0].value[0]"],
      [[{ name: "webrtc", value: [] }], "content.value[0].value"],
      [[{ name: "webrtc", value: ["allow"] }], "content.value[0].value[0]"],
      [[{ name: "webrtc", value: ["'allow'", "'block'"] }], "content.value[0].value"],
      [[{ name: "require-trusted-types-for", value: [] }], "content.value[0].value"],
      [[{ name: "require-trusted-types-for", value: ["'style'"] }], "content.value[0].value[0]"],
      [[{ name: "trusted-types", value: ["'unknown'"] }], "content.value[0].value[0]"],
      [[{ name: "trusted-types", value: ["bad!name"] }], "content.value[0].value[0]"],
      [[{ name: "report-to", value: [] }], "content.value[0].value"],
      [[{ name: "report-to", value: ["a", "b"] }], "content.value[0].value"],
      [[{ name: "report-to", value: ["a(b"] }], "content.value[0].value[0]"],
      // browsers drop these: IPv6 literals, '_' in host names, retired keywords, a query, keywords in frame-ancestors
      [[{ name: "img-src", value: ["'self'", "[::1]:8080"] }], "content.value[0].value[1]"],
      [[{ name: "img-src", value: ["exa_mple.com"] }], "content.value[0].value[0]"],
      [[{ name: "script-src", value: ["'unsafe-allow-redirects'"] }], "content.value[0].value[0]"],
      [[{ name: "script-src", value: ["https://www.google.com/?x=1"] }], "content.value[0].value[0]"],
      [[{ name: "frame-ancestors", value: ["'self'", "'unsafe-inline'"] }], "content.value[0].value[1]"],
      [[{ name: "img-src", value: ["'inline-speculation-rules'"] }], "content.value[0].value[0]"],
      [[{ name: "foo-src", value: ["'self'"] }], "content.value[0].name"],
      [[{ name: "block-all-mixed-content" }], "content.value[0].name"],
      [[{ value: ["'self'"] }], "content.value[0].name"],
      [
        [
          { name: "img-src", value: ["*"] },
          { name: "IMG-SRC", value: ["'self'"] },
        ],
        "content.value[1].name",
      ],
      [["default-src 'self'"], "content.value[0]"],
      [[], "content.value"],
      [Array.from({ length: 51 }, () => ({ name: "img-src", value: ["*"] })), "content.value"],
      ["default-src 'self'", "content.value"],
    ];
    for (const [value, field] of cases) {
      const res = await a.client.post(BASE, { name: "rejected", content: { type: "directives", value } });
      expect({ value, status: res.status, code: res.json?.code }).toEqual({ value, status: 400, code: "INVALID_INPUT" });
      expect(res.json.message.startsWith(`${field}:`)).toBe(true);
    }
    expect((await a.client.get(`${BASE}?q=rejected`)).json.total).toBe(0);
  });

  test("create body errors: name, content, type, tagIds → 400; duplicate name → 409", async () => {
    const content = { type: "directives", value: [{ name: "default-src", value: ["'self'"] }] };
    const cases: [Record<string, unknown>, string][] = [
      [{ content }, "name"],
      [{ name: "   ", content }, "name"],
      [{ name: "n".repeat(101), content }, "name"],
      [{ name: 5, content }, "name"],
      [{ name: "x" }, "content"],
      [{ name: "x", content: "default-src 'self'" }, "content"],
      [{ name: "x", content: { type: "yaml", value: "x" } }, "content.type"],
      [{ name: "x", content: { value: [] } }, "content.type"],
      [{ name: "x", content: { type: "serialized", value: 5 } }, "content.value"],
      [{ name: "x", content: { type: "remote", value: "https://example.com" } }, "content.value"],
      [{ name: "x", content, tagIds: "abc" }, "tagIds"],
      [{ name: "x", content, tagIds: [newId()] }, "tagIds"],
    ];
    for (const [body, field] of cases) {
      const res = await a.client.post(BASE, body);
      expect({ body, status: res.status, code: res.json?.code }).toEqual({ body, status: 400, code: "INVALID_INPUT" });
      expect(res.json.message.startsWith(field)).toBe(true);
    }
    expect((await a.client.post(BASE, { name: "n".repeat(100), content })).status).toBe(201);
    await a.client.post(BASE, { name: "dup", content });
    const dup = await a.client.post(BASE, { name: " dup ", content });
    expect(dup.status).toBe(409);
    expect(dup.json.code).toBe("DUPLICATE_NAME");
    // Names are unique per user: another user may use the same one.
    expect((await b.client.post(BASE, { name: "dup", content })).status).toBe(201);
  });

  test("401 without credentials on the user-only operations", async () => {
    const id = newId();
    expect((await srv.anon.get(BASE)).status).toBe(401);
    expect((await srv.anon.post(BASE, { name: "x", content: { type: "serialized", value: "default-src 'self'" } })).status).toBe(401);
    expect((await srv.anon.put(`${BASE}/${id}`, { name: "x" })).status).toBe(401);
    expect((await srv.anon.delete(`${BASE}/${id}`)).status).toBe(401);
    expect((await srv.anon.post(`${BASE}/${id}/_share`)).status).toBe(401);
    expect((await srv.anon.post(`${BASE}/${id}/_unshare`)).status).toBe(401);
    expect((await srv.anon.post(`${BASE}/_evaluate`, { serialized: "default-src 'self'" })).status).toBe(401);
    // Shared operations never answer 401.
    expect((await srv.anon.get(`${BASE}/${id}`)).status).toBe(404);
    expect((await serialize(undefined, id, "meta")).status).toBe(404);
  });
});

describe("csp: list", () => {
  test("list query: q, sort, order, pageSize, tags; items are full policies", async () => {
    const u = await srv.createUser();
    const tag = await insertTag(u.id, "prod");
    const p1 = await createDirectives(u, [{ name: "default-src", value: ["'self'"] }], { name: "Alpha policy", tagIds: [tag] });
    tick();
    const p2 = await createDirectives(u, [{ name: "img-src", value: ["*"] }], { name: "beta" });
    tick();
    const p3 = await createDirectives(u, [{ name: "object-src", value: ["'none'"] }], { name: "gamma alpha" });
    expect(p1.tags).toEqual([{ id: tag, name: "prod", color: "default" }]);
    expect(p1.tagIds).toEqual([tag]);

    const all = await u.client.get(BASE);
    expect(all.status).toBe(200);
    expect(all.json.total).toBe(3);
    expect(all.json.items.map((p: any) => p.id)).toEqual([p1.id, p2.id, p3.id]);
    expect(all.json.items[0]).toEqual(p1);
    expect((await u.client.get(`${BASE}?q=ALPHA`)).json.items.map((p: any) => p.id)).toEqual([p1.id, p3.id]);
    expect((await u.client.get(`${BASE}?q=${p2.id}`)).json.items.map((p: any) => p.id)).toEqual([p2.id]);
    expect((await u.client.get(`${BASE}?sort=createdAt&order=desc`)).json.items.map((p: any) => p.id)).toEqual([p3.id, p2.id, p1.id]);
    expect((await u.client.get(`${BASE}?tags=${tag}`)).json.items.map((p: any) => p.id)).toEqual([p1.id]);
    expect((await u.client.get(`${BASE}?globalTags=${tag}`)).json.total).toBe(1);
    const page = await u.client.get(`${BASE}?pageSize=1&page=1`);
    expect(page.json).toEqual({ items: [p2], total: 3 });
    expect((await u.client.get(`${BASE}?pageSize=0`)).json).toEqual({ items: [], total: 3 });
    expect((await u.client.get(`${BASE}?order=up`)).status).toBe(400);
    expect((await u.client.get(`${BASE}?page=-1`)).status).toBe(400);
  });
});

describe("csp: update", () => {
  test("name, directives, content and tagIds; 204 and GET shows the change with a newer updatedAt", async () => {
    const tag = await insertTag(a.id, "update-tag");
    const p = await createDirectives(a, [{ name: "default-src", value: ["'self'"] }]);
    const get = async () => (await a.client.get(`${BASE}/${p.id}`)).json.policy;

    tick();
    const r1 = await a.client.put(`${BASE}/${p.id}`, { name: " renamed " });
    expect(r1.status).toBe(204);
    expect(r1.text).toBe("");
    let cur = await get();
    expect(cur.name).toBe("renamed");
    expect(cur.directives).toEqual(p.directives);
    expect(cur.updatedAt).toBe(p.updatedAt + 10);
    expect(cur.createdAt).toBe(p.createdAt);

    const dirs = [{ name: "script-src", value: ["'none'"] }, { name: "upgrade-insecure-requests" }];
    expect((await a.client.put(`${BASE}/${p.id}`, { directives: dirs, name: null })).status).toBe(204);
    cur = await get();
    expect(cur.directives).toEqual(dirs);
    expect(cur.name).toBe("renamed");

    // Imported content with something dropped: 200 {warnings} (§13.3); without: 204.
    const withWarnings = await a.client.put(`${BASE}/${p.id}`, { content: { type: "serialized", value: "img-src 'self'; foo bar" } });
    expect(withWarnings.status).toBe(200);
    expect(withWarnings.json).toEqual({ warnings: ["foo: dropped (unknown directive)"] });
    expect((await get()).directives).toEqual([{ name: "img-src", value: ["'self'"] }]);
    expect((await a.client.put(`${BASE}/${p.id}`, { content: { type: "serialized", value: "img-src 'none'" } })).status).toBe(204);
    expect((await get()).directives).toEqual([{ name: "img-src", value: ["'none'"] }]);

    expect(
      (await a.client.put(`${BASE}/${p.id}`, { content: { type: "directives", value: [{ name: "base-uri", value: ["'none'"] }] } })).status,
    ).toBe(204);
    expect((await get()).directives).toEqual([{ name: "base-uri", value: ["'none'"] }]);

    expect((await a.client.put(`${BASE}/${p.id}`, { tagIds: [tag, tag] })).status).toBe(204);
    cur = await get();
    expect(cur.tagIds).toEqual([tag]);
    expect(cur.directives).toEqual([{ name: "base-uri", value: ["'none'"] }]);
    expect((await a.client.put(`${BASE}/${p.id}`, { tagIds: [] })).status).toBe(204);
    expect((await get()).tags).toEqual([]);
  });

  test("invalid updates → 400 and nothing changes; unknown, malformed or foreign id → 404; duplicate name → 409", async () => {
    const p = await createDirectives(a, [{ name: "default-src", value: ["'self'"] }]);
    const other = await createDirectives(a, [{ name: "default-src", value: ["'none'"] }]);
    const cases: [Record<string, unknown>, string][] = [
      [{}, "body"],
      [{ name: null, directives: null, content: null, tagIds: null }, "body"],
      [{ directives: [{ name: "img-src", value: ["*"] }], content: { type: "serialized", value: "img-src *" } }, "directives, content"],
      [{ directives: [] }, "directives"],
      [{ directives: [{ name: "img-src", value: ["a b"] }] }, "directives[0].value[0]"],
      [{ directives: "img-src *" }, "directives"],
      [{ content: { type: "serialized", value: "nothing-valid x" } }, "content.value"],
      [{ content: { type: "other" } }, "content.type"],
      [{ name: "" }, "name"],
      [{ tagIds: [newId()] }, "tagIds"],
    ];
    for (const [body, field] of cases) {
      const res = await a.client.put(`${BASE}/${p.id}`, body);
      expect({ body, status: res.status, code: res.json?.code }).toEqual({ body, status: 400, code: "INVALID_INPUT" });
      expect(res.json.message).toStartWith(field);
    }
    expect((await a.client.get(`${BASE}/${p.id}`)).json.policy).toEqual(p);
    // Body 400 comes before 404 (supplement §1 check order).
    expect((await a.client.put(`${BASE}/${newId()}`, {})).status).toBe(400);
    expect((await a.client.put(`${BASE}/${newId()}`, { name: "x" })).status).toBe(404);
    expect((await a.client.put(`${BASE}/not-a-uuid`, { name: "x" })).status).toBe(404);
    expect((await b.client.put(`${BASE}/${p.id}`, { name: "x" })).status).toBe(404);
    const dup = await a.client.put(`${BASE}/${p.id}`, { name: other.name });
    expect(dup.status).toBe(409);
    expect(dup.json.code).toBe("DUPLICATE_NAME");
    expect((await a.client.get(`${BASE}/${p.id}`)).json.policy).toEqual(p);
  });

  test("delete: 204, then 404; links to tags removed", async () => {
    const tag = await insertTag(a.id, "delete-tag");
    const p = await createDirectives(a, [{ name: "default-src", value: ["'self'"] }], { tagIds: [tag] });
    expect((await b.client.delete(`${BASE}/${p.id}`)).status).toBe(404);
    const del = await a.client.delete(`${BASE}/${p.id}`);
    expect(del.status).toBe(204);
    expect((await a.client.get(`${BASE}/${p.id}`)).status).toBe(404);
    expect((await a.client.delete(`${BASE}/${p.id}`)).status).toBe(404);
    expect((await a.client.delete(`${BASE}/nope`)).status).toBe(404);
    const links = await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM entity_tags WHERE entity_id = ?", [p.id]);
    expect(links!.n).toBe(0);
  });
});

describe("csp: _serialize", () => {
  const directives: Dir[] = [
    { name: "default-src", value: ["'self'"] },
    { name: "script-src", value: ["'self'", "https://cdn.example.com"] },
    { name: "sandbox", value: ["allow-scripts", "allow-forms"] },
    { name: "frame-ancestors", value: ["'none'"] },
    { name: "report-uri", value: ["/csp"] },
    { name: "report-to", value: ["csp-endpoint"] },
    { name: "trusted-types", value: [] },
    { name: "upgrade-insecure-requests" },
  ];

  test("each source, dropping what the delivery ignores; text/plain; charset=utf-8", async () => {
    const p = await createDirectives(a, directives);
    const expected: Record<string, string> = {
      enforcingHeader:
        "default-src 'self'; script-src 'self' https://cdn.example.com; sandbox allow-scripts allow-forms; frame-ancestors 'none'; report-uri /csp; report-to csp-endpoint; trusted-types; upgrade-insecure-requests",
      reportOnlyHeader:
        "default-src 'self'; script-src 'self' https://cdn.example.com; frame-ancestors 'none'; report-uri /csp; report-to csp-endpoint; trusted-types; upgrade-insecure-requests",
      meta: "default-src 'self'; script-src 'self' https://cdn.example.com; trusted-types; upgrade-insecure-requests",
    };
    for (const [source, text] of Object.entries(expected)) {
      const res = await serialize(a, p.id, source);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(res.text).toBe(text);
    }
    const bare = await createDirectives(a, [{ name: "sandbox" }]);
    expect((await serialize(a, bare.id, "enforcingHeader")).text).toBe("sandbox");
    expect((await serialize(a, bare.id, "meta")).text).toBe("");
  });

  test("the spec's example", async () => {
    const p = await createSerialized(a, "default-src 'self'; script-src 'self' https://cdn.example.com; upgrade-insecure-requests");
    expect((await serialize(a, p.id, "meta")).text).toBe("default-src 'self'; script-src 'self' https://cdn.example.com; upgrade-insecure-requests");
  });

  test("bad source → 400 (before 404); unknown, malformed or foreign id → 404", async () => {
    const p = await createDirectives(a, directives);
    for (const body of [{}, { source: "header" }, { source: 1 }, { source: "META" }]) {
      const res = await a.client.post(`${BASE}/${p.id}/_serialize`, body);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
      expect(res.json.message).toStartWith("source:");
    }
    expect((await a.client.post(`${BASE}/${newId()}/_serialize`, { source: "x" })).status).toBe(400);
    expect((await serialize(a, newId(), "meta")).status).toBe(404);
    expect((await serialize(a, "zzz", "meta")).status).toBe(404);
    expect((await serialize(b, p.id, "meta")).status).toBe(404);
    expect((await serialize(undefined, p.id, "meta")).status).toBe(404);
  });
});

// ---- round trip: random valid directive lists → serialize → import serialized → same directives ----------

/** mulberry32: a small seeded PRNG, so a failure names a reproducible case. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generator(seed: number) {
  const rnd = prng(seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const str = (alphabet: string, min: number, max: number) =>
    Array.from({ length: min + int(max - min + 1) }, () => alphabet[int(alphabet.length)]).join("");
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const LABEL = "abcdefghijklmnopqrstuvwxyz0123456789-";
  const label = () => str("abcdefghijklmnopqrstuvwxyz", 1, 1) + str(LABEL, 0, 8);
  const host = () => {
    let h = Array.from({ length: 1 + int(3) }, label).join(".");
    if (rnd() < 0.2) h = `*.${h}`;
    let s = rnd() < 0.6 ? `${pick(["https", "http", "wss", "ws", "custom+x"])}://${h}` : h;
    if (rnd() < 0.3) s += `:${rnd() < 0.2 ? "*" : 1 + int(65535)}`;
    if (rnd() < 0.3) s += `/${str("abcdefghij-._~%!$&'()*+=:@/", 0, 12)}`;
    return s;
  };
  const hash = () => {
    const [alg, bytes] = pick([
      ["sha256", 32],
      ["sha384", 48],
      ["sha512", 64],
    ] as const);
    const b64 = Buffer.from(Array.from({ length: bytes }, () => int(256))).toString("base64");
    return `'${alg}-${rnd() < 0.5 ? b64 : b64.replace(/=+$/, "")}'`;
  };
  const source = (name: string) => {
    const kind = int(6);
    if (name === "frame-ancestors")
      return kind === 0 ? pick(["'self'", "'none'"]) : kind === 3 ? pick(["https:", "http:", "wss:"]) : kind === 4 ? "*" : host();
    const keywords = [
      "'self'",
      "'unsafe-inline'",
      "'unsafe-eval'",
      "'strict-dynamic'",
      "'unsafe-hashes'",
      "'report-sample'",
      "'wasm-unsafe-eval'",
      "'none'",
    ];
    if (kind === 0) return pick(name === "script-src" || name === "script-src-elem" ? [...keywords, "'inline-speculation-rules'"] : keywords);
    if (kind === 1) return `'nonce-${str(B64 + "-_", 1, 24)}${pick(["", "=", "=="])}'`;
    if (kind === 2) return hash();
    if (kind === 3) return pick(["https:", "http:", "data:", "blob:", "wss:", "mediastream:", "filesystem:"]);
    if (kind === 4) return "*";
    return host();
  };
  const distinct = (make: () => string, min: number, max: number) => [...new Set(Array.from({ length: min + int(max - min + 1) }, make))];
  // the server's own catalogue (shared-rules.ts): a directive added there is generated here too
  const SOURCE_LISTS: readonly string[] = SOURCE_LIST_DIRECTIVES;
  const OTHERS: readonly string[] = OTHER_DIRECTIVES;
  const directive = (name: string): Dir => {
    if (SOURCE_LISTS.includes(name)) return { name, value: distinct(() => source(name), 1, 6) };
    switch (name) {
      case "report-uri":
        return { name, value: distinct(() => pick(["/csp", "/r?x=1", `https://${label()}.example/report`, `${label()}/rel`]), 1, 3) };
      case "sandbox":
        return { name, value: SANDBOX_TOKENS.filter(() => rnd() < 0.3) };
      case "upgrade-insecure-requests":
        return { name };
      case "webrtc":
        return { name, value: [pick(["'allow'", "'block'"])] };
      case "require-trusted-types-for":
        return { name, value: ["'script'"] };
      case "trusted-types":
        return { name, value: distinct(() => pick(["'none'", "'allow-duplicates'", "*", str("abcXYZ019-#=_/@.%", 1, 10)]), 0, 4) };
      default:
        return { name, value: [str("abcdefghijklmnopqrstuvwxyz0123456789-_.!#$%&*+^`|~", 1, 16)] };
    }
  };
  return () => {
    const names = [...SOURCE_LISTS, ...OTHERS].filter(() => rnd() < 0.35);
    if (names.length === 0) names.push(pick(SOURCE_LISTS));
    for (let i = names.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [names[i], names[j]] = [names[j]!, names[i]!];
    }
    return names.map(directive);
  };
}

describe("csp: round trip", () => {
  test("300 random valid directive lists: create → _serialize enforcingHeader → import serialized → same directives", async () => {
    const SEED = 20260101;
    const next = generator(SEED);
    const u = await srv.createUser();
    for (let i = 0; i < 300; i++) {
      const directives = next();
      const created = await u.client.post(BASE, { name: `rt-${i}`, content: { type: "directives", value: directives } });
      expect({ i, directives, status: created.status, error: created.json?.message }).toEqual({ i, directives, status: 201, error: undefined });
      expect(created.json.directives).toEqual(directives);
      const text = (await serialize(u, created.json.id, "enforcingHeader")).text;
      const imported = await u.client.post(BASE, { name: `rt-${i}-imported`, content: { type: "serialized", value: text } });
      expect({ i, text, status: imported.status }).toEqual({ i, text, status: 201 });
      expect({ i, text, directives: imported.json.directives }).toEqual({ i, text, directives });
    }
  });
});

// ---- sharing (§12.6) ---------------------------------------------------------------------------------------

describe("csp: sharing", () => {
  test("share is idempotent; anonymous GET and _serialize with the share header; userShare shown; tags hidden from others", async () => {
    const tag = await insertTag(a.id, "share-tag");
    const p = await createDirectives(a, [{ name: "default-src", value: ["'self'"] }, { name: "sandbox" }], { tagIds: [tag] });
    expect((await a.client.get(`${BASE}/${p.id}`)).json.userShare).toBeUndefined();

    const s1 = await a.client.post(`${BASE}/${p.id}/_share`);
    expect(s1.status).toBe(200);
    const share = s1.json;
    expect(Object.keys(share)).toEqual(["id", "resource", "createdAt"]);
    expect(share.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(share.resource).toEqual({ type: "contentSecurityPolicy", policyId: p.id });
    expect(share.createdAt).toBe(Math.floor(nowMs / 1000));
    expect((await a.client.post(`${BASE}/${p.id}/_share`)).json).toEqual(share);

    const owner = await a.client.get(`${BASE}/${p.id}`);
    expect(owner.json).toEqual({ policy: p, userShare: share });
    expect(owner.json.policy.tagIds).toEqual([tag]);

    const anon = await srv.anon.get(`${BASE}/${p.id}`, { headers: { "x-user-share-id": share.id } });
    expect(anon.status).toBe(200);
    expect(anon.json).toEqual({ policy: { ...p, tags: [], tagIds: [] }, userShare: share });
    const alias = await srv.anon.get(`${BASE}/${p.id}`, { headers: { "x-secbox-share-id": share.id.toUpperCase() } });
    expect(alias.status).toBe(200);
    // Both headers: X-User-Share-ID is the one used.
    expect((await srv.anon.get(`${BASE}/${p.id}`, { headers: { "x-user-share-id": share.id, "x-secbox-share-id": newId() } })).status).toBe(200);
    expect((await srv.anon.get(`${BASE}/${p.id}`, { headers: { "x-user-share-id": newId(), "x-secbox-share-id": share.id } })).status).toBe(404);
    // Invalid credentials are ignored on shared operations.
    expect((await srv.anon.get(`${BASE}/${p.id}`, { token: "garbage", headers: { "x-user-share-id": share.id } })).status).toBe(200);

    const ser = await serialize(undefined, p.id, "reportOnlyHeader", { "x-user-share-id": share.id });
    expect(ser.status).toBe(200);
    expect(ser.text).toBe("default-src 'self'");

    // Another user with the header: served as the owner's policy, without tags; without it: 404.
    const cross = await b.client.get(`${BASE}/${p.id}`, { headers: { "x-user-share-id": share.id } });
    expect(cross.json).toEqual({ policy: { ...p, tags: [], tagIds: [] }, userShare: share });
    expect((await b.client.get(`${BASE}/${p.id}`)).status).toBe(404);
    expect((await serialize(b, p.id, "meta", { "x-user-share-id": share.id })).text).toBe("default-src 'self'");

    // Only GET and _serialize honour the header.
    expect((await srv.anon.put(`${BASE}/${p.id}`, { name: "hijack" }, { headers: { "x-user-share-id": share.id } })).status).toBe(401);
    expect((await b.client.put(`${BASE}/${p.id}`, { name: "hijack" }, { headers: { "x-user-share-id": share.id } })).status).toBe(404);
    expect((await b.client.delete(`${BASE}/${p.id}`, { headers: { "x-user-share-id": share.id } })).status).toBe(404);
    expect((await b.client.post(`${BASE}/${p.id}/_share`, undefined, { headers: { "x-user-share-id": share.id } })).status).toBe(404);
    expect((await b.client.post(`${BASE}/_evaluate`, { policyId: p.id }, { headers: { "x-user-share-id": share.id } })).status).toBe(404);
    expect((await a.client.get(`${BASE}/${p.id}`)).json.policy.name).toBe(p.name);
  });

  test("wrong share ids → 404: another policy's share, unknown, malformed", async () => {
    const p = await createDirectives(a, [{ name: "default-src", value: ["'self'"] }]);
    const q = await createDirectives(a, [{ name: "default-src", value: ["'none'"] }]);
    const qShare = (await a.client.post(`${BASE}/${q.id}/_share`)).json;
    for (const id of [qShare.id, newId(), crypto.randomUUID(), "not-a-uuid", ""]) {
      expect((await srv.anon.get(`${BASE}/${p.id}`, { headers: { "x-user-share-id": id } })).status).toBe(404);
      expect((await serialize(undefined, p.id, "meta", { "x-user-share-id": id })).status).toBe(404);
    }
    // The share of q reaches q only.
    expect((await srv.anon.get(`${BASE}/${q.id}`, { headers: { "x-user-share-id": qShare.id } })).status).toBe(200);
  });

  test("unshare: 204, anonymous access ends, owner sees no userShare, a new share gets a new id", async () => {
    const p = await createDirectives(a, [{ name: "default-src", value: ["'self'"] }]);
    const share = (await a.client.post(`${BASE}/${p.id}/_share`)).json;
    const un = await a.client.post(`${BASE}/${p.id}/_unshare`);
    expect(un.status).toBe(204);
    expect((await srv.anon.get(`${BASE}/${p.id}`, { headers: { "x-user-share-id": share.id } })).status).toBe(404);
    expect((await serialize(undefined, p.id, "meta", { "x-user-share-id": share.id })).status).toBe(404);
    expect((await a.client.get(`${BASE}/${p.id}`)).json).toEqual({ policy: p });
    expect((await a.client.post(`${BASE}/${p.id}/_unshare`)).status).toBe(204);
    const again = (await a.client.post(`${BASE}/${p.id}/_share`)).json;
    expect(again.id).not.toBe(share.id);
    expect((await srv.anon.get(`${BASE}/${p.id}`, { headers: { "x-user-share-id": again.id } })).status).toBe(200);
  });

  test("unshare answers 204 for any id but only the owner's unshare takes effect", async () => {
    const p = await createDirectives(a, [{ name: "default-src", value: ["'self'"] }]);
    const share = (await a.client.post(`${BASE}/${p.id}/_share`)).json;
    for (const id of [p.id, newId(), "malformed"]) expect((await b.client.post(`${BASE}/${id}/_unshare`)).status).toBe(204);
    expect((await srv.anon.get(`${BASE}/${p.id}`, { headers: { "x-user-share-id": share.id } })).status).toBe(200);
    expect((await b.client.post(`${BASE}/${p.id}/_share`)).status).toBe(404);
    expect((await a.client.post(`${BASE}/${newId()}/_share`)).status).toBe(404);
    expect((await a.client.post(`${BASE}/bad/_share`)).status).toBe(404);
  });

  test("deleting a policy removes its share", async () => {
    const p = await createDirectives(a, [{ name: "default-src", value: ["'self'"] }]);
    const share = (await a.client.post(`${BASE}/${p.id}/_share`)).json;
    expect((await a.client.delete(`${BASE}/${p.id}`)).status).toBe(204);
    expect((await srv.anon.get(`${BASE}/${p.id}`, { headers: { "x-user-share-id": share.id } })).status).toBe(404);
    const rows = await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM shares WHERE id = ? OR resource_id = ?", [share.id, p.id]);
    expect(rows!.n).toBe(0);
  });
});

describe("csp: two users", () => {
  test("user B never sees user A's policies and gets 404 on every operation", async () => {
    const u1 = await srv.createUser();
    const u2 = await srv.createUser();
    const p = await createDirectives(u1, [{ name: "default-src", value: ["'self'"] }]);
    const mine = await createDirectives(u2, [{ name: "default-src", value: ["'none'"] }]);
    const list = await u2.client.get(BASE);
    expect(list.json.items.map((x: any) => x.id)).toEqual([mine.id]);
    expect((await u2.client.get(`${BASE}?q=${p.id}`)).json.total).toBe(0);
    expect((await u2.client.get(`${BASE}/${p.id}`)).status).toBe(404);
    expect((await u2.client.put(`${BASE}/${p.id}`, { name: "x" })).status).toBe(404);
    expect((await u2.client.delete(`${BASE}/${p.id}`)).status).toBe(404);
    expect((await serialize(u2, p.id, "meta")).status).toBe(404);
    expect((await u2.client.post(`${BASE}/${p.id}/_share`)).status).toBe(404);
    const ev = await u2.client.post(`${BASE}/_evaluate`, { policyId: p.id });
    expect(ev.status).toBe(404);
    expect(ev.json.code).toBe("NOT_FOUND");
    expect((await u1.client.get(`${BASE}/${p.id}`)).json.policy).toEqual(p);
  });
});
