// API keys (supplement §5): CRUD, token format and storage, limits, expiry, regenerate, lastUsedAt, API keys
// refused on key management, two-user isolation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signJwt } from "../../platform/auth/jwt";
import { sha256Hex } from "../../platform/crypto/tokens";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";

const SECRET = "k".repeat(40);
let nowMs = Date.UTC(2026, 0, 1);
const clock = { now: () => nowMs };
const nowS = () => Math.floor(nowMs / 1000);
const advance = (sec: number) => (nowMs += sec * 1000);
const TOKEN_RE = /^sbx_ak_[0-9a-f]{64}$/;
const MISSING_ID = "0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f40";

let srv: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  srv = await startTestServer({ clock, env: { SECBOX_SECURITY_JWT_SECRET: SECRET } });
  alice = await srv.createUser("alice@example.com");
  bob = await srv.createUser("bob@example.com");
});
afterAll(() => srv.stop());

describe("create and list", () => {
  test("POST 201 with a one-time token stored as SHA-256 only; GET is a bare array sorted by name ignoring case", async () => {
    const created = await alice.client.post("/api/user/api_keys", { name: "  beta  " });
    expect(created.status).toBe(201);
    expect(created.json).toEqual({
      id: expect.any(String),
      name: "beta",
      createdAt: nowS(),
      updatedAt: nowS(),
      expiresAt: null,
      lastUsedAt: null,
      token: expect.stringMatching(TOKEN_RE),
    });
    const row = await srv.rt.db.get<Record<string, unknown>>("SELECT * FROM api_keys WHERE id = ?", [created.json.id]);
    expect(row!.token_hash).toBe(sha256Hex(created.json.token));
    expect(Object.values(row!)).not.toContain(created.json.token);

    const expiresAt = nowS() + 3600;
    const second = await alice.client.post("/api/user/api_keys", { name: "Alpha", expiresAt });
    expect(second.json.expiresAt).toBe(expiresAt);
    expect(second.json.token).not.toBe(created.json.token);
    await alice.client.post("/api/user/api_keys", { name: "gamma", expiresAt: null });

    const list = await alice.client.get("/api/user/api_keys");
    expect(list.status).toBe(200);
    expect(Array.isArray(list.json)).toBe(true);
    expect(list.json.map((k: any) => k.name)).toEqual(["Alpha", "beta", "gamma"]);
    for (const k of list.json) expect(k.token).toBeUndefined();
    expect(list.json[0]).toEqual({ ...second.json, token: undefined });
  });

  test("400 on bad name or expiresAt; 409 duplicate name; 400 LIMIT_REACHED at 30", async () => {
    const user = await srv.createUser();
    const bad = async (body: unknown) => {
      const res = await user.client.post("/api/user/api_keys", body);
      expect([JSON.stringify(body), res.status, res.json.code]).toEqual([JSON.stringify(body), 400, "INVALID_INPUT"]);
      return res;
    };
    expect((await bad({ name: "   " })).json.message).toContain("name");
    expect((await bad({})).json.message).toBe("name: is required");
    expect((await bad({ name: null })).json.message).toBe("name: is required");
    expect((await bad({ name: 7 })).json.message).toBe("name: must be a string");
    await bad({ name: "x".repeat(129) });
    expect((await bad({ name: "k", expiresAt: nowS() })).json.message).toContain("expiresAt");
    await bad({ name: "k", expiresAt: nowS() - 100 });
    await bad({ name: "k", expiresAt: nowS() + 100.5 });
    await bad({ name: "k", expiresAt: String(nowS() + 100) });
    expect((await user.client.post("/api/user/api_keys", { name: "x".repeat(128) })).status).toBe(201);

    expect((await user.client.post("/api/user/api_keys", { name: "ci" })).status).toBe(201);
    const dup = await user.client.post("/api/user/api_keys", { name: " ci " });
    expect(dup.status).toBe(409);
    expect(dup.json.code).toBe("DUPLICATE_NAME");
    // Names compare exactly: another case is another name.
    expect((await user.client.post("/api/user/api_keys", { name: "CI" })).status).toBe(201);

    for (let i = 3; i < 30; i++) expect((await user.client.post("/api/user/api_keys", { name: `key ${i}` })).status).toBe(201);
    const over = await user.client.post("/api/user/api_keys", { name: "one too many" });
    expect(over.status).toBe(400);
    expect(over.json.code).toBe("LIMIT_REACHED");
    expect((await user.client.get("/api/user/api_keys")).json.length).toBe(30);
  });
});

