// Request-wide HTTP mechanics (supplement §1, §2): JSON nesting limit, the stack-overflow backstop, and the
// check order "unknown route 404 → 413".
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { createLogger } from "../log";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { jsonTooDeep, MAX_JSON_DEPTH, RawBody } from "./body";
import { httpPlugin } from "./plugin";

const MAX_BODY = 4096;
let srv: TestServer;
let user: TestUser;

beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_SERVER_MAX_BODY_BYTES: String(MAX_BODY), SECBOX_SERVER_MAX_IMPORT_BYTES: String(2 * MAX_BODY) } });
  user = await srv.createUser();
});
afterAll(() => srv.stop());

const nest = (n: number) => "[".repeat(n) + "]".repeat(n);
const postRaw = (path: string, raw: string, opts: { session?: string; type?: string } = {}) =>
  srv.anon.request("POST", path, { raw, session: opts.session, headers: { "content-type": opts.type ?? "application/json" } });

describe("JSON nesting limit", () => {
  test(`${MAX_JSON_DEPTH} levels of arrays/objects are fine, one more is 400 INVALID_INPUT naming the limit`, async () => {
    // The body object is level 1, so `extra` may hold MAX_JSON_DEPTH - 1 levels.
    const ok = await postRaw("/api/auth/forgot", `{"email":"nobody@example.com","extra":${nest(MAX_JSON_DEPTH - 1)}}`);
    expect(ok.status).toBe(204);
    const mixed = `{"email":"nobody@example.com","extra":${'{"a":['.repeat(31)}1${"]}".repeat(31)}}`; // 1 + 62 levels
    expect((await postRaw("/api/auth/forgot", mixed)).status).toBe(204);
    const deep = await postRaw("/api/auth/forgot", `{"email":"nobody@example.com","extra":${nest(MAX_JSON_DEPTH)}}`);
    expect([deep.status, deep.json.code]).toEqual([400, "INVALID_INPUT"]);
    expect(deep.json.message).toContain(String(MAX_JSON_DEPTH));
  });

  test("a deep value inside a typed field is a 400 on user routes too (after 401)", async () => {
    const body = `{"name":${nest(1500)},"color":"default"}`;
    expect((await postRaw("/api/user/tags", body)).status).toBe(401);
    for (const [path, raw] of [
      ["/api/user/tags", body],
      ["/api/user/api_keys", `{"name":"k","expiresAt":${nest(1500)}}`],
      ["/api/auth/password", `{"currentPassword":${nest(1500)},"newPassword":"x"}`],
      ["/api/user/scripts", `{"name":"s","scriptType":"responder","content":${nest(1500)}}`],
    ] as const) {
      const res = await postRaw(path, raw, { session: user.session });
      expect([path, res.status, res.json?.code]).toEqual([path, 400, "INVALID_INPUT"]);
    }
  });

  test("brackets inside strings do not count, escaped quotes and backslashes included", async () => {
    const signin = (raw: string) => postRaw("/api/auth/signin", raw);
    // Wrong password, not a body error: 401.
    expect((await signin(`{"email":"a@example.com","password":"${"[".repeat(500)}"}`)).status).toBe(401);
    expect((await signin(`{"email":"a@example.com","password":"\\"${"{".repeat(500)}\\""}`)).status).toBe(401);
    // `"x\\\\"` ends with an escaped backslash: the string closes there, and the next string's brackets are text.
    expect((await signin(`{"password":"x\\\\","email":"a@example.com","s":"${"[".repeat(500)}"}`)).status).toBe(401);
  });

  test("jsonTooDeep scans without recursion", () => {
    expect(jsonTooDeep(nest(64))).toBe(false);
    expect(jsonTooDeep(nest(65))).toBe(true);
    expect(jsonTooDeep("[".repeat(1_000_000))).toBe(true);
    expect(jsonTooDeep(`["${"[".repeat(100)}"]`)).toBe(false);
    expect(jsonTooDeep(`["\\\\", ${nest(70)}]`)).toBe(true);
    expect(jsonTooDeep(`["\\"${"[".repeat(100)}"]`)).toBe(false);
    expect(jsonTooDeep(`"unterminated ${"[".repeat(100)}`)).toBe(false);
  });

  test("backstop: a stack overflow while validating is a 400, not a 500", async () => {
    // A route that skips decodeBody (and so the nesting limit): Elysia's validation error overflows the stack.
    const app = new Elysia().use(httpPlugin({ maxBodyBytes: 1 << 20, maxImportBytes: 1 << 20 }, createLogger("error"))).post("/api/raw", () => "ok", {
      transform: (ctx: { body: unknown }) => {
        if (ctx.body instanceof RawBody) ctx.body = JSON.parse(ctx.body.text);
      },
      body: t.Object({ email: t.String() }),
    });
    const res = await app.handle(
      new Request("http://localhost/api/raw", { method: "POST", headers: { "content-type": "application/json" }, body: `{"email":${nest(20_000)}}` }),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("INVALID_INPUT");
  });
});

describe("check order: unknown route 404 before 413", () => {
  const big = "x".repeat(3 * MAX_BODY);
  const chunked = () => {
    let sent = 0;
    return new ReadableStream({
      pull(ctrl) {
        if (sent > 2 * MAX_BODY) return ctrl.close();
        sent += 1024;
        ctrl.enqueue(new TextEncoder().encode("y".repeat(1024)));
      },
    });
  };
  const send = (method: string, path: string, body: string | ReadableStream) =>
    fetch(srv.url + path, { method, body, headers: { "content-type": "application/json" } }).then(async (r) => ({
      status: r.status,
      json: (await r.json()) as any,
    }));

  test("unknown path, or a known path with another method: 404 whatever the body size", async () => {
    for (const [method, path] of [
      ["POST", "/api/does-not-exist"],
      ["POST", "/api/status/extra"],
      ["PUT", "/api/status"],
      ["DELETE", "/api/user/tags"],
    ]) {
      expect([method, path, await send(method!, path!, big)]).toEqual([
        method,
        path,
        { status: 404, json: { message: "Not found", code: "NOT_FOUND" } },
      ]);
      expect((await send(method!, path!, chunked())).status).toBe(404);
    }
  });

  test("a known route still answers 413 before credentials, by Content-Length or while reading", async () => {
    for (const path of ["/api/status", "/api/user/tags", "/api/auth/signup"]) {
      for (const body of [big, chunked()]) {
        const res = await send("POST", path, body);
        expect([path, res.status, res.json.code]).toEqual([path, 413, "PAYLOAD_TOO_LARGE"]);
      }
    }
    // Under the limit the next check (credentials) answers.
    expect((await send("POST", "/api/user/tags", "z".repeat(MAX_BODY - 10))).status).toBe(401);
  });
});
