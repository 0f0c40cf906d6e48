// The script pool (supplement §11.6): the only place user scripts run. A fixed number of Bun worker threads, each
// with one QuickJS WebAssembly module, a fresh runtime + context per execution; bounded queues (one per owner); host
// operations that need the database or the network (Secbox.kv, op_proxy_request) answered here on the main thread.
// A script never runs on the main thread, so a busy or hostile one cannot block the API event loop.
//
// The pool's parts (src/sandbox/README.md has the map):
//   pool.ts            the ScriptPool API and state: run, stats, ready, close, the queue limits
//   pool/state.ts      the job and worker-slot records, the cell layout shared with a worker, constants
//   pool/offers.ts     dispatch: revocable offers to the least loaded worker, batched run messages
//   pool/workers.ts    worker lifecycle (spawn, replace, retire) and the messages workers post (results included)
//   pool/fairness.ts   the periodic check: stuck workers, hogs, backstop, contention, extra workers; eligibility
//   pool/host-ops.ts   Secbox.kv and op_proxy_request answered on this thread
// The fields of ScriptPool are shared by those parts (each part's header says which it owns); callers use only the
// methods.
//
// Scheduling: jobs go to the least loaded worker. A worker with no running job (jobs parked on a host operation or
// timer do not count) gets the next job at once; a busy worker may also hold jobs waiting behind its running one
// (prefetch, up to OFFER_DEPTH in all; pool/offers.ts), so it starts them the moment it finishes instead of sleeping
// through a round trip to this thread (a thread wake-up costs ~25 µs of CPU plus cold caches, about a trivial
// execution). The jobs
// of one event-loop turn reach a worker as one message, and it posts their results in groups (wire.ts batch,
// worker.ts HOLD). A prefetched job stays revocable until the worker claims it: each offer is a token in a
// SharedArrayBuffer cell that the worker must compare-and-swap to 0 before it starts the job, and this thread takes
// back unclaimed offers (the same CAS) for any worker that becomes idle, and all of them from a worker whose
// running job has run longer than STUCK_MS (it gets no new offers until that job ends), so a CPU-bound script
// delays little but itself. Prefetched jobs count against the queue bound. A worker holds at most
// maxJobsPerWorker jobs (mostly parked ones). Queue wait (including prefetch wait) does not count against a job's
// limits: the deadline starts at the claim.
//
// Fairness (owners: users; ScriptRunRequest.owner, see owners.ts). A script cannot be paused or moved, so one that
// runs long holds its worker until it ends; what the pool can share fairly is everything around that:
// - Queue: each owner waits in a FIFO of its own; a free worker takes the job of the owner running the fewest jobs
//   right now (ties: the oldest job), so one user's flood does not stand in front of another user's job, nor behind
//   its offers to a worker (pool/offers.ts takeBack(), makeRoom(): offers of an owner running many more go back and
//   follow; only offers that then go after that job, and each at most once per dispatch, so dispatch always ends).
//   An owner may have at most `queueLimitPerOwner` jobs waiting (beyond it: `queue_full` for that owner
//   only), all owners together `queueLimit`; and at most 3/4 of what the workers hold in them (ownerHeldCap: parked
//   jobs count), so a user's scripts parked on slow fetches or timers leave room for others.
// - Hogs: owners whose job has run longer than STUCK_MS are hogging (for HOG_MS after that; "running" as the worker
//   publishes it, see pool/state.ts RUN_CELL). Their waiting jobs go after everyone else's, and no other job is
//   offered to wait behind a hog's job. When every worker is held by a long job while another job waits, an extra
//   worker starts (at most as many as the pool has; the threads then share the CPUs). An owner whose long jobs held
//   as many workers as the pool has ("wide", for HOG_MS after that) gets no extra worker: a user's loops hold at
//   most that many workers, and the extra ones serve the others, including a user with one long job of their own
//   (or one that only looked long because the machine was busy). Extra workers end after EXTRA_IDLE_MS without work
//   (EXTRA_HOG_IDLE_MS while someone hogs).
// - Parked jobs: a job waiting for a KV result or a timer lives in its worker's memory. When another user's long
//   job holds that worker, the job resumes from inside the running job's QuickJS interrupt handler, nested above
//   it (engine/nesting.ts): op results go to each worker on a MessagePort of its own, counted in a shared cell
//   (MAIL_CELL), so the worker can take them while a script holds its thread. A held job's deadline and backstop
//   move by the time it was held ("freeze"/"thaw").
// - CPU: while more than one user uses the pool (CONTENDED_CELL), a worker whose slice runs long lowers its thread's
//   priority until the slice ends (engine/nesting.ts), so loops do not take the CPU from this thread or from other
//   workers.
// So a user looping at their in-flight limit delays other users' scripts by an extra worker's start (~0.1 s, once),
// not by the time limit; a user's own jobs still queue behind their own loops.
//
// Failure handling: a worker that reports itself poisoned (a trap inside the WebAssembly code), errors, exits, or
// does not answer a job by its deadline + backstopGraceMs is terminated and replaced; its unfinished jobs end with
// kind "internal" (the stuck one with "timeout"), except, for a poisoned worker, the jobs it reports as never seen
// outside it (parked, no host operation started): those run again once elsewhere, with the rest of their time. A worker whose WebAssembly memory grew past recycleMib is
// replaced once idle, returning that memory to the system. A worker that contained a native stack overflow while
// other jobs were parked on it retires (see pool/workers.ts retire()): a replacement starts, the old one finishes
// its jobs.
import { systemClock } from "../platform/runtime";
import { KvService } from "./kv";
import type { Owner } from "./owners";
import { busy, contended, eligibility } from "./pool/fairness";
import { dispatch, flush, refresh, unoffer } from "./pool/offers";
import { failure, MiB, PoolState, settle, type Job, type ScriptPoolOptions, type Slot } from "./pool/state";
import { kill, spawn } from "./pool/workers";
import { DEFAULT_KV_LIMITS, type ScriptRunner, type ScriptRunRequest, type ScriptRunResult } from "./types";
import type { Packed } from "./protocol";
import { pack, packedBytes } from "./wire";