describe("update and delete", () => {
  test("PUT renames (200), 409 on another key's name, 400 bad name; DELETE 204 then 404", async () => {
    const a = (await alice.client.post("/api/user/api_keys", { name: "to rename" })).json;
    advance(5);
    const renamed = await alice.client.put(`/api/user/api_keys/${a.id}`, { name: " renamed " });
    expect(renamed.status).toBe(200);
    expect(renamed.json).toEqual({ id: a.id, name: "renamed", createdAt: a.createdAt, updatedAt: nowS(), expiresAt: null, lastUsedAt: null });
    expect((await alice.client.put(`/api/user/api_keys/${a.id}`, { name: "renamed" })).status).toBe(200);
    const dup = await alice.client.put(`/api/user/api_keys/${a.id}`, { name: "beta" });
    expect(dup.status).toBe(409);
    expect(dup.json.code).toBe("DUPLICATE_NAME");
    expect((await alice.client.put(`/api/user/api_keys/${a.id}`, { name: "" })).status).toBe(400);
    expect((await alice.client.put(`/api/user/api_keys/${a.id}`, {})).json).toEqual({ message: "name: is required", code: "INVALID_INPUT" });
    // Body 400 before the unknown key's 404; 401 before both.
    expect((await alice.client.put(`/api/user/api_keys/${MISSING_ID}`, { name: 1 })).status).toBe(400);
    expect((await srv.anon.put(`/api/user/api_keys/${MISSING_ID}`, { name: 1 })).status).toBe(401);
    expect((await alice.client.put(`/api/user/api_keys/${MISSING_ID}`, { name: "x" })).status).toBe(404);
    expect((await alice.client.put("/api/user/api_keys/not-a-uuid", { name: "x" })).status).toBe(404);

    expect((await alice.client.delete(`/api/user/api_keys/${a.id}`)).status).toBe(204);
    expect((await alice.client.delete(`/api/user/api_keys/${a.id}`)).status).toBe(404);
    expect((await alice.client.get("/api/user/api_keys")).json.map((k: any) => k.id)).not.toContain(a.id);
  });

  test("a deleted key stops authenticating", async () => {
    const k = (await alice.client.post("/api/user/api_keys", { name: "short lived" })).json;
    expect((await srv.anon.get("/api/users/self", { token: k.token })).status).toBe(200);
    await alice.client.delete(`/api/user/api_keys/${k.id}`);
    expect((await srv.anon.get("/api/users/self", { token: k.token })).status).toBe(401);
  });
});

describe("using a key", () => {
  test("authenticates user routes; lastUsedAt refreshed at most once per 60 s; expired → 401", async () => {
    const k = (await alice.client.post("/api/user/api_keys", { name: "usage", expiresAt: nowS() + 300 })).json;
    const self = await srv.anon.get("/api/users/self", { token: k.token });
    expect(self.status).toBe(200);
    expect(self.json.id).toBe(alice.id);
    const lastUsed = async () => (await alice.client.get("/api/user/api_keys")).json.find((x: any) => x.id === k.id).lastUsedAt;
    const firstUse = nowS();
    expect(await lastUsed()).toBe(firstUse);
    advance(59);
    await srv.anon.get("/api/users/self", { token: k.token });
    expect(await lastUsed()).toBe(firstUse);
    advance(1);
    await srv.anon.get("/api/users/self", { token: k.token });
    expect(await lastUsed()).toBe(firstUse + 60);

    advance(240); // now = expiresAt
    const expired = await srv.anon.get("/api/users/self", { token: k.token });
    expect(expired.status).toBe(401);
    expect(expired.json.code).toBe("UNAUTHENTICATED");
  });

  test("403 API_KEY_NOT_ALLOWED on every key management route; a user's JWT may manage keys", async () => {
    const k = (await alice.client.post("/api/user/api_keys", { name: "no management" })).json;
    const calls: [string, string, unknown?][] = [
      ["GET", "/api/user/api_keys"],
      ["POST", "/api/user/api_keys", { name: "from a key" }],
      ["PUT", `/api/user/api_keys/${k.id}`, { name: "x" }],
      ["DELETE", `/api/user/api_keys/${k.id}`],
      ["POST", `/api/user/api_keys/${k.id}/_regenerate`, {}],
    ];
    for (const [method, path, body] of calls) {
      const res = await srv.anon.request(method, path, { body, token: k.token });
      expect([method, path, res.status, res.json.code]).toEqual([method, path, 403, "API_KEY_NOT_ALLOWED"]);
      const anon = await srv.anon.request(method, path, { body });
      expect([method, path, anon.status]).toEqual([method, path, 401]);
    }
    const jwt = await signJwt(SECRET, "Alice@Example.com", 600, nowS());
    const viaJwt = await srv.anon.post("/api/user/api_keys", { name: "via jwt" }, { token: jwt });
    expect(viaJwt.status).toBe(201);
    const serviceJwt = await signJwt(SECRET, "robot", 600, nowS());
    const noUser = await srv.anon.get("/api/user/api_keys", { token: serviceJwt });
    expect(noUser.status).toBe(403);
    expect(noUser.json.code).toBe("NO_USER");
  });
});

