// What the pool's parts share (see ../pool.ts for the map): a job as the main thread tracks it, a worker slot, the
// layout of the cells shared with a worker (and reading what the worker publishes there), the pool's timing
// constants, and settling a job.
// And PoolState: the pool's fields, declared once, which the parts take (see there).
// Owns: the declarations (types, constants, small readers, PoolState's fields). Must never: decide anything.
import { availableParallelism } from "node:os";
import type { Db } from "../../platform/db/db";
import type { Logger } from "../../platform/log";
import { outboundFetch } from "../../platform/net/client";
import type { Clock } from "../../platform/runtime";
import type { KvService } from "../kv";
import { OwnerQueues, type Owner } from "../owners";
import type { OutboundFetch } from "../proxy";
import type { KvLimits, ScriptError, ScriptRunRequest, ScriptRunResult } from "../types";
import type { Packed } from "../protocol";

export interface Job {
  id: number;
  req: ScriptRunRequest;
  /** req.context as JSON text + byte arrays (wire.ts). */
  context: Packed;
  memoryBytes: number;
  kvLimits: KvLimits;
  resolve: (r: ScriptRunResult) => void;
  slot: Slot | null;
  parked: boolean;
  kvOps: number;
  /** Host operations (kv, proxy) it asked this thread for: effects outside its worker. */
  ops: number;
  /** Created on the first host operation; aborted when the job settles (ends KV watches). */
  abort: AbortController | null;
  /** Epoch ms after which the job is presumed stuck (deadline + backstopGraceMs). */
  backstopAt: number;
  dispatchedAt: number;
  /** Sent to `slot` but not known to be claimed by it (see Slot.offered); cell/token of the offer. */
  offered: boolean;
  /** Offered while the worker was busy: counts as queued until claimed or revoked. */
  prefetched: boolean;
  /** req.owner's record, or one of its own (see "Fairness"). */
  owner: Owner;
  cell: number;
  token: number;
  /** Its backstop while its slice is held below a nested one (see "freeze" in workers.ts onMessage); null otherwise. */
  frozenBackstop: number | null;
  /** Time of its limit used by an earlier attempt on a worker that failed (see workers.ts settleReported()): the
   *  next attempt gets the rest. */
  spentMs: number;
  /** It was run again once after its worker failed (never twice). */
  retried: boolean;
}

export interface Slot {
  n: number;
  worker: Worker;
  ready: boolean;
  /** Terminated or being replaced: takes no jobs, its events are ignored. */
  dead: boolean;
  jobs: Map<number, Job>;
  /** Claimed jobs that are running (not parked). */
  active: number;
  /** Jobs sent to the worker whose claim this thread has not seen yet (at most OFFER_DEPTH). */
  offered: Job[];
  /** Offer cells shared with the worker: a job's token while it is offered, 0 once claimed or revoked; and
   *  cells[MAIL_CELL], the count of op results sent on `replies`. */
  cells: Int32Array;
  /** Op results go to the worker on this port (see engine/nesting.ts). */
  replies: MessagePort;
  /** The worker's end of it, until the init message takes it there. */
  workerPort: MessagePort | null;
  /** Run messages of this turn, posted together by flush(). */
  outbox: { job: Job; msg: string | unknown[] }[];
  heapBytes: number;
  /** Its engine restores a memory image per execution (from its "ready"). */
  snapshot: boolean;
  /** Its init message waits for the compiled QuickJS module (see workers.ts spawn()). */
  awaitingModule: boolean;
  /** When it was last given a job while idle (dispatch tick): among idle workers the most recent one is preferred,
   *  its caches are warm (alternating workers costs ~60 µs per job on this 2-core machine). */
  lastIdleDispatch: number;
  /** Running one job for longer than STUCK_MS: takes no offers (see fairness.ts check()). */
  stuck: boolean;
  /** Runs its remaining jobs to their end and takes no new ones (see workers.ts retire()); not in `slots` any more. */
  retiring: boolean;
  /** Started because every worker was held by a long job (see "Fairness"); ends when idle. */
  extra: boolean;
  /** Last time check() saw it hold a job. */
  busyAt: number;
}

