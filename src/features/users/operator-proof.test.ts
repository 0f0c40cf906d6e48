// Operator rights need proof of the email (supplement §3.5, issue 17): public sign-up with a listed email is
// not an operator (the takeover of issue 17 fails end to end), each proof path grants the rights, SIGNUP_RESERVED
// without mail, the verification mail through a real SMTP sink, and accounts that predate migration 0010.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { signJwt } from "../../platform/auth/jwt";
import { openDataDirDb } from "../../tests/backend";
import { migrate } from "../../platform/db/migrate";
import { MIGRATIONS } from "../../platform/db/migrations";
import { ApiClient, startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { startSmtpSink, type SmtpSink } from "../../tests/smtp-sink";

const SECRET = "j".repeat(40);
const PASSWORD = "correct horse battery";
const OPERATORS = "Admin@Corp.example,second@corp.example,third@corp.example,code@corp.example,cli@corp.example,ci-bot";

let smtp: SmtpSink;
let srv: TestServer;
let victim: TestUser;
let bot: string;

beforeAll(async () => {
  smtp = await startSmtpSink();
  srv = await startTestServer({
    env: {
      SECBOX_SECURITY_OPERATORS: OPERATORS,
      SECBOX_SECURITY_JWT_SECRET: SECRET,
      SECBOX_SMTP_HOST: "127.0.0.1",
      SECBOX_SMTP_PORT: String(smtp.port),
      SECBOX_SERVER_PUBLIC_URL: "https://secbox.lan",
    },
  });
  victim = await srv.createUser("victim@corp.example");
  bot = await signJwt(SECRET, "ci-bot", 3600, Math.floor(Date.now() / 1000));
});
afterAll(async () => {
  await srv.stop();
  await smtp.close();
});

/** public_url is https: the session cookie is `__Host-secbox_session` (supplement §28.1). */
const COOKIE = "__Host-secbox_session";

function cookieToken(res: { headers: Headers }): string {
  const m = /^__Host-secbox_session=([^;]+)/.exec(res.headers.get("set-cookie") ?? "");
  expect(m).not.toBeNull();
  return m![1]!;
}

/** Public sign-up; returns the response and a client holding its session. */
async function publicSignup(email: string) {
  const res = await srv.anon.post("/api/auth/signup", { email, password: PASSWORD });
  expect(res.status).toBe(200);
  return { res, client: new ApiClient(srv.url, { session: cookieToken(res), cookieName: COOKIE }) };
}

/** The recovery-link token in the `nth` mail sent to `address`. */
async function linkToken(address: string, nth: number, subject: string): Promise<string> {
  const mail = (await smtp.waitForTo(address, nth))[nth - 1]!;
  expect(mail.subject).toBe(subject);
  const m = /https:\/\/secbox\.lan\/recover\?token=([A-Za-z0-9_-]{43})/.exec(mail.text);
  expect(m).not.toBeNull();
  return m![1]!;
}

/** The operator action of issue 17: minting an API key for another user. */
const mintKey = (client: ApiClient, name: string) => client.post(`/api/users/${victim.id}/api_keys`, { name });

describe("public sign-up with a listed email (issue 17 takeover)", () => {
  test("creates an ordinary account: not an operator, cannot mint API keys for others (403 NOT_OPERATOR)", async () => {
    const { res, client } = await publicSignup("ADMIN@corp.example");
    expect(res.json).toMatchObject({ email: "admin@corp.example", isOperator: false, isActivated: true });
    expect((await client.get("/api/users/self")).json.isOperator).toBe(false);
    const minted = await mintKey(client, "stolen");
    expect([minted.status, minted.json.code]).toEqual([403, "NOT_OPERATOR"]);
    for (const [method, path] of [
      ["GET", `/api/users/${victim.id}`],
      ["GET", "/api/users?email=victim@corp.example"],
      ["POST", "/api/users/signup"],
    ] as const) {
      const r = await client.request(method, path, { body: method === "POST" ? { email: "x@corp.example" } : undefined });
      expect([path, r.status, r.json.code]).toEqual([path, 403, "NOT_OPERATOR"]);
    }
    // Its own API key carries no operator rights either, and nothing was minted for the victim.
    const own = await client.post("/api/user/api_keys", { name: "mine" });
    expect(own.status).toBe(201);
    expect((await srv.anon.post(`/api/users/${victim.id}/api_keys`, { name: "k" }, { token: own.json.token })).json.code).toBe("NOT_OPERATOR");
    expect(await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?", [victim.id])).toEqual({ n: 0 });
  });

  test("the verification mail arrives; its link proves the address, grants operator rights and ends older sessions", async () => {
    const { res: signedUp, client: before } = await publicSignup("second@corp.example");
    // Whoever signed up prepares a trap: an API key, and a responder that hands out every secret the account
    // will ever hold.
    const trapKey = await before.post("/api/user/api_keys", { name: "trap" });
    expect(trapKey.status).toBe(201);
    const trap = await before.post("/api/webhooks/responders", {
      name: "trap",
      location: { pathType: "=", path: "/trap" },
      settings: { secrets: { type: "all" }, script: "({body: context.secrets})" },
    });
    expect(trap.status).toBe(201);
    const token = await linkToken("second@corp.example", 1, "[Secbox] Confirm your email address");
    const row = await srv.rt.db.get<{ expires_at: number; created_at: number }>(
      "SELECT r.expires_at, r.created_at FROM recovery_tokens r JOIN users u ON u.id = r.user_id WHERE u.email = ?",
      ["second@corp.example"],
    );
    expect(row!.expires_at - row!.created_at).toBe(86_400);
    expect((await mintKey(before, "early")).status).toBe(403);

    const recovered = await srv.anon.post("/api/auth/recover", { token, newPassword: "the owner's password" });
    expect(recovered.status).toBe(200);
    expect(recovered.json).toMatchObject({ email: "second@corp.example", isOperator: true });
    const owner = new ApiClient(srv.url, { session: cookieToken(recovered), cookieName: COOKIE });
    const minted = await mintKey(owner, "by verified operator");
    expect(minted.status).toBe(201);
    // The session made by the (possibly foreign) sign-up is gone; the link is single use.
    expect((await before.get("/api/users/self")).status).toBe(401);
    // Nothing the sign-up set up survives the proof: a fresh account (new id and handle), the trap key is dead,
    // the trap responder is gone.
    expect(recovered.json.id).not.toBe(signedUp.json.id);
    expect(recovered.json.handle).not.toBe(signedUp.json.handle);
    expect((await srv.anon.get("/api/users/self", { token: trapKey.json.token })).status).toBe(401);
    expect((await owner.get("/api/webhooks/responders")).json.total).toBe(0);
    const hit = await fetch(`${srv.url}/trap`, { headers: { host: new URL(trap.json.url).host } });
    expect(hit.status).toBe(404);
    expect((await srv.anon.post("/api/auth/recover", { token, newPassword: "another password" })).json.code).toBe("INVALID_TOKEN");
    const stored = await srv.rt.db.get<{ email_proof: string }>("SELECT email_proof FROM users WHERE email = ?", ["second@corp.example"]);
    expect(stored!.email_proof).toBe("recovery");
  });

  test("a non-listed email gets no verification mail", async () => {
    await publicSignup("plain-signup@corp.example");
    await srv.services.outbox.idle();
    await Bun.sleep(200);
    expect(smtp.messages.filter((m) => m.to.includes("plain-signup@corp.example"))).toHaveLength(0);
  });
});

describe("proof paths", () => {
  test("forgot: the recovery link sent to the address proves it (and voids the unused verification link)", async () => {
    const { res } = await publicSignup("third@corp.example");
    const verification = await linkToken("third@corp.example", 1, "[Secbox] Confirm your email address");
    expect((await srv.anon.post("/api/auth/forgot", { email: "third@corp.example" })).status).toBe(204);
    const token = await linkToken("third@corp.example", 2, "[Secbox] Reset your password");
    expect((await srv.anon.post("/api/auth/recover", { token: verification, newPassword: "new password 1" })).json.code).toBe("INVALID_TOKEN");
    const recovered = await srv.anon.post("/api/auth/recover", { token, newPassword: "new password 1" });
    // A fresh account replaces the one the sign-up made (see the verification-mail test).
    expect(recovered.json).toMatchObject({ email: "third@corp.example", isOperator: true });
    expect(recovered.json.id).not.toBe(res.json.id);
    expect((await mintKey(new ApiClient(srv.url, { session: cookieToken(recovered), cookieName: COOKIE }), "after forgot")).status).toBe(201);
  });

  test("operator sign-up (POST /api/users/signup) proves the email", async () => {
    await srv.services.users.removeByEmail("third@corp.example");
    const made = await srv.anon.post("/api/users/signup", { email: "Third@corp.example", password: PASSWORD }, { token: bot });
    expect(made.status).toBe(200);
    expect(made.json.isOperator).toBe(true);
    const signin = await srv.anon.post("/api/auth/signin", { email: "third@corp.example", password: PASSWORD });
    expect(signin.json.isOperator).toBe(true);
    expect((await mintKey(new ApiClient(srv.url, { session: cookieToken(signin), cookieName: COOKIE }), "operator-made")).status).toBe(201);
  });

  test("a recovery link issued by the CLI (`users recover`) or an operator proves the email when used", async () => {
    const { res, client } = await publicSignup("code@corp.example");
    expect((await mintKey(client, "x")).status).toBe(403);
    const link = await srv.services.users.issueRecoveryToken(res.json.id, 3600);
    const recovered = await srv.anon.post("/api/auth/recover", { token: new URL(link.url).searchParams.get("token"), newPassword: "new password 2" });
    expect(recovered.json.isOperator).toBe(true);
    expect((await mintKey(new ApiClient(srv.url, { session: cookieToken(recovered), cookieName: COOKIE }), "cli-recovered")).status).toBe(201);
  });

  test("a verification code: proves only the login email; verifying another address grants nothing", async () => {
    await srv.services.users.removeByEmail("code@corp.example");
    const { res, client } = await publicSignup("code@corp.example");
    await linkToken("code@corp.example", 2, "[Secbox] Confirm your email address"); // the 1st went to the deleted account
    // The real flow, with another address (the login email is refused by §10.2): still no operator rights.
    expect((await client.put("/api/user/notification_email", { email: "alerts@corp.example" })).status).toBe(200);
    const mail = (await smtp.waitForTo("alerts@corp.example", 1))[0]!;
    const code = /\b(\d{6})\b/.exec(mail.text)![1]!;
    expect((await client.post("/api/user/notification_email/_verify", { code })).json.status).toBe("verified");
    expect((await client.get("/api/users/self")).json.isOperator).toBe(false);
    expect((await mintKey(client, "after other code")).status).toBe(403);
    // The hook the verify flow calls: another address proves nothing; the login email does.
    expect(await srv.services.users.recordEmailProof(res.json.id, "alerts@corp.example", "code")).toBe(false);
    expect((await client.get("/api/users/self")).json.isOperator).toBe(false);
    expect(await srv.services.users.recordEmailProof(res.json.id, " Code@Corp.example", "code")).toBe(true);
    expect((await client.get("/api/users/self")).json.isOperator).toBe(true);
    expect((await mintKey(client, "after login-email code")).status).toBe(201);
  });

  test("the CLI (`users add`) proves the email", async () => {
    const proc = Bun.spawn(
      [
        "bun",
        "run",
        resolve(import.meta.dir, "../../main.ts"),
        "users",
        "add",
        "--email",
        "cli@corp.example",
        "--password",
        PASSWORD,
        "--data-dir",
        srv.dataDir,
      ],
      {
        env: { ...process.env, SECBOX_SECURITY_OPERATORS: OPERATORS, SECBOX_SERVER_LOG_LEVEL: "error", SECBOX_DATABASE_URL: srv.config.database.url },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    expect(JSON.parse(out).isOperator).toBe(true);
    const signin = await srv.anon.post("/api/auth/signin", { email: "cli@corp.example", password: PASSWORD });
    expect(signin.json.isOperator).toBe(true);
    expect((await mintKey(new ApiClient(srv.url, { session: cookieToken(signin), cookieName: COOKIE }), "cli-made")).status).toBe(201);
  });

  test("a JWT whose sub is a listed email is an operator even for an unproven account (the JWT secret is the proof)", async () => {
    const jwt = await signJwt(SECRET, "admin@corp.example", 600, Math.floor(Date.now() / 1000));
    expect((await srv.anon.get("/api/users/self", { token: jwt })).json).toMatchObject({ email: "admin@corp.example", isOperator: false });
    expect((await srv.anon.post(`/api/users/${victim.id}/api_keys`, { name: "by jwt" }, { token: jwt })).status).toBe(201);
  });
});

describe("without mail", () => {
  test("public sign-up with a listed email → 403 SIGNUP_RESERVED (nothing created); other emails sign up", async () => {
    const noMail = await startTestServer({ env: { SECBOX_SECURITY_OPERATORS: "Admin@Corp.example,ci-bot" } });
    try {
      for (const email of ["admin@corp.example", " ADMIN@corp.EXAMPLE "]) {
        const res = await noMail.anon.post("/api/auth/signup", { email, password: PASSWORD });
        expect([res.status, res.json.code]).toEqual([403, "SIGNUP_RESERVED"]);
        expect(res.json.message).toContain("secbox users add");
        expect(res.headers.get("set-cookie")).toBeNull();
      }
      expect(await noMail.services.users.getRowByEmail("admin@corp.example")).toBeUndefined();
      // A JWT subject entry reserves nothing; an ordinary email signs up.
      expect((await noMail.anon.post("/api/auth/signup", { email: "ci-bot@corp.example", password: PASSWORD })).status).toBe(200);
      // Body errors of a non-listed email are unchanged.
      expect((await noMail.anon.post("/api/auth/signup", { email: "other@corp.example", password: "short" })).json.code).toBe("WEAK_PASSWORD");
      // A body without a password string is refused as a body (400) before the reserved address (403), as when the
      // body schema checked the members' types.
      for (const body of [{ email: "admin@corp.example" }, { email: "admin@corp.example", password: 12345678 }]) {
        const res = await noMail.anon.post("/api/auth/signup", body);
        expect([res.status, res.json.code, res.json.message.split(":")[0]]).toEqual([400, "INVALID_INPUT", "password"]);
      }
    } finally {
      await noMail.stop();
    }
  });
});

describe("upgrade (migration 0010)", () => {
  test("accounts that exist when the migration runs count as proven (legacy) and keep their operator rights", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "secbox-proof-"));
    try {
      const db = await openDataDirDb(dataDir);
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version < 10),
      );
      await db.run(
        `INSERT INTO users (id, email, handle, password_hash, is_activated, tier, tier_started_at, unsubscribe_token, created_at, updated_at)
         VALUES ('0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f40', 'old-admin@corp.example', 'oldadmin', NULL, 1, 'basic', 100, 'tok', 100, 100)`,
      );
      await db.close();
      const up = await startTestServer({ dataDir, env: { SECBOX_SECURITY_OPERATORS: "old-admin@corp.example" } });
      try {
        const row = await up.rt.db.get<{ email_proof: string; email_proven_at: number }>("SELECT email_proof, email_proven_at FROM users");
        expect(row).toEqual({ email_proof: "legacy", email_proven_at: 100 });
        const session = await up.services.users.createSession("0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f40");
        const self = await up.anon.get("/api/users/self", { session });
        expect(self.json.isOperator).toBe(true);
        expect((await up.anon.get("/api/users?email=old-admin@corp.example", { session })).status).toBe(200);
      } finally {
        await up.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
