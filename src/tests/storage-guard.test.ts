// Storage (supplement §28, issue 29), the parts around the per-user cap: the free-disk guard (`server.min_free_disk_mib`:
// 507 INSUFFICIENT_STORAGE for writes that add data, KV writes and captures refused, runs store no revision; reads and
// deletes keep working), driven through its free-space reading (the test seam, like the clock), never by filling a
// disk; writers racing on two instances of one PostgreSQL database never take a user past the cap; the migration
// counts what was stored before it. Real servers, real QuickJS, real SQLite or PostgreSQL, real HTTP upstream.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { onPostgres } from "./backend";
import { migrate } from "../platform/db/migrate";
import { MIGRATIONS } from "../platform/db/migrations";
import { startUpstream, type Upstream } from "./fixtures/upstream";
import { quickUser } from "./fixtures/user-data";

const MiB = 1024 * 1024;
const R = "/api/webhooks/responders";
const AT = "/api/web_scraping/api_trackers";
const ENV = {
  SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true",
  SECBOX_SCHEDULER_ENABLED: "false",
  SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
  SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_STORAGE_BYTES: "100000",
  SECBOX_SUBSCRIPTIONS_TIERS_STANDARD_MAX_STORAGE_BYTES: "60000",
};

let srv: TestServer;
let up: Upstream;

beforeAll(async () => {
  up = startUpstream();
  srv = await startTestServer({ env: ENV });
});
afterAll(async () => {
  await srv?.stop();
  up.stop();
});

const KV_SCRIPT = `(async () => {
  const q = context.query;
  try {
    if (q.op === "del") return { body: String(await Secbox.kv.delete(q.k)) };
    return { body: String(await Secbox.kv.set(q.k, "x".repeat(Number(q.n)))) };
  } catch (e) {
    return { statusCode: 500, body: "ERR " + e.message };
  }
})()`;

let seq = 0;
async function responder(u: TestUser, path: string, settings: Record<string, unknown>): Promise<string> {
  const res = await u.client.post(R, { name: `g${++seq}`, location: { pathType: "=", path }, settings: { requestsToTrack: 0, ...settings } });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json.id;
}

async function hit(s: TestServer, u: TestUser, path: string, body?: string): Promise<{ status: number; text: string }> {
  const res = await fetch(s.url + path, { method: body === undefined ? "GET" : "POST", body, headers: { host: `${u.handle}.localhost:7070` } });
  return { status: res.status, text: await res.text() };
}

async function counters(userId: string) {
  const r = await srv.rt.db.get<any>("SELECT kv_bytes, history_bytes, revision_bytes, interaction_bytes FROM storage_usage WHERE user_id = ?", [
    userId,
  ]);
  return r
    ? { kv: Number(r.kv_bytes), history: Number(r.history_bytes), revisions: Number(r.revision_bytes), interactions: Number(r.interaction_bytes) }
    : undefined;
}

/** Stored bytes summed from the rows themselves (octet_length: both backends). */
async function recount(userId: string) {
  const one = async (sql: string) => Number((await srv.rt.db.get<{ n: number | null }>(sql, [userId]))?.n ?? 0);
  return {
    kv: await one(
      "SELECT SUM(octet_length(k.key) + octet_length(k.value)) AS n FROM kv_entries k JOIN responders r ON r.id = k.owner_id WHERE r.user_id = ?",
    ),
    history: await one(
      `SELECT SUM(octet_length(q.method) + octet_length(q.path) + COALESCE(octet_length(q.raw_query), 0) + COALESCE(octet_length(q.client_address), 0)
         + octet_length(q.headers) + COALESCE(octet_length(q.body), 0) + COALESCE(octet_length(q.response_headers), 0) + COALESCE(octet_length(q.response_body), 0)) AS n
       FROM responder_requests q JOIN responders r ON r.id = q.responder_id WHERE r.user_id = ?`,
    ),
    revisions: await one("SELECT SUM(octet_length(v.data)) AS n FROM tracker_revisions v JOIN trackers t ON t.id = v.tracker_id WHERE t.user_id = ?"),
    interactions: 0,
  };
}