/** Jobs one worker may hold running or offered: a batch being run plus the next one, so that it never sleeps
 *  through a round trip to this thread under load (see worker.ts HOLD). */
export const OFFER_DEPTH = 16;
export const OFFER_CELLS = 20;
/** The cell after the offer cells counts the op results sent to the worker; the two after it are where the worker
 *  publishes the token of the job whose slice runs and when that slice started (engine.ts attach()). */
export const MAIL_CELL = OFFER_CELLS;
export const RUN_CELL = OFFER_CELLS + 1;
/** 1 while more than one (named) owner has used the pool in the last CONTENDED_MS (engine/nesting.ts: only then does
 *  a long slice lower its thread's priority). */
export const CONTENDED_CELL = OFFER_CELLS + 3;
export const CONTENDED_MS = 2000;
/** A worker whose running job has run this long is "stuck": its unclaimed offers go back to the queue and it gets
 *  no new ones until that job ends (checked every CHECK_MS). */
export const STUCK_MS = 20;
export const CHECK_MS = 50;
/** An extra worker (see "Fairness") ends after this long without a job; while an owner hogs, after the longer time. */
export const EXTRA_IDLE_MS = 2000;
export const EXTRA_HOG_IDLE_MS = 30_000;
/** An owner counts as hogging for this long after it last had a job running longer than STUCK_MS. */
export const HOG_MS = 1000;

export const MiB = 1024 * 1024;

export function failure(kind: ScriptError["kind"], message: string): ScriptRunResult {
  return { ok: false, error: { kind, message }, logs: [], durationMs: 0 };
}

/** Settles a job's promise (once its worker's bookkeeping is done); ends its KV watches. */
export function settle(job: Job, result: ScriptRunResult): void {
  job.backstopAt = Infinity;
  job.abort?.abort();
  job.resolve(result);
}

/** `slot`'s worker runs a slice that started more than STUCK_MS ago (as the worker publishes it in RUN_CELL: this
 *  thread's view of claims, parks and results lags when it is busy, and a finished job must not count as a long
 *  one). `epoch`: the pool's time base of that cell. */
export function runsLong(slot: Slot, epoch: number, now: number): boolean {
  if (Atomics.load(slot.cells, RUN_CELL) === 0) return false;
  return ((((now - epoch) | 0) - Atomics.load(slot.cells, RUN_CELL + 1)) | 0) > STUCK_MS;
}

/** The job of the slice `slot`'s worker runs (see runsLong), if this thread still knows it. */
export function runningJob(slot: Slot): Job | undefined {
  const token = Atomics.load(slot.cells, RUN_CELL);
  if (token === 0) return undefined;
  for (const j of slot.jobs.values()) if (j.token === token) return j;
  return undefined;
}

export interface ScriptPoolOptions {
  /** `scripts.workers`; 0 = number of CPUs. */
  workers: number;
  /** `scripts.queue_limit`: jobs waiting for a worker; beyond it run() answers `queue_full` at once. */
  queueLimit: number;
  /** `scripts.queue_limit_per_user`: jobs of one owner waiting for a worker; beyond it run() answers that owner
   *  `queue_full` while others are still queued. Default (and at most) `queueLimit`. */
  queueLimitPerOwner?: number;
  /** Database for Secbox.kv; without it KV calls fail. */
  db?: Db;
  /** `network.allow_private_targets` for op_proxy_request. */
  allowPrivate: boolean;
  log: Logger;
  /** KV timestamps and TTLs. Default: system clock. */
  clock?: Clock;
  /** Default: platform/net outboundFetch. */
  fetch?: OutboundFetch;
  /** Hard cap of one worker's WebAssembly memory. Default 512. */
  workerMemoryMib?: number;
  /** An idle worker whose WebAssembly memory exceeds this is replaced. Default 192. */
  recycleMib?: number;
  /** Jobs one worker may hold (running + parked). Default 64. */
  maxJobsPerWorker?: number;
  /** A job not answered by deadline + this is presumed stuck: its worker is replaced. Default 3000. */
  backstopGraceMs?: number;
  /** Executions start from a restored memory image of a pristine runtime (engine/image.ts). Default true; false makes
   *  every execution create its runtime (tests and benchmarks compare the two). */
  snapshot?: boolean;
  /** (tests) The quickjs-emscripten versions the engine's internals count as verified for (default: the pinned ones,
   *  engine/quickjs-internals.ts): other versions make every worker take the slow safe path. */
  quickjsVersions?: { core: string; variant: string };
}

