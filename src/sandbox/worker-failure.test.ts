// If a worker's WebAssembly instance fails anyway (a trap: engine/faults.ts poison()), only what may have caused it
// fails: another execution that was parked in the instance and never started a host operation (nothing outside the
// worker saw it) runs again once on another worker with the rest of its time (pool/workers.ts settleReported()).
// The engine half runs in-process with a real trap (an FFI call with a pointer outside the instance's memory, made
// from the interrupt handler while a script runs); the pool half with real workers and real parked jobs.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createLogger } from "../platform/log";
import { Engine } from "./engine";
import { contextPointer } from "./engine/quickjs-internals";
import { ScriptPool } from "./pool";
import type { Slot } from "./pool/state";
import type { RunJob, WorkerToMain } from "./protocol";
import type { ScriptLimits, ScriptRunResult } from "./types";

const log = createLogger("error");
const LIMITS: ScriptLimits = { memoryMib: 10, timeoutMs: 10_000, proxyTimeoutMs: 30_000, maxProxyBodyBytes: 1 << 20 };
let server: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: async () => (await Bun.sleep(1500), new Response("late")) });
});
afterAll(() => server.stop(true));

const runJob = (id: number, source: string, extra: Partial<RunJob> = {}): RunJob => ({
  t: "run",
  id,
  cell: 0,
  token: 0,
  source,
  context: { json: "{}", paths: [], bytes: [] },
  memoryBytes: 10 << 20,
  timeoutMs: 3000,
  stackBytes: 256 * 1024,
  kv: false,
  proxy: false,
  owner: `user-${id}`,
  ...extra,
});

describe("a worker whose instance fails anyway", () => {
  test("the engine reports the failing execution as failed and marks only parked executions without host operations to run again", async () => {
    const sent: unknown[] = [];
    const engine = new Engine((msg) => void sent.push(msg));
    await engine.init(512);
    engine.run(runJob(1, "await new Promise((r) => setTimeout(r, 300)); return 1")); // parked on a timer
    engine.run(runJob(2, "await Secbox.kv.get('k'); return 2", { kv: true })); // parked on a host operation
    expect(sent.filter((m) => (m as { t?: string }).t === "op")).toHaveLength(1);
    // a real trap while job 3's code runs: a read outside the instance's memory
    let trapped = false;
    engine.onRunning = () => {
      if (trapped) return;
      trapped = true;
      const ctx = [...engine.execs.values()].find((e) => e.id === 3)!.ctx!;
      (engine.mod as unknown as { ffi: { QTS_GetString(ctx: number, ptr: number): number } }).ffi.QTS_GetString(contextPointer(ctx)!, 0x7fff_fff0);
    };
    engine.run(runJob(3, "while (true) {}"));
    const poisoned = sent.find((m) => (m as { t?: string }).t === "poisoned") as Extract<WorkerToMain, { t: "poisoned" }> | undefined;
    expect(poisoned?.reason).toMatch(/RuntimeError/);
    const byId = Object.fromEntries(poisoned!.results.map((r) => [r.id, { kind: r.error.kind, retry: r.retry ?? false }]));
    expect(byId).toEqual({ 1: { kind: "internal", retry: true }, 2: { kind: "internal", retry: false }, 3: { kind: "internal", retry: false } });
  });

  const internal = { kind: "internal" as const, message: "Script worker failed and was restarted; try again" };
  const outcome = (r: ScriptRunResult) => (r.ok ? { value: r.value, logs: r.logs.map((l) => l.message) } : r.error);
  /** What a worker's engine posts when its instance traps (see the test above), delivered to the pool as from it. */
  const poisoned = (slot: Slot, results: { id: number; retry: boolean }[]) =>
    (slot.worker.onmessage as (e: { data: WorkerToMain }) => void)({
      data: {
        t: "poisoned",
        reason: "RuntimeError: Out of bounds memory access",
        results: results.map((r) => ({ ...r, error: internal, logs: [] })),
      },
    });
  /** Waits until `slot` holds `n` jobs, all parked (and `ops` of them waiting for a host operation). */
  async function parkedIn(slot: Slot, n: number, ops = 0): Promise<number[]> {
    const end = Date.now() + 15_000; // (a backstop)
    const ready = () =>
      slot.jobs.size === n && [...slot.jobs.values()].every((j) => j.parked) && [...slot.jobs.values()].filter((j) => j.ops > 0).length === ops;
    while (!ready() && Date.now() < end) await Bun.sleep(5);
    expect(ready()).toBe(true);
    return [...slot.jobs.keys()].sort((a, b) => a - b);
  }
  // (2 s: parked until the jobs beside it have parked too, also when a loaded machine starts them late; with 200 ms the
  // sleeper had ended before the fetching job parked)
  const SLEEPER = "await new Promise((r) => setTimeout(r, 2000)); console.log('ran'); return 'done ' + context.n";

  test("the pool runs a parked job without host operations again on another worker; a job that started one fails", async () => {
    const pool = new ScriptPool({ workers: 1, queueLimit: 100, allowPrivate: true, log });
    try {
      await pool.ready();
      const parked = pool.run({ source: SLEEPER, context: { n: 1 }, owner: "victim", limits: LIMITS });
      const fetching = pool.run({
        source: `await Sandbox.core.ops.op_proxy_request({ url: 'http://127.0.0.1:${server.port}/' }); return 'fetched'`,
        context: {},
        owner: "victim",
        limits: LIMITS,
      });
      const ids = await parkedIn(pool.slots[0]!, 2, 1);
      // both marked: the pool's own count of host operations is what keeps the fetching one from running twice
      poisoned(
        pool.slots[0]!,
        ids.map((id) => ({ id, retry: true })),
      );
      expect(outcome(await fetching)).toEqual(internal);
      expect(outcome(await parked)).toEqual({ value: "done 1", logs: ["ran"] });
      expect(pool.stats()).toMatchObject({ replaced: 1, retried: 1, inFlight: 0, queued: 0 });
    } finally {
      await pool.close();
    }
  }, 30_000);

  test("a job is run again at most once, and only when the worker marks it", async () => {
    const pool = new ScriptPool({ workers: 1, queueLimit: 100, allowPrivate: true, log });
    try {
      await pool.ready();
      const twice = pool.run({ source: SLEEPER, context: { n: 1 }, owner: "victim", limits: LIMITS });
      const [first] = await parkedIn(pool.slots[0]!, 1);
      poisoned(pool.slots[0]!, [{ id: first!, retry: true }]);
      await parkedIn(pool.slots[0]!, 1); // again, on the replacement
      poisoned(pool.slots[0]!, [{ id: first!, retry: true }]);
      expect(outcome(await twice)).toEqual(internal);
      const unmarked = pool.run({ source: SLEEPER, context: { n: 2 }, owner: "victim", limits: LIMITS });
      const [id] = await parkedIn(pool.slots[0]!, 1);
      poisoned(pool.slots[0]!, [{ id: id!, retry: false }]);
      expect(outcome(await unmarked)).toEqual(internal);
      expect(pool.stats()).toMatchObject({ replaced: 3, retried: 1 });
    } finally {
      await pool.close();
    }
  }, 30_000);
});
