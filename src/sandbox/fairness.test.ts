// Fairness between owners (users) in the script pool (pool.ts "Fairness", engine.ts "Resuming from the interrupt
// handler"): real QuickJS in real worker threads, Secbox.kv on a real SQLite file. One user's endless loops at
// their in-flight limit, a flood of their jobs, or their loop on the worker where another user's job waits for a
// KV result or a timer must not hold the other user's scripts. No latency bounds: the other user's scripts must end
// while the loops still run (the old scheduling made them wait for the loops' time limit); the loops' deadlines are
// far (closing the pool ends them), so a loaded machine cannot reorder the two.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type SqliteDb } from "../platform/db/sqlite";
import { migrate } from "../platform/db/migrate";
import { createLogger } from "../platform/log";
import { CRASH_SCRIPTS } from "./crash-scripts";
import { ScriptPool, type ScriptPoolOptions } from "./pool";
import type { ScriptLimits, ScriptRunRequest, ScriptRunResult } from "./types";
import { waitUntil } from "../tests/fixtures/wait";

const log = createLogger("error");
const LIMITS: ScriptLimits = { memoryMib: 10, timeoutMs: 10_000, proxyTimeoutMs: 30_000, maxProxyBodyBytes: 10 * 1024 * 1024 };
const LOOP = "while (true) {}";
const dir = mkdtempSync(join(tmpdir(), "secbox-fair-"));
let db: SqliteDb;

beforeAll(() => {
  db = openDatabase(dir);
  migrate(db);
});
afterAll(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function withPool(opts: Partial<ScriptPoolOptions> & { workers: number }, fn: (pool: ScriptPool) => Promise<void>): Promise<void> {
  const pool = new ScriptPool({ queueLimit: 1000, allowPrivate: false, log, db, ...opts });
  try {
    await pool.ready();
    await fn(pool);
  } finally {
    await pool.close();
  }
}

const job = (owner: string, source: string, extra: Partial<ScriptRunRequest> & { timeoutMs?: number } = {}): ScriptRunRequest => {
  const { timeoutMs, ...rest } = extra;
  return { source, context: {}, owner, limits: { ...LIMITS, ...(timeoutMs ? { timeoutMs } : {}) }, ...rest };
};

/** A loop of `owner` that runs until the pool closes (its deadline is past any test's), and whether it ended. */
function endlessLoop(pool: ScriptPool, owner: string): { ended: () => boolean } {
  let ended = false;
  void pool.run(job(owner, LOOP, { timeoutMs: 60_000 })).finally(() => (ended = true));
  return { ended: () => ended };
}

const outcome = (r: ScriptRunResult) => (r.ok ? r.value : r.error.kind);

describe("fair share of the workers", () => {
  test("another user's scripts keep being served while one user loops at their in-flight limit", async () => {
    await withPool({ workers: 2 }, async (pool) => {
      // 6 endless loops of user A: more than the workers and the extra workers the pool may start
      const loops = Array.from({ length: 6 }, () => endlessLoop(pool, "user-a"));
      await waitUntil(() => pool.stats().inFlight >= 2, "the loops to take both workers");
      for (let i = 0; i < 12; i++) {
        expect(outcome(await pool.run(job("user-b", `'b ${i}'`)))).toBe(`b ${i}`);
        await Bun.sleep(60); // extra workers finish their job and look for the next one meanwhile
      }
      // all of B's scripts were served while every loop still ran, on an extra worker
      expect(loops.filter((l) => l.ended())).toEqual([]);
      expect(pool.stats().extra).toBeGreaterThanOrEqual(1);
    });
  }, 30_000);

  test("a job resumed after a timer is not held behind another user's loop on its worker", async () => {
    await withPool({ workers: 1 }, async (pool) => {
      const b = pool.run(job("user-b", "const t = Date.now(); await new Promise((r) => setTimeout(r, 100)); return Date.now() - t"));
      await Bun.sleep(30); // b waits for its timer: the worker looks idle and takes the loop
      const loop = endlessLoop(pool, "user-a");
      const r = await b;
      expect(r.ok).toBe(true);
      expect(loop.ended()).toBe(false); // not after the loop
    });
  }, 20_000);

  test("a job resumed after a KV operation is not held behind another user's loop on its worker", async () => {
    await withPool({ workers: 1 }, async (pool) => {
      const src = "await Secbox.kv.set('k', 'v'); for (let i = 0; i < 5; i++) await Secbox.kv.get('k'); return await Secbox.kv.get('k')";
      await pool.run(job("user-b", "1")); // warm
      const b = pool.run(job("user-b", src, { kvOwner: "responder-b" }));
      const loop = endlessLoop(pool, "user-a");
      expect(outcome(await b)).toBe("v");
      expect(loop.ended()).toBe(false);
    });
  }, 20_000);

  test("a job whose timer is due resumes before the rest of the batch of jobs its worker is running", async () => {
    await withPool({ workers: 1 }, async (pool) => {
      await pool.run(job("user-a", "1")); // warm
      const done: string[] = [];
      // one batch: B's job, then 15 of user A's jobs of ~3 ms each (too short to be interrupted for B)
      const b = pool.run(job("user-b", "await new Promise((r) => setTimeout(r, 1)); return 'b'")).then((r) => (done.push("b"), r));
      const a = Array.from({ length: 15 }, () =>
        pool.run(job("user-a", "const t = Date.now(); while (Date.now() - t < 3) {} return 'a'")).then((r) => (done.push("a"), r)),
      );
      expect(outcome(await b)).toBe("b");
      await Promise.all(a);
      // its timer fired between two of A's jobs, not after the batch
      expect(done.indexOf("b")).toBeLessThan(8);
    });
  }, 20_000);

  test("a job held below a resumed one keeps its full time: its deadline moves by the time it was held", async () => {
    await withPool({ workers: 1 }, async (pool) => {
      // user A's job wakes after 30 ms and then computes 700 ms; user B's job computes 300 ms of its 500 ms limit
      const a = pool.run(
        job("user-a", "await new Promise((r) => setTimeout(r, 30)); const t = Date.now(); while (Date.now() - t < 700) {} return 'a'"),
      );
      await Bun.sleep(10);
      const t0 = performance.now();
      const b = await pool.run(job("user-b", "let n = 0; const t = Date.now(); while (Date.now() - t < 300) n++; return 'b'", { timeoutMs: 500 }));
      const took = performance.now() - t0;
      expect(outcome(await a)).toBe("a");
      // A (less time used on this worker) cut in while B computed; B was held for A's 700 ms and still succeeded
      expect(outcome(b)).toBe("b");
      expect(took).toBeGreaterThan(600);
    });
  }, 20_000);

  test("a looping user's resumed job does not cut into another user's long slice", async () => {
    await withPool({ workers: 1 }, async (pool) => {
      // user A has used the worker for a while (its loop ran 600 ms)
      expect(outcome(await pool.run(job("user-a", LOOP, { timeoutMs: 600 })))).toBe("timeout");
      let aEnded = false;
      void pool
        .run(job("user-a", "await new Promise((r) => setTimeout(r, 30)); while (true) {}", { timeoutMs: 60_000 }))
        .finally(() => (aEnded = true));
      await Bun.sleep(10);
      const r = await pool.run(job("user-b", "const t = Date.now(); while (Date.now() - t < 200) {} return 'b'"));
      expect(outcome(r)).toBe("b");
      expect(aEnded).toBe(false); // not held for A's endless loop
    });
  }, 20_000);
});

/** Nice values of this process's threads (Linux). */
function threadNices(): number[] {
  const out: number[] = [];
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      out.push(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]));
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