/** The pool's state, shared by its parts (each part's header says what it owns): ScriptPool (../pool.ts) extends it
 *  with the public face and what is wired from the parts. The parts take the state (`pool: PoolState`), never the
 *  ScriptPool, so no part imports the module that imports it. */
export abstract class PoolState {
  readonly size: number;
  readonly slots: Slot[] = [];
  /** Workers finishing their jobs after a contained native stack overflow (see pool/workers.ts retire()). */
  readonly retiring = new Set<Slot>();
  /** Owners hogging (see "Fairness"; updated by pool/fairness.ts check()). */
  hogs = new Set<Owner>();
  extraSpawned = 0;
  /** Jobs waiting for a worker, per owner. */
  readonly queues = new OwnerQueues<Job>();
  readonly ownerQueueLimit: number;
  /** Jobs one owner may hold in workers (running + parked + offered): 3/4 of what the workers hold, so a user's
   *  thousand jobs parked on timers or slow fetches leave room for others. */
  readonly ownerHeldCap: number;
  /** Time base of the workers' RUN_CELL (Date.now() at creation). */
  readonly epoch = Date.now();
  /** More than one owner used the pool until then (see pool/state.ts CONTENDED_CELL). */
  contendedUntil = 0;
  seq = 0;
  /** Prefetched jobs not yet claimed (they count as queued). */
  prefetched = 0;
  spawned = 0;
  closed = false;
  /** QuickJS compiled once (by the first worker) and shared with every later worker; null until then. */
  wasmModule: WebAssembly.Module | null = null;
  /** A worker is compiling it: the others' init waits for it. */
  compiling: Slot | null = null;
  dispatchTick = 0;
  /** Offers made (their tokens). */
  offers = 0;
  /** A flush of the workers' outboxes is scheduled. */
  flushing = false;
  /** Executions that started from their source's memory image (the compiled script included). */
  imageRuns = 0;
  /** Jobs run again after their worker failed (see pool/workers.ts settleReported()). */
  retried = 0;
  readonly fetch: OutboundFetch;
  readonly workerMemoryMib: number;
  readonly snapshot: boolean;
  readonly recycleBytes: number;
  readonly maxJobs: number;
  readonly grace: number;
  /** A worker reported a fallback (engine/quickjs-internals.ts): logged once per pool. */
  warnedFallback = false;
  /** One ref'd timer while any job is queued or in flight: keeps the process alive (workers are unref'd) and
   *  checks the backstop of in-flight jobs. */
  watch: ReturnType<typeof setInterval> | null = null;
  /** Secbox.kv (null without a database). */
  abstract readonly kv: KvService | null;
  /** Who a regular and an extra worker take jobs from (fairness.ts eligibility). */
  abstract readonly forRegular: (o: Owner) => number;
  abstract readonly forExtra: (o: Owner) => number;
  /** Posts the run messages of this turn (offers.ts flush), scheduled with setImmediate. */
  abstract readonly flush: () => void;

  constructor(readonly opts: ScriptPoolOptions) {
    this.size = opts.workers > 0 ? opts.workers : Math.max(1, availableParallelism());
    this.fetch = opts.fetch ?? outboundFetch;
    this.workerMemoryMib = opts.workerMemoryMib ?? 512;
    this.snapshot = opts.snapshot ?? true;
    this.recycleBytes = (opts.recycleMib ?? 192) * MiB;
    this.maxJobs = opts.maxJobsPerWorker ?? 64;
    this.grace = opts.backstopGraceMs ?? 3000;
    this.ownerQueueLimit = Math.max(1, Math.min(opts.queueLimit, opts.queueLimitPerOwner ?? opts.queueLimit));
    this.ownerHeldCap = Math.max(1, Math.floor((this.size * this.maxJobs * 3) / 4));
  }
}
