// Browser auth (supplement §3.2, §3.3): sign-up, sign-in and its throttle, sign-out, password change,
// recovery, forgot, the session cookie and its sliding lifetime.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sha256Hex } from "../../platform/crypto/tokens";
import { ApiClient, startTestServer, type TestServer } from "../../tests/harness";

const PASSWORD = "correct horse battery";
let nowMs = Date.UTC(2026, 0, 1);
const clock = { now: () => nowMs };
const advance = (sec: number) => (nowMs += sec * 1000);

let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({ clock, env: { SECBOX_SERVER_TRUST_PROXY: "true" } });
});
afterAll(() => srv.stop());

/** The session token from a Set-Cookie header, or undefined. */
function cookieToken(res: { headers: Headers }): string | undefined {
  const header = res.headers.get("set-cookie");
  const m = header ? /^secbox_session=([^;]*)/.exec(header) : null;
  return m ? m[1] : undefined;
}

const sessionCount = async (userId: string) =>
  (await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?", [userId]))!.n;

describe("POST /api/auth/signup", () => {
  test("creates an activated user, sets the session cookie and the cookie authenticates", async () => {
    const res = await srv.anon.post("/api/auth/signup", { email: "  New.User@Example.COM ", password: PASSWORD });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ email: "new.user@example.com", isActivated: true, isOperator: false });
    expect(res.json.handle).toMatch(/^[0-9a-f]{16}$/);
    // subscriptions.default_tier: ultimate unless configured (§27).
    expect(res.json.subscription).toEqual({ tier: "ultimate", startedAt: Math.floor(nowMs / 1000) });
    expect(res.json.createdAt).toBe(Math.floor(nowMs / 1000));
    const cookie = res.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^secbox_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=1209600$/);
    expect(cookie).not.toContain("Domain");
    expect(cookie).not.toContain("Secure");
    const token = cookieToken(res)!;
    // Only the hash is stored.
    const stored = await srv.rt.db.get<{ token_hash: string }>("SELECT token_hash FROM sessions WHERE user_id = ?", [res.json.id]);
    expect(stored!.token_hash).toBe(sha256Hex(token));
    const self = await srv.anon.get("/api/users/self", { session: token });
    expect(self.status).toBe(200);
    expect(self.json.id).toBe(res.json.id);
  });

  test("400 INVALID_INPUT, WEAK_PASSWORD, EMAIL_TAKEN, INVALID_JSON", async () => {
    const bad = async (body: unknown, code: string) => {
      const res = await srv.anon.post("/api/auth/signup", body);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe(code);
      return res;
    };
    expect((await bad({ email: "not-an-email", password: PASSWORD }, "INVALID_INPUT")).json.message).toContain("email");
    await bad({ email: "a@@example.com", password: PASSWORD }, "INVALID_INPUT");
    await bad({ email: "a b@example.com", password: PASSWORD }, "INVALID_INPUT");
    await bad({ email: `${"a".repeat(250)}@example.com`, password: PASSWORD }, "INVALID_INPUT");
    await bad({ email: "short@example.com" }, "INVALID_INPUT");
    await bad({ email: "short@example.com", password: 12345678 }, "INVALID_INPUT");
    expect((await bad({ email: "short@example.com", password: "1234567" }, "WEAK_PASSWORD")).json.message).toContain("password");
    await bad({ email: "long@example.com", password: "x".repeat(1025) }, "WEAK_PASSWORD");
    await bad({ email: "NEW.user@example.com", password: PASSWORD }, "EMAIL_TAKEN");
    const raw = await srv.anon.request("POST", "/api/auth/signup", { raw: "{nope", headers: { "content-type": "application/json" } });
    expect(raw.status).toBe(400);
    expect(raw.json.code).toBe("INVALID_JSON");
    const form = await srv.anon.request("POST", "/api/auth/signup", { raw: "email=a", headers: { "content-type": "text/plain" } });
    expect(form.json.code).toBe("BAD_CONTENT_TYPE");
    // 8 and 1024 characters are accepted.
    expect((await srv.anon.post("/api/auth/signup", { email: "edge8@example.com", password: "12345678" })).status).toBe(200);
    expect((await srv.anon.post("/api/auth/signup", { email: "edge1024@example.com", password: "y".repeat(1024) })).status).toBe(200);
  });

  test("password length counts characters, not UTF-16 units", async () => {
    // 4 emoji = 4 characters (8 UTF-16 units): too short.
    const short = await srv.anon.post("/api/auth/signup", { email: "emoji4@example.com", password: "😀".repeat(4) });
    expect([short.status, short.json.code]).toEqual([400, "WEAK_PASSWORD"]);
    expect((await srv.anon.post("/api/auth/signup", { email: "emoji8@example.com", password: "😀".repeat(8) })).status).toBe(200);
    // 1024 emoji = 1024 characters (2048 units): accepted; 1025 refused.
    expect((await srv.anon.post("/api/auth/signup", { email: "emoji1024@example.com", password: "😀".repeat(1024) })).status).toBe(200);
    const long = await srv.anon.post("/api/auth/signup", { email: "emoji1025@example.com", password: "😀".repeat(1025) });
    expect([long.status, long.json.code]).toEqual([400, "WEAK_PASSWORD"]);
  });

  test("a deeply nested value in a field is a 400, never a 500 (signup, signin, forgot, recover)", async () => {
    const deep = (n: number) => "[".repeat(n) + "]".repeat(n);
    for (const [path, body] of [
      ["/api/auth/signup", `{"email":${deep(5000)},"password":"x"}`],
      ["/api/auth/signin", `{"email":"a@example.com","password":${deep(5000)}}`],
      ["/api/auth/forgot", `{"email":${deep(100_000)}}`],
      ["/api/auth/recover", `{"token":${deep(5000)},"newPassword":"x"}`],
    ] as const) {
      const res = await srv.anon.request("POST", path, { raw: body, headers: { "content-type": "application/json" } });
      expect([path, res.status, res.json?.code]).toEqual([path, 400, "INVALID_INPUT"]);
      expect(res.json.message).toContain("64");
    }
  });
});

