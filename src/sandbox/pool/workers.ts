// Worker lifecycle and what workers say (see ../pool.ts "Failure handling"): starting a worker (the first compiles
// QuickJS, the others instantiate that module), replacing one that failed, retiring one that contained a native
// stack overflow while other jobs were parked on it, and the messages a worker posts: ready, park/wake,
// freeze/thaw, op, retire, poisoned, and results (onDone).
// Owns: pool.slots/.retiring membership, Slot.ready/.dead/.retiring/.heapBytes/.snapshot, the compiled module and
// who compiles it, pool.retried and Job.retried/.spentMs. Must never: lose a job (a worker that goes away settles or
// requeues every job it held), keep a worker whose instance is untrustworthy, or run a job again that anything
// outside its worker may have seen (a host operation) or that already ran twice.
import { existsSync } from "node:fs";
import type { MainToWorker, WorkerToMain } from "../protocol";
import type { LogEntry, ScriptError, ScriptRunResult } from "../types";
import { decodeDone, isWire, unbatch } from "../wire";
import { operation } from "./host-ops";
import { claimed, dispatch, left, revoke, timeoutOf } from "./offers";
import { CONTENDED_CELL, failure, MAIL_CELL, MiB, OFFER_CELLS, RUN_CELL, runsLong, settle, type Job, type Slot, type PoolState } from "./state";

/** The worker script: beside pool.ts in development; an extra entrypoint inside a compiled binary. */
export function workerEntry(): string | URL {
  const here = import.meta.url;
  if (here.includes("$bunfs") || here.includes("~BUN")) {
    const root = here.includes("~BUN") ? "B:/~BUN/root" : "/$bunfs/root";
    for (const p of ["sandbox/worker.js", "src/sandbox/worker.js", "worker.js"]) {
      if (existsSync(`${root}/${p}`)) return `${root}/${p}`;
    }
  }
  return new URL("../worker.ts", import.meta.url);
}

/** Starts a worker. The first one compiles QuickJS and hands the WebAssembly.Module back with its "ready"; the
 *  others (and replacements) instantiate that module (no second compile, and JSC shares the module's tiered-up
 *  code between threads). Their threads start at once; only their init message waits for the module. */
export function spawn(pool: PoolState, extra = false): Slot {
  const worker = new Worker(workerEntry());
  const cells = new Int32Array(new SharedArrayBuffer((OFFER_CELLS + 4) * 4));
  if (pool.contendedUntil > Date.now()) Atomics.store(cells, CONTENDED_CELL, 1);
  const channel = new MessageChannel();
  const slot: Slot = {
    n: ++pool.spawned,
    worker,
    replies: channel.port1,
    workerPort: channel.port2,
    ready: false,
    dead: false,
    jobs: new Map(),
    active: 0,
    offered: [],
    cells,
    outbox: [],
    stuck: false,
    retiring: false,
    extra,
    busyAt: Date.now(),
    heapBytes: 0,
    snapshot: false,
    awaitingModule: false,
    lastIdleDispatch: 0,
  };
  worker.onmessage = (e: MessageEvent<WorkerToMain | string | unknown[]>) => {
    const data = e.data;
    if (!isWire(data)) onMessage(pool, slot, data);
    else for (const one of unbatch(data)) onDone(pool, slot, one);
  };
  worker.onerror = (e: ErrorEvent) => replace(pool, slot, `worker error: ${e.message}`);
  worker.addEventListener("close", () => replace(pool, slot, "worker exited"));
  worker.unref();
  if (pool.wasmModule || !pool.compiling) {
    if (!pool.wasmModule) pool.compiling = slot;
    initWorker(pool, slot);
  } else {
    slot.awaitingModule = true;
  }
  return slot;
}

function initWorker(pool: PoolState, slot: Slot): void {
  slot.awaitingModule = false;
  const port = slot.workerPort;
  if (port === null) return;
  slot.workerPort = null;
  const init: MainToWorker = {
    t: "init",
    memoryMib: pool.workerMemoryMib,
    cells: slot.cells.buffer as SharedArrayBuffer,
    mailCell: MAIL_CELL,
    runCell: RUN_CELL,
    epoch: pool.epoch,
    replies: port,
    module: pool.wasmModule ?? undefined,
    snapshot: pool.snapshot,
    ...(pool.opts.quickjsVersions ? { quickjs: pool.opts.quickjsVersions } : {}),
  };
  slot.worker.postMessage(init, [port]);
}