describe("free-disk guard", () => {
  test.skipIf(onPostgres)(
    "SQLite, below min_free_disk_mib: API writes that add data 507, KV writes and captures refused, no revision stored; reads and deletes work",
    async () => {
      const u = await quickUser(srv, { tier: "ultimate" });
      const disk = srv.services.storage.disk;
      expect(disk.active).toBe(true);
      expect(disk.low).toBe(false); // the real statfs reading of the data directory
      const script = (await u.client.post("/api/user/scripts", { name: "s", scriptType: "universal", content: "1" })).json;
      await responder(u, "/kv", { script: KV_SCRIPT });
      const capId = await responder(u, "/cap", { requestsToTrack: 10, body: "ok" });
      expect(await hit(srv, u, "/kv?k=a&n=10")).toEqual({ status: 200, text: "true" });
      expect((await hit(srv, u, "/cap", "first")).status).toBe(200);
      up.state.value = '{"disk":1}';
      const tracker = (await u.client.post(AT, { name: "disk", enabled: false, target: { url: `${up.url}/value` } })).json;
      expect((await u.client.post(`${AT}/${tracker.id}/_history`, { refresh: true })).json).toHaveLength(1);
      const historyLength = async () => ((await u.client.get(`${R}/${capId}/_history`)).json as unknown[]).length;
      expect(await historyLength()).toBe(1);
      const before = await counters(u.id);

      disk.read = async () => 100 * MiB; // the default threshold is 512 MiB
      expect(await disk.check()).toBe(true);
      try {
        for (const res of [
          await u.client.post("/api/user/scripts", { name: "t", scriptType: "universal", content: "2" }),
          await u.client.put(`/api/user/scripts/${script.id}`, { content: "3" }),
          await u.client.post(R, { name: "new", location: { pathType: "=", path: "/new" } }),
          await u.client.post("/api/user/data/_import", { data: {}, mode: "merge" }),
        ]) {
          expect(res.status).toBe(507);
          expect(res.json.code).toBe("INSUFFICIENT_STORAGE");
          expect(res.json.message).toContain("low on disk space");
        }
        // Reads work.
        expect((await u.client.get("/api/user/scripts")).json.total).toBe(1);
        expect((await u.client.get(R)).json.total).toBe(2);
        // A KV write fails in the script; a KV delete works.
        expect(await hit(srv, u, "/kv?k=b&n=10")).toEqual({ status: 500, text: "ERR KV write refused: the server is low on disk space" });
        expect(await hit(srv, u, "/kv?op=del&k=a")).toEqual({ status: 200, text: "true" });
        // A hit is answered and not captured.
        expect(await hit(srv, u, "/cap", "second")).toEqual({ status: 200, text: "ok" });
        expect(await historyLength()).toBe(1);
        // A run stores no revision and says why.
        up.state.value = '{"disk":2}';
        expect((await u.client.post(`${AT}/${tracker.id}/_history`, { refresh: true })).json).toHaveLength(1);
        const [log] = (await u.client.get(`${AT}/${tracker.id}/_logs`)).json;
        expect(log.status).toBe("failure");
        expect(log.error).toContain("Saving the revision failed: the server is low on disk space");
        // Deletes work (they free space).
        expect((await u.client.delete(`/api/user/scripts/${script.id}`)).status).toBe(204);
        expect((await u.client.post(`${R}/${capId}/_clear`)).status).toBe(204);
        expect(await counters(u.id)).toEqual({ ...before!, kv: 0, history: 0 });
      } finally {
        disk.read = async () => 10_000 * MiB;
        await disk.check();
      }
      expect(disk.low).toBe(false);
      expect((await u.client.post("/api/user/scripts", { name: "t", scriptType: "universal", content: "2" })).status).toBe(201);
      expect((await hit(srv, u, "/cap", "third")).status).toBe(200);
      expect(await historyLength()).toBe(1);
      expect(await counters(u.id)).toEqual(await recount(u.id));
    },
  );

  test.skipIf(!onPostgres)("PostgreSQL: the database's disk is not this process's; the guard stays off whatever the local reading says", async () => {
    const disk = srv.services.storage.disk;
    expect(disk.active).toBe(false);
    disk.read = async () => 0;
    expect(await disk.check()).toBe(false);
    const u = await quickUser(srv);
    expect((await u.client.post("/api/user/scripts", { name: "s", scriptType: "universal", content: "1" })).status).toBe(201);
  });
});