describe("POST /api/auth/signin", () => {
  test("200 with a new session cookie; 401 with one message for every failure; 403 NOT_ACTIVATED only after a correct password", async () => {
    const user = await srv.createUser("signin@example.com");
    const ok = await srv.anon.post("/api/auth/signin", { email: "SIGNIN@example.com ", password: PASSWORD });
    expect(ok.status).toBe(200);
    expect(ok.json.id).toBe(user.id);
    const token = cookieToken(ok)!;
    expect(token).toBeDefined();
    expect(token).not.toBe(user.session);
    expect((await srv.anon.get("/api/users/self", { session: token })).json.email).toBe("signin@example.com");

    for (const body of [
      { email: "signin@example.com", password: "wrong password" },
      { email: "nobody@example.com", password: PASSWORD },
    ]) {
      const res = await srv.anon.post("/api/auth/signin", body);
      expect(res.status).toBe(401);
      expect(res.json).toEqual({ message: "Invalid email or password", code: "UNAUTHENTICATED" });
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    // A user without a password.
    await srv.services.users.create({ email: "nopass@example.com" });
    const nopass = await srv.anon.post("/api/auth/signin", { email: "nopass@example.com", password: PASSWORD });
    expect(nopass.status).toBe(401);
    expect(nopass.json.message).toBe("Invalid email or password");

    // Deactivated user: wrong password → 401, correct → 403 NOT_ACTIVATED.
    await srv.services.users.create({ email: "inactive@example.com", password: PASSWORD, activated: false });
    expect((await srv.anon.post("/api/auth/signin", { email: "inactive@example.com", password: "nope nope nope" })).status).toBe(401);
    const inactive = await srv.anon.post("/api/auth/signin", { email: "inactive@example.com", password: PASSWORD });
    expect(inactive.status).toBe(403);
    expect(inactive.json.code).toBe("NOT_ACTIVATED");
    expect(inactive.headers.get("set-cookie")).toBeNull();

    const missing = await srv.anon.post("/api/auth/signin", { email: "signin@example.com" });
    expect(missing.status).toBe(400);
    expect(missing.json.code).toBe("INVALID_INPUT");
  });

  test("throttle: 10 failures per (email, IP) in 15 minutes → 429 with Retry-After, even for the right password", async () => {
    await srv.createUser("throttle@example.com");
    const attempt = (password: string, ip = "203.0.113.7") =>
      srv.anon.post("/api/auth/signin", { email: "throttle@example.com", password }, { headers: { "x-real-ip": ip } });
    const start = nowMs;
    for (let i = 0; i < 10; i++) {
      expect((await attempt(`wrong-${i}-password`)).status).toBe(401);
      advance(10); // failures at start, start+10 s, ..., start+90 s
    }
    const limited = await attempt(PASSWORD);
    expect(limited.status).toBe(429);
    expect(limited.json.code).toBe("RATE_LIMITED");
    // The oldest failure (at `start`) leaves the 900 s window at start+900; now = start+100.
    expect(limited.headers.get("retry-after")).toBe("800");
    // Another client IP is not affected.
    expect((await attempt(PASSWORD, "198.51.100.9")).status).toBe(200);
    // Just before the oldest failure leaves the window: still limited.
    nowMs = start + 899_000;
    const still = await attempt(PASSWORD);
    expect(still.status).toBe(429);
    expect(still.headers.get("retry-after")).toBe("1");
    // Afterwards 9 failures remain in the window: one more failure fills it again.
    nowMs = start + 900_001;
    expect((await attempt("wrong again wrong")).status).toBe(401);
    expect((await attempt(PASSWORD)).status).toBe(429);
    // The second-oldest leaves at start+910.
    nowMs = start + 910_001;
    expect((await attempt(PASSWORD)).status).toBe(200);
    // A success clears the count: the next failure does not limit.
    expect((await attempt("wrong once more")).status).toBe(401);
    expect((await attempt(PASSWORD)).status).toBe(200);
  });
});

describe("session lifetime", () => {
  test("a use more than 1 hour after the last refresh moves the expiry and re-sends the cookie; expired sessions are 401 and purged", async () => {
    const user = await srv.createUser();
    const first = await user.client.get("/api/users/self");
    expect(first.status).toBe(200);
    expect(first.headers.get("set-cookie")).toBeNull();
    advance(3600);
    expect((await user.client.get("/api/users/self")).headers.get("set-cookie")).toBeNull();
    advance(1);
    const refreshed = await user.client.get("/api/users/self");
    expect(refreshed.status).toBe(200);
    expect(refreshed.headers.get("set-cookie")).toBe(`secbox_session=${user.session}; Path=/; HttpOnly; SameSite=Lax; Max-Age=1209600`);
    // The refresh moved the expiry: 14 days after the first use would have been the end without it.
    advance(1_209_600 - 3601 + 10);
    expect((await user.client.get("/api/users/self")).status).toBe(200);
    advance(1_209_600);
    const expired = await user.client.get("/api/users/self");
    expect(expired.status).toBe(401);
    expect(expired.json.code).toBe("UNAUTHENTICATED");
    expect(await sessionCount(user.id)).toBe(1);
    await srv.services.users.purgeExpiredSessions();
    expect(await sessionCount(user.id)).toBe(0);
  });
});

describe("POST /api/auth/signout", () => {
  test("deletes the cookie's session and clears the cookie", async () => {
    const user = await srv.createUser();
    const other = await srv.services.users.createSession(user.id);
    const res = await user.client.post("/api/auth/signout");
    expect(res.status).toBe(204);
    expect(res.headers.get("set-cookie")).toBe("secbox_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0");
    expect((await user.client.get("/api/users/self")).status).toBe(401);
    // Only that session ended.
    expect((await srv.anon.get("/api/users/self", { session: other })).status).toBe(200);
  });

  test("204 without a cookie, with an unknown cookie and with a foreign Authorization scheme", async () => {
    for (const opts of [{}, { session: "unknown-session" }, { headers: { authorization: "Basic Zm9vOmJhcg==" } }]) {
      const res = await srv.anon.request("POST", "/api/auth/signout", opts);
      expect(res.status).toBe(204);
      expect(res.headers.get("set-cookie")).toContain("Max-Age=0");
    }
  });
});

describe("POST /api/auth/password", () => {
  test("204; other sessions revoked, the current one kept; the new password signs in", async () => {
    const user = await srv.createUser();
    const other = await srv.services.users.createSession(user.id);
    const res = await user.client.post("/api/auth/password", { currentPassword: PASSWORD, newPassword: "a brand new secret" });
    expect(res.status).toBe(204);
    expect((await user.client.get("/api/users/self")).status).toBe(200);
    expect((await srv.anon.get("/api/users/self", { session: other })).status).toBe(401);
    expect((await srv.anon.post("/api/auth/signin", { email: user.email, password: PASSWORD })).status).toBe(401);
    expect((await srv.anon.post("/api/auth/signin", { email: user.email, password: "a brand new secret" })).status).toBe(200);
  });

  test("400 BAD_PASSWORD, WEAK_PASSWORD, INVALID_INPUT; 401 without credentials", async () => {
    const user = await srv.createUser();
    const wrong = await user.client.post("/api/auth/password", { currentPassword: "not the password", newPassword: "another secret" });
    expect(wrong.status).toBe(400);
    expect(wrong.json.code).toBe("BAD_PASSWORD");
    const weak = await user.client.post("/api/auth/password", { currentPassword: PASSWORD, newPassword: "short" });
    expect(weak.status).toBe(400);
    expect(weak.json.code).toBe("WEAK_PASSWORD");
    expect(weak.json.message).toContain("newPassword");
    const missing = await user.client.post("/api/auth/password", { newPassword: "another secret" });
    expect(missing.json.code).toBe("INVALID_INPUT");
    const anon = await srv.anon.post("/api/auth/password", { currentPassword: PASSWORD, newPassword: "another secret" });
    expect(anon.status).toBe(401);
    // A user without a password: BAD_PASSWORD.
    const row = await srv.services.users.create({ email: "pwless@example.com" });
    const session = await srv.services.users.createSession(row.id);
    const none = await srv.anon.post("/api/auth/password", { currentPassword: "", newPassword: "another secret" }, { session });
    expect(none.json.code).toBe("BAD_PASSWORD");
  });
});

describe("auth bodies (looseBody: the service checks every member)", () => {
  test("a missing member is `<field>: is required`, a mistyped one `<field>: must be a string`; 401 comes before either", async () => {
    const user = await srv.createUser();
    const cases: [string, Record<string, unknown>, string][] = [
      ["/api/auth/signup", { password: PASSWORD }, "email: is required"],
      ["/api/auth/signup", { email: "typed@example.com" }, "password: is required"],
      ["/api/auth/signup", { email: "typed@example.com", password: null }, "password: is required"],
      ["/api/auth/signup", { email: 5, password: PASSWORD }, "email: must be a string"],
      ["/api/auth/signin", { password: PASSWORD }, "email: is required"],
      ["/api/auth/signin", { email: user.email, password: ["x"] }, "password: must be a string"],
      ["/api/auth/recover", { newPassword: PASSWORD }, "token: is required"],
      ["/api/auth/recover", { token: 1, newPassword: PASSWORD }, "token: must be a string"],
      ["/api/auth/recover", { token: "t" }, "newPassword: is required"],
      ["/api/auth/forgot", {}, "email: is required"],
    ];
    for (const [path, body, message] of cases) {
      const res = await srv.anon.post(path, body);
      expect([path, JSON.stringify(body), res.status, res.json]).toEqual([path, JSON.stringify(body), 400, { message, code: "INVALID_INPUT" }]);
    }
    const own = (body: unknown) => user.client.post("/api/auth/password", body);
    expect((await own({ newPassword: PASSWORD })).json).toEqual({ message: "currentPassword: is required", code: "INVALID_INPUT" });
    expect((await own({ currentPassword: PASSWORD, newPassword: 12345678 })).json).toEqual({
      message: "newPassword: must be a string",
      code: "INVALID_INPUT",
    });
    expect((await srv.anon.post("/api/auth/password", { newPassword: 1 })).status).toBe(401);
    // Unknown members are ignored (supplement §1).
    expect((await srv.anon.post("/api/auth/forgot", { email: "ghost@example.com", extra: { deep: true } })).status).toBe(204);
  });
});

describe("POST /api/auth/recover", () => {
  test("activates the user, sets the password, revokes every older session and signs in; single use", async () => {
    const row = await srv.services.users.create({ email: "recover@example.com", password: PASSWORD, activated: false });
    const oldSession = await srv.services.users.createSession(row.id);
    const link = await srv.services.users.issueRecoveryToken(row.id, 3600);
    expect(link.expiresAt).toBe(Math.floor(nowMs / 1000) + 3600);
    expect(link.url).toMatch(/^http:\/\/localhost:7070\/recover\?token=[A-Za-z0-9_-]{43}$/);
    const token = new URL(link.url).searchParams.get("token")!;
    // Stored hashed only.
    const stored = await srv.rt.db.get<{ token_hash: string }>("SELECT token_hash FROM recovery_tokens WHERE user_id = ?", [row.id]);
    expect(stored!.token_hash).toBe(sha256Hex(token));

    // A weak password does not consume the token.
    const weak = await srv.anon.post("/api/auth/recover", { token, newPassword: "short" });
    expect(weak.json.code).toBe("WEAK_PASSWORD");

    const res = await srv.anon.post("/api/auth/recover", { token, newPassword: "recovered secret" });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: row.id, isActivated: true });
    const session = cookieToken(res)!;
    expect((await srv.anon.get("/api/users/self", { session })).status).toBe(200);
    expect((await srv.anon.get("/api/users/self", { session: oldSession })).status).toBe(401);
    expect((await srv.anon.post("/api/auth/signin", { email: "recover@example.com", password: "recovered secret" })).status).toBe(200);

    const again = await srv.anon.post("/api/auth/recover", { token, newPassword: "recovered secret" });
    expect(again.status).toBe(400);
    expect(again.json.code).toBe("INVALID_TOKEN");
  });

  test("a new token voids older ones; expired and unknown tokens are INVALID_TOKEN", async () => {
    const user = await srv.createUser();
    const older = new URL((await srv.services.users.issueRecoveryToken(user.id, 3600)).url).searchParams.get("token")!;
    const newer = new URL((await srv.services.users.issueRecoveryToken(user.id, 60)).url).searchParams.get("token")!;
    const voided = await srv.anon.post("/api/auth/recover", { token: older, newPassword: "recovered secret" });
    expect(voided.json.code).toBe("INVALID_TOKEN");
    advance(61);
    const expired = await srv.anon.post("/api/auth/recover", { token: newer, newPassword: "recovered secret" });
    expect(expired.status).toBe(400);
    expect(expired.json.code).toBe("INVALID_TOKEN");
    expect((await srv.anon.post("/api/auth/recover", { token: "", newPassword: "recovered secret" })).json.code).toBe("INVALID_TOKEN");
    expect((await srv.anon.post("/api/auth/recover", { newPassword: "recovered secret" })).json.code).toBe("INVALID_INPUT");
    // The user's existing session survived the failed attempts.
    expect((await user.client.get("/api/users/self")).status).toBe(200);
  });
});

