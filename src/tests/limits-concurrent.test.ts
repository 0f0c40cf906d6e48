// Per-user entity limits (supplement §22) hold under concurrent creation: many creations at once never leave more
// than the limit. On SQLite the writers are serialized anyway; on PostgreSQL transactions run concurrently (READ
// COMMITTED), so the count in each creating transaction is taken under a per-user lock (the stores' count()).
// Real HTTP, requests in parallel, on the test backend.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickUser } from "./fixtures/quick-users";
import { startTestServer, type TestServer } from "./harness";

const LIMIT = 3;
const ATTEMPTS = 12;
let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({
    env: {
      SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
      SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_TAGS: String(LIMIT),
      SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_SECRETS: String(LIMIT),
      SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_RESPONDERS: String(LIMIT),
    },
  });
});
afterAll(() => srv.stop());

test("concurrent creations never exceed the tier's limit (tags, secrets, responders)", async () => {
  const u = await quickUser(srv, "basic");
  const kinds: [string, (i: number) => unknown][] = [
    ["/api/user/tags", (i) => ({ name: `t${i}` })],
    ["/api/user/secrets", (i) => ({ name: `S${i}`, value: "v" })],
    ["/api/webhooks/responders", (i) => ({ name: `r${i}`, location: { pathType: "=", path: `/r${i}` } })],
  ];
  for (const [path, body] of kinds) {
    const statuses = await Promise.all(Array.from({ length: ATTEMPTS }, async (_, i) => (await u.client.post(path, body(i))).status));
    expect([path, statuses.filter((s) => s === 201).length]).toEqual([path, LIMIT]);
    expect(statuses.filter((s) => s !== 201).every((s) => s === 400)).toBe(true);
  }
  expect((await u.client.get("/api/user/tags")).json.total).toBe(LIMIT);
});
