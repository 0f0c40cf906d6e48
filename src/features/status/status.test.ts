import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../tests/harness";
import { signJwt } from "../../platform/auth/jwt";

const SECRET = "x".repeat(40);
let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_SECURITY_OPERATORS: "ops@example.com,ci-bot", SECBOX_SECURITY_JWT_SECRET: SECRET } });
});
afterAll(() => srv.stop());

describe("status", () => {
  test("GET /api/status needs no auth and reports db health", async () => {
    const res = await srv.anon.get("/api/status");
    expect(res.status).toBe(200);
    expect(res.json.level).toBe("available");
    expect(res.json.db.operational).toBe(true);
    expect(res.json.version).toBe(srv.rt.version);
    expect(res.json.features.mail).toBe(false);
    expect(res.json.features.signup).toBe(true);
  });

  test("features.mail follows smtp.host; features.interactions says which listeners exist (none yet: all false, §27)", async () => {
    const res = await srv.anon.get("/api/status");
    expect(res.json.features.mail).toBe(false);
    expect(res.json.features.interactions).toEqual({ dns: false, smtp: false, http: false });
    const withMail = await startTestServer({ env: { SECBOX_SMTP_HOST: "127.0.0.1", SECBOX_SMTP_PORT: "1" } });
    try {
      const status = (await withMail.anon.get("/api/status")).json;
      expect(status.features.mail).toBe(true);
      expect(status.features.interactions).toEqual({ dns: false, smtp: false, http: false });
    } finally {
      await withMail.stop();
    }
  });

  test("the public URL serve started with is remembered in the database (CLI links use it), the last one wins", async () => {
    expect(await srv.services.status.rememberedPublicUrl()).toBeUndefined();
    await srv.services.status.rememberPublicUrl("http://localhost:8080");
    await srv.services.status.rememberPublicUrl("http://localhost:8081");
    expect(await srv.services.status.rememberedPublicUrl()).toBe("http://localhost:8081");
  });

  test("features.signup is false when security.signup is closed (the UI then offers no sign-up page)", async () => {
    const closed = await startTestServer({ env: { SECBOX_SECURITY_SIGNUP: "closed" } });
    try {
      expect((await closed.anon.get("/api/status")).json.features.signup).toBe(false);
    } finally {
      await closed.stop();
    }
  });

  test("POST /api/status: 401 anonymous, 403 non-operator, 204 operator, 400 bad level", async () => {
    expect((await srv.anon.post("/api/status", { level: "unavailable" })).status).toBe(401);
    const user = await srv.createUser();
    const denied = await user.client.post("/api/status", { level: "unavailable" });
    expect(denied.status).toBe(403);
    expect(denied.json.code).toBe("NOT_OPERATOR");

    const op = await srv.createUser("ops@example.com");
    expect((await op.client.post("/api/status", { level: "sideways" })).json).toEqual({
      message: "level: must be available or unavailable",
      code: "INVALID_INPUT",
    });
    expect((await op.client.post("/api/status", {})).json).toEqual({ message: "level: is required", code: "INVALID_INPUT" });
    expect((await op.client.post("/api/status", { level: "unavailable" })).status).toBe(204);
    expect((await srv.anon.get("/api/status")).json.level).toBe("unavailable");

    const jwt = await signJwt(SECRET, "ci-bot", 600, Math.floor(Date.now() / 1000));
    expect((await srv.anon.post("/api/status", { level: "available" }, { token: jwt })).status).toBe(204);
    expect((await srv.anon.get("/api/status")).json.level).toBe("available");
  });

  test("check order: 401 comes before malformed JSON", async () => {
    const res = await srv.anon.request("POST", "/api/status", { raw: "{not json", headers: { "content-type": "application/json" } });
    expect(res.status).toBe(401);
    const op = await srv.createUser("ops2@example.com");
    const bad = await srv.anon.request("POST", "/api/status", {
      raw: "{not json",
      session: op.session,
      headers: { "content-type": "application/json" },
    });
    expect(bad.status).toBe(403); // not an operator: 403 before body 400
  });
});
