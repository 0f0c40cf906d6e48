import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";

// A clock the tests drive, so createdAt/updatedAt orderings are deterministic.
let nowMs = 1_767_225_600_000;
const tick = (sec = 1) => (nowMs += sec * 1000);

let srv: TestServer;
let alice: TestUser;

beforeAll(async () => {
  srv = await startTestServer({
    clock: { now: () => nowMs },
    // New users get basic (the built-in default is ultimate, §27). The ultimate tier gets a tiny tag limit, standard
    // a large one; basic users keep the default of 100.
    env: {
      SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
      SECBOX_SUBSCRIPTIONS_TIERS_ULTIMATE_MAX_TAGS: "2",
      SECBOX_SUBSCRIPTIONS_TIERS_STANDARD_MAX_TAGS: "200",
    },
  });
  alice = await srv.createUser("alice@example.com");
});
afterAll(() => srv.stop());

const MISSING = "01890000-0000-7000-8000-000000000000";

async function mkTag(user: TestUser, name: string, color?: string) {
  tick();
  const res = await user.client.post("/api/user/tags", color === undefined ? { name } : { name, color });
  expect(res.status).toBe(201);
  return res.json as { id: string; name: string; color: string; createdAt: number; updatedAt: number };
}

describe("tags CRUD", () => {
  test("401 without credentials on every endpoint", async () => {
    expect((await srv.anon.get("/api/user/tags")).status).toBe(401);
    expect((await srv.anon.post("/api/user/tags", { name: "x" })).status).toBe(401);
    expect((await srv.anon.get(`/api/user/tags/${MISSING}`)).status).toBe(401);
    expect((await srv.anon.put(`/api/user/tags/${MISSING}`, { name: "x" })).status).toBe(401);
    const del = await srv.anon.delete(`/api/user/tags/${MISSING}`);
    expect(del.status).toBe(401);
    expect(del.json.code).toBe("UNAUTHENTICATED");
  });

  test("create: 201, name trimmed and lower-cased, colour default and hex lower-cased", async () => {
    const u = await srv.createUser();
    tick();
    const res = await u.client.post("/api/user/tags", { name: "  Prod Servers " });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({ id: expect.any(String), name: "prod servers", color: "default", createdAt: nowMs / 1000, updatedAt: nowMs / 1000 });
    expect(res.json.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    const hex = await u.client.post("/api/user/tags", { name: "hex", color: "#ABCDEF" });
    expect(hex.status).toBe(201);
    expect(hex.json.color).toBe("#abcdef");
    const short = await u.client.post("/api/user/tags", { name: "short", color: "#F0a" });
    expect(short.json.color).toBe("#f0a");
    for (const color of ["primary", "success", "accent", "warning", "danger", "default"]) {
      const r = await u.client.post("/api/user/tags", { name: `c-${color}`, color });
      expect(r.status).toBe(201);
      expect(r.json.color).toBe(color);
    }
    // null colour means "not set" → default
    const nul = await u.client.post("/api/user/tags", { name: "nullcolor", color: null });
    expect(nul.json.color).toBe("default");

    const got = await u.client.get(`/api/user/tags/${res.json.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(res.json);
  });

  test("create: 400 on bad name or colour, naming the field", async () => {
    const cases: [unknown, string][] = [
      [{}, "name"],
      [{ name: null }, "name"],
      [{ name: "" }, "name"],
      [{ name: "   " }, "name"],
      [{ name: "x".repeat(51) }, "name"],
      [{ name: 42 }, "name"],
      [{ name: "ok", color: "red" }, "color"],
      [{ name: "ok", color: "#abcd" }, "color"],
      [{ name: "ok", color: "#ggg" }, "color"],
      [{ name: "ok", color: "PRIMARY" }, "color"],
      [{ name: "ok", color: 7 }, "color"],
    ];
    for (const [body, field] of cases) {
      const res = await alice.client.post("/api/user/tags", body);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
      expect(res.json.message).toStartWith(`${field}:`);
    }
    const ok = await alice.client.post("/api/user/tags", { name: "y".repeat(50) });
    expect(ok.status).toBe(201);
    expect((await alice.client.post("/api/user/tags", "just a string")).status).toBe(400);
    const badJson = await alice.client.request("POST", "/api/user/tags", { raw: "{nope", headers: { "content-type": "application/json" } });
    expect(badJson.status).toBe(400);
    expect(badJson.json.code).toBe("INVALID_JSON");
  });

  test("name length counts characters, not UTF-16 units", async () => {
    const u = await srv.createUser();
    const thirty = await u.client.post("/api/user/tags", { name: "😀".repeat(30) }); // 30 characters, 60 units
    expect(thirty.status).toBe(201);
    expect(thirty.json.name).toBe("😀".repeat(30));
    expect((await u.client.post("/api/user/tags", { name: "😀".repeat(50) })).status).toBe(201);
    const tooLong = await u.client.post("/api/user/tags", { name: "😀".repeat(51) });
    expect([tooLong.status, tooLong.json.code]).toEqual([400, "INVALID_INPUT"]);
    expect(tooLong.json.message).toStartWith("name:");
  });

  test("duplicate name → 409 DUPLICATE_NAME, compared after normalising", async () => {
    const u = await srv.createUser();
    await mkTag(u, "dup");
    const res = await u.client.post("/api/user/tags", { name: " DUP " });
    expect(res.status).toBe(409);
    expect(res.json.code).toBe("DUPLICATE_NAME");
    // another user may use the same name
    expect((await alice.client.post("/api/user/tags", { name: "dup" })).status).toBe(201);
  });

  test("update: name and/or colour, 400 without either, 409 on a taken name, 404 unknown", async () => {
    const u = await srv.createUser();
    const a = await mkTag(u, "alpha", "primary");
    const b = await mkTag(u, "beta");

    const empty = await u.client.put(`/api/user/tags/${a.id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.json.code).toBe("INVALID_INPUT");
    expect((await u.client.put(`/api/user/tags/${a.id}`, { name: null, color: null })).status).toBe(400);
    expect((await u.client.put(`/api/user/tags/${a.id}`, { color: "blue" })).status).toBe(400);
    expect((await u.client.put(`/api/user/tags/${a.id}`, { name: "" })).status).toBe(400);

    tick(5);
    const renamed = await u.client.put(`/api/user/tags/${a.id}`, { name: " Gamma " });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toEqual({ id: a.id, name: "gamma", color: "primary", createdAt: a.createdAt, updatedAt: nowMs / 1000 });

    tick();
    const recolored = await u.client.put(`/api/user/tags/${a.id}`, { color: "#112233" });
    expect(recolored.json).toMatchObject({ name: "gamma", color: "#112233", updatedAt: nowMs / 1000 });

    const both = await u.client.put(`/api/user/tags/${a.id}`, { name: "delta", color: "danger" });
    expect(both.json).toMatchObject({ name: "delta", color: "danger" });
    expect((await u.client.get(`/api/user/tags/${a.id}`)).json).toEqual(both.json);

    // renaming to its own name is fine; to another tag's name is not
    expect((await u.client.put(`/api/user/tags/${a.id}`, { name: "DELTA" })).status).toBe(200);
    const taken = await u.client.put(`/api/user/tags/${a.id}`, { name: b.name });
    expect(taken.status).toBe(409);
    expect(taken.json.code).toBe("DUPLICATE_NAME");

    expect((await u.client.put(`/api/user/tags/${MISSING}`, { name: "zzz" })).status).toBe(404);
    expect((await u.client.put("/api/user/tags/not-a-uuid", { name: "zzz" })).status).toBe(404);
    // body check comes before the lookup
    expect((await u.client.put(`/api/user/tags/${MISSING}`, {})).status).toBe(400);
  });

  test("get / delete: 404 unknown or malformed id, 204 then gone", async () => {
    const u = await srv.createUser();
    const tag = await mkTag(u, "temp");
    expect((await u.client.get(`/api/user/tags/${MISSING}`)).status).toBe(404);
    const bad = await u.client.get("/api/user/tags/nope");
    expect(bad.status).toBe(404);
    expect(bad.json.code).toBe("NOT_FOUND");
    expect((await u.client.delete("/api/user/tags/nope")).status).toBe(404);

    const del = await u.client.delete(`/api/user/tags/${tag.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect((await u.client.get(`/api/user/tags/${tag.id}`)).status).toBe(404);
    expect((await u.client.delete(`/api/user/tags/${tag.id}`)).status).toBe(404);
    expect((await u.client.get("/api/user/tags")).json).toEqual({ items: [], total: 0 });
    // the name is free again
    expect((await u.client.post("/api/user/tags", { name: "temp" })).status).toBe(201);
  });

  test("deleting a tag removes it from every entity without touching their updatedAt", async () => {
    const u = await srv.createUser();
    const keep = await mkTag(u, "keep");
    const gone = await mkTag(u, "gone");
    tick();
    const s1 = await u.client.post("/api/user/secrets", { name: "S1", value: "v1", tagIds: [gone.id, keep.id] });
    const s2 = await u.client.post("/api/user/secrets", { name: "S2", value: "v2", tagIds: [gone.id] });
    expect(s1.status).toBe(201);
    expect(s1.json.tagIds).toEqual([gone.id, keep.id]); // name ascending
    expect(s2.json.tags).toEqual([{ id: gone.id, name: "gone", color: "default" }]);

    tick(10);
    expect((await u.client.delete(`/api/user/tags/${gone.id}`)).status).toBe(204);
    const after1 = await u.client.get(`/api/user/secrets/${s1.json.id}`);
    expect(after1.json.tagIds).toEqual([keep.id]);
    expect(after1.json.tags).toEqual([{ id: keep.id, name: "keep", color: "default" }]);
    expect(after1.json.updatedAt).toBe(s1.json.updatedAt);
    const after2 = await u.client.get(`/api/user/secrets/${s2.json.id}`);
    expect(after2.json).toMatchObject({ tags: [], tagIds: [], updatedAt: s2.json.updatedAt });
    // filtering by the deleted tag finds nothing
    expect((await u.client.get(`/api/user/secrets?tags=${gone.id}`)).json.total).toBe(0);
    // renaming a tag shows on the entity at once
    await u.client.put(`/api/user/tags/${keep.id}`, { name: "kept", color: "success" });
    expect((await u.client.get(`/api/user/secrets/${s1.json.id}`)).json.tags).toEqual([{ id: keep.id, name: "kept", color: "success" }]);
  });

  test("max_tags of the user's tier → 400 LIMIT_REACHED", async () => {
    const u = await srv.createUser(undefined, { tier: "ultimate" });
    const t1 = await mkTag(u, "one");
    await mkTag(u, "two");
    const third = await u.client.post("/api/user/tags", { name: "three" });
    expect(third.status).toBe(400);
    expect(third.json.code).toBe("LIMIT_REACHED");
    expect((await u.client.get("/api/user/tags")).json.total).toBe(2);
    // deleting frees a slot
    expect((await u.client.delete(`/api/user/tags/${t1.id}`)).status).toBe(204);
    expect((await u.client.post("/api/user/tags", { name: "three" })).status).toBe(201);
    // a basic-tier user is not held to the ultimate override
    const basic = await srv.createUser();
    for (const n of ["a", "b", "c"]) expect((await basic.client.post("/api/user/tags", { name: n })).status).toBe(201);
  });
});

describe("tags list query", () => {
  let u: TestUser;
  let byName: Record<string, { id: string; name: string; createdAt: number; updatedAt: number }>;

  beforeAll(async () => {
    u = await srv.createUser();
    byName = {};
    // created in this order, one second apart: createdAt order differs from name order
    for (const name of ["delta", "alpha", "charlie", "bravo", "100%_done", "100x-done", "echo"]) byName[name] = await mkTag(u, name);
    tick();
    await u.client.put(`/api/user/tags/${byName.alpha!.id}`, { color: "danger" }); // alpha becomes most recently updated
  });

  const names = async (qs: string) => {
    const res = await u.client.get(`/api/user/tags${qs}`);
    expect(res.status).toBe(200);
    return { names: (res.json.items as { name: string }[]).map((i) => i.name), total: res.json.total as number };
  };

  test("default: name ascending, page size 15, page wrapper", async () => {
    const res = await u.client.get("/api/user/tags");
    expect(res.json.total).toBe(7);
    expect(res.json.items.map((i: any) => i.name)).toEqual(["100%_done", "100x-done", "alpha", "bravo", "charlie", "delta", "echo"]);
    expect(Object.keys(res.json.items[0]).sort()).toEqual(["color", "createdAt", "id", "name", "updatedAt"]);
  });

  test("page and pageSize (clamped to 100, 0 → no items but true total, negative → 400)", async () => {
    expect(await names("?pageSize=2")).toEqual({ names: ["100%_done", "100x-done"], total: 7 });
    expect(await names("?pageSize=2&page=1")).toEqual({ names: ["alpha", "bravo"], total: 7 });
    expect(await names("?pageSize=2&page=3")).toEqual({ names: ["echo"], total: 7 });
    expect(await names("?pageSize=2&page=9")).toEqual({ names: [], total: 7 });
    expect(await names("?pageSize=0")).toEqual({ names: [], total: 7 });
    expect((await names("?pageSize=1000")).names).toHaveLength(7);
    for (const qs of ["?page=-1", "?pageSize=-1", "?page=abc", "?pageSize=1.5"]) {
      const res = await u.client.get(`/api/user/tags${qs}`);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
    }
  });

  test("pageSize above 100 is clamped to 100", async () => {
    const big = await srv.createUser(undefined, { tier: "standard" });
    for (let i = 0; i < 101; i++) expect((await big.client.post("/api/user/tags", { name: `t${String(i).padStart(3, "0")}` })).status).toBe(201);
    const res = await big.client.get("/api/user/tags?pageSize=500");
    expect(res.json.total).toBe(101);
    expect(res.json.items).toHaveLength(100);
    const p1 = await big.client.get("/api/user/tags?pageSize=500&page=1");
    expect(p1.json.items.map((i: any) => i.name)).toEqual(["t100"]);
  });

  test("sort createdAt / updatedAt / name, order desc, unknown sort falls back to name, bad order → 400", async () => {
    expect((await names("?sort=createdAt")).names).toEqual(["delta", "alpha", "charlie", "bravo", "100%_done", "100x-done", "echo"]);
    expect((await names("?sort=createdAt&order=desc")).names).toEqual(["echo", "100x-done", "100%_done", "bravo", "charlie", "alpha", "delta"]);
    expect((await names("?sort=updatedAt&order=desc")).names[0]).toBe("alpha");
    expect((await names("?sort=name&order=desc")).names).toEqual(["echo", "delta", "charlie", "bravo", "alpha", "100x-done", "100%_done"]);
    expect((await names("?sort=color")).names).toEqual((await names("")).names);
    expect((await names("?sort=bogus&order=desc")).names[0]).toBe("echo");
    const bad = await u.client.get("/api/user/tags?order=sideways");
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe("INVALID_INPUT");
    expect(bad.json.message).toStartWith("order:");
  });

  test("q: case-insensitive substring, % and _ literal, exact id", async () => {
    expect((await names("?q=HAR")).names).toEqual(["charlie"]);
    expect((await names("?q=%20a%20")).names).toEqual(["alpha", "bravo", "charlie", "delta"]); // trimmed "a"
    expect((await names(`?q=${encodeURIComponent("%")}`)).names).toEqual(["100%_done"]);
    expect((await names(`?q=${encodeURIComponent("_")}`)).names).toEqual(["100%_done"]);
    expect((await names(`?q=${encodeURIComponent("0%_d")}`)).names).toEqual(["100%_done"]);
    expect((await names("?q=zzz")).total).toBe(0);
    expect((await names(`?q=${byName.bravo!.id}`)).names).toEqual(["bravo"]);
    expect((await names("?q=")).total).toBe(7);
  });
});

describe("two users", () => {
  test("user B cannot see, read, change or delete user A's tags", async () => {
    const a = await srv.createUser();
    const b = await srv.createUser();
    const tag = await mkTag(a, "private");
    expect((await b.client.get(`/api/user/tags/${tag.id}`)).status).toBe(404);
    expect((await b.client.put(`/api/user/tags/${tag.id}`, { name: "mine" })).status).toBe(404);
    expect((await b.client.delete(`/api/user/tags/${tag.id}`)).status).toBe(404);
    expect((await b.client.get("/api/user/tags")).json).toEqual({ items: [], total: 0 });
    expect((await b.client.get(`/api/user/tags?q=${tag.id}`)).json.total).toBe(0);
    // B cannot attach A's tag to its own secret
    const foreign = await b.client.post("/api/user/secrets", { name: "X", value: "v", tagIds: [tag.id] });
    expect(foreign.status).toBe(400);
    expect(foreign.json.message).toStartWith("tagIds");
    // A's tag is intact
    expect((await a.client.get(`/api/user/tags/${tag.id}`)).json.name).toBe("private");
  });
});
