// Cross-cutting credential rules (supplement §1 cross-site guard, §3.1, §3.4): first credential decides,
// invalid credentials never fall back, JWT validation, deactivated users, service accounts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { SignJWT } from "jose";
import { signJwt } from "../platform/auth/jwt";
import { startTestServer, type TestServer, type TestUser } from "./harness";

const SECRET = "j".repeat(40);
const key = new TextEncoder().encode(SECRET);
let nowMs = Date.UTC(2026, 0, 1);
const clock = { now: () => nowMs };
const nowS = () => Math.floor(nowMs / 1000);

let srv: TestServer;
let user: TestUser;
let apiKey: string;

beforeAll(async () => {
  srv = await startTestServer({ clock, env: { SECBOX_SECURITY_JWT_SECRET: SECRET, SECBOX_SECURITY_OPERATORS: "svc-op" } });
  user = await srv.createUser("cred@example.com");
  apiKey = (await srv.services.apiKeys.createForUser(user.id, "cred key")).token;
});
afterAll(() => srv.stop());

const self = (opts: { token?: string; session?: string; headers?: Record<string, string> }) => srv.anon.get("/api/users/self", opts);

/** A token signed with the right secret but with chosen header and claims. */
function craft(claims: Record<string, unknown>, alg = "HS256", secret = key): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg, typ: "JWT" }).sign(secret);
}

describe("first credential decides (supplement §3.1)", () => {
  test("a valid Authorization header wins over an invalid cookie", async () => {
    const res = await self({ token: apiKey, session: "garbage" });
    expect(res.status).toBe(200);
    expect(res.json.id).toBe(user.id);
  });

  test("an invalid Authorization header is 401 even with a valid session cookie (no fallback)", async () => {
    for (const authorization of [
      `Bearer sbx_ak_${"f".repeat(64)}`,
      "Bearer not.a.jwt",
      "Bearer ",
      "Basic Y3JlZDpwYXNzd29yZA==",
      `Token ${apiKey}`,
      "Digest username=x",
    ]) {
      const res = await self({ session: user.session, headers: { authorization } });
      expect([authorization, res.status, res.json.code]).toEqual([authorization, 401, "UNAUTHENTICATED"]);
    }
    expect((await self({ session: user.session })).status).toBe(200);
  });

  test("an invalid cookie alone is 401; public routes treat invalid credentials as none", async () => {
    expect((await self({ session: "garbage" })).status).toBe(401);
    for (const opts of [{ session: "garbage" }, { headers: { authorization: "Basic eDp5" } }, { token: "nope" }]) {
      expect((await srv.anon.get("/api/status", opts)).status).toBe(200);
      expect((await srv.anon.request("POST", "/api/auth/signout", opts)).status).toBe(204);
      expect((await srv.anon.post("/api/auth/forgot", { email: "x@example.com" }, opts)).status).toBe(204);
    }
  });
});

describe("JWT (supplement §3.4)", () => {
  test("HS256 with sub = a user's email (any case) authenticates as that user", async () => {
    const token = await signJwt(SECRET, "CRED@Example.COM", 600, nowS());
    const res = await self({ token });
    expect(res.status).toBe(200);
    expect(res.json.id).toBe(user.id);
  });

  test("service-account JWT: 403 NO_USER on user routes; operator when listed", async () => {
    const listed = await signJwt(SECRET, "svc-op", 600, nowS());
    const res = await self({ token: listed });
    expect(res.status).toBe(403);
    expect(res.json.code).toBe("NO_USER");
    expect((await srv.anon.get(`/api/users/${user.id}`, { token: listed })).status).toBe(200);
    // Non-email entries match the sub exactly (case matters).
    const otherCase = await signJwt(SECRET, "SVC-OP", 600, nowS());
    expect((await srv.anon.get(`/api/users/${user.id}`, { token: otherCase })).json.code).toBe("NOT_OPERATOR");
  });

  test("other algorithms, wrong key, missing exp or sub → 401", async () => {
    const exp = nowS() + 600;
    const cases: Record<string, string> = {
      hs512: await craft({ sub: user.email, exp }, "HS512"),
      hs384: await craft({ sub: user.email, exp }, "HS384"),
      wrongKey: await craft({ sub: user.email, exp }, "HS256", new TextEncoder().encode("w".repeat(40))),
      noExp: await craft({ sub: user.email }),
      noSub: await craft({ exp }),
      emptySub: await craft({ sub: "", exp }),
      numericSub: await craft({ sub: 42, exp }),
      none: `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${Buffer.from(JSON.stringify({ sub: user.email, exp })).toString("base64url")}.`,
    };
    for (const [name, token] of Object.entries(cases)) {
      const res = await self({ token });
      expect([name, res.status]).toEqual([name, 401]);
    }
    // The control: the same claims with HS256 and the right key work.
    expect((await self({ token: await craft({ sub: user.email, exp }) })).status).toBe(200);
  });

  test("exp and nbf with 60 s leeway", async () => {
    const t = nowS();
    const status = async (claims: Record<string, unknown>) => (await self({ token: await craft({ sub: user.email, ...claims }) })).status;
    expect(await status({ exp: t - 30 })).toBe(200); // expired within the leeway
    expect(await status({ exp: t - 61 })).toBe(401);
    expect(await status({ exp: t + 600, nbf: t + 30 })).toBe(200);
    expect(await status({ exp: t + 600, nbf: t + 120 })).toBe(401);
    // A token minted now expires for the server once the clock passes exp + leeway.
    const token = await signJwt(SECRET, user.email, 100, t);
    expect((await self({ token })).status).toBe(200);
    nowMs += 161_000;
    expect((await self({ token })).status).toBe(401);
  });

  test("empty jwt_secret: every JWT is 401", async () => {
    const bare = await startTestServer();
    try {
      await bare.createUser("cred@example.com");
      const claims = { sub: "cred@example.com", exp: Math.floor(Date.now() / 1000) + 600 };
      // jose refuses an empty HMAC key, so the empty-key token is signed by hand.
      const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
      const unsigned = `${b64({ alg: "HS256", typ: "JWT" })}.${b64(claims)}`;
      const emptyKeyToken = `${unsigned}.${createHmac("sha256", "").update(unsigned).digest("base64url")}`;
      for (const token of [emptyKeyToken, await craft(claims)]) {
        const res = await bare.anon.get("/api/users/self", { token });
        expect(res.status).toBe(401);
      }
      // The same user's session works: only JWTs are refused.
      expect((await bare.anon.get("/api/users/self", { session: (await bare.createUser()).session })).status).toBe(200);
    } finally {
      await bare.stop();
    }
  });
});