describe("POST /api/auth/forgot", () => {
  test("204 always; without mail nothing is issued; 400 only for a malformed body", async () => {
    const user = await srv.createUser();
    expect((await srv.anon.post("/api/auth/forgot", { email: user.email })).status).toBe(204);
    expect((await srv.anon.post("/api/auth/forgot", { email: "ghost@example.com" })).status).toBe(204);
    const count = await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM recovery_tokens WHERE user_id = ?", [user.id]);
    expect(count!.n).toBe(0);
    expect((await srv.anon.post("/api/auth/forgot", {})).status).toBe(400);
    expect((await srv.anon.post("/api/auth/forgot", { email: 42 })).status).toBe(400);
    expect((await srv.anon.post("/api/auth/forgot", { email: "not-an-email" })).status).toBe(400);
  });

  test("with mail configured: a recovery token per request, at most 3 per email per hour", async () => {
    let mailNow = Date.UTC(2026, 0, 1);
    const mailSrv = await startTestServer({ clock: { now: () => mailNow }, env: { SECBOX_SMTP_HOST: "smtp.invalid" } });
    try {
      const user = await mailSrv.createUser("forgetful@example.com");
      const current = async () =>
        (await mailSrv.rt.db.get<{ id: string }>("SELECT id FROM recovery_tokens WHERE user_id = ? AND used_at IS NULL", [user.id]))?.id;
      const ids: (string | undefined)[] = [];
      for (let i = 0; i < 4; i++) {
        expect((await mailSrv.anon.post("/api/auth/forgot", { email: " Forgetful@Example.com" })).status).toBe(204);
        ids.push(await current());
      }
      expect(ids[0]).toBeDefined();
      expect(new Set(ids.slice(0, 3)).size).toBe(3); // each issue voids the previous one
      expect(ids[3]).toBe(ids[2]); // the 4th within the hour did nothing
      const expires = await mailSrv.rt.db.get<{ expires_at: number; created_at: number }>(
        "SELECT expires_at, created_at FROM recovery_tokens WHERE id = ?",
        [ids[2]!],
      );
      expect(expires!.expires_at - expires!.created_at).toBe(3600);
      mailNow += 3601_000;
      await mailSrv.anon.post("/api/auth/forgot", { email: "forgetful@example.com" });
      expect(await current()).not.toBe(ids[2]);
    } finally {
      await mailSrv.stop();
    }
  });
});

