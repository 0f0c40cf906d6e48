// The cross-site guard (supplement §1) beyond `Origin`: `Sec-Fetch-Site` for browsers that omit Origin, and
// sign-out, whose cross-site request must neither end the session nor clear the cookie (issue 17, item 6).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";

let srv: TestServer;
let user: TestUser;

beforeAll(async () => {
  srv = await startTestServer();
  user = await srv.createUser();
});
afterAll(() => srv.stop());

const sessions = async (userId: string) => (await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?", [userId]))!.n;
const host = () => new URL(srv.url).host;

describe("POST /api/auth/signout", () => {
  test("cross-site (foreign Origin, Origin null, Sec-Fetch-Site cross-site or same-site): 204, session kept, no Set-Cookie", async () => {
    const session = await srv.services.users.createSession(user.id);
    const cases: Record<string, string>[] = [
      { origin: "https://evil.example" },
      { origin: "null" },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" }, // e.g. a responder page on <handle>.<domain>
      { origin: `http://${host()}`, "sec-fetch-site": "cross-site" },
    ];
    for (const headers of cases) {
      const res = await srv.anon.request("POST", "/api/auth/signout", { session, headers });
      expect([JSON.stringify(headers), res.status, res.headers.get("set-cookie")]).toEqual([JSON.stringify(headers), 204, null]);
      expect((await srv.anon.get("/api/users/self", { session })).status).toBe(200);
    }
    // Same origin (by Origin or Sec-Fetch-Site) still signs out.
    const same = await srv.anon.request("POST", "/api/auth/signout", {
      session,
      headers: { origin: `http://${host()}`, "sec-fetch-site": "same-origin" },
    });
    expect(same.status).toBe(204);
    expect(same.headers.get("set-cookie")).toBe("secbox_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0");
    expect((await srv.anon.get("/api/users/self", { session })).status).toBe(401);
    const other = await srv.services.users.createSession(user.id);
    const bySite = await srv.anon.request("POST", "/api/auth/signout", { session: other, headers: { "sec-fetch-site": "same-origin" } });
    expect(bySite.headers.get("set-cookie")).toContain("Max-Age=0");
    expect((await srv.anon.get("/api/users/self", { session: other })).status).toBe(401);
  });
});

describe("Sec-Fetch-Site on cookie-authenticated writes", () => {
  test("cross-site or same-site without a matching Origin → 403 FORBIDDEN, nothing written", async () => {
    for (const headers of [{ "sec-fetch-site": "cross-site" }, { "sec-fetch-site": "same-site" }, { "sec-fetch-site": "Cross-Site" }]) {
      const res = await user.client.post("/api/user/tags", { name: "csrf-tag" }, { headers });
      expect([JSON.stringify(headers), res.status, res.json.code]).toEqual([JSON.stringify(headers), 403, "FORBIDDEN"]);
      const del = await user.client.delete("/api/user/notification_email", { headers });
      expect([del.status, del.json.code]).toEqual([403, "FORBIDDEN"]);
    }
    expect((await user.client.get("/api/user/tags")).json.items).toEqual([]);
    // A same-origin fetch passes, with or without Origin; GET is never checked.
    expect((await user.client.post("/api/user/tags", { name: "ok-1" }, { headers: { "sec-fetch-site": "same-origin" } })).status).toBe(201);
    expect((await user.client.post("/api/user/tags", { name: "ok-2" }, { headers: { "sec-fetch-site": "none" } })).status).toBe(201);
    expect(
      (await user.client.post("/api/user/tags", { name: "ok-3" }, { headers: { "sec-fetch-site": "same-site", origin: `http://${host()}` } })).status,
    ).toBe(201);
    expect((await user.client.get("/api/user/tags", { headers: { "sec-fetch-site": "cross-site" } })).status).toBe(200);
  });

  test("bearer calls are not checked; on public routes a cross-site cookie is ignored (treated as absent)", async () => {
    const key = (await srv.services.apiKeys.createForUser(user.id, "bearer")).token;
    const res = await srv.anon.post("/api/user/tags", { name: "by-bearer" }, { token: key, headers: { "sec-fetch-site": "cross-site" } });
    expect(res.status).toBe(201);
    const before = await sessions(user.id);
    const session = await srv.services.users.createSession(user.id);
    // forgot is public: the cookie is ignored, the request itself is served.
    const forgot = await srv.anon.request("POST", "/api/auth/forgot", {
      session,
      body: { email: user.email },
      headers: { "sec-fetch-site": "cross-site" },
    });
    expect(forgot.status).toBe(204);
    expect(await sessions(user.id)).toBe(before + 1);
  });
});
