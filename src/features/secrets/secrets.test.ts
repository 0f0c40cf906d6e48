import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ApiError } from "../../platform/core/errors";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import type { SecretsSelector } from "./contract";
import { selectorFromText, selectorToText, withoutSecret, type SecretsService } from "./service";

let nowMs = 1_767_225_600_000;
const tick = (sec = 1) => (nowMs += sec * 1000);

let srv: TestServer;
let secrets: SecretsService;

beforeAll(async () => {
  srv = await startTestServer({
    clock: { now: () => nowMs },
    // New users get basic (the built-in default is ultimate, §27); ultimate gets a tiny secret limit.
    env: { SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic", SECBOX_SUBSCRIPTIONS_TIERS_ULTIMATE_MAX_SECRETS: "2" },
  });
  secrets = srv.services.secrets;
});
afterAll(() => srv.stop());

const MISSING = "01890000-0000-7000-8000-000000000000";

async function mkTag(user: TestUser, name: string) {
  const res = await user.client.post("/api/user/tags", { name });
  expect(res.status).toBe(201);
  return res.json.id as string;
}

async function mkSecret(user: TestUser, name: string, value = `value-of-${name}`, tagIds?: string[]) {
  tick();
  const res = await user.client.post("/api/user/secrets", tagIds ? { name, value, tagIds } : { name, value });
  expect(res.status).toBe(201);
  return res.json as { id: string; name: string; tags: any[]; tagIds: string[]; createdAt: number; updatedAt: number };
}

/** Expects an ApiError 400 INVALID_INPUT whose message starts with `field`. */
async function rejects400(p: Promise<unknown>, field: string) {
  let caught: unknown;
  try {
    await p;
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(ApiError);
  const e = caught as ApiError;
  expect(e.status).toBe(400);
  expect(e.code).toBe("INVALID_INPUT");
  expect(e.message).toStartWith(field);
}

describe("secrets CRUD", () => {
  test("401 without credentials on every endpoint", async () => {
    expect((await srv.anon.get("/api/user/secrets")).status).toBe(401);
    expect((await srv.anon.post("/api/user/secrets", { name: "A", value: "v" })).status).toBe(401);
    expect((await srv.anon.get(`/api/user/secrets/${MISSING}`)).status).toBe(401);
    expect((await srv.anon.put(`/api/user/secrets/${MISSING}`, { value: "v" })).status).toBe(401);
    const del = await srv.anon.delete(`/api/user/secrets/${MISSING}`);
    expect(del.status).toBe(401);
    expect(del.json.code).toBe("UNAUTHENTICATED");
  });

  test("create → 201 metadata only; get → 200; the value never appears in a response", async () => {
    const u = await srv.createUser();
    const value = "ghp_SuperSecretValue_123";
    tick();
    const res = await u.client.post("/api/user/secrets", { name: "GITHUB_TOKEN", value });
    expect(res.status).toBe(201);
    expect(res.json).toEqual({
      id: expect.any(String),
      name: "GITHUB_TOKEN",
      tags: [],
      tagIds: [],
      createdAt: nowMs / 1000,
      updatedAt: nowMs / 1000,
    });
    expect(res.text).not.toContain(value);

    const got = await u.client.get(`/api/user/secrets/${res.json.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(res.json);
    expect(got.text).not.toContain(value);

    const list = await u.client.get("/api/user/secrets");
    expect(list.json).toEqual({ items: [res.json], total: 1 });
    expect(list.text).not.toContain(value);

    const upd = await u.client.put(`/api/user/secrets/${res.json.id}`, { value: "another-secret-value" });
    expect(upd.status).toBe(200);
    expect(upd.text).not.toContain("another-secret-value");
    expect(Object.keys(upd.json).sort()).toEqual(["createdAt", "id", "name", "tagIds", "tags", "updatedAt"]);
  });

  test("create: name rules (pattern, case-sensitive, 409 duplicate)", async () => {
    const u = await srv.createUser();
    for (const name of ["1ABC", "_A", "A B", "A.B", "ÄBC", "A".repeat(129), "", 42]) {
      const res = await u.client.post("/api/user/secrets", { name, value: "v" });
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
      expect(res.json.message).toStartWith("name:");
    }
    expect((await u.client.post("/api/user/secrets", { value: "v" })).json.message).toStartWith("name:");
    await mkSecret(u, "A".repeat(128));
    await mkSecret(u, "x");
    await mkSecret(u, "My_Secret-1");
    await mkSecret(u, "TOKEN");
    await mkSecret(u, "token"); // names are case-sensitive
    const dup = await u.client.post("/api/user/secrets", { name: "TOKEN", value: "other" });
    expect(dup.status).toBe(409);
    expect(dup.json.code).toBe("DUPLICATE_NAME");
    expect((await u.client.get("/api/user/secrets?pageSize=0")).json.total).toBe(5);
  });

  test("create: value is a string of 1..10,240 UTF-8 bytes", async () => {
    const u = await srv.createUser();
    for (const value of ["", 12, null, ["a"], "é".repeat(5121) /* 10,242 bytes */]) {
      const res = await u.client.post("/api/user/secrets", { name: "V", value });
      expect(res.status).toBe(400);
      expect(res.json.message).toStartWith("value:");
    }
    const max = await u.client.post("/api/user/secrets", { name: "V", value: "é".repeat(5120) });
    expect(max.status).toBe(201);
    expect(await secrets.valuesFor(u.id, "all")).toEqual({ V: "é".repeat(5120) });
  });

  test("create: tagIds validated (array of own tag ids, repeats collapse, at most 10)", async () => {
    const u = await srv.createUser();
    const t1 = await mkTag(u, "zeta");
    const t2 = await mkTag(u, "alpha");
    for (const tagIds of ["x", [1], ["not-a-uuid"], [MISSING]]) {
      const res = await u.client.post("/api/user/secrets", { name: "T", value: "v", tagIds });
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
      expect(res.json.message).toStartWith("tagIds");
    }
    const eleven: string[] = [];
    for (let i = 0; i < 11; i++) eleven.push(await mkTag(u, `t${i}`));
    expect((await u.client.post("/api/user/secrets", { name: "T", value: "v", tagIds: eleven })).status).toBe(400);

    const s = await mkSecret(u, "T", "v", [t1, t2, t1, t1.toUpperCase()]);
    expect(s.tagIds).toEqual([t2, t1]); // collapsed, tag name ascending
    expect(s.tags).toEqual([
      { id: t2, name: "alpha", color: "default" },
      { id: t1, name: "zeta", color: "default" },
    ]);
    const ten = await mkSecret(u, "T10", "v", eleven.slice(0, 10));
    expect(ten.tagIds).toHaveLength(10);
  });

  test("update: value and/or tagIds, at least one; name immutable; 404", async () => {
    const u = await srv.createUser();
    const tag = await mkTag(u, "prod");
    const s = await mkSecret(u, "API_KEY", "first");

    for (const body of [{}, { name: "API_KEY" }, { value: null, tagIds: null }]) {
      const res = await u.client.put(`/api/user/secrets/${s.id}`, body);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
    }
    expect((await u.client.put(`/api/user/secrets/${s.id}`, { value: "" })).status).toBe(400);
    const renamed = await u.client.put(`/api/user/secrets/${s.id}`, { name: "OTHER", value: "x" });
    expect(renamed.status).toBe(400);
    expect(renamed.json.message).toStartWith("name:");
    expect((await u.client.put(`/api/user/secrets/${s.id}`, { name: "api_key", value: "x" })).status).toBe(400);
    expect((await u.client.put(`/api/user/secrets/${s.id}`, { tagIds: [MISSING] })).status).toBe(400);
    expect(await secrets.valuesFor(u.id, "all")).toEqual({ API_KEY: "first" }); // nothing changed so far

    tick(7);
    const same = await u.client.put(`/api/user/secrets/${s.id}`, { name: "API_KEY", value: "second" });
    expect(same.status).toBe(200);
    expect(same.json).toEqual({ ...s, updatedAt: nowMs / 1000 });
    expect(await secrets.valuesFor(u.id, "all")).toEqual({ API_KEY: "second" });

    tick();
    const tagged = await u.client.put(`/api/user/secrets/${s.id}`, { tagIds: [tag] });
    expect(tagged.json).toMatchObject({ tagIds: [tag], tags: [{ id: tag, name: "prod", color: "default" }], updatedAt: nowMs / 1000 });
    expect(await secrets.valuesFor(u.id, "all")).toEqual({ API_KEY: "second" }); // value kept

    const valueOnly = await u.client.put(`/api/user/secrets/${s.id}`, { value: "third" });
    expect(valueOnly.json.tagIds).toEqual([tag]); // absent tagIds keeps the tags
    const cleared = await u.client.put(`/api/user/secrets/${s.id}`, { tagIds: [] });
    expect(cleared.json.tagIds).toEqual([]);
    expect((await u.client.get(`/api/user/secrets/${s.id}`)).json.tagIds).toEqual([]);

    expect((await u.client.put(`/api/user/secrets/${MISSING}`, { value: "x" })).status).toBe(404);
    expect((await u.client.put("/api/user/secrets/nope", { value: "x" })).status).toBe(404);
    expect((await u.client.put(`/api/user/secrets/${MISSING}`, {})).status).toBe(400); // body before lookup
  });

  test("get / delete: 404 unknown or malformed, 204, tag links removed, delete listeners run", async () => {
    const u = await srv.createUser();
    const tag = await mkTag(u, "t");
    const s = await mkSecret(u, "GONE", "v", [tag]);
    expect((await u.client.get(`/api/user/secrets/${MISSING}`)).status).toBe(404);
    const bad = await u.client.get("/api/user/secrets/xyz");
    expect(bad.status).toBe(404);
    expect(bad.json.code).toBe("NOT_FOUND");
    expect((await u.client.delete("/api/user/secrets/xyz")).status).toBe(404);

    const events: { userId: string; secretId: string }[] = [];
    secrets.onDelete(async (_tx, event) => {
      if (event.userId === u.id) events.push(event);
    });
    const del = await u.client.delete(`/api/user/secrets/${s.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect(events).toEqual([{ userId: u.id, secretId: s.id }]);
    expect((await u.client.get(`/api/user/secrets/${s.id}`)).status).toBe(404);
    expect((await u.client.delete(`/api/user/secrets/${s.id}`)).status).toBe(404);
    expect(events).toHaveLength(1);
    const links = await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM entity_tags WHERE entity_id = ?", [s.id]);
    expect(links?.n).toBe(0);
    // the tag itself stays, and the name can be reused
    expect((await u.client.get(`/api/user/tags/${tag}`)).status).toBe(200);
    await mkSecret(u, "GONE");
  });

  test("a delete listener runs inside the transaction: its failure rolls the deletion back", async () => {
    const u = await srv.createUser();
    const s = await mkSecret(u, "PINNED");
    secrets.onDelete(async (tx, event) => {
      // what a responder's listener does: rewrite its stored selector in the same transaction
      const row = await tx.get<{ n: number }>("SELECT COUNT(*) AS n FROM secrets WHERE id = ?", [event.secretId]);
      expect(row?.n).toBe(0); // already deleted within this transaction
      // (a status the operation documents: every response the tests see is checked against the API document)
      if (event.secretId === s.id) throw new ApiError(404, "NOT_FOUND", "pinned");
    });
    const res = await u.client.delete(`/api/user/secrets/${s.id}`);
    expect([res.status, res.json.message]).toEqual([404, "pinned"]);
    expect((await u.client.get(`/api/user/secrets/${s.id}`)).status).toBe(200);
    expect(await secrets.valuesFor(u.id, "all")).toEqual({ PINNED: "value-of-PINNED" });
  });

  test("max_secrets of the user's tier → 400 LIMIT_REACHED", async () => {
    const u = await srv.createUser(undefined, { tier: "ultimate" });
    const first = await mkSecret(u, "ONE");
    await mkSecret(u, "TWO");
    const third = await u.client.post("/api/user/secrets", { name: "THREE", value: "v" });
    expect(third.status).toBe(400);
    expect(third.json.code).toBe("LIMIT_REACHED");
    expect((await u.client.get("/api/user/secrets")).json.total).toBe(2);
    expect((await u.client.delete(`/api/user/secrets/${first.id}`)).status).toBe(204);
    await mkSecret(u, "THREE");
    const basic = await srv.createUser();
    for (const n of ["A", "B", "C"]) await mkSecret(basic, n);
  });

  test("at rest: AES-GCM sealed with the secret id as additional data; plaintext not in the database file", async () => {
    const u = await srv.createUser();
    const plaintext = "PLAINTEXT-MARKER-7f3a9c1e-do-not-store";
    const s = await mkSecret(u, "AT_REST", plaintext);
    const row = await srv.rt.db.get<{ value_enc: Uint8Array }>("SELECT value_enc FROM secrets WHERE id = ?", [s.id]);
    const enc = Buffer.from(row!.value_enc);
    expect(enc.includes(Buffer.from(plaintext))).toBe(false);
    expect(enc.length).toBe(12 + Buffer.byteLength(plaintext) + 16); // nonce || ciphertext || tag
    expect(srv.rt.secretBox.openString(enc, s.id)).toBe(plaintext);
    expect(() => srv.rt.secretBox.openString(enc, MISSING)).toThrow(); // bound to its row

    // two secrets with the same value get different ciphertexts (random nonce)
    const s2 = await mkSecret(u, "AT_REST_2", plaintext);
    const row2 = await srv.rt.db.get<{ value_enc: Uint8Array }>("SELECT value_enc FROM secrets WHERE id = ?", [s2.id]);
    expect(Buffer.from(row2!.value_enc).equals(enc)).toBe(false);

    for (const file of ["secbox.db", "secbox.db-wal"]) {
      const path = join(srv.dataDir, file);
      if (existsSync(path)) expect(readFileSync(path).includes(Buffer.from(plaintext))).toBe(false);
    }
  });
});

describe("secrets list query", () => {
  let u: TestUser;
  let t1: string;
  let t2: string;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    u = await srv.createUser();
    t1 = await mkTag(u, "one");
    t2 = await mkTag(u, "two");
    ids.b_only1 = (await mkSecret(u, "b_only1", "v", [t1])).id;
    ids.A_only2 = (await mkSecret(u, "A_only2", "v", [t2])).id;
    ids.c_both = (await mkSecret(u, "c_both", "v", [t1, t2])).id;
    ids.D_none = (await mkSecret(u, "D_none", "v")).id;
    tick();
    await u.client.put(`/api/user/secrets/${ids.b_only1}`, { value: "newer" });
  });

  const names = async (qs: string) => {
    const res = await u.client.get(`/api/user/secrets${qs}`);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain("newer");
    return (res.json.items as { name: string }[]).map((i) => i.name);
  };

  test("sort and order (names case-insensitive)", async () => {
    expect(await names("")).toEqual(["A_only2", "b_only1", "c_both", "D_none"]);
    expect(await names("?order=desc")).toEqual(["D_none", "c_both", "b_only1", "A_only2"]);
    expect(await names("?sort=createdAt")).toEqual(["b_only1", "A_only2", "c_both", "D_none"]);
    expect((await names("?sort=updatedAt&order=desc"))[0]).toBe("b_only1");
    expect(await names("?sort=value")).toEqual(["A_only2", "b_only1", "c_both", "D_none"]);
    expect((await u.client.get("/api/user/secrets?order=DESC")).status).toBe(400);
  });

  test("page, pageSize, q", async () => {
    expect(await names("?pageSize=3&page=1")).toEqual(["D_none"]);
    const zero = await u.client.get("/api/user/secrets?pageSize=0");
    expect(zero.json).toEqual({ items: [], total: 4 });
    expect((await u.client.get("/api/user/secrets?pageSize=-1")).status).toBe(400);
    expect(await names("?q=ONLY")).toEqual(["A_only2", "b_only1"]);
    expect(await names("?q=_")).toEqual(["A_only2", "b_only1", "c_both", "D_none"]);
    expect(await names("?q=%25")).toEqual([]);
    expect(await names(`?q=${ids.c_both}`)).toEqual(["c_both"]);
  });

  test("tags = any (OR), globalTags = all (AND), combinable, malformed entries ignored", async () => {
    expect(await names(`?tags=${t1}`)).toEqual(["b_only1", "c_both"]);
    expect(await names(`?tags=${t1},${t2}`)).toEqual(["A_only2", "b_only1", "c_both"]);
    expect(await names(`?globalTags=${t1},${t2}`)).toEqual(["c_both"]);
    expect(await names(`?globalTags=${t2}`)).toEqual(["A_only2", "c_both"]);
    expect(await names(`?tags=${t1}&globalTags=${t2}`)).toEqual(["c_both"]);
    expect(await names(`?tags=garbage,${t2}`)).toEqual(["A_only2", "c_both"]);
    expect(await names("?tags=garbage")).toHaveLength(4);
    expect(await names(`?tags=${MISSING}`)).toEqual([]);
    const total = await u.client.get(`/api/user/secrets?tags=${t1},${t2}&pageSize=1`);
    expect(total.json.total).toBe(3);
  });
});

describe("secrets selector and values (service)", () => {
  let u: TestUser;
  let a: string;
  let b: string;

  beforeAll(async () => {
    u = await srv.createUser();
    a = (await mkSecret(u, "ALPHA", "alpha-value")).id;
    b = (await mkSecret(u, "beta", "beta-value")).id;
  });

  test("every accepted input form of §7.1", async () => {
    for (const raw of [undefined, null, "none", { type: "none" }, { selected: [] }, { type: "selected", secrets: [] }]) {
      expect(await secrets.normalizeSelector(u.id, raw)).toBe("none");
    }
    expect(await secrets.normalizeSelector(u.id, "all")).toBe("all");
    expect(await secrets.normalizeSelector(u.id, { type: "all" })).toBe("all");
    expect(await secrets.normalizeSelector(u.id, { selected: [a] })).toEqual({ selected: [a] });
    expect(await secrets.normalizeSelector(u.id, { selected: ["beta", "ALPHA"] })).toEqual({ selected: [b, a] });
    expect(await secrets.normalizeSelector(u.id, { type: "selected", secrets: ["beta"] })).toEqual({ selected: [b] });
    expect(await secrets.normalizeSelector(u.id, { type: "selected", secrets: [a.toUpperCase()] })).toEqual({ selected: [a] });
    // repeats collapse, also an id and the name of the same secret
    expect(await secrets.normalizeSelector(u.id, { selected: [a, "ALPHA", a, "beta", b] })).toEqual({ selected: [a, b] });
  });

  test("unknown entries and bad shapes → 400 naming the field", async () => {
    await rejects400(secrets.normalizeSelector(u.id, { selected: ["ALPHA", "alpha"] }), "secrets.selected[1]"); // names are case-sensitive
    await rejects400(secrets.normalizeSelector(u.id, { selected: [MISSING] }), "secrets.selected[0]");
    await rejects400(secrets.normalizeSelector(u.id, { type: "selected", secrets: ["beta", "nope"] }), "secrets.secrets[1]");
    await rejects400(secrets.normalizeSelector(u.id, { selected: [1] }), "secrets.selected[0]");
    await rejects400(secrets.normalizeSelector(u.id, { selected: "ALPHA" }), "secrets.selected");
    await rejects400(secrets.normalizeSelector(u.id, { type: "some" }), "secrets.type");
    await rejects400(secrets.normalizeSelector(u.id, "some"), "secrets");
    await rejects400(secrets.normalizeSelector(u.id, "ALL"), "secrets");
    await rejects400(secrets.normalizeSelector(u.id, 1), "secrets");
    await rejects400(secrets.normalizeSelector(u.id, [a]), "secrets");
    await rejects400(secrets.normalizeSelector(u.id, {}), "secrets");
    await rejects400(secrets.normalizeSelector(u.id, { selected: ["nope"] }, "settings.secrets"), "settings.secrets.selected[0]");
  });

  test("valuesFor: decrypted values keyed by name", async () => {
    expect(await secrets.valuesFor(u.id, "none")).toEqual({});
    expect(await secrets.valuesFor(u.id, undefined)).toEqual({});
    expect(await secrets.valuesFor(u.id, "all")).toEqual({ ALPHA: "alpha-value", beta: "beta-value" });
    expect(await secrets.valuesFor(u.id, { selected: [b] })).toEqual({ beta: "beta-value" });
    expect(await secrets.valuesFor(u.id, { selected: [] })).toEqual({});
    // "all" includes secrets created later; a deleted id is skipped
    const c = await mkSecret(u, "GAMMA", "gamma-value");
    expect(Object.keys(await secrets.valuesFor(u.id, "all"))).toEqual(["ALPHA", "GAMMA", "beta"]);
    const sel = await secrets.normalizeSelector(u.id, { selected: ["GAMMA", "beta"] });
    expect((await u.client.delete(`/api/user/secrets/${c.id}`)).status).toBe(204);
    expect(await secrets.valuesFor(u.id, sel)).toEqual({ beta: "beta-value" });
  });

  test("helpers for features that store selectors", () => {
    expect(withoutSecret({ selected: [a, b] }, a)).toEqual({ selected: [b] });
    expect(withoutSecret({ selected: [a] }, a)).toBe("none");
    expect(withoutSecret("all", a)).toBe("all");
    const sels: SecretsSelector[] = ["none", "all", { selected: [a, b] }];
    for (const sel of sels) expect(selectorFromText(selectorToText(sel))).toEqual(sel);
    expect(selectorFromText(null)).toBe("none");
    expect(selectorFromText("{broken")).toBe("none");
  });
});

describe("two users", () => {
  test("user B cannot see, read, change, delete or select user A's secrets", async () => {
    const a = await srv.createUser();
    const b = await srv.createUser();
    const s = await mkSecret(a, "SHARED_NAME", "a-value");
    await mkSecret(b, "SHARED_NAME", "b-value"); // same name for another user is fine
    expect((await b.client.get(`/api/user/secrets/${s.id}`)).status).toBe(404);
    expect((await b.client.put(`/api/user/secrets/${s.id}`, { value: "hijack" })).status).toBe(404);
    expect((await b.client.delete(`/api/user/secrets/${s.id}`)).status).toBe(404);
    const list = await b.client.get("/api/user/secrets");
    expect(list.json.total).toBe(1);
    expect(list.json.items[0].id).not.toBe(s.id);
    expect((await b.client.get(`/api/user/secrets?q=${s.id}`)).json.total).toBe(0);
    // A's tag on B's secret → 400
    const aTag = await mkTag(a, "a-tag");
    const res = await b.client.post("/api/user/secrets", { name: "B2", value: "v", tagIds: [aTag] });
    expect(res.status).toBe(400);
    expect(res.json.message).toStartWith("tagIds");
    // selectors and values are per user
    await rejects400(secrets.normalizeSelector(b.id, { selected: [s.id] }), "secrets.selected[0]");
    expect(await secrets.normalizeSelector(b.id, { selected: ["SHARED_NAME"] })).not.toEqual({ selected: [s.id] });
    expect(await secrets.valuesFor(b.id, { selected: [s.id] })).toEqual({});
    expect(await secrets.valuesFor(b.id, "all")).toEqual({ SHARED_NAME: "b-value" });
    expect(await secrets.valuesFor(a.id, "all")).toEqual({ SHARED_NAME: "a-value" });
  });
});