export { workerEntry } from "./pool/workers";
export type { ScriptPoolOptions };

export class ScriptPool extends PoolState implements ScriptRunner {
  readonly kv: KvService | null;
  readonly forRegular: (o: Owner) => number;
  readonly forExtra: (o: Owner) => number;
  /** Posts the run messages of this turn (pool/offers.ts flush), scheduled with setImmediate. */
  readonly flush = (): void => flush(this);

  constructor(opts: ScriptPoolOptions) {
    super(opts);
    this.kv = opts.db ? new KvService(opts.db, opts.clock ?? systemClock) : null;
    this.kv?.start();
    ({ forRegular: this.forRegular, forExtra: this.forExtra } = eligibility(this));
  }

  /** Workers start on first use, so processes that never run a script (CLI commands) pay nothing. */
  private startWorkers() {
    if (this.slots.length > 0 || this.closed) return;
    for (let i = 0; i < this.size; i++) this.slots.push(spawn(this));
  }

  /** Workers, queued jobs (including prefetched ones not yet started), jobs in workers (running or parked),
   *  whether the workers share one compiled QuickJS module, and how many executions started from the memory image
   *  of their source (see engine/image.ts). */
  stats(): {
    workers: number;
    ready: number;
    queued: number;
    inFlight: number;
    replaced: number;
    retiring: number;
    extra: number;
    sharedModule: boolean;
    snapshotWorkers: number;
    imageRuns: number;
    retried: number;
  } {
    return {
      retried: this.retried,
      retiring: this.retiring.size,
      extra: this.slots.filter((s) => s.extra).length,
      imageRuns: this.imageRuns,
      snapshotWorkers: this.slots.filter((s) => s.ready && !s.dead && s.snapshot).length,
      sharedModule: this.wasmModule !== null,
      workers: this.slots.filter((s) => !s.extra).length,
      ready: this.slots.filter((s) => s.ready && !s.dead).length,
      queued: this.queues.size + this.prefetched,
      inFlight: [...this.slots, ...this.retiring].reduce((n, s) => n + s.jobs.size, 0) - this.prefetched,
      replaced: Math.max(0, this.spawned - this.extraSpawned - this.size),
    };
  }

  /** Resolves when every worker has loaded its QuickJS module (the pool accepts jobs before that). The default wait
   *  is long: starting workers has taken over 10 s on a loaded 2-core machine. */
  async ready(timeoutMs = 30_000): Promise<void> {
    this.startWorkers();
    const end = Date.now() + timeoutMs;
    while (this.slots.some((s) => !s.ready && !s.dead)) {
      if (Date.now() > end) throw new Error("sandbox workers did not start");
      await Bun.sleep(5);
    }
  }

  run(req: ScriptRunRequest): Promise<ScriptRunResult> {
    if (this.closed) return Promise.resolve(failure("internal", "Script pool is closed"));
    if (typeof req.source !== "string") return Promise.resolve(failure("error", "Script source must be a string"));
    const id = ++this.seq;
    const owner = this.queues.owner(typeof req.owner === "string" ? req.owner : `\0job ${id}`);
    if (this.queues.named > 1) contended(this, Date.now());
    if (this.full(owner)) {
      // Prefetched jobs may have been claimed since this thread last looked.
      for (const slot of this.slots) refresh(this, slot);
      if (this.full(owner)) {
        this.queues.release(owner, Date.now());
        return Promise.resolve(failure("queue_full", "Script queue is full"));
      }
    }
    this.startWorkers();
    const memoryMib = Number.isFinite(req.limits.memoryMib) && req.limits.memoryMib > 0 ? req.limits.memoryMib : 10;
    let context: Packed;
    try {
      context = pack(req.context ?? null);
    } catch (err) {
      // values JSON cannot hold (BigInt, cycles)
      this.queues.release(owner, Date.now());
      return Promise.resolve(failure("error", `Script context must be data: ${err instanceof Error ? err.message : String(err)}`));
    }
    return new Promise<ScriptRunResult>((resolve) => {
      const job: Job = {
        id,
        req,
        context,
        memoryBytes: Math.floor(memoryMib * MiB) + packedBytes(context),
        kvLimits: { ...DEFAULT_KV_LIMITS, ...req.kvLimits },
        resolve,
        slot: null,
        parked: false,
        kvOps: 0,
        ops: 0,
        abort: null,
        backstopAt: Infinity,
        dispatchedAt: 0,
        offered: false,
        prefetched: false,
        owner,
        cell: -1,
        token: 0,
        frozenBackstop: null,
        spentMs: 0,
        retried: false,
      };
      this.queues.push(job);
      busy(this);
      dispatch(this);
    });
  }

  /** The queue (all owners') or `owner`'s share of it is full. */
  private full(owner: Owner): boolean {
    return this.queues.size + this.prefetched >= this.opts.queueLimit || this.queues.waiting(owner) >= this.ownerQueueLimit;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.kv?.stop();
    if (this.watch) clearInterval(this.watch);
    this.watch = null;
    for (const job of this.queues.drain()) job.resolve(failure("internal", "Script pool is closed"));
    for (const slot of [...this.slots, ...this.retiring]) {
      slot.dead = true;
      for (const job of slot.jobs.values()) {
        unoffer(this, slot, job);
        settle(job, failure("internal", "Script pool is closed"));
      }
      slot.jobs.clear();
      kill(slot);
    }
  }
}
