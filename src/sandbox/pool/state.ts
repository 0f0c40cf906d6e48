// What the pool's parts share (see ../pool.ts for the map): a job as the main thread tracks it, a worker slot, the
// layout of the cells shared with a worker (and reading what the worker publishes there), the pool's timing
// constants, and settling a job.
// Owns: nothing at run time (types, constants, small readers). Must never: hold state.
import type { KvLimits, ScriptError, ScriptRunRequest, ScriptRunResult } from "../types";
import type { Owner } from "../owners";
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