/** The compiling worker is done (module null: it failed): release the workers waiting for it. */
function compiled(pool: PoolState, module: WebAssembly.Module | null): void {
  pool.compiling = null;
  if (module) pool.wasmModule = module;
  const waiting = pool.slots.filter((s) => s.awaitingModule && !s.dead);
  if (!module && waiting.length > 0) pool.compiling = waiting[0]!;
  for (const s of waiting) initWorker(pool, s);
}

/** Terminates `slot` (if still live), fails its unfinished jobs and starts a replacement. */
export function replace(pool: PoolState, slot: Slot, reason: string, stuck?: Job): void {
  if (slot.dead) return;
  slot.dead = true;
  pool.retiring.delete(slot);
  if (!pool.closed) pool.opts.log.warn("sandbox worker replaced", { reason: reason.slice(0, 200) });
  if (pool.compiling === slot) compiled(pool, null);
  // Offers the worker never claimed go back to their owners' queues, in their place.
  for (const job of [...slot.offered]) if (revoke(pool, slot, job) && !pool.closed) pool.queues.push(job);
  for (const job of slot.jobs.values()) {
    left(pool, job);
    settle(job, job === stuck ? failure("timeout", "Script timed out") : failure("internal", "Script worker failed and was restarted; try again"));
  }
  slot.jobs.clear();
  kill(slot);
  takePlace(pool, slot);
  dispatch(pool);
}

/** A replacement takes `slot`'s place in `slots` (an extra worker is not replaced). */
function takePlace(pool: PoolState, slot: Slot): void {
  const i = pool.slots.indexOf(slot);
  if (i < 0 || pool.closed) return;
  if (slot.extra) pool.slots.splice(i, 1);
  else pool.slots[i] = spawn(pool);
}

/** The worker contained a native stack overflow while other jobs were parked on it (engine/faults.ts contain()): they
 *  run to their end there, it gets no new job, a replacement takes its place now, and it is ended once idle. At
 *  most as many workers as the pool has retire at once; beyond that one is replaced at once (its jobs fail as
 *  for a poisoned worker), so a flood of such scripts cannot pile up threads. */
function retire(pool: PoolState, slot: Slot, reason: string): void {
  if (slot.dead || slot.retiring) return;
  if (pool.retiring.size >= pool.size) {
    replace(pool, slot, `${reason} (too many workers retiring)`);
    return;
  }
  pool.opts.log.warn("sandbox worker retiring", { reason: reason.slice(0, 200), jobs: slot.jobs.size });
  slot.retiring = true;
  slot.stuck = false;
  pool.retiring.add(slot);
  // offers it will not claim go back to their owners' queues
  for (const job of [...slot.offered]) if (revoke(pool, slot, job)) pool.queues.push(job);
  if (pool.compiling === slot) compiled(pool, null);
  takePlace(pool, slot);
  retired(pool, slot);
  dispatch(pool);
}

/** Ends a retiring worker once it holds no job. */
function retired(pool: PoolState, slot: Slot): void {
  if (!slot.retiring || slot.dead || slot.jobs.size > 0) return;
  slot.dead = true;
  pool.retiring.delete(slot);
  kill(slot);
}

/** Ends a worker thread and its op-result port. */
export function kill(slot: Slot): void {
  slot.worker.terminate();
  slot.replies.close();
}

