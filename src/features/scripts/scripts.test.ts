import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newId } from "../../platform/core/ids";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";

// A clock the tests move forward, so createdAt/updatedAt differences are deterministic.
let nowMs = 1_767_225_600_000;
const clock = { now: () => nowMs };
const tick = (sec = 10) => (nowMs += sec * 1000);

let srv: TestServer;
let a: TestUser;

beforeAll(async () => {
  // The standard tier gets a tiny script limit; basic (the default) keeps 100.
  srv = await startTestServer({ clock, env: { SECBOX_SUBSCRIPTIONS_TIERS_STANDARD_MAX_SCRIPTS: "2" } });
  a = await srv.createUser();
});
afterAll(() => srv.stop());

/** Tag rows straight into the table: the tags routes are another feature. */
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

async function linkCount(scriptId: string): Promise<number> {
  return (await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM entity_tags WHERE entity_type = 'script' AND entity_id = ?", [scriptId]))!.n;
}

let seq = 0;
async function create(user: TestUser, fields: Record<string, unknown> = {}) {
  const res = await user.client.post("/api/user/scripts", { name: `script-${++seq}`, scriptType: "universal", content: "return 1;", ...fields });
  expect(res.status).toBe(201);
  return res.json;
}

describe("scripts: create and get", () => {
  test("POST 201 returns the full script; GET returns it with content", async () => {
    const res = await a.client.post("/api/user/scripts", {
      name: "  hmac-sign  ",
      scriptType: "api_configurator",
      content: "const x = 1;",
      extra: "ignored",
    });
    expect(res.status).toBe(201);
    const s = res.json;
    expect(Object.keys(s)).toEqual(["id", "name", "scriptType", "content", "tags", "tagIds", "createdAt", "updatedAt"]);
    expect(s.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    expect(s).toMatchObject({ name: "hmac-sign", scriptType: "api_configurator", content: "const x = 1;", tags: [], tagIds: [] });
    expect(s.createdAt).toBe(Math.floor(nowMs / 1000));
    expect(s.updatedAt).toBe(s.createdAt);

    const got = await a.client.get(`/api/user/scripts/${s.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(s);
  });

  test("401 without credentials on every endpoint", async () => {
    const id = newId();
    expect((await srv.anon.get("/api/user/scripts")).status).toBe(401);
    expect((await srv.anon.post("/api/user/scripts", { name: "x", scriptType: "universal", content: "x" })).status).toBe(401);
    expect((await srv.anon.get(`/api/user/scripts/${id}`)).status).toBe(401);
    expect((await srv.anon.put(`/api/user/scripts/${id}`, { name: "x" })).status).toBe(401);
    const del = await srv.anon.delete(`/api/user/scripts/${id}`);
    expect(del.status).toBe(401);
    expect(del.json.code).toBe("UNAUTHENTICATED");
  });

  test("invalid create bodies → 400 INVALID_INPUT naming the field", async () => {
    const base = { name: "valid", scriptType: "responder", content: "x" };
    const cases: [Record<string, unknown>, string][] = [
      [{ scriptType: "responder", content: "x" }, "name"],
      [{ ...base, name: "   " }, "name"],
      [{ ...base, name: "n".repeat(129) }, "name"],
      [{ ...base, name: 5 }, "name"],
      [{ ...base, scriptType: "javascript" }, "scriptType"],
      [{ name: "valid", content: "x" }, "scriptType"],
      [{ ...base, content: "" }, "content"],
      [{ ...base, content: 42 }, "content"],
      [{ name: "valid", scriptType: "responder" }, "content"],
      [{ ...base, tagIds: "abc" }, "tagIds"],
      [{ ...base, tagIds: ["not-a-uuid"] }, "tagIds"],
      [{ ...base, tagIds: [newId()] }, "tagIds"],
    ];
    for (const [body, field] of cases) {
      const res = await a.client.post("/api/user/scripts", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
      expect(res.json.message.startsWith(field)).toBe(true);
    }
    const list = await a.client.get("/api/user/scripts?q=valid");
    expect(list.json.total).toBe(0);
  });

  test("name of 128 characters is accepted; content limit counts UTF-8 bytes, not characters", async () => {
    const long = await create(a, { name: "n".repeat(128) });
    expect(long.name).toHaveLength(128);

    // "€" is 3 bytes in UTF-8: 17,066 × 3 + 2 = 51,200 bytes (17,068 characters) is the maximum.
    const max = "€".repeat(17_066) + "ab";
    const ok = await create(a, { content: max });
    expect(ok.content).toBe(max);
    const over = "€".repeat(17_067); // 51,201 bytes in only 17,067 characters
    const res = await a.client.post("/api/user/scripts", { name: "too-big", scriptType: "universal", content: over });
    expect(res.status).toBe(400);
    expect(res.json.message).toContain("content");

    const list = await a.client.get(`/api/user/scripts?q=${ok.id}`);
    expect(list.json.items[0].size).toBe(51_200);
  });

  test("syntax is not checked", async () => {
    const s = await create(a, { content: "function ( {{{ not js" });
    expect(s.content).toBe("function ( {{{ not js");
  });

  test("duplicate name → 409 DUPLICATE_NAME (after trimming); other case is another name", async () => {
    await create(a, { name: "dup-name" });
    const res = await a.client.post("/api/user/scripts", { name: " dup-name ", scriptType: "responder", content: "x" });
    expect(res.status).toBe(409);
    expect(res.json.code).toBe("DUPLICATE_NAME");
    await create(a, { name: "DUP-NAME" });
  });

  test("GET unknown id → 404, malformed id → 404", async () => {
    const res = await a.client.get(`/api/user/scripts/${newId()}`);
    expect(res.status).toBe(404);
    expect(res.json.code).toBe("NOT_FOUND");
    expect((await a.client.get("/api/user/scripts/not-a-uuid")).status).toBe(404);
  });
});

describe("scripts: tags", () => {
  test("tagIds collapse, sort by tag name; update replaces or keeps; delete removes links", async () => {
    const zeta = await insertTag(a.id, "zeta", "danger");
    const alpha = await insertTag(a.id, "alpha");
    const s = await create(a, { tagIds: [zeta, alpha, zeta.toUpperCase()] });
    expect(s.tags).toEqual([
      { id: alpha, name: "alpha", color: "default" },
      { id: zeta, name: "zeta", color: "danger" },
    ]);
    expect(s.tagIds).toEqual([alpha, zeta]);

    // absent tagIds keeps them
    const renamed = await a.client.put(`/api/user/scripts/${s.id}`, { name: "tagged-renamed" });
    expect(renamed.json.tagIds).toEqual([alpha, zeta]);
    // list filters by tags and decorates items
    const list = await a.client.get(`/api/user/scripts?tags=${zeta}`);
    expect(list.json.items.map((i: any) => i.id)).toEqual([s.id]);
    expect(list.json.items[0].tagIds).toEqual([alpha, zeta]);
    // present tagIds replaces
    const replaced = await a.client.put(`/api/user/scripts/${s.id}`, { tagIds: [alpha] });
    expect(replaced.status).toBe(200);
    expect(replaced.json.tagIds).toEqual([alpha]);
    expect((await a.client.get(`/api/user/scripts?tags=${zeta}`)).json.total).toBe(0);
    // more than 10 → 400
    const many = await Promise.all(Array.from({ length: 11 }, (_, i) => insertTag(a.id, `many-${i}`)));
    const tooMany = await a.client.put(`/api/user/scripts/${s.id}`, { tagIds: many });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.message).toContain("tagIds");

    expect(await linkCount(s.id)).toBe(1);
    expect((await a.client.delete(`/api/user/scripts/${s.id}`)).status).toBe(204);
    expect(await linkCount(s.id)).toBe(0);
  });
});

describe("scripts: list", () => {
  let user: TestUser;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    user = await srv.createUser();
    const types = ["responder", "api_configurator", "api_extractor", "page_extractor", "universal"];
    for (const [i, type] of types.entries()) {
      tick();
      // names in reverse type order, so sorting by name and by type differ
      const s = await create(user, { name: `${String.fromCharCode(101 - i)}-${type}`, scriptType: type, content: "é".repeat(i + 1) });
      ids[type] = s.id;
    }
  });

  test("items omit content and carry size in bytes; default sort by name", async () => {
    const res = await user.client.get("/api/user/scripts");
    expect(res.status).toBe(200);
    expect(res.json.total).toBe(5);
    const items = res.json.items;
    expect(items.map((i: any) => i.name)).toEqual(["a-universal", "b-page_extractor", "c-api_extractor", "d-api_configurator", "e-responder"]);
    for (const item of items) {
      expect(item.content).toBeUndefined();
      expect(Object.keys(item)).toEqual(["id", "name", "scriptType", "size", "tags", "tagIds", "createdAt", "updatedAt"]);
    }
    // "é" is 2 bytes: the universal script has 5 of them
    expect(items[0].size).toBe(10);
    expect(items[4].size).toBe(2);
  });

  test("sort by scriptType, createdAt, order desc; unknown sort falls back to name; bad order → 400", async () => {
    const types = async (qs: string) => (await user.client.get(`/api/user/scripts?${qs}`)).json.items.map((i: any) => i.scriptType);
    expect(await types("sort=scriptType")).toEqual(["api_configurator", "api_extractor", "page_extractor", "responder", "universal"]);
    expect(await types("sort=scriptType&order=desc")).toEqual(["universal", "responder", "page_extractor", "api_extractor", "api_configurator"]);
    expect(await types("sort=createdAt")).toEqual(["responder", "api_configurator", "api_extractor", "page_extractor", "universal"]);
    expect(await types("sort=bogus")).toEqual(["universal", "page_extractor", "api_extractor", "api_configurator", "responder"]);
    expect((await user.client.get("/api/user/scripts?order=sideways")).status).toBe(400);
  });

  test("context filter", async () => {
    const names = async (ctx: string) => {
      const res = await user.client.get(`/api/user/scripts?sort=scriptType&context=${ctx}`);
      expect(res.status).toBe(200);
      return res.json.items.map((i: any) => i.scriptType);
    };
    expect(await names("responder")).toEqual(["responder", "universal"]);
    expect(await names("api_tracker")).toEqual(["api_configurator", "api_extractor", "universal"]);
    expect(await names("page_tracker")).toEqual(["page_extractor", "universal"]);
    expect(await names("")).toHaveLength(5);
    const bad = await user.client.get("/api/user/scripts?context=universal");
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe("INVALID_INPUT");
    expect(bad.json.message).toContain("context");
  });

  test("context total, paging, q", async () => {
    const page = await user.client.get("/api/user/scripts?context=api_tracker&pageSize=1&page=1&sort=scriptType");
    expect(page.json.total).toBe(3);
    expect(page.json.items.map((i: any) => i.id)).toEqual([ids.api_extractor]);
    const zero = await user.client.get("/api/user/scripts?pageSize=0");
    expect(zero.json).toEqual({ items: [], total: 5 });
    const q = await user.client.get("/api/user/scripts?q=EXTRACT");
    expect(q.json.items.map((i: any) => i.name)).toEqual(["b-page_extractor", "c-api_extractor"]);
    expect((await user.client.get("/api/user/scripts?page=-1")).status).toBe(400);
  });
});

describe("scripts: update", () => {
  test("PUT changes name and content, bumps updatedAt; same scriptType accepted", async () => {
    const s = await create(a, { scriptType: "page_extractor" });
    tick(60);
    const res = await a.client.put(`/api/user/scripts/${s.id}`, { name: " renamed-script ", content: "return 2;", scriptType: "page_extractor" });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: s.id, name: "renamed-script", content: "return 2;", scriptType: "page_extractor", createdAt: s.createdAt });
    expect(res.json.updatedAt).toBe(s.updatedAt + 60);
    expect((await a.client.get(`/api/user/scripts/${s.id}`)).json).toEqual(res.json);

    const contentOnly = await a.client.put(`/api/user/scripts/${s.id}`, { content: "return 3;" });
    expect(contentOnly.json).toMatchObject({ name: "renamed-script", content: "return 3;" });
  });

  test("scriptType is immutable; empty update, bad values → 400; nothing changes", async () => {
    const s = await create(a, { scriptType: "responder" });
    const url = `/api/user/scripts/${s.id}`;
    const changed = await a.client.put(url, { scriptType: "universal", content: "new" });
    expect(changed.status).toBe(400);
    expect(changed.json.message).toContain("scriptType");
    for (const body of [
      {},
      { scriptType: "responder" },
      { name: "" },
      { content: "" },
      { content: "€".repeat(17_067) },
      { scriptType: "nope", content: "x" },
      { tagIds: [newId()] },
    ]) {
      const res = await a.client.put(url, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
    }
    expect((await a.client.get(url)).json).toEqual(s);
  });

  test("rename to an existing name → 409; keeping its own name is fine", async () => {
    await create(a, { name: "taken-name" });
    const s = await create(a, { name: "other-name" });
    const res = await a.client.put(`/api/user/scripts/${s.id}`, { name: "taken-name" });
    expect(res.status).toBe(409);
    expect(res.json.code).toBe("DUPLICATE_NAME");
    expect((await a.client.put(`/api/user/scripts/${s.id}`, { name: "other-name", content: "y" })).status).toBe(200);
  });

  test("PUT unknown or malformed id → 404 (valid body); bad body beats 404", async () => {
    expect((await a.client.put(`/api/user/scripts/${newId()}`, { name: "x" })).status).toBe(404);
    expect((await a.client.put("/api/user/scripts/123", { name: "x" })).status).toBe(404);
    expect((await a.client.put(`/api/user/scripts/${newId()}`, {})).status).toBe(400);
  });
});

describe("scripts: delete", () => {
  test("DELETE 204, then 404 on GET/PUT/DELETE; malformed id 404", async () => {
    const s = await create(a);
    const del = await a.client.delete(`/api/user/scripts/${s.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await a.client.get(`/api/user/scripts/${s.id}`)).status).toBe(404);
    expect((await a.client.put(`/api/user/scripts/${s.id}`, { name: "z" })).status).toBe(404);
    expect((await a.client.delete(`/api/user/scripts/${s.id}`)).status).toBe(404);
    expect((await a.client.delete("/api/user/scripts/xyz")).status).toBe(404);
    // the name is free again
    await create(a, { name: s.name });
  });
});

describe("scripts: limits", () => {
  test("max_scripts per tier → 400 LIMIT_REACHED; deleting frees a slot", async () => {
    const std = await srv.createUser(undefined, { tier: "standard" });
    const first = await create(std);
    await create(std);
    const res = await std.client.post("/api/user/scripts", { name: "third", scriptType: "universal", content: "x" });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("LIMIT_REACHED");
    expect((await std.client.get("/api/user/scripts")).json.total).toBe(2);
    await std.client.delete(`/api/user/scripts/${first.id}`);
    await create(std, { name: "third" });

    // the basic tier keeps the default limit of 100
    const basic = await srv.createUser();
    for (let i = 0; i < 3; i++) await create(basic);
  });
});

describe("scripts: isolation", () => {
  test("user B gets 404 on A's script, never sees it, cannot use A's tags; names are per user", async () => {
    const b = await srv.createUser();
    const tagA = await insertTag(a.id, "a-only");
    const s = await create(a, { name: "a-private", tagIds: [tagA] });
    const url = `/api/user/scripts/${s.id}`;
    expect((await b.client.get(url)).status).toBe(404);
    expect((await b.client.put(url, { name: "stolen" })).status).toBe(404);
    expect((await b.client.delete(url)).status).toBe(404);
    const listB = await b.client.get(`/api/user/scripts?q=${s.id}`);
    expect(listB.json).toEqual({ items: [], total: 0 });
    expect((await b.client.get("/api/user/scripts")).json.total).toBe(0);

    const foreignTag = await b.client.post("/api/user/scripts", { name: "b1", scriptType: "universal", content: "x", tagIds: [tagA] });
    expect(foreignTag.status).toBe(400);
    const same = await create(b, { name: "a-private" });
    expect(same.id).not.toBe(s.id);

    // A's script is untouched
    expect((await a.client.get(url)).json).toEqual(s);
  });
});
