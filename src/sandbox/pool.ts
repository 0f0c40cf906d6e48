// The script pool (supplement §11.6): the only place user scripts run. A fixed number of Bun worker threads, each
// with one QuickJS WebAssembly module, a fresh runtime + context per execution; bounded queues (one per owner); host
// operations that need the database or the network (Secbox.kv, op_proxy_request) answered here on the main thread.
// A script never runs on the main thread, so a busy or hostile one cannot block the API event loop.
//
// Scheduling: jobs go to the least loaded worker. A worker with no running job (jobs parked on a host operation or
// timer do not count) gets the next job at once; a busy worker may also hold jobs waiting behind its running one
// (prefetch, up to OFFER_DEPTH in all), so it starts them the moment it finishes instead of sleeping through a round
// trip to this thread (a thread wake-up costs ~25 µs of CPU plus cold caches, about a trivial execution). The jobs
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
//   its offers to a worker (takeBack(), makeRoom(): offers of an owner running many more go back and follow). An owner
//   may have at most `queueLimitPerOwner` jobs waiting (beyond it: `queue_full` for that owner only), all owners
//   together `queueLimit`; and at most 3/4 of what the workers hold in them (ownerHeldCap: parked jobs count), so
//   a user's scripts parked on slow fetches or timers leave room for others.
// - Hogs: owners whose job has run longer than STUCK_MS are hogging (for HOG_MS after that; "running" as the worker
//   publishes it, see RUN_CELL). Their waiting jobs go after everyone else's, and no other job is offered to wait
//   behind a hog's job. When every worker is held by a long job while another job waits, an extra worker starts
//   (at most as many as the pool has; the threads then share the CPUs). An owner whose long jobs held as many
//   workers as the pool has ("wide", for HOG_MS after that) gets no extra worker: a user's loops hold at most that
//   many workers, and the extra ones serve the others, including a user with one long job of their own (or one
//   that only looked long because the machine was busy). Extra workers end after EXTRA_IDLE_MS without work
//   (EXTRA_HOG_IDLE_MS while someone hogs).
// - Parked jobs: a job waiting for a KV result or a timer lives in its worker's memory. When another user's long
//   job holds that worker, the job resumes from inside the running job's QuickJS interrupt handler, nested above
//   it (engine/nesting.ts): op results go to each worker on a MessagePort of its own,
//   counted in a shared cell (MAIL_CELL), so the worker can take them while a script holds its thread. A held job's
//   deadline and backstop move by the time it was held ("freeze"/"thaw").
// - CPU: while more than one user uses the pool (CONTENDED_CELL), a worker whose slice runs long lowers its thread's
//   priority until the slice ends (engine/nesting.ts), so loops do not take the CPU from this thread or from other workers.
// So a user looping at their in-flight limit delays other users' scripts by an extra worker's start (~0.1 s, once),
// not by the time limit; a user's own jobs still queue behind their own loops.
//
// Failure handling: a worker that reports itself poisoned (a trap inside the WebAssembly code), errors, exits, or
// does not answer a job by its deadline + backstopGraceMs is terminated and replaced; its unfinished jobs end with
// kind "internal" (the stuck one with "timeout"). A worker whose WebAssembly memory grew past recycleMib is
// replaced once idle, returning that memory to the system. A worker that contained a native stack overflow while
// other jobs were parked on it retires (see retire()): a replacement starts, the old one finishes its jobs.
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import type { Db } from "../platform/db/db";
import type { Logger } from "../platform/log";
import { outboundFetch } from "../platform/net/client";
import { systemClock, type Clock } from "../platform/runtime";
import { KvError, KvService } from "./kv";
import { OwnerQueues, type Owner } from "./owners";
import type { MainToWorker, OpReply, WorkerToMain } from "./protocol";
import { ProxyError, runProxy, type OutboundFetch } from "./proxy";
import { DEFAULT_KV_LIMITS, DEFAULT_STACK_KIB, type KvLimits, type LogEntry, type ScriptError, type ScriptRunRequest, type ScriptRunResult } from "./types";
import { batch, decodeDone, encodeRun, isWire, pack, packedBytes, unbatch, type Packed } from "./wire";

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

interface Job {
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
  /** Its backstop while its slice is held below a nested one (see "freeze" in onMessage); null otherwise. */
  frozenBackstop: number | null;
}