describe.skipIf(!onPostgres)("two instances on one PostgreSQL database", () => {
  let srv2: TestServer;
  beforeAll(async () => {
    srv2 = await startTestServer({ dataDir: srv.dataDir, env: ENV });
  });
  afterAll(async () => {
    await srv2?.stop();
  });

  test("concurrent KV writes through both instances stop exactly at the cap", async () => {
    const u = await quickUser(srv); // basic: 100,000 bytes
    for (let i = 0; i < 4; i++) await responder(u, `/c${i}`, { script: KV_SCRIPT });
    // 24 writes of 10,003 bytes at once, alternating instances: 9 fit.
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) => hit(i % 2 === 0 ? srv : srv2, u, `/c${i % 4}?k=k${String(i).padStart(2, "0")}&n=10000`)),
    );
    expect(results.filter((r) => r.text === "true")).toHaveLength(9);
    expect(results.filter((r) => r.text.startsWith("ERR KV size limit reached"))).toHaveLength(15);
    expect(await counters(u.id)).toEqual({ kv: 9 * 10_003, history: 0, revisions: 0, interactions: 0 });
    expect(await counters(u.id)).toEqual(await recount(u.id));
  });

  test("concurrent captures through both instances stay within the cap, and the counter stays exact", async () => {
    const u = await quickUser(srv, { tier: "standard" }); // 60,000 bytes
    const id = await responder(u, "/burst", { requestsToTrack: 30, body: "ok" });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => hit(i % 2 === 0 ? srv : srv2, u, "/burst", "c".repeat(5000))));
    expect(results.every((r) => r.status === 200)).toBe(true);
    await Promise.all([srv.services.responders.flushCaptures(), srv2.services.responders.flushCaptures()]);
    const stored = (await u.client.get(`${R}/${id}/_history`)).json as unknown[];
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.length).toBeLessThan(20);
    const c = await counters(u.id);
    expect(c).toEqual(await recount(u.id));
    expect(c!.history).toBeLessThanOrEqual(60_000);
  });

  test("the conditional add alone (the hook interactions will use) never overshoots under concurrent transactions", async () => {
    const u = await quickUser(srv); // basic: 100,000 bytes
    const add = (s: TestServer) => s.rt.db.tx((tx) => s.services.storage.tryAdd(tx, u.id, "interactions", 3000));
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => add(i % 2 === 0 ? srv : srv2)));
    expect(results.filter(Boolean)).toHaveLength(33);
    expect((await counters(u.id))!.interactions).toBe(99_000);
  });
});

describe("migration 0015", () => {
  test("counts what was stored before it: every user's KV, history and revisions, and each record's size", async () => {
    const u = await quickUser(srv, { tier: "ultimate" });
    await responder(u, "/m-kv", { script: KV_SCRIPT, requestsToTrack: 3 });
    const hId = await responder(u, "/m-h", { requestsToTrack: 3, body: "ok", headers: [["x-a", "ü"]] });
    await hit(srv, u, "/m-kv?k=é&n=1234");
    for (let i = 0; i < 4; i++) await hit(srv, u, `/m-h?i=${i}`, "ä".repeat(100 * i));
    up.state.value = '{"m":"ü"}';
    const t = (await u.client.post(AT, { name: "m", enabled: false, target: { url: `${up.url}/value` } })).json;
    await u.client.post(`${AT}/${t.id}/_history`, { refresh: true });
    await srv.services.responders.flushCaptures();
    const expected = await recount(u.id);
    expect(expected.kv * expected.history * expected.revisions).toBeGreaterThan(0);
    const sizes = async () =>
      (await srv.rt.db.all<{ size: number }>("SELECT size FROM responder_requests WHERE responder_id = ? ORDER BY id", [hId])).map((r) =>
        Number(r.size),
      );
    const sizesBefore = await sizes();

    // Back to schema 14 (what 0015 adds removed), then migrate again.
    const db = srv.rt.db;
    await db.exec(`DROP TABLE storage_usage;
      DROP INDEX responder_requests_responder; ALTER TABLE responder_requests DROP COLUMN size;
      CREATE INDEX responder_requests_responder ON responder_requests(responder_id, id);
      DROP INDEX tracker_revisions_order; CREATE INDEX tracker_revisions_order ON tracker_revisions(tracker_id, created_at, id);
      DELETE FROM schema_migrations WHERE version = 15;`);
    // Later migrations are applied already: run 0015's text again as a migration after them.
    const again = { ...MIGRATIONS.find((m) => m.version === 15)!, version: 1000 };
    expect((await migrate(db, [...MIGRATIONS, again])).applied).toEqual([1000]);
    await db.run("DELETE FROM schema_migrations WHERE version = 1000");
    expect(await counters(u.id)).toEqual(expected);
    expect(await sizes()).toEqual(sizesBefore);
    // Every user got a row.
    const missing = await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM users WHERE id NOT IN (SELECT user_id FROM storage_usage)");
    expect(Number(missing!.n)).toBe(0);
  });
});