describe("POST /api/user/api_keys/{id}/_regenerate", () => {
  test("new token at once, old token invalid, lastUsedAt reset; expiresAt absent keeps, null removes, integer replaces", async () => {
    const exp1 = nowS() + 1000;
    const k = (await alice.client.post("/api/user/api_keys", { name: "regen", expiresAt: exp1 })).json;
    await srv.anon.get("/api/users/self", { token: k.token });
    advance(10);

    const r1 = await alice.client.request("POST", `/api/user/api_keys/${k.id}/_regenerate`); // no body at all
    expect(r1.status).toBe(200);
    expect(r1.json).toEqual({
      id: k.id,
      name: "regen",
      createdAt: k.createdAt,
      updatedAt: nowS(),
      expiresAt: exp1,
      lastUsedAt: null,
      token: expect.stringMatching(TOKEN_RE),
    });
    expect(r1.json.token).not.toBe(k.token);
    expect((await srv.anon.get("/api/users/self", { token: k.token })).status).toBe(401);
    expect((await srv.anon.get("/api/users/self", { token: r1.json.token })).status).toBe(200);

    const r2 = await alice.client.post(`/api/user/api_keys/${k.id}/_regenerate`, { expiresAt: null });
    expect(r2.json.expiresAt).toBeNull();
    expect((await srv.anon.get("/api/users/self", { token: r1.json.token })).status).toBe(401);
    const exp3 = nowS() + 50;
    const r3 = await alice.client.post(`/api/user/api_keys/${k.id}/_regenerate`, { expiresAt: exp3 });
    expect(r3.json.expiresAt).toBe(exp3);

    for (const expiresAt of [nowS(), nowS() - 1, 1.5, "tomorrow"]) {
      const bad = await alice.client.post(`/api/user/api_keys/${k.id}/_regenerate`, { expiresAt });
      expect([expiresAt, bad.status, bad.json.code]).toEqual([expiresAt, 400, "INVALID_INPUT"]);
    }
    // The kept expiry has passed: 400 unless a new one (or null) is given.
    advance(51);
    expect((await srv.anon.get("/api/users/self", { token: r3.json.token })).status).toBe(401);
    expect((await alice.client.post(`/api/user/api_keys/${k.id}/_regenerate`, {})).status).toBe(400);
    const revived = await alice.client.post(`/api/user/api_keys/${k.id}/_regenerate`, { expiresAt: nowS() + 60 });
    expect(revived.status).toBe(200);
    expect((await srv.anon.get("/api/users/self", { token: revived.json.token })).status).toBe(200);

    expect((await alice.client.post(`/api/user/api_keys/${MISSING_ID}/_regenerate`, {})).status).toBe(404);
    expect((await alice.client.post("/api/user/api_keys/bad-id/_regenerate", {})).status).toBe(404);
  });
});

describe("two users", () => {
  test("bob gets 404 on alice's keys and never sees them", async () => {
    const k = (await alice.client.post("/api/user/api_keys", { name: "alice only" })).json;
    expect((await bob.client.put(`/api/user/api_keys/${k.id}`, { name: "stolen" })).status).toBe(404);
    expect((await bob.client.delete(`/api/user/api_keys/${k.id}`)).status).toBe(404);
    expect((await bob.client.post(`/api/user/api_keys/${k.id}/_regenerate`, {})).status).toBe(404);
    expect((await bob.client.get("/api/user/api_keys")).json).toEqual([]);
    // Bob may reuse the name; alice's key is unchanged and still works.
    expect((await bob.client.post("/api/user/api_keys", { name: "alice only" })).status).toBe(201);
    const mine = (await alice.client.get("/api/user/api_keys")).json.find((x: any) => x.id === k.id);
    expect(mine.name).toBe("alice only");
    expect((await srv.anon.get("/api/users/self", { token: k.token })).json.id).toBe(alice.id);
  });
});
