// GET /api/auth/session (addition): the web UI's probe of who is signed in. 200 with the user or null, never 401.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../../tests/harness";

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.stop());

describe("GET /api/auth/session", () => {
  test("signed in: the user; signed out, unknown or ended session: null with 200", async () => {
    const user = await srv.createUser();
    const res = await user.client.get("/api/auth/session");
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: user.id, email: user.email, handle: user.handle });

    const anon = await srv.anon.get("/api/auth/session");
    expect(anon.status).toBe(200);
    expect(anon.text).toBe("null");

    const bogus = await srv.anon.get("/api/auth/session", { session: "not-a-session" });
    expect(bogus.status).toBe(200);
    expect(bogus.text).toBe("null");

    expect((await user.client.post("/api/auth/signout")).status).toBe(204);
    const after = await user.client.get("/api/auth/session");
    expect(after.status).toBe(200);
    expect(after.text).toBe("null");
  });
});
