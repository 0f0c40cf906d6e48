// Operator user administration and subscriptions (supplement §3.5, §4): every route's 401/403, bodies,
// status codes, and removal of everything a user owns.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { signJwt } from "../../platform/auth/jwt";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";

const SECRET = "s".repeat(40);
const PASSWORD = "correct horse battery";
let nowMs = Date.UTC(2026, 0, 1);
const clock = { now: () => nowMs };
const nowS = () => Math.floor(nowMs / 1000);

let srv: TestServer;
let op: TestUser;
let plain: TestUser;
let botJwt: string;
let opJwt: string;
let opApiKey: string;

beforeAll(async () => {
  srv = await startTestServer({ clock, env: { SECBOX_SECURITY_OPERATORS: "Ops@Example.com,ci-bot", SECBOX_SECURITY_JWT_SECRET: SECRET } });
  op = await srv.createUser("ops@example.com");
  plain = await srv.createUser("plain@example.com");
  botJwt = await signJwt(SECRET, "ci-bot", 3600, nowS());
  opJwt = await signJwt(SECRET, "OPS@example.com", 3600, nowS());
  opApiKey = (await srv.services.apiKeys.createForUser(op.id, "op key")).token;
});
afterAll(() => srv.stop());

const count = async (table: string, userId: string) =>
  (await srv.rt.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE user_id = ?`, [userId]))!.n;

describe("operator route access (supplement §3.5)", () => {
  const uuid = "0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f40";
  const routes: [string, string, unknown?][] = [
    ["GET", "/api/users?email=plain@example.com"],
    ["GET", `/api/users/${uuid}`],
    ["DELETE", `/api/users/${uuid}`],
    ["POST", "/api/users/remove", { email: "ghost@example.com" }],
    ["POST", "/api/users/signup", { email: "bad" }],
    ["POST", "/api/user/subscription", { userEmail: "ghost@example.com", subscription: { tier: "basic" } }],
    ["POST", `/api/users/${uuid}/api_keys`, { name: "k" }],
  ];

  test("401 without or with invalid credentials, 403 NOT_OPERATOR for non-operators and any API key", async () => {
    const plainKey = (await srv.services.apiKeys.createForUser(plain.id, "plain key")).token;
    const strangerJwt = await signJwt(SECRET, "someone-else", 3600, nowS());
    for (const [method, path, body] of routes) {
      const anon = await srv.anon.request(method, path, { body });
      expect([method, path, anon.status]).toEqual([method, path, 401]);
      expect(anon.json.code).toBe("UNAUTHENTICATED");
      expect((await srv.anon.request(method, path, { body, token: "sbx_ak_" + "0".repeat(64) })).status).toBe(401);
      expect((await srv.anon.request(method, path, { body, session: "not-a-session" })).status).toBe(401);
      for (const denied of [
        await plain.client.request(method, path, { body }),
        await srv.anon.request(method, path, { body, token: plainKey }),
        await srv.anon.request(method, path, { body, token: opApiKey }),
        await srv.anon.request(method, path, { body, token: strangerJwt }),
      ]) {
        expect([method, path, denied.status, denied.json.code]).toEqual([method, path, 403, "NOT_OPERATOR"]);
      }
    }
  });

  test("operators by session email (case-insensitive list entry), JWT sub = operator email, and service-account JWT", async () => {
    for (const opts of [{ session: op.session }, { token: opJwt }, { token: botJwt }]) {
      const res = await srv.anon.get("/api/users?email=Plain@Example.com", opts);
      expect(res.status).toBe(200);
      expect(res.json.id).toBe(plain.id);
    }
  });
});

describe("GET /api/users/self", () => {
  test("any authenticated user: session, API key, JWT of a user; isOperator from the email", async () => {
    const self = await op.client.get("/api/users/self");
    expect(self.status).toBe(200);
    expect(self.json).toEqual({
      id: op.id,
      email: "ops@example.com",
      handle: op.handle,
      createdAt: nowS(),
      isActivated: true,
      isOperator: true,
      subscription: { tier: "ultimate", startedAt: nowS() }, // the default tier (§27)
    });
    // isOperator describes the user whatever the credential (an API key carries no operator rights).
    expect((await srv.anon.get("/api/users/self", { token: opApiKey })).json.isOperator).toBe(true);
    expect((await srv.anon.get("/api/users/self", { token: opJwt })).json.id).toBe(op.id);
    expect((await plain.client.get("/api/users/self")).json.isOperator).toBe(false);
  });

  test("401 without credentials; service-account JWT → 403 NO_USER", async () => {
    expect((await srv.anon.get("/api/users/self")).status).toBe(401);
    const res = await srv.anon.get("/api/users/self", { token: botJwt });
    expect(res.status).toBe(403);
    expect(res.json.code).toBe("NO_USER");
  });
});

describe("lookup", () => {
  test("GET /api/users?email=: 400 missing or invalid, 404 unknown", async () => {
    for (const q of ["", "?email=", "?email=not-an-email"]) {
      const res = await op.client.get(`/api/users${q}`);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
      expect(res.json.message).toContain("email");
    }
    const unknown = await op.client.get("/api/users?email=ghost@example.com");
    expect(unknown.status).toBe(404);
    expect(unknown.json.code).toBe("NOT_FOUND");
  });

  test("GET /api/users/{id}: 200, 404 unknown or malformed id", async () => {
    const res = await op.client.get(`/api/users/${plain.id}`);
    expect(res.status).toBe(200);
    expect(res.json.email).toBe("plain@example.com");
    expect((await op.client.get("/api/users/0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f40")).status).toBe(404);
    expect((await op.client.get("/api/users/not-a-uuid")).status).toBe(404);
  });
});

describe("POST /api/users/signup", () => {
  test("200 User; activated defaults to true; optional password and handle", async () => {
    const res = await op.client.post("/api/users/signup", { email: "Made@Example.com", password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ email: "made@example.com", isActivated: true, isOperator: false, subscription: { tier: "ultimate" } });
    expect((await srv.anon.post("/api/auth/signin", { email: "made@example.com", password: PASSWORD })).status).toBe(200);

    const custom = await srv.anon.post("/api/users/signup", { email: "custom@example.com", handle: "team42", activated: false }, { token: botJwt });
    expect(custom.status).toBe(200);
    expect(custom.json).toMatchObject({ handle: "team42", isActivated: false });
    // Without a password nobody can sign in until a recovery token is used.
    expect((await srv.anon.post("/api/auth/signin", { email: "custom@example.com", password: PASSWORD })).status).toBe(401);

    const nulls = await op.client.post("/api/users/signup", { email: "nulls@example.com", password: null, handle: null, activated: null });
    expect(nulls.status).toBe(200);
    expect(nulls.json.isActivated).toBe(true);
  });

  test("400 EMAIL_TAKEN, HANDLE_TAKEN, WEAK_PASSWORD, INVALID_INPUT", async () => {
    const expect400 = async (body: unknown, code: string) => {
      const res = await op.client.post("/api/users/signup", body);
      expect([JSON.stringify(body), res.status, res.json.code]).toEqual([JSON.stringify(body), 400, code]);
    };
    await expect400({ email: "PLAIN@example.com" }, "EMAIL_TAKEN");
    await op.client.post("/api/users/signup", { email: "handle-owner@example.com", handle: "taken1" });
    await expect400({ email: "second@example.com", handle: "taken1" }, "HANDLE_TAKEN");
    await expect400({ email: "second@example.com", password: "short" }, "WEAK_PASSWORD");
    await expect400({ email: "second@example.com", handle: "api" }, "INVALID_INPUT");
    await expect400({ email: "second@example.com", handle: "ab" }, "INVALID_INPUT");
    await expect400({ email: "second@example.com", handle: "Upper" }, "INVALID_INPUT");
    await expect400({ email: "second@example.com", activated: "yes" }, "INVALID_INPUT");
    await expect400({ email: "not-an-email" }, "INVALID_INPUT");
    await expect400({}, "INVALID_INPUT");
    expect((await op.client.get("/api/users?email=second@example.com")).status).toBe(404);
  });
});

describe("POST /api/user/subscription", () => {
  test("tier change sets startedAt to now; same tier keeps it; endsAt absent removes it", async () => {
    const user = await srv.createUser("subscriber@example.com");
    const created = nowS();
    nowMs += 100_000;
    const endsAt = nowS() + 1000;
    const set = await op.client.post("/api/user/subscription", {
      userEmail: "Subscriber@example.com",
      subscription: { tier: "professional", endsAt },
    });
    expect(set.status).toBe(204);
    let got = (await op.client.get(`/api/users/${user.id}`)).json;
    expect(got.subscription).toEqual({ tier: "professional", startedAt: nowS(), endsAt });
    expect((await srv.services.users.byEmail("subscriber@example.com"))!.tier).toBe("professional");
    const changedAt = nowS();

    nowMs += 50_000;
    expect(
      (
        await srv.anon.post(
          "/api/user/subscription",
          { userEmail: "subscriber@example.com", subscription: { tier: "professional" } },
          { token: botJwt },
        )
      ).status,
    ).toBe(204);
    got = (await op.client.get(`/api/users/${user.id}`)).json;
    expect(got.subscription).toEqual({ tier: "professional", startedAt: changedAt });
    expect(changedAt).not.toBe(created);

    // After endsAt the effective tier is the default (ultimate, §27); the stored object is shown unchanged.
    const ends2 = nowS() + 10;
    await op.client.post("/api/user/subscription", { userEmail: "subscriber@example.com", subscription: { tier: "standard", endsAt: ends2 } });
    expect((await srv.services.users.byEmail("subscriber@example.com"))!.tier).toBe("standard");
    nowMs += 20_000;
    got = (await op.client.get(`/api/users/${user.id}`)).json;
    expect(got.subscription).toEqual({ tier: "standard", startedAt: ends2 - 10, endsAt: ends2 });
    expect((await srv.services.users.byEmail("subscriber@example.com"))!.tier).toBe("ultimate");
  });

  test("400 bad tier, past or fractional endsAt, bad email; 404 unknown user", async () => {
    const post = (body: unknown) => op.client.post("/api/user/subscription", body);
    for (const body of [
      { userEmail: "plain@example.com", subscription: { tier: "gold" } },
      { userEmail: "plain@example.com", subscription: { tier: "basic", endsAt: nowS() } },
      { userEmail: "plain@example.com", subscription: { tier: "basic", endsAt: nowS() + 10.5 } },
      { userEmail: "plain@example.com", subscription: { tier: "basic", endsAt: "soon" } },
      { userEmail: "not-an-email", subscription: { tier: "basic" } },
      { userEmail: "plain@example.com" },
      { subscription: { tier: "basic" } },
      { userEmail: "plain@example.com", subscription: "basic" },
      { userEmail: "plain@example.com", subscription: ["basic"] },
      { userEmail: "plain@example.com", subscription: {} },
      { userEmail: "plain@example.com", subscription: { tier: 3 } },
    ]) {
      const res = await post(body);
      expect([JSON.stringify(body), res.status, res.json.code]).toEqual([JSON.stringify(body), 400, "INVALID_INPUT"]);
    }
    // Timestamps beyond the year 9999 (1e300 included) are refused naming the field; the last second of 9999 is fine.
    for (const endsAt of [1e300, 253_402_300_800, 2 ** 53]) {
      const res = await post({ userEmail: "plain@example.com", subscription: { tier: "basic", endsAt } });
      expect([endsAt, res.status, res.json.code]).toEqual([endsAt, 400, "INVALID_INPUT"]);
      expect(res.json.message).toStartWith("subscription.endsAt:");
    }
    expect((await post({ userEmail: "plain@example.com", subscription: { tier: "basic", endsAt: 253_402_300_799 } })).status).toBe(204);
    expect((await op.client.get(`/api/users/${plain.id}`)).json.subscription.endsAt).toBe(253_402_300_799);
    expect((await post({ userEmail: "plain@example.com", subscription: { tier: "basic" } })).status).toBe(204);
    // Body checks come before the unknown user.
    expect((await post({ userEmail: "ghost@example.com", subscription: { tier: "gold" } })).status).toBe(400);
    const unknown = await post({ userEmail: "ghost@example.com", subscription: { tier: "basic" } });
    expect(unknown.status).toBe(404);
  });
});

describe("POST /api/users/{user_id}/api_keys", () => {
  test("201 with a token that authenticates as that user; 400 bad input; 404 unknown user", async () => {
    const res = await op.client.post(`/api/users/${plain.id}/api_keys`, { name: " minted ", expiresAt: nowS() + 3600 });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ name: "minted", expiresAt: nowS() + 3600, lastUsedAt: null });
    expect(res.json.token).toMatch(/^sbx_ak_[0-9a-f]{64}$/);
    expect((await srv.anon.get("/api/users/self", { token: res.json.token })).json.id).toBe(plain.id);
    const viaJwt = await srv.anon.post(`/api/users/${plain.id}/api_keys`, { name: "by bot" }, { token: botJwt });
    expect(viaJwt.status).toBe(201);

    expect((await op.client.post(`/api/users/${plain.id}/api_keys`, { name: "" })).status).toBe(400);
    expect((await op.client.post(`/api/users/${plain.id}/api_keys`, { name: "x", expiresAt: nowS() - 1 })).status).toBe(400);
    const huge = await op.client.post(`/api/users/${plain.id}/api_keys`, { name: "huge", expiresAt: 1e300 });
    expect([huge.status, huge.json.code]).toEqual([400, "INVALID_INPUT"]);
    expect(huge.json.message).toStartWith("expiresAt:");
    const dup = await op.client.post(`/api/users/${plain.id}/api_keys`, { name: "minted" });
    expect(dup.status).toBe(409);
    expect(dup.json.code).toBe("DUPLICATE_NAME");
    expect((await op.client.post("/api/users/0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f40/api_keys", { name: "k" })).status).toBe(404);
    expect((await op.client.post("/api/users/nope/api_keys", { name: "k" })).status).toBe(404);
    // Body 400 comes before the unknown user's 404.
    expect((await op.client.post("/api/users/nope/api_keys", { name: "" })).status).toBe(400);
  });
});

describe("removal", () => {
  test("DELETE /api/users/{id} removes the user and everything they own; then 404", async () => {
    const victim = await srv.createUser("victim@example.com");
    const key = await srv.services.apiKeys.createForUser(victim.id, "victim key");
    await srv.services.users.issueRecoveryToken(victim.id, 3600);
    // A tag and an entity link owned by the victim.
    const tagId = "0193b2c4-7e1a-7c3d-9a61-000000000001";
    await srv.rt.db.run("INSERT INTO tags (id, user_id, name, color, created_at, updated_at) VALUES (?, ?, 'doomed', '#000000', 0, 0)", [
      tagId,
      victim.id,
    ]);
    await srv.rt.db.run("INSERT INTO entity_tags (entity_type, entity_id, tag_id, user_id) VALUES ('secret', ?, ?, ?)", [
      "0193b2c4-7e1a-7c3d-9a61-000000000002",
      tagId,
      victim.id,
    ]);
    for (const table of ["sessions", "api_keys", "recovery_tokens", "tags", "entity_tags"]) expect(await count(table, victim.id)).toBeGreaterThan(0);

    const res = await op.client.delete(`/api/users/${victim.id}`);
    expect(res.status).toBe(204);
    for (const table of ["sessions", "api_keys", "recovery_tokens", "tags", "entity_tags"])
      expect([table, await count(table, victim.id)]).toEqual([table, 0]);
    expect((await victim.client.get("/api/users/self")).status).toBe(401);
    expect((await srv.anon.get("/api/users/self", { token: key.token })).status).toBe(401);
    expect((await op.client.get(`/api/users/${victim.id}`)).status).toBe(404);
    expect((await op.client.delete(`/api/users/${victim.id}`)).status).toBe(404);
    expect((await op.client.delete("/api/users/not-a-uuid")).status).toBe(404);
    // Other users are untouched.
    expect((await plain.client.get("/api/users/self")).status).toBe(200);
  });

  test("POST /api/users/remove: 204 (also unknown), 400 empty or invalid email", async () => {
    const victim = await srv.createUser("victim2@example.com");
    expect((await op.client.post("/api/users/remove", { email: " VICTIM2@example.com " })).status).toBe(204);
    expect((await op.client.get(`/api/users/${victim.id}`)).status).toBe(404);
    expect(await count("sessions", victim.id)).toBe(0);
    expect((await op.client.post("/api/users/remove", { email: "victim2@example.com" })).status).toBe(204);
    for (const body of [{ email: "" }, { email: "   " }, { email: "nope" }, {}]) {
      const res = await op.client.post("/api/users/remove", body);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
    }
  });
});
