// Headers every API response carries (issue 29 C): `X-Content-Type-Options: nosniff` on every /api answer (JSON,
// errors, 404s, downloads) and `Cache-Control: no-store` unless a route chose its own, so session state, tokens
// and user data are never kept by a browser or proxy cache. Responder hits answer by their own rules.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type ApiResponse, type TestServer, type TestUser } from "../../tests/harness";

const MAX_BODY = 4096;
let srv: TestServer;
let user: TestUser;

beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_SERVER_MAX_BODY_BYTES: String(MAX_BODY) } });
  user = await srv.createUser();
});
afterAll(() => srv.stop());

/** [what, response] pairs → [what, status, nosniff, cache-control] rows, for one readable comparison. */
const row = (what: string, res: ApiResponse | Response) => [
  what,
  res.status,
  res.headers.get("x-content-type-options"),
  res.headers.get("cache-control"),
];
const expectApiHeaders = (what: string, res: ApiResponse | Response, status: number) =>
  expect(row(what, res)).toEqual([what, status, "nosniff", "no-store"]);

describe("auth responses are no-store (session state and tokens)", () => {
  test("session probe, sign-up, sign-in, recovery, sign-out, password change", async () => {
    expectApiHeaders("session, signed in", await user.client.get("/api/auth/session"), 200);
    expectApiHeaders("session, signed out", await srv.anon.get("/api/auth/session"), 200);
    const email = `hdr-${Date.now()}@example.com`;
    const signup = await srv.anon.post("/api/auth/signup", { email, password: "correct horse battery" });
    expectApiHeaders("signup", signup, 200);
    expect(signup.headers.get("set-cookie")).toContain("secbox_session=");
    expectApiHeaders("signin", await srv.anon.post("/api/auth/signin", { email, password: "correct horse battery" }), 200);
    expectApiHeaders("signin, wrong password", await srv.anon.post("/api/auth/signin", { email, password: "wrong password!" }), 401);
    const row = await srv.services.users.create({ email: `rec-${Date.now()}@example.com`, password: "correct horse battery", activated: false });
    const token = new URL((await srv.services.users.issueRecoveryToken(row.id, 3600)).url).searchParams.get("token")!;
    expectApiHeaders("recover", await srv.anon.post("/api/auth/recover", { token, newPassword: "another horse battery" }), 200);
    expectApiHeaders("recover, used token", await srv.anon.post("/api/auth/recover", { token, newPassword: "another horse battery" }), 400);
    const other = await srv.createUser();
    expectApiHeaders(
      "password",
      await other.client.post("/api/auth/password", { currentPassword: "correct horse battery", newPassword: "new horse battery" }),
      204,
    );
    expectApiHeaders("signout", await other.client.post("/api/auth/signout"), 204);
  });

  test("API key creation and regeneration (the token is in the body)", async () => {
    const made = await user.client.post("/api/user/api_keys", { name: "hdr-key" });
    expectApiHeaders("api key create", made, 201);
    expect(typeof made.json.token).toBe("string");
    const regen = await user.client.post(`/api/user/api_keys/${made.json.id}/_regenerate`, {});
    expectApiHeaders("api key regenerate", regen, 200);
  });
});

describe("every API response: nosniff (and no-store unless the route chose otherwise)", () => {
  test("JSON answers, lists, status", async () => {
    expectApiHeaders("self", await user.client.get("/api/users/self"), 200);
    expectApiHeaders("tags list", await user.client.get("/api/user/tags"), 200);
    expectApiHeaders("status", await srv.anon.get("/api/status"), 200);
    expectApiHeaders("tag create", await user.client.post("/api/user/tags", { name: "hdr" }), 201);
  });

  test("errors: 400 (JSON, validation, rule), 401, 403, 404 (unknown path, method, resource), 413", async () => {
    const raw = (path: string, body: string, session?: string) =>
      srv.anon.request("POST", path, { raw: body, session, headers: { "content-type": "application/json" } });
    expectApiHeaders("invalid JSON", await raw("/api/user/tags", "{", user.session), 400);
    expectApiHeaders("validation", await user.client.post("/api/user/tags", { name: 5 }), 400);
    expectApiHeaders("service rule", await user.client.post("/api/user/tags", { name: "" }), 400);
    expectApiHeaders(
      "bad content type",
      await srv.anon.request("POST", "/api/user/tags", { raw: "x", session: user.session, headers: { "content-type": "text/plain" } }),
      400,
    );
    expectApiHeaders("401", await srv.anon.get("/api/users/self"), 401);
    expectApiHeaders("403 operator", await user.client.get("/api/users?email=a@example.com"), 403);
    expectApiHeaders("cross-site", await user.client.post("/api/user/tags", { name: "x" }, { headers: { origin: "https://evil.example" } }), 403);
    for (const [method, path] of [
      ["GET", "/api/does-not-exist"],
      ["POST", "/api/status/extra"],
      ["PUT", "/api/status"],
      ["GET", "/api/"],
    ] as const) {
      const res = await fetch(srv.url + path, { method });
      expectApiHeaders(`${method} ${path}`, res, 404);
    }
    expectApiHeaders("unknown id", await user.client.get("/api/user/tags/0193aaaa-aaaa-7aaa-8aaa-aaaaaaaaaaaa"), 404);
    expectApiHeaders("413", await raw("/api/user/tags", `{"name":"${"x".repeat(2 * MAX_BODY)}"}`, user.session), 413);
  });

  test("downloads (HAR, export) carry nosniff and no-store next to their own headers", async () => {
    const r = await user.client.post("/api/webhooks/responders", {
      name: "hdr-har",
      location: { pathType: "=", path: "/h" },
      settings: { requestsToTrack: 5, body: "x" },
    });
    expect(r.status).toBe(201);
    const har = await user.client.get(`/api/webhooks/responders/${r.json.id}/_har`);
    expectApiHeaders("har", har, 200);
    expect(har.headers.get("content-disposition")).toStartWith("attachment;");
    const exp = await user.client.post("/api/user/data/_export", { include: { tags: { type: "all" } } });
    expectApiHeaders("export", exp, 200);
  });

  test("a route's own Cache-Control stays (the unsubscribe page), and responder hits answer by their own rules", async () => {
    const unsub = await fetch(`${srv.url}/api/notifications/unsubscribe?token=nope`);
    expect(unsub.headers.get("x-content-type-options")).toBe("nosniff");
    const r = await user.client.post("/api/webhooks/responders", {
      name: "hdr-hit",
      location: { pathType: "=", path: "/cached" },
      settings: { body: "hi", headers: [["cache-control", "public, max-age=60"]] },
    });
    expect(r.status).toBe(201);
    const hit = await fetch(srv.url + "/cached", { headers: { host: `${user.handle}.localhost:7070` } });
    expect([hit.status, await hit.text(), hit.headers.get("cache-control")]).toEqual([200, "hi", "public, max-age=60"]);
    const pathForm = await fetch(`${srv.url}/api/webhooks/${user.handle}/cached`);
    expect([pathForm.status, pathForm.headers.get("cache-control")]).toEqual([200, "public, max-age=60"]);
  });
});