describe("configuration", () => {
  test("signup closed → 403 SIGNUP_CLOSED before body checks; https public_url → Secure __Host- cookie (§28.1)", async () => {
    const closed = await startTestServer({ env: { SECBOX_SECURITY_SIGNUP: "closed", SECBOX_SERVER_PUBLIC_URL: "https://secbox.example.com" } });
    try {
      for (const res of [
        await closed.anon.post("/api/auth/signup", { email: "x@example.com", password: PASSWORD }),
        await closed.anon.request("POST", "/api/auth/signup", { raw: "{bad", headers: { "content-type": "application/json" } }),
      ]) {
        expect(res.status).toBe(403);
        expect(res.json.code).toBe("SIGNUP_CLOSED");
      }
      await closed.createUser("secure@example.com");
      const res = await closed.anon.post("/api/auth/signin", { email: "secure@example.com", password: PASSWORD });
      expect(res.status).toBe(200);
      expect(res.headers.get("set-cookie")).toMatch(/^__Host-secbox_session=[^;]+; Path=\/; HttpOnly; SameSite=Lax; Max-Age=1209600; Secure$/);
      const session = /^__Host-secbox_session=([^;]*)/.exec(res.headers.get("set-cookie")!)![1]!;
      const out = await new ApiClient(closed.url, { session, cookieName: "__Host-secbox_session" }).post("/api/auth/signout");
      expect(out.headers.get("set-cookie")).toBe("__Host-secbox_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0; Secure");
      const link = await closed.services.users.issueRecoveryToken((await closed.services.users.getRowByEmail("secure@example.com"))!.id, 60);
      expect(link.url.startsWith("https://secbox.example.com/recover?token=")).toBe(true);
    } finally {
      await closed.stop();
    }
  });
});
