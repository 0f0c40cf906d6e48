// The PostgreSQL backend's own promises (postgres.ts, dialect.ts, instances.ts), on a real database of the test
// cluster with two connections standing for two instances: values come back as SQLite gives them, placeholders in
// quotes are left alone, NUL in text is bad input, events reach the other instance only (and only on commit), named
// locks serialize, leadership passes to the other instance when the leader goes, and an instance's claims are void
// once its sessions are gone. Runs in the PostgreSQL pass of the suite.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { KvError, KvService } from "../../sandbox/kv";
import { ApiError } from "../core/errors";
import { createTestDatabase, dropTestDatabase, onPostgres } from "../../tests/backend";
import { deadInstance } from "./instances";
import { migrate } from "./migrate";
import { PgDb } from "./postgres";

let url = "";
let a: PgDb;
let b: PgDb;

beforeAll(async () => {
  if (!onPostgres) return;
  url = await createTestDatabase("p");
  a = await PgDb.connect(url, { max: 4 });
  b = await PgDb.connect(url, { max: 4 });
  await migrate(a);
});
afterAll(async () => {
  if (!onPostgres) return;
  await a.close();
  await b.close();
  await dropTestDatabase(url);
});

/** Resolves when `fn` holds (polled), or rejects after `ms`. */
async function until(fn: () => boolean | Promise<boolean>, ms = 10_000): Promise<number> {
  const start = performance.now();
  while (!(await fn())) {
    if (performance.now() - start > ms) throw new Error("condition not reached");
    await Bun.sleep(10);
  }
  return performance.now() - start;
}

describe.skipIf(!onPostgres)("PostgreSQL backend", () => {
  test("values come back as the SQLite backend gives them: numbers, 1/0, plain Uint8Array", async () => {
    await a.run("CREATE TABLE v (id TEXT PRIMARY KEY, at BIGINT, flag BIGINT, data BYTEA)");
    await a.run("INSERT INTO v (id, at, flag, data) VALUES (?, ?, ?, ?)", ["x", 1_767_225_600_123, true, new Uint8Array([0, 255, 7])]);
    const row = await a.get("SELECT id, at, flag, data, COUNT(*) OVER () AS n, SUM(at) OVER () AS s, at > 0 AS pos FROM v");
    expect(row).toEqual({ id: "x", at: 1_767_225_600_123, flag: 1, data: new Uint8Array([0, 255, 7]), n: 1, s: 1_767_225_600_123, pos: 1 });
    expect(Object.getPrototypeOf(row!.data)).toBe(Uint8Array.prototype);
    expect(await a.get("SELECT '?' AS q, ? AS p, 'it''s ?' AS r", ["p"])).toEqual({ q: "?", p: "p", r: "it's ?" });
  });

  test("text with a NUL character is bad input (400 INVALID_INPUT), in a read or a write", async () => {
    for (const run of [() => a.get("SELECT id FROM v WHERE id = ?", ["a\u0000b"]), () => a.run("INSERT INTO v (id) VALUES (?)", ["a\u0000b"])]) {
      const err = await run().catch((e) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect(err).toMatchObject({ status: 400, code: "INVALID_INPUT" });
    }
  });

  test("Secbox.kv: a NUL character in a key or value is the script's error (KvError), not an internal one", async () => {
    const kv = new KvService(a, { now: () => Date.now() });
    const limits = { maxEntries: 10, maxBytes: 10_000, maxTtlSec: 60, opsPerRun: 10, writeBytesPerSecond: 0 };
    const signal = new AbortController().signal;
    for (const call of [
      { m: "set", key: "k", value: "a\u0000b" },
      { m: "get", key: "a\u0000" },
    ]) {
      const err = (await kv.call("owner-1", call, limits, 5000, signal).catch((e) => e)) as Error;
      expect(err).toBeInstanceOf(KvError);
      expect(err.message).toContain("NUL");
    }
    expect(await kv.call("owner-1", { m: "set", key: "k", value: "ok" }, limits, 5000, signal)).toBe(true);
  });

  test("events reach the other instance, never the publisher; inside a transaction only on commit", async () => {
    const gotA: string[] = [];
    const gotB: string[] = [];
    const offA = a.subscribe("t", (p) => gotA.push(p));
    const offB = b.subscribe("t", (p) => gotB.push(p));
    try {
      await a.publish("t", "plain with spaces");
      await until(() => gotB.length === 1);
      await expect(
        a.tx(async (tx) => {
          await tx.publish("t", "rolled back");
          throw new Error("abort");
        }),
      ).rejects.toThrow("abort");
      let committed = false;
      await a.tx(async (tx) => {
        await tx.publish("t", "committed");
        await Bun.sleep(100);
        expect(gotB).toEqual(["plain with spaces"]); // not before the commit
        committed = true;
      });
      await until(() => gotB.length === 2);
      expect(committed).toBe(true);
      expect(gotB).toEqual(["plain with spaces", "committed"]);
      await b.publish("t", "from b");
      await until(() => gotA.length === 1);
      expect(gotA).toEqual(["from b"]);
    } finally {
      offA();
      offB();
    }
  });

  test("a named lock serializes the transactions that take it", async () => {
    const order: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = a.tx(async (tx) => {
      await tx.lock("k");
      order.push("a locked");
      await held;
      order.push("a done");
    });
    await until(() => order.length === 1);
    const second = b.tx(async (tx) => {
      await tx.lock("k");
      order.push("b locked");
    });
    await Bun.sleep(200);
    expect(order).toEqual(["a locked"]);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(["a locked", "a done", "b locked"]);
  });

  test("leadership: one leader; when it goes, the other takes over (measured)", async () => {
    const c = await PgDb.connect(url, { max: 2 });
    const d = await PgDb.connect(url, { max: 2 });
    let cLeads = false;
    let dLeads = false;
    try {
      await c.elect("test", (l) => (cLeads = l));
      await d.elect("test", (l) => (dLeads = l));
      expect([cLeads, dLeads]).toEqual([true, false]);
      await Bun.sleep(1200);
      expect([cLeads, dLeads]).toEqual([true, false]); // polling does not steal it
      const t0 = performance.now();
      await c.close(); // its session ends: the lock is free
      await until(() => dLeads, 10_000); // (how soon is printed, not asserted: the 10 s are a backstop)
      console.log(`leadership failover after the leader's connection closed: ${Math.round(performance.now() - t0)} ms (poll every 500 ms)`);
      expect(dLeads).toBe(true);
    } finally {
      await d.close();
      await c.close().catch(() => {});
    }
  });

  test("an instance's claims are void once its sessions are gone", async () => {
    const e = await PgDb.connect(url, { max: 2 });
    await a.run("CREATE TABLE claims (id TEXT PRIMARY KEY, claimed_by TEXT)");
    await a.run("INSERT INTO claims (id, claimed_by) VALUES ('c', ?)", [e.instanceId]);
    const deadCount = async () => {
      const dead = deadInstance(a, "claimed_by");
      return (await a.get<{ n: number }>(`SELECT COUNT(*) AS n FROM claims WHERE ${dead.sql}`, dead.params))!.n;
    };
    expect(await deadCount()).toBe(0);
    await e.close();
    await until(async () => (await deadCount()) === 1, 5000);
  });
});
