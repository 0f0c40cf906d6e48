// Per-user storage cap (supplement §28, tier key max_storage_bytes; issue 29 "storage"): KV of all a user's
// responders, their history and tracker revisions count together against the cap; beyond it a KV write fails with
// the KV error, a hit is answered but not captured, a tracker run stores no revision and logs why, an import is
// refused with LIMIT_REACHED. Deletes, trims, expiry, import, clone and user removal keep the counter equal to a
// recount from the tables (done here with SQL of its own, not the code under test). Real server, real QuickJS, real
// SQLite or PostgreSQL (SECBOX_TEST_BACKEND=postgres), real HTTP upstream.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "./harness";
import { startUpstream, type Upstream } from "./fixtures/upstream";
import { quickUser } from "./fixtures/user-data";

const OPERATOR = "op@storage.example";
/** basic: 300,000 bytes (KV test); standard: 50,000 (history); professional: 5,000 (revisions); ultimate: default. */
const CAPS = { basic: 300_000, standard: 50_000, professional: 5_000 };

let srv: TestServer;
let up: Upstream;
let op: TestUser;

beforeAll(async () => {
  up = startUpstream();
  srv = await startTestServer({
    env: {
      SECBOX_SECURITY_OPERATORS: OPERATOR,
      SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true",
      SECBOX_SCHEDULER_ENABLED: "false",
      SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
      SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_STORAGE_BYTES: String(CAPS.basic),
      SECBOX_SUBSCRIPTIONS_TIERS_STANDARD_MAX_STORAGE_BYTES: String(CAPS.standard),
      SECBOX_SUBSCRIPTIONS_TIERS_PROFESSIONAL_MAX_STORAGE_BYTES: String(CAPS.professional),
    },
  });
  op = await quickUser(srv, { email: OPERATOR, tier: "ultimate" });
});
afterAll(async () => {
  await srv?.stop();
  up.stop();
});

const R = "/api/webhooks/responders";
const AT = "/api/web_scraping/api_trackers";
let seq = 0;

/** A script that sets (`?k=&n=` bytes, `&ttl=`) or deletes (`?op=del&k=`) a KV key and answers the result or the
 *  KV error's message. */
const KV_SCRIPT = `(async () => {
  const q = context.query;
  try {
    if (q.op === "del") return { body: String(await Secbox.kv.delete(q.k)) };
    const opts = q.ttl ? { ttlSec: Number(q.ttl) } : undefined;
    return { body: String(await Secbox.kv.set(q.k, "x".repeat(Number(q.n)), opts)) };
  } catch (e) {
    return { statusCode: 500, body: "ERR " + e.message };
  }
})()`;

async function responder(u: TestUser, path: string, settings: Record<string, unknown>): Promise<string> {
  const res = await u.client.post(R, { name: `r${++seq}`, location: { pathType: "=", path }, settings: { requestsToTrack: 0, ...settings } });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json.id;
}

async function hit(u: TestUser, path: string, body?: string): Promise<{ status: number; text: string }> {
  const res = await fetch(srv.url + path, { method: body === undefined ? "GET" : "POST", body, headers: { host: `${u.handle}.localhost:7070` } });
  return { status: res.status, text: await res.text() };
}

const kvSet = (u: TestUser, path: string, k: string, n: number, ttl?: number) => hit(u, `${path}?k=${k}&n=${n}${ttl ? `&ttl=${ttl}` : ""}`);
const kvDel = (u: TestUser, path: string, k: string) => hit(u, `${path}?op=del&k=${k}`);

/** The user's counters as stored. */
async function counters(userId: string) {
  const r = await srv.rt.db.get<any>("SELECT kv_bytes, history_bytes, revision_bytes, interaction_bytes FROM storage_usage WHERE user_id = ?", [
    userId,
  ]);
  return r ? { kv: Number(r.kv_bytes), history: Number(r.history_bytes), revisions: Number(r.revision_bytes) } : undefined;
}

/** The same, summed from the stored rows themselves (octet_length of what is stored: both backends). */
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
  };
}

async function expectExact(userId: string) {
  await srv.services.responders.flushCaptures();
  expect(await counters(userId)).toEqual(await recount(userId));
}

const historyCount = async (u: TestUser, id: string) => ((await u.client.get(`${R}/${id}/_history`)).json as unknown[]).length;