describe("deactivated users", () => {
  test("their API keys, JWTs and sessions are 401", async () => {
    const row = await srv.services.users.create({ email: "dormant@example.com", activated: false });
    const key = (await srv.services.apiKeys.createForUser(row.id, "dormant key")).token;
    const session = await srv.services.users.createSession(row.id);
    const jwt = await signJwt(SECRET, "dormant@example.com", 600, nowS());
    for (const opts of [{ token: key }, { token: jwt }, { session }]) expect((await self(opts)).status).toBe(401);
    // Activation (recovery) makes the same key work.
    const link = await srv.services.users.issueRecoveryToken(row.id, 600);
    const token = new URL(link.url).searchParams.get("token")!;
    expect((await srv.anon.post("/api/auth/recover", { token, newPassword: "awake at last" })).status).toBe(200);
    expect((await self({ token: key })).status).toBe(200);
  });
});

describe("cross-site guard (supplement §1)", () => {
  const origin = () => new URL(srv.url).origin;

  test("cookie POST/PUT/DELETE with a foreign Origin → 403 FORBIDDEN; same origin and no Origin pass", async () => {
    const foreign = await user.client.post("/api/user/api_keys", { name: "csrf" }, { headers: { origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    expect(foreign.json.code).toBe("FORBIDDEN");
    const nullOrigin = await user.client.post("/api/user/api_keys", { name: "csrf" }, { headers: { origin: "null" } });
    expect(nullOrigin.status).toBe(403);
    expect(nullOrigin.json.code).toBe("FORBIDDEN");
    const otherPort = await user.client.post("/api/user/api_keys", { name: "csrf" }, { headers: { origin: "http://127.0.0.1:1" } });
    expect(otherPort.status).toBe(403);
    expect((await user.client.get("/api/user/api_keys")).json.map((k: any) => k.name)).not.toContain("csrf");

    const same = await user.client.post("/api/user/api_keys", { name: "same-site" }, { headers: { origin: origin() } });
    expect(same.status).toBe(201);
    const del = await user.client.delete(`/api/user/api_keys/${same.json.id}`, { headers: { origin: "https://evil.example" } });
    expect(del.status).toBe(403);
    expect((await user.client.delete(`/api/user/api_keys/${same.json.id}`)).status).toBe(204);
    // GET is never checked.
    expect((await user.client.get("/api/users/self", { headers: { origin: "https://evil.example" } })).status).toBe(200);
  });

  test("bearer-authenticated calls are not checked", async () => {
    const jwt = await signJwt(SECRET, user.email, 600, nowS());
    const res = await srv.anon.post("/api/user/api_keys", { name: "bearer cross-site" }, { token: jwt, headers: { origin: "https://evil.example" } });
    expect(res.status).toBe(201);
    const pw = await srv.anon.post(
      "/api/auth/password",
      { currentPassword: "wrong password!", newPassword: "whatever123" },
      { token: apiKey, headers: { origin: "null" } },
    );
    expect(pw.status).toBe(400); // reached the body rules: not refused as cross-site
    expect(pw.json.code).toBe("BAD_PASSWORD");
  });

  test("public routes ignore a cross-site cookie instead of refusing", async () => {
    const session = await srv.services.users.createSession(user.id);
    const res = await srv.anon.request("POST", "/api/auth/signout", { session, headers: { origin: "https://evil.example" } });
    expect(res.status).toBe(204);
    // The cookie was treated as absent: the session still works.
    expect((await self({ session })).status).toBe(200);
  });
});
