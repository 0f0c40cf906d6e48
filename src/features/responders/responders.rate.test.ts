// Hit rate per handle (supplement §28, issue 29: the flood): tier `max_hits_per_second`; beyond it → 429 with
// `Retry-After: 1`, answered before the body is read and never captured; 0 = unlimited. The clock is the test's,
// so the bucket refills only when the test moves time.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { quickUser } from "../../tests/fixtures/quick-users";

let nowMs = Date.UTC(2026, 0, 1);
let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({
    clock: { now: () => nowMs },
    env: { SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic", SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_HITS_PER_SECOND: "3", SECBOX_SCHEDULER_ENABLED: "false" },
  });
});
afterAll(() => srv.stop());

let seq = 0;
async function responder(user: TestUser, path: string, settings: Record<string, unknown>) {
  const res = await user.client.post("/api/webhooks/responders", {
    name: `rate-${++seq}`,
    location: { pathType: "=", path },
    method: "ANY",
    settings: { requestsToTrack: 30, ...settings },
  });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json.id as string;
}

const hit = (user: TestUser, path: string, init: RequestInit = {}) =>
  fetch(srv.url + path, { ...init, headers: { host: `${user.handle}.localhost:7070`, ...(init.headers as Record<string, string>) } });

async function captured(id: string): Promise<number> {
  await srv.services.responders.flushCaptures();
  return (await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM responder_requests WHERE responder_id = ?", [id]))!.n;
}

describe("max_hits_per_second per handle", () => {
  test("beyond the rate: 429 Retry-After: 1, not captured; the other responders of the handle share the budget; time refills it", async () => {
    const u = await quickUser(srv);
    const stat = await responder(u, "/static", { body: "ok", headers: [["content-type", "text/plain"]] });
    const scripted = await responder(u, "/script", { script: "({ statusCode: 200, body: 'ran' })" });
    nowMs += 10_000;
    const statuses: number[] = [];
    for (const path of ["/static", "/script", "/static"]) statuses.push((await hit(u, path)).status);
    expect(statuses).toEqual([200, 200, 200]);

    for (const path of ["/static", "/script", "/nowhere"]) {
      const res = await hit(u, path);
      expect([path, res.status, res.headers.get("retry-after")]).toEqual([path, 429, "1"]);
      expect(await res.text()).toBe("Too many requests");
    }
    // Checked before the body is read: a body over the 10 MiB inbound cap is refused as 429, not 413.
    const big = await hit(u, "/static", { method: "POST", body: new Uint8Array(11 * 1024 * 1024) });
    expect(big.status).toBe(429);
    expect(await captured(stat)).toBe(2);
    expect(await captured(scripted)).toBe(1);

    // One second later: three more.
    nowMs += 1000;
    expect([
      (await hit(u, "/static")).status,
      (await hit(u, "/script")).status,
      (await hit(u, "/static")).status,
      (await hit(u, "/static")).status,
    ]).toEqual([200, 200, 200, 429]);
    // A third of a second refills one hit.
    nowMs += 334;
    expect([(await hit(u, "/static")).status, (await hit(u, "/static")).status]).toEqual([200, 429]);
    expect(await captured(stat)).toBe(5);
    expect(await captured(scripted)).toBe(2);
  }, 30_000); // each 429 is held 1 s

  test("another handle has its own budget; 0 (ultimate) is unlimited", async () => {
    const a = await quickUser(srv);
    const b = await quickUser(srv);
    const c = await quickUser(srv, "ultimate");
    for (const u of [a, b, c]) await responder(u, "/x", { body: "ok" });
    nowMs += 10_000;
    const statuses = async (u: TestUser, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await hit(u, "/x")).status);
      return out;
    };
    expect(await statuses(a, 4)).toEqual([200, 200, 200, 429]);
    expect(await statuses(b, 3)).toEqual([200, 200, 200]);
    expect(await statuses(c, 20)).toEqual(Array(20).fill(200));
  }, 30_000);
});