describe.skipIf(!existsSync("/proc/thread-self"))("fair share of the CPU", () => {
  test("while other users use the pool, a worker running a long slice lowers its priority until the slice ends", async () => {
    await withPool({ workers: 2 }, async (pool) => {
      expect(Math.max(...threadNices())).toBe(0); // (the test runs at normal priority)
      // a lone user's long script keeps its priority
      const alone = pool.run(job("user-a", LOOP, { timeoutMs: 600 }));
      await Bun.sleep(300);
      expect(Math.max(...threadNices())).toBe(0);
      expect(outcome(await alone)).toBe("timeout");
      // with another user about, the loop's thread drops to nice 10 (after 50 ms), and comes back after it
      const b = pool.run(job("user-b", "await new Promise((r) => setTimeout(r, 3500)); return 'b'"));
      let loopEnded = false;
      const loop = pool.run(job("user-a", LOOP, { timeoutMs: 3000 })).finally(() => (loopEnded = true));
      await waitUntil(() => threadNices().includes(10), "the loop's thread at nice 10", 2500);
      expect(loopEnded).toBe(false);
      expect(threadNices().filter((n) => n === 10)).toHaveLength(1);
      expect(outcome(await loop)).toBe("timeout");
      expect(outcome(await b)).toBe("b");
      // raising it back needs privilege (root here; otherwise the thread stays lower)
      if (process.getuid?.() === 0) expect(Math.max(...threadNices())).toBe(0);
    });
  }, 20_000);
});

