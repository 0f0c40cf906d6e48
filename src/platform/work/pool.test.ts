// The work pool (pool.ts) with real Bun Worker threads and the test tasks of test-tasks.ts: round robin between
// owners, the per-owner share, the waiting caps (429/503), the deadline and crashes failing only their own task, and
// the read-only SQLite connection of a thread. Orderings and counts only, no timing thresholds.
import { afterEach, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../db/sqlite";
import { ApiError } from "../core/errors";
import { createLogger } from "../log";
import { WorkPool, type WorkPoolOptions } from "./pool";
import { WorkTaskError } from "./task";
import { testTasks as T, type Timed } from "./test-tasks";

const entry = new URL("./test-tasks.ts", import.meta.url);
const log = createLogger("error", () => {});
let pools: WorkPool[] = [];
afterEach(async () => {
  for (const p of pools) await p.close();
  pools = [];
});
const pool = (o: Partial<WorkPoolOptions> & { threads: number }) => {
  const p = new WorkPool({ entry, log, ...o });
  pools.push(p);
  return p;
};

const failure = async (p: Promise<unknown>): Promise<unknown> => {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a failure");
};

describe("work pool", () => {
  test("runs a task on a thread and returns its value; moved buffers come back whole", async () => {
    const p = pool({ threads: 1 });
    expect(await p.run("u1", T.echo, { a: [1, 2, 3], s: "x" })).toEqual({ a: [1, 2, 3], s: "x" });
    const buf = await p.run("u1", T.bytes, { n: 1 << 20 });
    expect(buf.byteLength).toBe(1 << 20);
    expect(new Uint8Array(buf)[12345]).toBe(7);
  });

  test("another owner's task is taken before the first owner's 20 queued tasks finish", async () => {
    const p = pool({ threads: 1, queuePerOwner: 50 });
    const done: string[] = [];
    const a = Array.from({ length: 20 }, (_, i) => p.run("A", T.sleep, { tag: `A${i}`, ms: 30 }).then((r) => done.push(r.tag)));
    // B arrives while A's first task runs and 19 wait
    while (p.stats().busy === 0) await Bun.sleep(5);
    const b = p.run("B", T.sleep, { tag: "B", ms: 1 }).then((r) => done.push(r.tag));
    await Promise.all([...a, b]);
    // round robin: A had its turn (the task running when B came), then B's turn came before A's next ones
    expect(done.indexOf("B")).toBeLessThanOrEqual(2);
    expect(done.filter((t) => t.startsWith("A"))).toEqual(Array.from({ length: 20 }, (_, i) => `A${i}`));
  });

  test("an owner holds at most its share (threads − 1) while another owner's task runs beside it", async () => {
    const p = pool({ threads: 2 });
    expect(p.perOwner).toBe(1);
    // both threads started first (two owners, one task each)
    await Promise.all([p.run("W1", T.echo, 1), p.run("W2", T.echo, 2)]);
    expect(p.stats().threads).toBe(2);
    const a = [0, 1, 2].map((i) => p.run("A", T.sleep, { tag: `A${i}`, ms: 300 }));
    while (p.stats().busy === 0) await Bun.sleep(5);
    // A's two other tasks wait although a thread is free: that thread is kept for others
    expect(p.stats().running).toEqual({ A: 1 });
    expect(p.stats().waiting).toBe(2);
    const b = await p.run("B", T.sleep, { tag: "B", ms: 1 });
    const results: Timed[] = await Promise.all(a);
    // B ran while A's first task was running
    expect(b.end).toBeLessThanOrEqual(results[0]!.end);
    // A's tasks never overlapped
    expect(results[1]!.start).toBeGreaterThanOrEqual(results[0]!.end);
    expect(results[2]!.start).toBeGreaterThanOrEqual(results[1]!.end);
  });

  test("caps: an owner's waiting tasks beyond its cap → 429 with Retry-After; all owners' beyond the total → 503", async () => {
    const p = pool({ threads: 1, queuePerOwner: 2, queueTotal: 3 });
    const held = p.run("A", T.sleep, { tag: "A0", ms: 300 });
    while (p.stats().busy === 0) await Bun.sleep(5);
    const a1 = p.run("A", T.sleep, { tag: "A1", ms: 1 });
    const a2 = p.run("A", T.sleep, { tag: "A2", ms: 1 });
    const limited = (await failure(p.run("A", T.sleep, { tag: "A3", ms: 1 }))) as ApiError;
    expect(limited).toBeInstanceOf(ApiError);
    expect(limited.status).toBe(429);
    expect(limited.code).toBe("RATE_LIMITED");
    expect(Number(limited.headers["retry-after"])).toBeGreaterThanOrEqual(1);
    // another owner still gets in, up to the total
    const b1 = p.run("B", T.sleep, { tag: "B1", ms: 1 });
    const full = (await failure(p.run("C", T.sleep, { tag: "C1", ms: 1 }))) as ApiError;
    expect(full.status).toBe(503);
    expect(full.code).toBe("UNAVAILABLE");
    expect(full.headers["retry-after"]).toBe("1");
    const tags = (await Promise.all([held, a1, a2, b1])).map((r) => r.tag);
    expect(tags).toEqual(["A0", "A1", "A2", "B1"]);
  });

  test("a task past its deadline ends its thread and fails alone (503); the pool goes on", async () => {
    const p = pool({ threads: 2, deadlineMs: 400 });
    const hang = failure(p.run("A", T.hang, null));
    const others = [0, 1, 2].map((i) => p.run("B", T.sleep, { tag: `B${i}`, ms: 10 }));
    expect((await Promise.all(others)).map((r) => r.tag)).toEqual(["B0", "B1", "B2"]);
    const err = (await hang) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(503);
    expect(err.code).toBe("UNAVAILABLE");
    const spawned = p.stats().spawned;
    // the ended thread's place is taken by a new one on demand
    expect(await p.run("A", T.echo, "after")).toBe("after");
    expect(p.stats().spawned).toBeGreaterThanOrEqual(spawned);
  });

  test("a thread that exits or throws outside a task fails only the task it ran", async () => {
    const p = pool({ threads: 2 });
    const b = p.run("B", T.sleep, { tag: "B", ms: 150 });
    const exited = await failure(p.run("A", T.exit, null));
    expect(exited).toBeInstanceOf(WorkTaskError);
    const uncaught = await failure(p.run("A", T.uncaught, null));
    expect(uncaught).toBeInstanceOf(WorkTaskError);
    expect((await b).tag).toBe("B");
    expect(await p.run("A", T.echo, 1)).toBe(1);
  });

  test("an ApiError thrown by a task arrives as that ApiError; any other error as a WorkTaskError", async () => {
    const p = pool({ threads: 1 });
    const api = (await failure(p.run("A", T.apiError, null))) as ApiError;
    expect(api).toBeInstanceOf(ApiError);
    expect([api.status, api.code, api.message, api.headers["x-test"]]).toEqual([400, "INVALID_INPUT", "field: bad value", "1"]);
    const bug = (await failure(p.run("A", T.bug, null))) as Error;
    expect(bug).toBeInstanceOf(WorkTaskError);
    expect(bug.message).toContain("a bug");
    // the thread survived both
    expect(p.stats().spawned).toBe(1);
  });

  test("a thread reads the SQLite file on its own read-only connection and sees committed data only", async () => {
    const dir = mkdtempSync(join(tmpdir(), "secbox-work-"));
    const path = join(dir, "db.sqlite");
    const writer = new Database(path, { create: true });
    writer.exec("PRAGMA journal_mode = WAL");
    writer.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)");
    writer.run("INSERT INTO items (name) VALUES (?), (?)", ["one", "two"]);
    try {
      const p = pool({ threads: 1, sqlitePath: path });
      const read = () => p.run("A", T.read, { sql: "SELECT name FROM items WHERE id >= ? ORDER BY id", params: [1] });
      expect(await read()).toEqual([{ name: "one" }, { name: "two" }]);
      writer.run("INSERT INTO items (name) VALUES (?)", ["three"]);
      expect(await read()).toEqual([{ name: "one" }, { name: "two" }, { name: "three" }]);
      writer.exec("BEGIN IMMEDIATE");
      writer.run("INSERT INTO items (name) VALUES (?)", ["uncommitted"]);
      expect((await read()).length).toBe(3);
      writer.exec("ROLLBACK");
      // the connection is read-only
      const refused = (await failure(p.run("A", T.read, { sql: "INSERT INTO items (name) VALUES (?) RETURNING id", params: ["x"] }))) as Error;
      expect(refused.message).toMatch(/readonly|read-only/i);
    } finally {
      writer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("hold: taken once the task has its thread (not while it waits), given back once it settles, also on failure", async () => {
    const p = pool({ threads: 1 });
    const events: string[] = [];
    const hold = (name: string) => async () => {
      events.push(`hold ${name}`);
      return () => events.push(`release ${name}`);
    };
    const first = p.run("A", T.sleep, { tag: "A", ms: 300 });
    while (p.stats().busy === 0) await Bun.sleep(5);
    const held = p.run("B", T.echo, "b", { hold: hold("B") });
    const failing = failure(p.run("C", T.apiError, null, { hold: hold("C") }));
    const dying = failure(p.run("D", T.exit, null, { hold: hold("D") }));
    // B, C and D wait for the thread A's task holds: none has taken anything yet
    expect({ busy: p.stats().busy, waiting: p.stats().waiting, events }).toEqual({ busy: 1, waiting: 3, events: [] });
    await first;
    expect(await held).toBe("b");
    expect(((await failing) as ApiError).status).toBe(400);
    expect(await dying).toBeInstanceOf(WorkTaskError);
    expect(events).toEqual(["hold B", "release B", "hold C", "release C", "hold D", "release D"]);
  });

  test("a task holding the SQLite writer writes on the thread's own connection; the main connection's writes wait for its commit", async () => {
    const dir = mkdtempSync(join(tmpdir(), "secbox-work-write-"));
    const db = openDatabase(dir);
    try {
      await db.exec(
        "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL); CREATE TABLE server_state (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
      );
      const version = db.externalVersion();
      const p = pool({ threads: 1, sqlitePath: join(dir, "secbox.db") });
      const order: string[] = [];
      const task = p.run("A", T.write, { name: "thread", ms: 200 }, { hold: () => db.holdWriter() }).then(() => order.push("thread committed"));
      // the task has its thread: it asked for the writer then, before the main connection's write below
      while (p.stats().busy === 0) await Bun.sleep(5);
      const main = db.run("INSERT INTO items (name) VALUES ('main')").then(() => order.push("main wrote"));
      await Promise.all([task, main]);
      expect(order).toEqual(["thread committed", "main wrote"]);
      expect(await db.all("SELECT name FROM items ORDER BY id")).toEqual([{ name: "thread" }, { name: "main" }]);
      // the thread's commit is this process's own: not an external change (Db.externalVersion)
      expect(db.externalVersion()).toBe(version);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("without a SQLite file (PostgreSQL) a task asking for the database fails clearly", async () => {
    const p = pool({ threads: 1 });
    const err = (await failure(p.run("A", T.read, { sql: "SELECT 1", params: [] }))) as Error;
    expect(err.message).toContain("PostgreSQL");
  });

  test("closing fails waiting and running tasks with 503", async () => {
    const p = pool({ threads: 1 });
    const running = failure(p.run("A", T.sleep, { tag: "A", ms: 5000 }));
    const waiting = failure(p.run("B", T.sleep, { tag: "B", ms: 1 }));
    while (p.stats().busy === 0) await Bun.sleep(5);
    await p.close();
    expect(((await running) as ApiError).status).toBe(503);
    expect(((await waiting) as ApiError).status).toBe(503);
  });
});