interface Slot {
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
  /** Op results go to the worker on this port (see engine.ts "Resuming from the interrupt handler"). */
  replies: MessagePort;
  /** The worker's end of it, until the init message takes it there. */
  workerPort: MessagePort | null;
  /** Run messages of this turn, posted together by flush(). */
  outbox: { job: Job; msg: string | unknown[] }[];
  heapBytes: number;
  /** Its engine restores a memory image per execution (from its "ready"). */
  snapshot: boolean;
  /** Its init message waits for the compiled QuickJS module (see spawn()). */
  awaitingModule: boolean;
  /** When it was last given a job while idle (dispatch tick): among idle workers the most recent one is preferred,
   *  its caches are warm (alternating workers costs ~60 µs per job on this 2-core machine). */
  lastIdleDispatch: number;
  /** Running one job for longer than STUCK_MS: takes no offers (see check()). */
  stuck: boolean;
  /** Runs its remaining jobs to their end and takes no new ones (see retire()); not in `slots` any more. */
  retiring: boolean;
  /** Started because every worker was held by a long job (see "Fairness"); ends when idle. */
  extra: boolean;
  /** Last time check() saw it hold a job. */
  busyAt: number;
}

/** Jobs one worker may hold running or offered: a batch being run plus the next one, so that it never sleeps
 *  through a round trip to this thread under load (see worker.ts HOLD). */
const OFFER_DEPTH = 16;
const OFFER_CELLS = 20;
/** The cell after the offer cells counts the op results sent to the worker; the two after it are where the worker
 *  publishes the token of the job whose slice runs and when that slice started (engine.ts attach()). */
const MAIL_CELL = OFFER_CELLS;
const RUN_CELL = OFFER_CELLS + 1;
/** 1 while more than one (named) owner has used the pool in the last CONTENDED_MS (engine.ts: only then does a long slice
 *  lower its thread's priority). */
const CONTENDED_CELL = OFFER_CELLS + 3;
const CONTENDED_MS = 2000;
/** A worker whose running job has run this long is "stuck": its unclaimed offers go back to the queue and it gets
 *  no new ones until that job ends (checked every CHECK_MS). */
const STUCK_MS = 20;
const CHECK_MS = 50;
/** An extra worker (see "Fairness") ends after this long without a job; while an owner hogs, after the longer time. */
const EXTRA_IDLE_MS = 2000;
const EXTRA_HOG_IDLE_MS = 30_000;
/** An owner counts as hogging for this long after it last had a job running longer than STUCK_MS. */
const HOG_MS = 1000;

const MiB = 1024 * 1024;

/** The worker script: beside this file in development; an extra entrypoint inside a compiled binary. */
export function workerEntry(): string | URL {
  const here = import.meta.url;
  if (here.includes("$bunfs") || here.includes("~BUN")) {
    const root = here.includes("~BUN") ? "B:/~BUN/root" : "/$bunfs/root";
    for (const p of ["sandbox/worker.js", "src/sandbox/worker.js", "worker.js"]) {
      if (existsSync(`${root}/${p}`)) return `${root}/${p}`;
    }
  }
  return new URL("./worker.ts", import.meta.url);
}

