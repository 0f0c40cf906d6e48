// The generated client against a real server (issue 19): scripts/contract/client-check.ts, typed by
// web/api/schema.gen.ts (openapi-typescript over our document) and type-checked by `bunx tsc --noEmit`, creates and
// reads one resource of every tag and reads an error's `code`; the values it returns are asserted here.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { clientCheck } from "../../scripts/contract/client-check";
import { startTestServer, type TestServer } from "./harness";

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv.stop());

test("the generated client creates and reads one resource of every tag, and reads an error's code", async () => {
  const user = await srv.createUser();
  const token: string = (await user.client.post("/api/user/api_keys", { name: "client" })).json.token;
  const seen = await clientCheck(srv.url, token);
  expect(seen).toMatchObject({
    status: "available",
    self: user.email,
    settings: "dark",
    destination: null,
    schedule: 3_600_000,
    tag: "primary",
    secret: "client-check",
    script: "universal",
    key: "ed25519",
    template: "client-check",
    policy: "default-src",
    apiTracker: "GET",
    pageTracker: 30_000,
    preview: true,
    errorCode: "DUPLICATE_NAME",
    errorStatus: 409,
  });
  expect((seen.responder as unknown[])[0]).toBe("GET");
  expect((seen.search as string[]).sort()).toEqual(["responder", "tag"]);
});