describe("max_storage_bytes", () => {
  test("KV: the user's cap holds across responders; beyond it the script gets the KV error; a delete gives the bytes back", async () => {
    const u = await quickUser(srv, { tier: "basic" }); // 300,000 bytes
    await responder(u, "/a", { script: KV_SCRIPT });
    await responder(u, "/b", { script: KV_SCRIPT });
    expect(await kvSet(u, "/a", "k1", 100_000)).toEqual({ status: 200, text: "true" });
    expect(await kvSet(u, "/a", "k2", 100_000)).toEqual({ status: 200, text: "true" });
    // Responder b's own KV is far below kv_max_bytes (1 GiB): the user's total is what stops it.
    const refused = await kvSet(u, "/b", "k1", 100_000);
    expect(refused.status).toBe(500);
    expect(refused.text).toBe("ERR KV size limit reached (300000 bytes of stored data per user: max_storage_bytes)");
    expect(await counters(u.id)).toEqual({ kv: 200_004, history: 0, revisions: 0 });
    // Overwriting with a smaller value and deleting give bytes back; then b fits.
    expect(await kvSet(u, "/a", "k1", 50_000)).toEqual({ status: 200, text: "true" });
    expect(await kvDel(u, "/a", "k2")).toEqual({ status: 200, text: "true" });
    expect(await kvSet(u, "/b", "k1", 100_000)).toEqual({ status: 200, text: "true" });
    expect(await kvSet(u, "/b", "k2", 100_000)).toEqual({ status: 200, text: "true" });
    expect((await kvSet(u, "/b", "k3", 100_000)).text).toStartWith("ERR KV size limit reached");
    await expectExact(u.id);
    expect((await counters(u.id))!.kv).toBe(250_006);
  });

  test("history: a hit beyond the cap is answered but not captured; at full depth a record that replaces as much as it adds is kept", async () => {
    const u = await quickUser(srv, { tier: "standard" }); // 50,000 bytes
    const id = await responder(u, "/h", { requestsToTrack: 10, statusCode: 202, body: "ok" });
    const body = "b".repeat(20_000);
    const before = srv.services.responders.notCaptured;
    for (let i = 0; i < 3; i++) expect(await hit(u, "/h", body)).toEqual({ status: 202, text: "ok" });
    expect(await historyCount(u, id)).toBe(2); // the third would pass 50,000 bytes
    expect(srv.services.responders.notCaptured - before).toBe(1);
    await expectExact(u.id);
    // A small hit still fits.
    expect((await hit(u, "/h", "small")).status).toBe(202);
    expect(await historyCount(u, id)).toBe(3);
    // Depth 3 reached: each new 20,000-byte record pushes out the oldest one, so the total barely moves.
    const upd = await u.client.put(`${R}/${id}`, { settings: { requestsToTrack: 3, statusCode: 202, body: "ok" } });
    expect(upd.status).toBe(200);
    for (let i = 0; i < 3; i++) expect((await hit(u, "/h", body)).status).toBe(202);
    const records = (await u.client.get(`${R}/${id}/_history`)).json as { bodySize: number }[];
    expect(records.map((r) => r.bodySize)).toEqual([20_000, 20_000, 5]);
    await expectExact(u.id);
    expect((await counters(u.id))!.history).toBeLessThanOrEqual(CAPS.standard);
    // Lowering the depth and clearing give the bytes back.
    expect((await u.client.put(`${R}/${id}`, { settings: { requestsToTrack: 1, statusCode: 202, body: "ok" } })).status).toBe(200);
    await expectExact(u.id);
    expect((await u.client.post(`${R}/${id}/_clear`)).status).toBe(204);
    expect(await counters(u.id)).toEqual({ kv: 0, history: 0, revisions: 0 });
  });

  test("revisions: a run beyond the cap stores nothing and fails in persist with the limit named; fewer kept revisions make room", async () => {
    const u = await quickUser(srv, { tier: "professional" }); // 5,000 bytes
    up.state.value = JSON.stringify({ v: 1, pad: "p".repeat(3000) });
    const t = await u.client.post(AT, { name: "big", enabled: false, target: { url: `${up.url}/value` }, config: { revisions: 5 } });
    expect(t.status, JSON.stringify(t.json)).toBe(201);
    const base = `${AT}/${t.json.id}`;
    expect((await u.client.post(`${base}/_history`, { refresh: true })).json).toHaveLength(1);

    up.state.value = JSON.stringify({ v: 2, pad: "p".repeat(3000) });
    const res = await u.client.post(`${base}/_history`, { refresh: true });
    expect(res.status).toBe(200);
    expect(res.json).toHaveLength(1);
    const [log] = (await u.client.get(`${base}/_logs`)).json;
    expect(log.status).toBe("failure");
    expect(log.error).toContain("Saving the revision failed: storage:");
    expect(log.error).toContain("max_storage_bytes (5000 bytes per user on the professional tier");
    expect(log.phases.find((p: any) => p.phase === "persist")).toMatchObject({ status: "failure" });
    await expectExact(u.id);

    // One revision kept: the new one replaces the old and fits.
    expect((await u.client.put(base, { config: { revisions: 1 } })).status).toBe(204);
    expect((await u.client.post(`${base}/_history`, { refresh: true })).json.map((r: any) => r.data.v)).toEqual([2]);
    expect((await u.client.get(`${base}/_logs`)).json[0].status).toBe("success");
    await expectExact(u.id);
  });

  test("an import beyond the cap is refused with 400 LIMIT_REACHED and writes nothing", async () => {
    const src = await quickUser(srv, { tier: "ultimate" });
    const id = await responder(src, "/imp", { requestsToTrack: 10, body: "ok" });
    for (let i = 0; i < 4; i++) await hit(src, "/imp", "i".repeat(20_000));
    expect(await historyCount(src, id)).toBe(4);
    const file = (await src.client.post("/api/user/data/_export", { include: { responders: { type: "all", includeHistory: true } } })).json;
    const dest = await quickUser(srv, { tier: "standard" }); // 50,000 bytes: 4 × 20,000 do not fit
    const res = await dest.client.post("/api/user/data/_import", { data: file, mode: "merge" });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("LIMIT_REACHED");
    expect(res.json.message).toContain("max_storage_bytes (50000 bytes per user on the standard tier");
    expect((await dest.client.get(R)).json.total).toBe(0);
    expect((await counters(dest.id)) ?? { kv: 0, history: 0, revisions: 0 }).toEqual({ kv: 0, history: 0, revisions: 0 });
  });

  test("mixed writes, trims, expiry, deletes, import and clone: the counter equals a recount from the tables at every step", async () => {
    const u = await quickUser(srv, { tier: "ultimate", email: "mixed@storage.example" });
    const kvId = await responder(u, "/kv", { script: KV_SCRIPT, requestsToTrack: 5 });
    const hId = await responder(u, "/hist", { requestsToTrack: 3, body: "héllo wörld", headers: [["x-unicode", "välüe ✓"]] });
    for (let i = 0; i < 6; i++) await kvSet(u, "/kv", `key-${i}-é`, 1000 * (i + 1));
    await kvSet(u, "/kv", "short-lived", 5000, 1);
    for (let i = 0; i < 5; i++) await hit(u, `/hist?q=${i}`, `body ${"ü".repeat(i * 100)}`);
    await expectExact(u.id);

    up.state.value = '{"n":1}';
    const t = (await u.client.post(AT, { name: "mixed", enabled: false, target: { url: `${up.url}/value` }, config: { revisions: 3 } })).json;
    for (let i = 2; i <= 5; i++) {
      await u.client.post(`${AT}/${t.id}/_history`, { refresh: true });
      up.state.value = JSON.stringify({ n: i, s: "s".repeat(i * 50) });
    }
    await expectExact(u.id);
    expect((await counters(u.id))!.revisions).toBeGreaterThan(0);

    // KV: delete, overwrite, expiry swept.
    await kvDel(u, "/kv", "key-0-é");
    await kvSet(u, "/kv", "key-1-é", 10);
    await Bun.sleep(1100);
    expect(await srv.services.sandbox.kv!.sweep()).toBeGreaterThanOrEqual(1);
    await expectExact(u.id);
    // Revisions: fewer kept, then cleared; history: cleared.
    expect((await u.client.put(`${AT}/${t.id}`, { config: { revisions: 1 } })).status).toBe(204);
    await expectExact(u.id);
    // Import into the same user (history and revisions restored beside the existing ones), then a clone.
    const file = (
      await u.client.post("/api/user/data/_export", {
        include: { responders: { type: "all", includeHistory: true }, apiTrackers: { type: "all", includeHistory: true } },
      })
    ).json;
    const imported = await u.client.post("/api/user/data/_import", { data: file, mode: "merge" });
    expect(imported.status, JSON.stringify(imported.json)).toBe(200);
    await expectExact(u.id);
    const cloned = await op.client.post("/api/users/_clone", {
      source: { email: u.email },
      destination: { email: "mixed-clone@storage.example", handle: "mixedclone" },
    });
    expect(cloned.status, JSON.stringify(cloned.json)).toBe(200);
    await expectExact(cloned.json.id);
    expect((await counters(cloned.json.id))!.history).toBe((await recount(u.id)).history);

    expect((await u.client.post(`${AT}/${t.id}/_clear`)).status).toBe(204);
    expect((await u.client.post(`${R}/${hId}/_clear`)).status).toBe(204);
    await expectExact(u.id);
    // Deleting a responder takes its history and KV with it; deleting a tracker its revisions.
    await kvSet(u, "/kv", "last", 10);
    expect((await u.client.delete(`${R}/${kvId}`)).status).toBe(204);
    expect((await u.client.delete(`${AT}/${t.id}`)).status).toBe(204);
    await expectExact(u.id);
    // The backstop finds nothing to correct.
    expect(await srv.services.storage.recount(u.id)).toEqual([]);
    // A drifted counter is corrected by the recount.
    await srv.rt.db.run("UPDATE storage_usage SET history_bytes = history_bytes + 12345 WHERE user_id = ?", [u.id]);
    expect((await srv.services.storage.recount(u.id)).map((f) => f.kind)).toEqual(["history"]);
    await expectExact(u.id);
    // Removing the user removes the counter.
    await srv.services.users.removeUser(cloned.json.id);
    expect(await counters(cloned.json.id)).toBeUndefined();
  });
});