describe("fair share of the queue", () => {
  test("a user over their queue share is refused; another user's jobs are queued and run first", async () => {
    await withPool({ workers: 1, queueLimit: 100, queueLimitPerOwner: 10 }, async (pool) => {
      const loop = pool.run(job("user-a", LOOP, { timeoutMs: 3000 }));
      // the loop holds the only worker, long enough that A counts as hogging (a fixed 100 ms was not, under load)
      await waitUntil(() => [...pool.hogs].some((o) => o.key === "user-a"), "user A to count as hogging");
      const flood = Array.from({ length: 15 }, (_, i) => pool.run(job("user-a", `'a ${i}'`)));
      const b = Array.from({ length: 5 }, (_, i) => pool.run(job("user-b", `'b ${i}'`)));
      const done: string[] = [];
      const all = [...flood, ...b].map((p) => p.then((r) => (done.push(String(outcome(r))), r)));
      const results = (await Promise.all(all)).map(outcome);
      expect(results.filter((v) => v === "queue_full")).toHaveLength(5);
      expect(results.slice(0, 15).filter((v) => v === "queue_full")).toHaveLength(5); // only user A's
      expect(results.slice(15)).toEqual(["b 0", "b 1", "b 2", "b 3", "b 4"]);
      // user A hogged the worker: user B's jobs did not wait behind A's ten queued ones once it was free (first
      // come: positions 10-14)
      const ran = done.filter((v) => v !== "queue_full");
      expect(Math.max(...["b 0", "b 1", "b 2", "b 3", "b 4"].map((v) => ran.indexOf(v)))).toBeLessThan(10);
      expect(outcome(await loop)).toBe("timeout");
    });
  }, 20_000);

  test("one user's flood of short jobs does not queue another user's job behind it", async () => {
    await withPool({ workers: 1, queueLimit: 5000, queueLimitPerOwner: 2000 }, async (pool) => {
      const done: string[] = [];
      const flood = Array.from({ length: 2000 }, (_, i) => pool.run(job("user-a", `${i}`)).then(() => done.push("a")));
      await Bun.sleep(5);
      const before = done.length;
      const r = await pool.run(job("user-b", "'b'"));
      done.push("b");
      expect(outcome(r)).toBe("b");
      // First come would have run all 2,000 first; the jobs already offered to the worker go back to the queue. What
      // may still finish first: the jobs the worker had claimed, and results batched with them (8 seen under load
      // in CI, so the bound leaves room: the property is "not behind the flood", not a batch size).
      expect(done.indexOf("b") - before).toBeLessThan(64);
      await Promise.all(flood);
    });
  }, 60_000);

  test("one user's parked jobs leave room in the workers for another user's", async () => {
    await withPool({ workers: 1, maxJobsPerWorker: 8 }, async (pool) => {
      let sleepersDone = 0;
      const sleepers = Array.from({ length: 12 }, () =>
        pool.run(job("user-a", "await new Promise((r) => setTimeout(r, 2000)); return 'a'")).finally(() => sleepersDone++),
      );
      await waitUntil(() => pool.stats().inFlight >= 6, "six of A's sleepers in the worker");
      await Bun.sleep(50); // (no seventh comes)
      expect(pool.stats()).toMatchObject({ inFlight: 6, queued: 6 }); // 3/4 of the worker's 8 jobs
      const r = await pool.run(job("user-b", "await new Promise((r) => setTimeout(r, 10)); return 'b'"));
      expect(outcome(r)).toBe("b");
      expect(sleepersDone).toBe(0); // B did not wait for A's sleepers
      expect((await Promise.all(sleepers)).map(outcome)).toEqual(Array(12).fill("a"));
    });
  }, 20_000);
});

describe("one user's failures stay theirs", () => {
  test("one user's crash scripts (host data beyond their memory limit) fail none of another user's scripts, on the same workers", async () => {
    await withPool({ workers: 2 }, async (pool) => {
      await Promise.all([pool.run(job("user-b", "1")), pool.run(job("user-b", "2"))]); // both workers up
      let attacking = true;
      const attacker = (async () => {
        const kinds: string[] = [];
        // 3 of user A's crash scripts in flight at a time, every script 3 times
        const queue = [...CRASH_SCRIPTS, ...CRASH_SCRIPTS, ...CRASH_SCRIPTS];
        const lane = async () => {
          for (let s = queue.shift(); s !== undefined; s = queue.shift())
            kinds.push(String(outcome(await pool.run(job("user-a", s, { timeoutMs: 20_000 })))));
        };
        await Promise.all([lane(), lane(), lane()]);
        attacking = false;
        return kinds;
      })();
      // user B meanwhile: short scripts one after another, and scripts parked on a timer or a KV result on the same workers
      const victims: Promise<ScriptRunResult>[] = [];
      const expected: unknown[] = [];
      for (let i = 0; attacking; i++) {
        victims.push(
          pool.run(job("user-b", "await new Promise((r) => setTimeout(r, 40)); return context.i * 2", { context: { i }, timeoutMs: 10_000 })),
        );
        expected.push(i * 2);
        victims.push(
          pool.run(
            job("user-b", "await Secbox.kv.set('k' + context.i, 'v'); return await Secbox.kv.get('k' + context.i)", {
              context: { i },
              kvOwner: "responder-b",
              timeoutMs: 10_000,
            }),
          ),
        );
        expected.push("v");
        const r = await pool.run(job("user-b", "context.i + 1", { context: { i }, timeoutMs: 10_000 }));
        victims.push(Promise.resolve(r));
        expected.push(i + 1);
        await Bun.sleep(5);
      }
      const kinds = await attacker;
      const results = await Promise.all(victims);
      expect(results.length).toBeGreaterThan(30);
      // zero failures of user B's scripts, no worker replaced
      expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.error)).toEqual([]);
      expect(results.map(outcome)).toEqual(expected);
      expect(pool.stats().replaced).toBe(0);
      // and each of user A's scripts ended as its own memory error
      expect(kinds).toEqual(Array(CRASH_SCRIPTS.length * 3).fill("memory"));
    });
  }, 120_000);
});