export class ScriptPool {
  readonly kv: KvService | null;
  private readonly size: number;
  private readonly slots: Slot[] = [];
  /** Workers finishing their jobs after a contained native stack overflow (see retire()). */
  private readonly retiring = new Set<Slot>();
  /** Owners hogging (see "Fairness"; updated by check()). */
  private hogs = new Set<Owner>();
  private extraSpawned = 0;
  /** Jobs waiting for a worker, per owner. */
  private readonly queues = new OwnerQueues<Job>();
  private readonly ownerQueueLimit: number;
  /** Jobs one owner may hold in workers (running + parked + offered): 3/4 of what the workers hold, so a user's
   *  thousand jobs parked on timers or slow fetches leave room for others. */
  private readonly ownerHeldCap: number;
  /** Time base of the workers' RUN_CELL (Date.now() at creation). */
  private readonly epoch = Date.now();
  /** More than one owner used the pool until then (see CONTENDED_CELL). */
  private contendedUntil = 0;
  private seq = 0;
  /** Prefetched jobs not yet claimed (they count as queued). */
  private prefetched = 0;
  private spawned = 0;
  private closed = false;
  /** QuickJS compiled once (by the first worker) and shared with every later worker; null until then. */
  private wasmModule: WebAssembly.Module | null = null;
  /** A worker is compiling it: the others' init waits for it. */
  private compiling: Slot | null = null;
  private dispatchTick = 0;
  /** Offers made (their tokens). */
  private offers = 0;
  /** A flush of the workers' outboxes is scheduled. */
  private flushing = false;
  /** Executions that started from their source's memory image (the compiled script included). */
  private imageRuns = 0;
  /** A worker reported a fallback (engine/quickjs-internals.ts): logged once per pool. */
  private warnedFallback = false;
  private readonly fetch: OutboundFetch;
  private readonly workerMemoryMib: number;
  private readonly snapshot: boolean;
  private readonly recycleBytes: number;
  private readonly maxJobs: number;
  private readonly grace: number;
  /** One ref'd timer while any job is queued or in flight: keeps the process alive (workers are unref'd) and
   *  checks the backstop of in-flight jobs. */
  private watch: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly opts: ScriptPoolOptions) {
    this.size = opts.workers > 0 ? opts.workers : Math.max(1, availableParallelism());
    this.fetch = opts.fetch ?? outboundFetch;
    this.workerMemoryMib = opts.workerMemoryMib ?? 512;
    this.snapshot = opts.snapshot ?? true;
    this.recycleBytes = (opts.recycleMib ?? 192) * MiB;
    this.maxJobs = opts.maxJobsPerWorker ?? 64;
    this.grace = opts.backstopGraceMs ?? 3000;
    this.ownerQueueLimit = Math.max(1, Math.min(opts.queueLimit, opts.queueLimitPerOwner ?? opts.queueLimit));
    this.ownerHeldCap = Math.max(1, Math.floor((this.size * this.maxJobs * 3) / 4));
    this.kv = opts.db ? new KvService(opts.db, opts.clock ?? systemClock) : null;
    this.kv?.start();
  }

  /** Workers start on first use, so processes that never run a script (CLI commands) pay nothing. */
  private startWorkers() {
    if (this.slots.length > 0 || this.closed) return;
    for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
  }

  /** Workers, queued jobs (including prefetched ones not yet started), jobs in workers (running or parked),
   *  whether the workers share one compiled QuickJS module, and how many executions started from the memory image
   *  of their source (see engine.ts). */
  stats(): { workers: number; ready: number; queued: number; inFlight: number; replaced: number; retiring: number; extra: number; sharedModule: boolean; snapshotWorkers: number; imageRuns: number } {
    return {
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

  /** Resolves when every worker has loaded its QuickJS module (the pool accepts jobs before that). */
  async ready(timeoutMs = 10_000): Promise<void> {
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
    if (this.queues.named > 1) this.contended(Date.now());
    if (this.full(owner)) {
      // Prefetched jobs may have been claimed since this thread last looked.
      for (const slot of this.slots) this.refresh(slot);
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
        abort: null,
        backstopAt: Infinity,
        dispatchedAt: 0,
        offered: false,
        prefetched: false,
        owner,
        cell: -1,
        token: 0,
        frozenBackstop: null,
      };
      this.queues.push(job);
      this.busy();
      this.dispatch();
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
        this.unoffer(slot, job);
        this.settle(job, failure("internal", "Script pool is closed"));
      }
      slot.jobs.clear();
      kill(slot);
    }
  }

  // ---------------------------------------------------------------- workers

  /** Starts a worker. The first one compiles QuickJS and hands the WebAssembly.Module back with its "ready"; the
   *  others (and replacements) instantiate that module (no second compile, and JSC shares the module's tiered-up
   *  code between threads). Their threads start at once; only their init message waits for the module. */
  private spawn(extra = false): Slot {
    const worker = new Worker(workerEntry());
    const cells = new Int32Array(new SharedArrayBuffer((OFFER_CELLS + 4) * 4));
    if (this.contendedUntil > Date.now()) Atomics.store(cells, CONTENDED_CELL, 1);
    const channel = new MessageChannel();
    const slot: Slot = {
      n: ++this.spawned,
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
      if (!isWire(data)) this.onMessage(slot, data);
      else for (const one of unbatch(data)) this.onDone(slot, one);
    };
    worker.onerror = (e: ErrorEvent) => this.replace(slot, `worker error: ${e.message}`);
    worker.addEventListener("close", () => this.replace(slot, "worker exited"));
    worker.unref();
    if (this.wasmModule || !this.compiling) {
      if (!this.wasmModule) this.compiling = slot;
      this.init(slot);
    } else {
      slot.awaitingModule = true;
    }
    return slot;
  }

  private init(slot: Slot): void {
    slot.awaitingModule = false;
    const port = slot.workerPort;
    if (port === null) return;
    slot.workerPort = null;
    const init: MainToWorker = {
      t: "init",
      memoryMib: this.workerMemoryMib,
      cells: slot.cells.buffer as SharedArrayBuffer,
      mailCell: MAIL_CELL,
      runCell: RUN_CELL,
      epoch: this.epoch,
      replies: port,
      module: this.wasmModule ?? undefined,
      snapshot: this.snapshot,
      ...(this.opts.quickjsVersions ? { quickjs: this.opts.quickjsVersions } : {}),
    };
    slot.worker.postMessage(init, [port]);
  }

  /** The compiling worker is done (module null: it failed): release the workers waiting for it. */
  private compiled(module: WebAssembly.Module | null): void {
    this.compiling = null;
    if (module) this.wasmModule = module;
    const waiting = this.slots.filter((s) => s.awaitingModule && !s.dead);
    if (!module && waiting.length > 0) this.compiling = waiting[0]!;
    for (const s of waiting) this.init(s);
  }

  /** Terminates `slot` (if still live), fails its unfinished jobs and starts a replacement. */
  private replace(slot: Slot, reason: string, stuck?: Job): void {
    if (slot.dead) return;
    slot.dead = true;
    this.retiring.delete(slot);
    if (!this.closed) this.opts.log.warn("sandbox worker replaced", { reason: reason.slice(0, 200) });
    if (this.compiling === slot) this.compiled(null);
    // Offers the worker never claimed go back to their owners' queues, in their place.
    for (const job of [...slot.offered]) if (this.revoke(slot, job) && !this.closed) this.queues.push(job);
    for (const job of slot.jobs.values()) {
      this.left(job);
      this.settle(job, job === stuck ? failure("timeout", "Script timed out") : failure("internal", "Script worker failed and was restarted; try again"));
    }
    slot.jobs.clear();
    kill(slot);
    this.succeed(slot);
    this.dispatch();
  }

  /** A replacement takes `slot`'s place in `slots` (an extra worker is not replaced). */
  private succeed(slot: Slot): void {
    const i = this.slots.indexOf(slot);
    if (i < 0 || this.closed) return;
    if (slot.extra) this.slots.splice(i, 1);
    else this.slots[i] = this.spawn();
  }

  /** The worker contained a native stack overflow while other jobs were parked on it (engine.ts contain()): they
   *  run to their end there, it gets no new job, a replacement takes its place now, and it is ended once idle. At
   *  most as many workers as the pool has retire at once; beyond that one is replaced at once (its jobs fail as
   *  for a poisoned worker), so a flood of such scripts cannot pile up threads. */
  private retire(slot: Slot, reason: string): void {
    if (slot.dead || slot.retiring) return;
    if (this.retiring.size >= this.size) {
      this.replace(slot, `${reason} (too many workers retiring)`);
      return;
    }
    this.opts.log.warn("sandbox worker retiring", { reason: reason.slice(0, 200), jobs: slot.jobs.size });
    slot.retiring = true;
    slot.stuck = false;
    this.retiring.add(slot);
    // offers it will not claim go back to their owners' queues
    for (const job of [...slot.offered]) if (this.revoke(slot, job)) this.queues.push(job);
    if (this.compiling === slot) this.compiled(null);
    this.succeed(slot);
    this.retired(slot);
    this.dispatch();
  }

  /** Ends a retiring worker once it holds no job. */
  private retired(slot: Slot): void {
    if (!slot.retiring || slot.dead || slot.jobs.size > 0) return;
    slot.dead = true;
    this.retiring.delete(slot);
    kill(slot);
  }

  /** Notes the claims of offered jobs that the worker made since this thread last looked. */
  private refresh(slot: Slot): void {
    for (let i = slot.offered.length - 1; i >= 0; i--) {
      const job = slot.offered[i]!;
      if (Atomics.load(slot.cells, job.cell) !== job.token) this.claimed(slot, job);
    }
  }

  /** `job` (offered to `slot`) was claimed: it runs now, its deadline runs from about now. */
  private claimed(slot: Slot, job: Job): void {
    if (!job.offered) return;
    this.unoffer(slot, job);
    slot.active++;
    job.dispatchedAt = Date.now();
    job.backstopAt = job.dispatchedAt + this.timeoutOf(job) + this.grace;
  }

  /** Drops `job` from `slot`'s offers (claimed, revoked or ended). */
  private unoffer(slot: Slot, job: Job): void {
    if (!job.offered) return;
    job.offered = false;
    if (job.prefetched) {
      job.prefetched = false;
      this.prefetched--;
      job.owner.prefetched--;
    }
    const i = slot.offered.indexOf(job);
    if (i >= 0) slot.offered.splice(i, 1);
  }

  /** Takes back an offer the worker has not claimed; false when it already did (then it counts as claimed). */
  private revoke(slot: Slot, job: Job): boolean {
    if (!job.offered) return false;
    if (Atomics.compareExchange(slot.cells, job.cell, job.token, 0) !== job.token) {
      this.claimed(slot, job);
      return false;
    }
    this.unoffer(slot, job);
    slot.jobs.delete(job.id);
    job.slot = null;
    job.owner.held--;
    job.owner.running--;
    return true;
  }

  /** `job` left its worker (done, failed, or its worker gone): its owner's counts. */
  private left(job: Job): void {
    const o = job.owner;
    o.held--;
    if (!job.parked) o.running--;
    if (o.held === 0) this.queues.release(o, Date.now());
  }

  private dispatch(): void {
    if (this.closed) return;
    for (const s of this.slots) this.refresh(s);
    /** Workers the waiting jobs may not go to (an extra worker while only hogs wait). */
    let skip: Slot[] | null = null;
    while (this.queues.size > 0 || this.prefetched > 0) {
      // the least loaded live worker: running + offered jobs; ties go to the one holding fewer jobs
      let best: Slot | null = null;
      let bestLoad = Infinity;
      for (const s of this.slots) {
        if (!s.ready || s.dead || s.stuck || s.jobs.size >= this.maxJobs || s.offered.length >= OFFER_DEPTH) continue;
        const load = s.active + s.offered.length;
        if (load >= OFFER_DEPTH || (skip !== null && skip.includes(s))) continue;
        // While an owner hogs, no job waits behind one of its jobs: that one may run long.
        if (load > 0 && this.hogs.size > 0 && this.holdsHog(s)) continue;
        // ties: fewer jobs held (parked ones), then the worker that ran last (its caches are warm)
        if (load < bestLoad || (load === bestLoad && (s.jobs.size < best!.jobs.size || (s.jobs.size === best!.jobs.size && s.lastIdleDispatch > best!.lastIdleDispatch)))) {
          best = s;
          bestLoad = load;
        }
      }
      if (!best) {
        if (this.makeRoom()) continue;
        return;
      }
      const eligible = best.extra ? this.forExtra : this.forRegular;
      if (bestLoad === 0) {
        // An idle worker: the oldest waiting job, which may be one offered to a busy worker and not yet claimed.
        let oldest: Job | null = null;
        for (const s of this.slots) {
          if (s === best) continue;
          for (const j of s.offered) if (j.prefetched && (!oldest || j.id < oldest.id)) oldest = j;
        }
        if (oldest && eligible(oldest.owner) >= 0) {
          const head = this.queues.next(eligible, true);
          if ((!head || oldest.id < head.id) && this.revoke(oldest.slot!, oldest)) {
            best.lastIdleDispatch = ++this.dispatchTick;
            this.assign(best, oldest);
            continue;
          }
        }
      }
      const job = this.queues.next(eligible);
      if (!job) {
        (skip ??= []).push(best);
        continue;
      }
      if (bestLoad === 0) best.lastIdleDispatch = ++this.dispatchTick;
      // not behind the offers of an owner running many more jobs: those go back and follow it
      if (best.offered.length > 0 && job.owner.running < 4) this.takeBack(best, (j) => j.prefetched && j.owner !== job.owner && j.owner.running >= 2 * job.owner.running + 2);
      this.assign(best, job);
    }
  }

  /** Every worker's offers are taken while the next waiting job belongs to an owner running few jobs: the offers
   *  of one worker that belong to owners running many more (at least twice as many, and 2 more) go back to their
   *  queues, so that job is offered first instead of after them (a flood of one user's short jobs fills every
   *  worker's OFFER_DEPTH; another user's job would wait behind up to that many). dispatch() does the same for the
   *  worker a job goes to. True if any went back. */
  private makeRoom(): boolean {
    const head = this.queues.next(this.forRegular, true);
    if (head === undefined) return false;
    const mine = head.owner.running;
    const over = (j: Job) => j.prefetched && j.owner !== head.owner && j.owner.running >= 2 * mine + 2;
    let best: Slot | null = null;
    let most = 0;
    for (const s of this.slots) {
      if (!s.ready || s.dead || s.stuck || s.extra || s.jobs.size >= this.maxJobs) continue;
      let n = 0;
      for (const j of s.offered) if (over(j)) n++;
      if (n > most) {
        best = s;
        most = n;
      }
    }
    return best !== null && this.takeBack(best, over);
  }

  /** Revokes `slot`'s unclaimed offers that `which` selects; they wait in their queues again. True if any did. */
  private takeBack(slot: Slot, which: (j: Job) => boolean): boolean {
    let back = false;
    for (const j of [...slot.offered]) {
      if (which(j) && this.revoke(slot, j)) {
        this.queues.push(j);
        back = true;
      }
    }
    return back;
  }

  /** Which waiting owners a regular worker takes, in which rank (see OwnerQueues.next): hogs after the others, and
   *  nobody beyond their share of the workers' jobs. An extra worker takes no job of a "wide" owner (see "Fairness"). */
  private readonly forRegular = (o: Owner): number => (o.held >= this.ownerHeldCap ? -1 : this.hogs.size > 0 && this.hogs.has(o) ? 1 : 0);
  private readonly forExtra = (o: Owner): number => (o.wideUntil > Date.now() ? -1 : this.forRegular(o));

  /** `slot` runs (or was offered) a job of a hogging owner. */
  private holdsHog(slot: Slot): boolean {
    for (const j of slot.jobs.values()) if (!j.parked && this.hogs.has(j.owner)) return true;
    return false;
  }

  /** More than one owner uses the pool: the workers' long slices lower their priority (CONTENDED_CELL). */
  private contended(now: number): void {
    if (this.contendedUntil === 0) for (const s of [...this.slots, ...this.retiring]) Atomics.store(s.cells, CONTENDED_CELL, 1);
    this.contendedUntil = now + CONTENDED_MS;
  }

  /** `slot`'s worker runs a slice that started more than STUCK_MS ago (as the worker publishes it: this thread's
   *  view of claims, parks and results lags when it is busy, and a finished job must not count as a long one). */
  private runsLong(slot: Slot, now: number): boolean {
    if (Atomics.load(slot.cells, RUN_CELL) === 0) return false;
    return ((((now - this.epoch) | 0) - Atomics.load(slot.cells, RUN_CELL + 1)) | 0) > STUCK_MS;
  }

  /** The job of the slice `slot`'s worker runs (see runsLong), if this thread still knows it. */
  private runningJob(slot: Slot): Job | undefined {
    const token = Atomics.load(slot.cells, RUN_CELL);
    if (token === 0) return undefined;
    for (const j of slot.jobs.values()) if (j.token === token) return j;
    return undefined;
  }

  private timeoutOf(job: Job): number {
    return Math.max(1, Math.floor(job.req.limits.timeoutMs));
  }

  private assign(slot: Slot, job: Job): void {
    let cell = -1;
    for (let c = 0; c < OFFER_CELLS && cell < 0; c++) {
      if (Atomics.load(slot.cells, c) === 0 && !slot.offered.some((j) => j.cell === c)) cell = c;
    }
    if (cell < 0) {
      // cannot happen (OFFER_DEPTH < OFFER_CELLS); keep the job queued
      this.queues.push(job);
      return;
    }
    job.slot = slot;
    job.dispatchedAt = Date.now();
    job.cell = cell;
    // a token of this offer, never of an earlier offer of the same job: a revoked offer's entry in a batch the
    // worker has not reached yet must not claim the job's new offer in the same cell (it would run before the
    // jobs offered ahead of it, see takeBack())
    job.token = (++this.offers % 0x7ffffffe) + 1;
    job.offered = true;
    job.prefetched = slot.active + slot.offered.length > 0;
    if (job.prefetched) {
      this.prefetched++;
      job.owner.prefetched++;
    }
    job.owner.held++;
    job.owner.running++;
    // An idle worker claims at once; a prefetched job's backstop starts once it can be claimed (see check()).
    job.backstopAt = job.prefetched ? Infinity : job.dispatchedAt + this.timeoutOf(job) + this.grace;
    slot.offered.push(job);
    slot.jobs.set(job.id, job);
    const { req } = job;
    const msg = encodeRun(
      {
        id: job.id,
        cell,
        token: job.token,
        source: req.source,
        memoryBytes: job.memoryBytes,
        timeoutMs: this.timeoutOf(job),
        stackBytes: Math.max(16, Math.floor(req.limits.stackKiB ?? DEFAULT_STACK_KIB)) * 1024,
        kv: req.kvOwner !== undefined,
        proxy: req.proxy !== false,
        owner: typeof req.owner === "string" ? req.owner : "",
      },
      job.context,
    );
    Atomics.store(slot.cells, cell, job.token);
    slot.outbox.push({ job, msg });
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(this.flush);
    }
  }

  /** Posts the run messages of this turn, one message per worker. */
  private readonly flush = (): void => {
    this.flushing = false;
    for (const slot of this.slots) {
      if (slot.outbox.length === 0) continue;
      const out = slot.outbox;
      slot.outbox = [];
      if (slot.dead) continue; // its jobs were ended or moved by replace()
      try {
        slot.worker.postMessage(batch(out.map((o) => o.msg)));
      } catch {
        // byte arrays that cannot be cloned (a detached buffer): find the job(s), post the others
        for (const { job, msg } of out) {
          if (job.slot !== slot || !job.offered) continue;
          try {
            slot.worker.postMessage(msg);
          } catch (err) {
            Atomics.store(slot.cells, job.cell, 0);
            this.unoffer(slot, job);
            slot.jobs.delete(job.id);
            this.left(job);
            this.settle(job, failure("error", `Script context must be data: ${err instanceof Error ? err.message : String(err)}`));
          }
        }
      }
    }
  };

  private busy(): void {
    if (this.watch || this.closed) return;
    this.watch = setInterval(() => this.check(), CHECK_MS);
  }

  /** Backstop of in-flight jobs, fairness (see "Fairness"); stops the timer once the pool is idle. */
  private check(): void {
    const now = Date.now();
    let pending = this.queues.size;
    let moved = false;
    const hogs = new Set<Owner>();
    /** Workers held by a long job, per owner. */
    const held = new Map<Owner, number>();
    for (const slot of [...this.slots, ...this.retiring]) {
      this.refresh(slot);
      const long = !slot.dead && this.runsLong(slot, now) ? this.runningJob(slot) : undefined;
      if (long !== undefined) {
        long.owner.hogUntil = now + HOG_MS;
        hogs.add(long.owner);
        const n = (held.get(long.owner) ?? 0) + 1;
        held.set(long.owner, n);
        if (n >= this.size) long.owner.wideUntil = now + HOG_MS;
      }
      // a prefetched job whose worker has nothing running must be claimed by now + its time
      if (slot.active === 0) for (const job of slot.offered) if (job.backstopAt === Infinity) job.backstopAt = now + this.timeoutOf(job) + this.grace;
      // A long-running job: the jobs offered behind it run elsewhere (a CPU-bound script delays only itself).
      const wasStuck = slot.stuck;
      slot.stuck = !slot.dead && this.runsLong(slot, now);
      // its long slice ended without a result (it parked): it takes jobs again
      if (wasStuck && !slot.stuck) moved = true;
      if (slot.stuck && slot.offered.length > 0) {
        for (const job of [...slot.offered]) {
          if (this.revoke(slot, job)) {
            this.queues.push(job);
            moved = true;
          }
        }
      }
      for (const job of slot.jobs.values()) {
        if (now > job.backstopAt) {
          this.replace(slot, "a job outlived its deadline (stuck worker)", job);
          break;
        }
      }
      pending += slot.jobs.size;
      if (slot.jobs.size > 0) slot.busyAt = now;
    }
    for (const o of this.hogs) {
      if (o.hogUntil > now) hogs.add(o);
      else this.queues.release(o, now);
    }
    this.hogs = hogs;
    if (this.queues.named > 1) this.contended(now);
    else if (this.contendedUntil !== 0 && now > this.contendedUntil) {
      this.contendedUntil = 0;
      for (const s of [...this.slots, ...this.retiring]) Atomics.store(s.cells, CONTENDED_CELL, 0);
    }
    this.fairShare(now);
    if (moved) this.dispatch();
    // (an extra worker keeps the timer until fairShare() ends it)
    if (pending === 0 && this.hogs.size === 0 && this.watch && !this.slots.some((s) => s.extra)) {
      clearInterval(this.watch);
      this.watch = null;
    }
  }

  /** Starts an extra worker when every worker is held by a long job while another owner's job waits; ends extra
   *  workers idle for EXTRA_IDLE_MS (EXTRA_HOG_IDLE_MS while an owner hogs; see "Fairness"). */
  private fairShare(now: number): void {
    if (this.closed) return;
    const idleFor = this.hogs.size > 0 ? EXTRA_HOG_IDLE_MS : EXTRA_IDLE_MS;
    for (const s of [...this.slots]) {
      if (s.extra && !s.dead && s.jobs.size === 0 && now - s.busyAt > idleFor) {
        s.dead = true;
        this.slots.splice(this.slots.indexOf(s), 1);
        kill(s);
      }
    }
    if (this.queues.size === 0 || this.slots.some((s) => !s.dead && (!s.ready || !s.stuck))) return;
    if (this.slots.filter((s) => s.extra).length >= this.size) return;
    if (!this.queues.some((o) => this.forExtra(o) >= 0)) return;
    this.extraSpawned++;
    this.slots.push(this.spawn(true));
  }

  private onMessage(slot: Slot, msg: WorkerToMain): void {
    if (slot.dead) return;
    switch (msg.t) {
      case "ready":
        slot.ready = true;
        slot.snapshot = msg.snapshot;
        if (msg.fallback !== undefined && !this.warnedFallback) {
          // once per pool: every worker of this build says the same
          this.warnedFallback = true;
          this.opts.log.warn("sandbox: QuickJS runs without its verified fast internals (slower; see src/sandbox/engine/quickjs-internals.ts)", { reason: msg.fallback.slice(0, 300) });
        }
        if (this.compiling === slot) this.compiled(msg.module ?? null);
        this.dispatch();
        return;
      case "park": {
        const job = slot.jobs.get(msg.id);
        if (job) this.claimed(slot, job);
        if (job && !job.parked) {
          job.parked = true;
          slot.active--;
          job.owner.running--;
          if (slot.stuck) slot.stuck = this.runsLong(slot, Date.now()); // a long slice that parked
          this.dispatch();
        }
        return;
      }
      case "wake": {
        const job = slot.jobs.get(msg.id);
        if (job) this.claimed(slot, job);
        if (job && job.parked) {
          job.parked = false;
          slot.active++;
          job.owner.running++;
        }
        return;
      }
      case "freeze":
        // held below a job resumed from the interrupt handler: it cannot run, its deadline stops (engine.ts)
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
        void this.operation(slot, msg);
        return;
      case "retire":
        this.settleReported(slot, msg.results);
        this.retire(slot, msg.reason);
        return;
      case "poisoned":
        this.settleReported(slot, msg.results);
        this.replace(slot, msg.reason);
        return;
    }
  }

  /** Outcomes a worker reported with its retirement or poisoning. */
  private settleReported(slot: Slot, results: { id: number; error: ScriptError; logs: LogEntry[] }[]): void {
    for (const r of results) {
      const job = slot.jobs.get(r.id);
      if (!job) continue;
      this.claimed(slot, job);
      slot.jobs.delete(r.id);
      if (!job.parked) slot.active--;
      this.left(job);
      this.settle(job, { ok: false, error: r.error, logs: r.logs, durationMs: Math.max(0, Date.now() - job.dispatchedAt) });
    }
  }

  /** A job's result (wire.ts). */
  private onDone(slot: Slot, data: string | unknown[]): void {
    if (slot.dead) return;
    let done: ReturnType<typeof decodeDone>;
    try {
      done = decodeDone(data);
    } catch (err) {
      // cannot happen (the worker's JSON.stringify made the text): the worker is not trusted any more
      this.replace(slot, `unreadable result: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    const { header: msg, value } = done;
    if (msg.image) this.imageRuns++;
    const job = slot.jobs.get(msg.id);
    slot.heapBytes = msg.heapBytes;
    if (!job) return;
    this.claimed(slot, job);
    slot.jobs.delete(msg.id);
    if (!job.parked) slot.active--;
    this.left(job);
    // a job ended: the worker takes offers again unless another one still runs long (a job resumed above a loop)
    if (slot.stuck) slot.stuck = this.runsLong(slot, Date.now());
    const result: ScriptRunResult = msg.ok
      ? { ok: true, value, logs: msg.logs, durationMs: msg.durationMs }
      : { ok: false, error: msg.error!, logs: msg.logs, durationMs: msg.durationMs };
    this.settle(job, result);
    if (slot.retiring) {
      this.retired(slot);
      return;
    }
    if (slot.jobs.size === 0) {
      if (slot.heapBytes > this.recycleBytes) {
        this.replace(slot, `recycled: WebAssembly memory ${Math.round(slot.heapBytes / MiB)} MiB`);
        return;
      }
    }
    this.dispatch();
  }

  private settle(job: Job, result: ScriptRunResult): void {
    job.backstopAt = Infinity;
    job.abort?.abort();
    job.resolve(result);
  }

  // ---------------------------------------------------------------- host operations

  private async operation(slot: Slot, msg: Extract<WorkerToMain, { t: "op" }>): Promise<void> {
    const job = slot.jobs.get(msg.id);
    if (!job) return;
    this.claimed(slot, job);
    let reply: OpReply;
    try {
      const value = await this.perform(job, msg);
      reply = { t: "op-result", id: msg.id, opId: msg.opId, ok: true, value };
    } catch (err) {
      reply = { t: "op-result", id: msg.id, opId: msg.opId, ok: false, error: opError(err, this.opts.log) };
    }
    if (slot.dead || slot.jobs.get(msg.id) !== job) return;
    if (job.parked) {
      job.parked = false;
      slot.active++;
      job.owner.running++;
    }
    slot.replies.postMessage(reply);
    // counted after it is posted: a worker that sees the count can take it (engine.ts takeMail)
    Atomics.add(slot.cells, MAIL_CELL, 1);
  }

  private perform(job: Job, msg: Extract<WorkerToMain, { t: "op" }>): Promise<unknown> {
    if (msg.op === "kv") {
      if (job.req.kvOwner === undefined) throw new KvError("Secbox.kv is not available to this script");
      if (!this.kv) throw new KvError("Secbox.kv is not available (no database)");
      if (++job.kvOps > job.kvLimits.opsPerRun) throw new KvError(`KV operation budget exhausted (${job.kvLimits.opsPerRun} per run)`);
      job.abort ??= new AbortController();
      return this.kv.call(job.req.kvOwner, msg.args, job.kvLimits, msg.remainingMs, job.abort.signal);
    }
    if (job.req.proxy === false) throw new ProxyError("E_INVALID", "op_proxy_request is not available to this script");
    return runProxy(msg.args, {
      remainingMs: msg.remainingMs,
      defaultTimeoutMs: job.req.limits.proxyTimeoutMs,
      maxBodyBytes: job.req.limits.maxProxyBodyBytes,
      allowPrivate: this.opts.allowPrivate,
      fetch: this.fetch,
    });
  }
}

function opError(err: unknown, log: Logger): { message: string; code?: string } {
  if (err instanceof ProxyError) return { message: err.message, code: err.code };
  if (err instanceof KvError) return { message: err.message };
  log.error("sandbox host operation failed", { error: err instanceof Error ? err.message : String(err) });
  return { message: "Internal error in a sandbox host operation" };
}

/** Ends a worker thread and its op-result port. */
function kill(slot: Slot): void {
  slot.worker.terminate();
  slot.replies.close();
}

function failure(kind: ScriptError["kind"], message: string): ScriptRunResult {
  return { ok: false, error: { kind, message }, logs: [], durationMs: 0 };
}
