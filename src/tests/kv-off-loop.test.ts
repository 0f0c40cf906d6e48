// Secbox.kv sets off the event loop (issue 29, the storage attack: a user writing 1 MiB values as fast as their
// scripts can held the loop in SQLite inserts, commits and checkpoints, and another user's requests waited seconds).
// On SQLite a set's transaction runs on a work thread's own connection while the main thread holds the writer; each
// user's sets go to the work pool one at a time, so another user's set does not queue behind a whole backlog; the
// main connection leaves its checkpoints to a work thread. Real server in this process, real QuickJS, real SQLite;
// orderings and counts only.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { quickUser } from "./fixtures/quick-users";
import type { SqliteDb } from "../platform/db/sqlite";

const sqlite = (process.env.SECBOX_TEST_BACKEND ?? "sqlite") === "sqlite";

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_SCHEDULER_ENABLED: "false" } });
});
afterAll(() => srv?.stop());

let seq = 0;
async function responder(u: TestUser, path: string, script: string): Promise<void> {
  const res = await u.client.post("/api/webhooks/responders", {
    name: `kv${++seq}`,
    location: { pathType: "=", path },
    settings: { requestsToTrack: 0, script },
  });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
}

async function hit(u: TestUser, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(srv.url + path, { headers: { host: `${u.handle}.localhost:7070` } });
  return { status: res.status, text: await res.text() };
}

/** Until `cond` holds or `ms` pass (setup steps of another thread; the assertions come after). */
async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await Bun.sleep(5);
}

describe.if(sqlite)("Secbox.kv sets off the event loop (SQLite)", () => {
  test("a set's insert and commit run on a work thread: the event loop's connection prepares no write of kv_entries", async () => {
    const u = await quickUser(srv);
    await responder(u, "/set", "await Secbox.kv.set('k', 'v'.repeat(100000)); return { body: String((await Secbox.kv.get('k')).length) }");
    const query = Database.prototype.query;
    const written: string[] = [];
    Database.prototype.query = function (this: Database, sql: string) {
      if (/kv_entries/.test(sql) && /^\s*(INSERT|UPDATE)/i.test(sql)) written.push(sql);
      return query.call(this, sql);
    } as typeof query;
    let res;
    try {
      res = await hit(u, "/set");
    } finally {
      Database.prototype.query = query;
    }
    expect(res).toEqual({ status: 200, text: "100000" });
    expect(written).toEqual([]);
    // stored, counted in the user's storage, visible to the main thread's reads
    const row = await srv.rt.db.get<{ size: number }>("SELECT size FROM kv_entries WHERE key = 'k'");
    expect(Number(row?.size)).toBe(100_001);
    expect(Number((await srv.rt.db.get<{ kv_bytes: number }>("SELECT kv_bytes FROM storage_usage WHERE user_id = ?", [u.id]))?.kv_bytes)).toBe(
      100_001,
    );
  });

  test("another user's set goes before the rest of one user's backlog of sets (six hits at once)", async () => {
    const heavy = await quickUser(srv);
    const light = await quickUser(srv);
    await responder(heavy, "/many", "await Secbox.kv.set('k' + Math.random(), 'x'.repeat(1000)); return { body: 'heavy' }");
    await responder(light, "/one", "await Secbox.kv.set('k' + Math.random(), 'y'); return { body: 'light' }");
    // warm both scripts (compiled on the workers) and the work threads
    await hit(heavy, "/many");
    await hit(light, "/one");
    const work = srv.services.work;
    const last = Number((await srv.rt.db.get<{ n: number | null }>("SELECT MAX(rowid) AS n FROM kv_entries"))?.n ?? 0);
    // a transaction holds the writer meanwhile: the heavy user's six sets pile up first, then the light user's one
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let began!: () => void;
    const inTx = new Promise<void>((r) => (began = r));
    const holding = srv.rt.db.tx(async () => {
      began();
      await gate;
    });
    await inTx;
    const heavyHits = Array.from({ length: 6 }, () => hit(heavy, "/many"));
    await until(() => (work.stats().running[heavy.id] ?? 0) > 0);
    await Bun.sleep(100); // its other five hits reach their set meanwhile
    const lightHit = hit(light, "/one");
    await until(() => (work.stats().running[light.id] ?? 0) > 0);
    release();
    await Promise.all([holding, ...heavyHits, lightHit]);
    // the order of the commits (rowids): the heavy user had one set in progress; the light user's came next, not
    // after the five others
    const owners = new Map([
      [heavy.handle, "heavy"],
      [light.handle, "light"],
    ]);
    const rows = await srv.rt.db.all<{ handle: string }>(
      "SELECT u.handle FROM kv_entries k JOIN responders r ON r.id = k.owner_id JOIN users u ON u.id = r.user_id WHERE k.rowid > ? ORDER BY k.rowid",
      [last],
    );
    expect(rows.map((r) => owners.get(r.handle))).toEqual(["heavy", "light", "heavy", "heavy", "heavy", "heavy", "heavy"]);
  });

  test("the event loop's connection never checkpoints: a work thread does it after its commits", async () => {
    const db = srv.rt.db as SqliteDb;
    expect(db.raw.query("PRAGMA wal_autocheckpoint").get()).toEqual({ wal_autocheckpoint: 0 });
    const started = srv.services.work.stats().started;
    await srv.rt.db.run(
      "INSERT INTO server_state (key, value) VALUES ('kv-off-loop-test', '1') ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    );
    await until(() => srv.services.work.stats().started > started);
    expect(srv.services.work.stats().started).toBeGreaterThan(started);
  });
});
