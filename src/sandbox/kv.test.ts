// Secbox.kv (supplement §11.8) through real scripts in real workers, persisted in a real SQLite file (the
// migrations of platform/db), with an injectable clock for TTLs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type SqliteDb } from "../platform/db/sqlite";
import { migrate } from "../platform/db/migrate";
import { createLogger } from "../platform/log";
import { prefixUpperBound } from "./kv";
import { ScriptPool } from "./pool";
import { SettleOrder, waitUntil } from "../tests/fixtures/wait";
import type { KvLimits, ScriptLimits, ScriptRunResult } from "./types";

const dir = mkdtempSync(join(tmpdir(), "secbox-kv-"));
let db: SqliteDb;
let pool: ScriptPool;
let nowMs = 1_767_225_600_000;
const clock = { now: () => nowMs };
const LIMITS: ScriptLimits = { memoryMib: 20, timeoutMs: 5000, proxyTimeoutMs: 30_000, maxProxyBodyBytes: 10 * 1024 * 1024 };

beforeAll(async () => {
  db = openDatabase(dir);
  migrate(db);
  pool = new ScriptPool({ workers: 2, queueLimit: 100, db, allowPrivate: false, log: createLogger("error"), clock });
  await pool.ready();
});
afterAll(async () => {
  await pool.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

let ownerSeq = 0;
const newOwner = () => `responder-${++ownerSeq}`;

function kv(owner: string, source: string, kvLimits: Partial<KvLimits> = {}, limits: Partial<ScriptLimits> = {}): Promise<ScriptRunResult> {
  return pool.run({ source, context: {}, limits: { ...LIMITS, ...limits }, kvOwner: owner, kvLimits });
}

async function value(owner: string, source: string, kvLimits: Partial<KvLimits> = {}): Promise<unknown> {
  const r = await kv(owner, source, kvLimits);
  if (!r.ok) throw new Error(`script failed: ${JSON.stringify(r.error)}`);
  return r.value;
}

async function rejection(owner: string, source: string, kvLimits: Partial<KvLimits> = {}): Promise<string> {
  const r = await kv(owner, source, kvLimits);
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r.value)}`);
  return r.error.message;
}

describe("Secbox.kv", () => {
  test("get, set, getEntry, delete; values persist across executions", async () => {
    const o = newOwner();
    const t0 = Math.floor(nowMs / 1000);
    expect(await value(o, "return [await Secbox.kv.get('k'), await Secbox.kv.getEntry('k'), await Secbox.kv.set('k', 'v1')]")).toEqual([
      null,
      null,
      true,
    ]);
    expect(await value(o, "Secbox.kv.get('k')")).toBe("v1");
    expect(await value(o, "Secbox.kv.getEntry('k')")).toEqual({ key: "k", value: "v1", createdAt: t0, expiresAt: null });
    // overwriting resets createdAt
    nowMs += 5000;
    expect(await value(o, "Secbox.kv.set('k', 'v2')")).toBe(true);
    expect(await value(o, "Secbox.kv.getEntry('k')")).toEqual({ key: "k", value: "v2", createdAt: t0 + 5, expiresAt: null });
    expect(await value(o, "return [await Secbox.kv.delete('k'), await Secbox.kv.delete('k'), await Secbox.kv.get('k')]")).toEqual([
      true,
      false,
      null,
    ]);
    // stored in the database
    await value(o, "Secbox.kv.set('persisted', 'yes')");
    expect(await db.get("SELECT value FROM kv_entries WHERE owner_id = ? AND key = ?", [o, "persisted"])).toEqual({ value: "yes" });
  });

  test("set with ifAbsent writes only when no live entry exists", async () => {
    const o = newOwner();
    expect(
      await value(
        o,
        "return [await Secbox.kv.set('lock', 'a', { ifAbsent: true }), await Secbox.kv.set('lock', 'b', { ifAbsent: true }), await Secbox.kv.get('lock')]",
      ),
    ).toEqual([true, false, "a"]);
    await value(o, "Secbox.kv.set('soon', 'x', { ttlSec: 1 })");
    nowMs += 2000;
    expect(await value(o, "Secbox.kv.set('soon', 'y', { ifAbsent: true })")).toBe(true);
  });

  test("ttlSec: expired entries are invisible at once; the TTL is clamped to kv_max_ttl_sec; the sweep deletes them", async () => {
    const o = newOwner();
    const t0 = Math.floor(nowMs / 1000);
    await value(o, "await Secbox.kv.set('short', 's', { ttlSec: 10 }); return Secbox.kv.set('long', 'l', { ttlSec: 999999999 })", {
      maxTtlSec: 3600,
    });
    expect(await value(o, "Secbox.kv.getEntry('short')")).toMatchObject({ expiresAt: t0 + 10 });
    expect(await value(o, "Secbox.kv.getEntry('long')")).toMatchObject({ expiresAt: t0 + 3600 });
    nowMs += 11_000;
    expect(
      await value(o, "return [await Secbox.kv.get('short'), await Secbox.kv.getEntry('short'), (await Secbox.kv.list()).entries.map((e) => e.key)]"),
    ).toEqual([null, null, ["long"]]);
    expect(await value(o, "Secbox.kv.delete('short')")).toBe(false);
    for (const bad of ["0", "1.5", "'10'", "-1"]) {
      expect(await rejection(o, `await Secbox.kv.set('x', 'y', { ttlSec: ${bad} })`)).toBe("KV ttlSec must be an integer >= 1");
    }
    await value(o, "Secbox.kv.set('gone', 'g', { ttlSec: 1 })");
    nowMs += 2000;
    const swept = await pool.kv!.sweep();
    expect(swept).toBeGreaterThanOrEqual(1);
    expect(await db.get("SELECT COUNT(*) AS n FROM kv_entries WHERE owner_id = ? AND key = 'gone'", [o])).toEqual({ n: 0 });
    expect(await db.get("SELECT entries FROM kv_usage WHERE owner_id = ?", [o])).toEqual({ entries: 1 });
  });

  test("keys and values are validated; limits name the limit", async () => {
    const o = newOwner();
    expect(await rejection(o, "await Secbox.kv.set('', 'v')")).toBe("KV key must be a non-empty string");
    expect(await rejection(o, "await Secbox.kv.get(42)")).toBe("KV key must be a non-empty string");
    expect(await rejection(o, "await Secbox.kv.set('é'.repeat(129), 'v')")).toBe("KV key exceeds 256 bytes");
    expect(await value(o, "Secbox.kv.set('é'.repeat(128), 'v')")).toBe(true);
    expect(await rejection(o, "await Secbox.kv.set('k', 42)")).toBe("KV value must be a string");
    expect(await rejection(o, "await Secbox.kv.set('k', 'x'.repeat(1048577))")).toBe("KV value exceeds 1 MiB");
    expect(await value(o, "Secbox.kv.set('k', 'x'.repeat(1048576))")).toBe(true);
    // rejections are catchable by the script
    expect(await value(o, "Secbox.kv.set('', 'v').then(() => 'ok', (e) => 'caught: ' + e.message)")).toBe(
      "caught: KV key must be a non-empty string",
    );
  });

  test("quotas: kv_max_entries and kv_max_bytes per responder, counting live entries", async () => {
    const o = newOwner();
    const limits = { maxEntries: 3, maxBytes: 1000 };
    await value(o, "for (const k of ['a', 'b', 'c']) await Secbox.kv.set(k, 'v'); return 0", limits);
    expect(await rejection(o, "await Secbox.kv.set('d', 'v')", limits)).toBe("KV entry limit reached (3 entries)");
    // overwriting an existing key adds no entry
    expect(await value(o, "Secbox.kv.set('a', 'changed')", limits)).toBe(true);
    // an expired entry frees its slot
    await value(o, "Secbox.kv.set('c', 'v', { ttlSec: 1 })", limits);
    nowMs += 2000;
    expect(await value(o, "Secbox.kv.set('d', 'v')", limits)).toBe(true);
    const p = newOwner();
    expect(await rejection(p, "await Secbox.kv.set('big', 'x'.repeat(1000))", limits)).toBe("KV size limit reached (1000 bytes)");
    expect(await value(p, "Secbox.kv.set('big', 'x'.repeat(990))", limits)).toBe(true);
    expect(await rejection(p, "await Secbox.kv.set('more', 'x'.repeat(10))", limits)).toBe("KV size limit reached (1000 bytes)");
    // deleting frees bytes
    expect(await value(p, "await Secbox.kv.delete('big'); return Secbox.kv.set('more', 'x'.repeat(10))", limits)).toBe(true);
  });

  test("kv_ops_per_run bounds the calls of one execution", async () => {
    const o = newOwner();
    const msg = await rejection(o, "for (let i = 0; i < 10; i++) await Secbox.kv.get('k' + i)", { opsPerRun: 5 });
    expect(msg).toBe("KV operation budget exhausted (5 per run)");
    // a new execution has a fresh budget
    expect(await value(o, "Secbox.kv.get('k')", { opsPerRun: 5 })).toBeNull();
  });

  test("kv_write_bytes_per_second: a set beyond a second's worth waits for its bytes; one its run cannot wait for fails and writes nothing", async () => {
    const o = newOwner();
    const v = "'x'.repeat(49_999)"; // 50,000 bytes with a 1-byte key
    // 100,000 bytes a second: two sets at once, the third waits for the 50,000 bytes it lacks (0.5 s): a 400 ms timer
    // started with the script ends first
    const order = new SettleOrder();
    const timer = order.push("400 ms", Bun.sleep(400));
    const sets = order.push(
      "sets",
      value(o, `for (const k of ['a', 'b', 'c']) await Secbox.kv.set(k, ${v}); return Secbox.kv.list()`, { writeBytesPerSecond: 100_000 }),
    );
    await timer;
    expect(await sets).toMatchObject({ entries: [{ key: "a" }, { key: "b" }, { key: "c" }] });
    expect(order.of).toEqual(["400 ms", "sets"]);
    // 5,000 bytes a second: 50,000 would wait 9 s, more than the run has (1.5 s): it waits out the run's time (a
    // writer as fast as it can must not start its next hit at once; a 1 s timer ends first), then fails
    const p = newOwner();
    const slow = { writeBytesPerSecond: 5_000 };
    const late = new SettleOrder();
    const second = late.push("1 s", Bun.sleep(1000));
    const r = await late.push("set", kv(p, `await Secbox.kv.set('a', ${v})`, slow, { timeoutMs: 1500 }));
    await second;
    expect(r.ok ? null : r.error.message).toBe("KV write rate limit reached (5000 bytes per second): this set would wait 9000 ms");
    expect(late.of).toEqual(["1 s", "set"]);
    // nothing is written
    expect(await value(p, "Secbox.kv.get('a')")).toBeNull();
    // the script may catch it and go on
    const caught = await kv(p, `try { await Secbox.kv.set('a', ${v}) } catch (e) { return 'caught' }`, slow, { timeoutMs: 1500 });
    expect(caught.ok && caught.value).toBe("caught");
    // 0: unlimited
    expect(await value(newOwner(), `for (let i = 0; i < 30; i++) await Secbox.kv.set('k' + i, ${v}); return 30`, { writeBytesPerSecond: 0 })).toBe(
      30,
    );
  });

  test("kv_write_bytes_per_second: one owner's waiting sets never hold another's", async () => {
    const slow = newOwner();
    const other = newOwner();
    const order = new SettleOrder();
    const v = "'x'.repeat(49_999)";
    // `slow` needs 1 s of waiting for its last two sets; `other`, started after, has a bucket of its own
    const a = order.push(
      "slow",
      value(slow, `for (const k of ['a', 'b', 'c', 'd']) await Secbox.kv.set(k, ${v}); return 4`, { writeBytesPerSecond: 100_000 }),
    );
    await Bun.sleep(50);
    const b = order.push("other", value(other, `await Secbox.kv.set('a', ${v}); return 1`, { writeBytesPerSecond: 100_000 }));
    expect(await Promise.all([a, b])).toEqual([4, 1]);
    expect(order.of).toEqual(["other", "slow"]);
  });

  test("list: byte order, prefix, after, limit and cursor", async () => {
    const o = newOwner();
    const keys = ["b", "a", "ab", "é", "z", "\u{1F600}", "\uFFFD", "user:2", "user:1", "user:10", "userx"];
    await value(o, `for (const k of ${JSON.stringify(keys)}) await Secbox.kv.set(k, 'v:' + k); return 0`);
    const all = (await value(o, "Secbox.kv.list()")) as { entries: { key: string }[]; cursor: string | null };
    // UTF-8 byte order: U+FFFD (EF BF BD) sorts before U+1F600 (F0 9F 98 80), unlike UTF-16 order
    expect(all.entries.map((e) => e.key)).toEqual(["a", "ab", "b", "user:1", "user:10", "user:2", "userx", "z", "é", "\uFFFD", "\u{1F600}"]);
    expect(all.cursor).toBeNull();
    expect(all.entries[0] as unknown).toEqual({ key: "a", value: "v:a", createdAt: Math.floor(nowMs / 1000), expiresAt: null });
    const page1 = (await value(o, "Secbox.kv.list({ prefix: 'user:', limit: 2 })")) as { entries: { key: string }[]; cursor: string | null };
    expect(page1.entries.map((e) => e.key)).toEqual(["user:1", "user:10"]);
    expect(page1.cursor).toBe("user:10");
    const page2 = (await value(o, "Secbox.kv.list({ prefix: 'user:', after: 'user:10', limit: 2 })")) as {
      entries: { key: string }[];
      cursor: string | null;
    };
    expect(page2.entries.map((e) => e.key)).toEqual(["user:2"]);
    expect(page2.cursor).toBeNull();
    expect(((await value(o, "Secbox.kv.list({ prefix: 'zz' })")) as { entries: unknown[] }).entries).toEqual([]);
    for (const bad of ["0", "1001", "1.5", "'5'"]) {
      expect(await rejection(o, `await Secbox.kv.list({ limit: ${bad} })`)).toBe("KV limit must be an integer from 1 to 1000");
    }
    expect(prefixUpperBound("ab")).toBe("ac");
    expect(prefixUpperBound("a\u{10FFFF}")).toBe("b");
    expect(prefixUpperBound("\uD7FF")).toBe("\uE000");
  });

  test("entries are scoped per owner; deleting the owner deletes its entries", async () => {
    const a = newOwner();
    const b = newOwner();
    await value(a, "Secbox.kv.set('shared-name', 'from a')");
    expect(await value(b, "Secbox.kv.get('shared-name')")).toBeNull();
    expect(((await value(b, "Secbox.kv.list()")) as { entries: unknown[] }).entries).toEqual([]);
    await pool.kv!.deleteOwner(a);
    expect(await value(a, "Secbox.kv.get('shared-name')")).toBeNull();
    expect(await db.get("SELECT COUNT(*) AS n FROM kv_usage WHERE owner_id = ?", [a])).toEqual({ n: 0 });
  });

  test("watch returns at once when entries exist, wakes on a set from another execution, and times out", async () => {
    const o = newOwner();
    await value(o, "Secbox.kv.set('job:1', 'queued')");
    expect(await value(o, "Secbox.kv.watch({ prefix: 'job:' })")).toMatchObject({
      entries: [{ key: "job:1", value: "queued" }],
      cursor: null,
      timedOut: false,
    });
    // waits after job:1, wakes when another execution sets job:2
    const waitingBefore = pool.kv!.notifier.waiting;
    const watcher = kv(o, "Secbox.kv.watch({ prefix: 'job:', after: 'job:1', timeoutMs: 4000 })");
    await waitUntil(() => pool.kv!.notifier.waiting > waitingBefore, "the watch to wait");
    expect(await value(o, "Secbox.kv.set('other:1', 'ignored')")).toBe(true);
    expect(await value(o, "Secbox.kv.set('job:2', 'new')")).toBe(true);
    const r = await watcher;
    expect(r.ok && r.value).toMatchObject({ entries: [{ key: "job:2", value: "new" }], timedOut: false }); // woken, not timed out
    // no matching write: timedOut
    const t = performance.now();
    expect(await value(o, "Secbox.kv.watch({ prefix: 'nothing:', timeoutMs: 200 })")).toEqual({ entries: [], cursor: null, timedOut: true });
    expect(performance.now() - t).toBeGreaterThanOrEqual(190);
    // the wait is capped at the remaining script time minus one second (uncapped, the script would time out)
    const capped = await kv(o, "Secbox.kv.watch({ prefix: 'nothing:' })", {}, { timeoutMs: 1400 });
    expect(capped.ok && capped.value).toEqual({ entries: [], cursor: null, timedOut: true });
    expect(pool.kv!.notifier.waiting).toBe(0);
  });

  test("a watching script holds no worker busy", async () => {
    const o = newOwner();
    const one = new ScriptPool({ workers: 1, queueLimit: 100, db, allowPrivate: false, log: createLogger("error"), clock });
    try {
      await one.ready();
      let watchersDone = 0;
      const watchers = Array.from({ length: 4 }, () =>
        one
          .run({ source: "Secbox.kv.watch({ prefix: 'evt:', timeoutMs: 20000 })", context: {}, limits: { ...LIMITS, timeoutMs: 25_000 }, kvOwner: o })
          .finally(() => watchersDone++),
      );
      await waitUntil(() => one.kv!.notifier.waiting >= 4, "the four watchers to wait");
      const quick = await one.run({ source: "'served'", context: {}, limits: LIMITS });
      expect(quick.ok && quick.value).toBe("served");
      expect(watchersDone).toBe(0); // served while all four watched
      const set = await one.run({ source: "Secbox.kv.set('evt:1', 'go')", context: {}, limits: LIMITS, kvOwner: o });
      expect(set.ok && set.value).toBe(true);
      for (const w of await Promise.all(watchers)) expect(w.ok && w.value).toMatchObject({ entries: [{ key: "evt:1" }], timedOut: false });
    } finally {
      await one.close();
    }
  });

  test("a script timing out during watch releases the wait", async () => {
    const o = newOwner();
    const r = await kv(
      o,
      "await Secbox.kv.watch({ prefix: 'never:', timeoutMs: 60000 }); await new Promise((res) => setTimeout(res, 60000))",
      {},
      { timeoutMs: 1500 },
    );
    expect(!r.ok && r.error.kind).toBe("timeout");
    await Bun.sleep(20);
    expect(pool.kv!.notifier.waiting).toBe(0);
  });

  test("without a kvOwner there is no Secbox.kv", async () => {
    const r = await pool.run({ source: "[typeof Secbox.kv, typeof Secbox.crypto]", context: {}, limits: LIMITS });
    expect(r.ok && r.value).toEqual(["undefined", "object"]);
  });
});