function onMessage(pool: PoolState, slot: Slot, msg: WorkerToMain): void {
  if (slot.dead) return;
  switch (msg.t) {
    case "ready":
      slot.ready = true;
      slot.snapshot = msg.snapshot;
      if (msg.fallback !== undefined && !pool.warnedFallback) {
        // once per pool: every worker of this build says the same
        pool.warnedFallback = true;
        pool.opts.log.warn("sandbox: QuickJS runs without its verified fast internals (slower; see src/sandbox/engine/quickjs-internals.ts)", {
          reason: msg.fallback.slice(0, 300),
        });
      }
      if (pool.compiling === slot) compiled(pool, msg.module ?? null);
      dispatch(pool);
      return;
    case "park": {
      const job = slot.jobs.get(msg.id);
      if (job) claimed(pool, slot, job);
      if (job && !job.parked) {
        job.parked = true;
        slot.active--;
        job.owner.running--;
        if (slot.stuck) slot.stuck = runsLong(slot, pool.epoch, Date.now()); // a long slice that parked
        dispatch(pool);
      }
      return;
    }
    case "wake": {
      const job = slot.jobs.get(msg.id);
      if (job) claimed(pool, slot, job);
      if (job && job.parked) {
        job.parked = false;
        slot.active++;
        job.owner.running++;
      }
      return;
    }
    case "freeze":
      // held below a job resumed from the interrupt handler: it cannot run, its deadline stops (engine/nesting.ts)
      for (const id of msg.ids) {
        const job = slot.jobs.get(id);
        if (job && job.frozenBackstop === null) {
          job.frozenBackstop = job.backstopAt;
          job.backstopAt = Infinity;
        }
      }
      return;
    case "thaw":
      for (const id of msg.ids) {
        const job = slot.jobs.get(id);
        if (job && job.frozenBackstop !== null) {
          job.backstopAt = job.frozenBackstop + msg.ms;
          job.frozenBackstop = null;
        }
      }
      return;
    case "op":
      void operation(pool, slot, msg);
      return;
    case "retire":
      settleReported(pool, slot, msg.results);
      retire(pool, slot, msg.reason);
      return;
    case "poisoned":
      settleReported(pool, slot, msg.results);
      replace(pool, slot, msg.reason);
      return;
  }
}

/** Outcomes a worker reported with its retirement or poisoning. A job the worker marks `retry` (engine/faults.ts
 *  poison(): it was parked when the instance failed and never started a host operation, so nothing outside the
 *  worker saw it) goes back to its owner's queue, in its place, once, with the rest of its time limit; its logs so
 *  far are dropped (the next attempt makes its own). */
function settleReported(pool: PoolState, slot: Slot, results: { id: number; error: ScriptError; logs: LogEntry[]; retry?: boolean }[]): void {
  for (const r of results) {
    const job = slot.jobs.get(r.id);
    if (!job) continue;
    claimed(pool, slot, job);
    slot.jobs.delete(r.id);
    if (!job.parked) slot.active--;
    left(pool, job);
    const spent = Math.max(0, Date.now() - job.dispatchedAt);
    if (r.retry === true && !job.retried && !pool.closed && job.ops === 0 && timeoutOf(job) - spent >= 1) {
      job.retried = true;
      job.spentMs += spent;
      job.slot = null;
      job.parked = false;
      job.backstopAt = Infinity;
      job.frozenBackstop = null;
      job.owner = pool.queues.owner(job.owner.key); // its record may have been released meanwhile
      pool.retried++;
      pool.queues.push(job);
      continue;
    }
    settle(job, { ok: false, error: r.error, logs: r.logs, durationMs: spent });
  }
}

/** A job's result (wire.ts). */
function onDone(pool: PoolState, slot: Slot, data: string | unknown[]): void {
  if (slot.dead) return;
  let done: ReturnType<typeof decodeDone>;
  try {
    done = decodeDone(data);
  } catch (err) {
    // cannot happen (the worker's JSON.stringify made the text): the worker is not trusted any more
    replace(pool, slot, `unreadable result: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  const { header: msg, value } = done;
  if (msg.image) pool.imageRuns++;
  const job = slot.jobs.get(msg.id);
  slot.heapBytes = msg.heapBytes;
  if (!job) return;
  claimed(pool, slot, job);
  slot.jobs.delete(msg.id);
  if (!job.parked) slot.active--;
  left(pool, job);
  // a job ended: the worker takes offers again unless another one still runs long (a job resumed above a loop)
  if (slot.stuck) slot.stuck = runsLong(slot, pool.epoch, Date.now());
  const result: ScriptRunResult = msg.ok
    ? { ok: true, value, logs: msg.logs, durationMs: msg.durationMs }
    : { ok: false, error: msg.error!, logs: msg.logs, durationMs: msg.durationMs };
  settle(job, result);
  if (slot.retiring) {
    retired(pool, slot);
    return;
  }
  if (slot.jobs.size === 0) {
    if (slot.heapBytes > pool.recycleBytes) {
      replace(pool, slot, `recycled: WebAssembly memory ${Math.round(slot.heapBytes / MiB)} MiB`);
      return;
    }
  }
  dispatch(pool);
}
