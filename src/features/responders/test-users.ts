// Test helper: users without a password (no argon2 hashing), signed in with a real session. The harness's
// createUser hashes a password per user, which dominates these files' run time on small machines.
import { ApiClient, type TestServer, type TestUser } from "../../tests/harness";
import { sessionCookieName } from "../../platform/auth/cookies";
import type { Tier } from "../../config/schema";

let n = 0;

export async function quickUser(srv: TestServer, tier?: Tier): Promise<TestUser> {
  const email = `responders-${++n}-${Date.now()}@example.com`;
  const row = await srv.services.users.create({ email, tier });
  const session = await srv.services.users.createSession(row.id);
  return { id: row.id, email: row.email, handle: row.handle, session, client: new ApiClient(srv.url, { session, cookieName: sessionCookieName(srv.config) }) };
}
