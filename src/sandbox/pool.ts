// The script pool (supplement §11.6): the only place user scripts run. A fixed number of Bun worker threads, each
// with one QuickJS WebAssembly module, a fresh runtime + context per execution; a bounded FIFO queue; host
// operations that need the database or the network (Secbox.kv, op_proxy_request) answered here on the main thread.
// A script never runs on the main thread, so a busy or hostile one cannot block the API event loop.
//
// Scheduling: a worker takes a new job only while none of its jobs is running (jobs parked on a host operation or
// timer do not count), so a CPU-bound script delays nothing but itself; a worker holds at most maxJobsPerWorker
// parked jobs. Queue wait does not count against a job's limits.
//
// Failure handling: a worker that reports itself poisoned (a trap inside the WebAssembly code), errors, exits, or
// does not answer a job by its deadline + backstopGraceMs is terminated and replaced; its unfinished jobs end with
// kind "internal" (the stuck one with "timeout"). A worker whose WebAssembly memory grew past recycleMib is
// replaced once idle, returning that memory to the system.
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import type { Db } from "../platform/db/db";
import type { Logger } from "../platform/log";
import { outboundFetch } from "../platform/net/client";
import { systemClock, type Clock } from "../platform/runtime";
import { KvError, KvService } from "./kv";
import type { MainToWorker, OpReply, WorkerToMain } from "./protocol";
import { ProxyError, runProxy, type OutboundFetch } from "./proxy";
import { DEFAULT_KV_LIMITS, DEFAULT_STACK_KIB, type KvLimits, type ScriptError, type ScriptRunRequest, type ScriptRunResult } from "./types";

export interface ScriptPoolOptions {
  /** `scripts.workers`; 0 = number of CPUs. */
  workers: number;
  /** `scripts.queue_limit`: jobs waiting for a worker; beyond it run() answers `queue_full` at once. */
  queueLimit: number;
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
}

interface Job {
  id: number;
  req: ScriptRunRequest;
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
}

interface Slot {
  n: number;
  worker: Worker;
  ready: boolean;
  /** Terminated or being replaced: takes no jobs, its events are ignored. */
  dead: boolean;
  jobs: Map<number, Job>;
  active: number;
  heapBytes: number;
}

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

function bytesIn(v: unknown, depth = 0): number {
  if (v === null || typeof v !== "object" || depth > 64) return 0;
  if (v instanceof ArrayBuffer) return v.byteLength;
  if (ArrayBuffer.isView(v)) return v.byteLength;
  let n = 0;
  if (Array.isArray(v)) for (const x of v) n += bytesIn(x, depth + 1);
  else for (const k of Object.keys(v)) n += bytesIn((v as Record<string, unknown>)[k], depth + 1);
  return n;
}

export class ScriptPool {
  readonly kv: KvService | null;
  private readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private seq = 0;
  private spawned = 0;
  private closed = false;
  private readonly fetch: OutboundFetch;
  private readonly workerMemoryMib: number;
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
    this.recycleBytes = (opts.recycleMib ?? 192) * MiB;
    this.maxJobs = opts.maxJobsPerWorker ?? 64;
    this.grace = opts.backstopGraceMs ?? 3000;
    this.kv = opts.db ? new KvService(opts.db, opts.clock ?? systemClock) : null;
    this.kv?.start();
  }

  /** Workers start on first use, so processes that never run a script (CLI commands) pay nothing. */
  private startWorkers() {
    if (this.slots.length > 0 || this.closed) return;
    for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
  }

  /** Workers, queued jobs and jobs in workers (running or parked). */
  stats(): { workers: number; ready: number; queued: number; inFlight: number; replaced: number } {
    return {
      workers: this.slots.length,
      ready: this.slots.filter((s) => s.ready && !s.dead).length,
      queued: this.queue.length,
      inFlight: this.slots.reduce((n, s) => n + s.jobs.size, 0),
      replaced: Math.max(0, this.spawned - this.size),
    };
  }

  /** Resolves when every worker has loaded its QuickJS module (the pool accepts jobs before that). */
  async ready(timeoutMs = 10_000): Promise<void> {
    this.startWorkers();
    const end = Date.now() + timeoutMs;
    while (this.slots.some((s) => !s.ready)) {
      if (Date.now() > end) throw new Error("sandbox workers did not start");
      await Bun.sleep(5);
    }
  }

  run(req: ScriptRunRequest): Promise<ScriptRunResult> {
    if (this.closed) return Promise.resolve(failure("internal", "Script pool is closed"));
    if (typeof req.source !== "string") return Promise.resolve(failure("error", "Script source must be a string"));
    if (this.queue.length >= this.opts.queueLimit) return Promise.resolve(failure("queue_full", "Script queue is full"));
    this.startWorkers();
    const memoryMib = Number.isFinite(req.limits.memoryMib) && req.limits.memoryMib > 0 ? req.limits.memoryMib : 10;
    return new Promise<ScriptRunResult>((resolve) => {
      const job: Job = {
        id: ++this.seq,
        req,
        memoryBytes: Math.floor(memoryMib * MiB) + bytesIn(req.context),
        kvLimits: { ...DEFAULT_KV_LIMITS, ...req.kvLimits },
        resolve,
        slot: null,
        parked: false,
        kvOps: 0,
        abort: null,
        backstopAt: Infinity,
        dispatchedAt: 0,
      };
      this.queue.push(job);
      this.busy();
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.kv?.stop();
    if (this.watch) clearInterval(this.watch);
    this.watch = null;
    for (const job of this.queue.splice(0)) job.resolve(failure("internal", "Script pool is closed"));
    for (const slot of this.slots) {
      slot.dead = true;
      for (const job of slot.jobs.values()) this.settle(job, failure("internal", "Script pool is closed"));
      slot.jobs.clear();
      slot.worker.terminate();
    }
  }

  // ---------------------------------------------------------------- workers

  private spawn(): Slot {
    const worker = new Worker(workerEntry());
    const slot: Slot = { n: ++this.spawned, worker, ready: false, dead: false, jobs: new Map(), active: 0, heapBytes: 0 };
    worker.onmessage = (e: MessageEvent<WorkerToMain>) => this.onMessage(slot, e.data);
    worker.onerror = (e: ErrorEvent) => this.replace(slot, `worker error: ${e.message}`);
    worker.addEventListener("close", () => this.replace(slot, "worker exited"));
    worker.unref();
    const init: MainToWorker = { t: "init", memoryMib: this.workerMemoryMib };
    worker.postMessage(init);
    return slot;
  }

  /** Terminates `slot` (if still live), fails its unfinished jobs and starts a replacement. */
  private replace(slot: Slot, reason: string, stuck?: Job): void {
    if (slot.dead) return;
    slot.dead = true;
    if (!this.closed) this.opts.log.warn("sandbox worker replaced", { reason: reason.slice(0, 200) });
    for (const job of slot.jobs.values()) {
      this.settle(job, job === stuck ? failure("timeout", "Script timed out") : failure("internal", "Script worker failed and was restarted; try again"));
    }
    slot.jobs.clear();
    slot.worker.terminate();
    const i = this.slots.indexOf(slot);
    if (i >= 0 && !this.closed) this.slots[i] = this.spawn();
    this.dispatch();
  }

  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      let best: Slot | null = null;
      for (const s of this.slots) {
        if (!s.ready || s.dead || s.active > 0 || s.jobs.size >= this.maxJobs) continue;
        if (!best || s.jobs.size < best.jobs.size) best = s;
      }
      if (!best) return;
      const job = this.queue.shift()!;
      this.assign(best, job);
    }
  }

  private assign(slot: Slot, job: Job): void {
    job.slot = slot;
    job.dispatchedAt = Date.now();
    slot.jobs.set(job.id, job);
    slot.active++;
    const { req } = job;
    const msg: MainToWorker = {
      t: "run",
      id: job.id,
      source: req.source,
      context: req.context,
      memoryBytes: job.memoryBytes,
      timeoutMs: Math.max(1, Math.floor(req.limits.timeoutMs)),
      stackBytes: Math.max(16, Math.floor(req.limits.stackKiB ?? DEFAULT_STACK_KIB)) * 1024,
      kv: req.kvOwner !== undefined,
      proxy: req.proxy !== false,
    };
    try {
      slot.worker.postMessage(msg);
    } catch (err) {
      // Context that cannot be cloned (functions, symbols, class instances with private state).
      slot.jobs.delete(job.id);
      slot.active--;
      this.settle(job, failure("error", `Script context must be data: ${err instanceof Error ? err.message : String(err)}`));
      return;
    }
    job.backstopAt = job.dispatchedAt + msg.timeoutMs + this.grace;
  }

  private busy(): void {
    if (this.watch || this.closed) return;
    this.watch = setInterval(() => this.check(), 250);
  }

  /** Backstop of in-flight jobs; stops the timer once the pool is idle. */
  private check(): void {
    const now = Date.now();
    let pending = this.queue.length;
    for (const slot of [...this.slots]) {
      for (const job of slot.jobs.values()) {
        if (now > job.backstopAt) {
          this.replace(slot, "a job outlived its deadline (stuck worker)", job);
          break;
        }
      }
      pending += slot.jobs.size;
    }
    if (pending === 0 && this.watch) {
      clearInterval(this.watch);
      this.watch = null;
    }
  }

  private onMessage(slot: Slot, msg: WorkerToMain): void {
    if (slot.dead) return;
    switch (msg.t) {
      case "ready":
        slot.ready = true;
        this.dispatch();
        return;
      case "park": {
        const job = slot.jobs.get(msg.id);
        if (job && !job.parked) {
          job.parked = true;
          slot.active--;
          this.dispatch();
        }
        return;
      }
      case "wake": {
        const job = slot.jobs.get(msg.id);
        if (job && job.parked) {
          job.parked = false;
          slot.active++;
        }
        return;
      }
      case "op":
        void this.operation(slot, msg);
        return;
      case "done": {
        const job = slot.jobs.get(msg.id);
        slot.heapBytes = msg.heapBytes;
        if (!job) return;
        slot.jobs.delete(msg.id);
        if (!job.parked) slot.active--;
        const result: ScriptRunResult = msg.ok
          ? { ok: true, value: msg.value, logs: msg.logs, durationMs: msg.durationMs }
          : { ok: false, error: msg.error!, logs: msg.logs, durationMs: msg.durationMs };
        this.settle(job, result);
        if (slot.jobs.size === 0) {
          if (slot.heapBytes > this.recycleBytes) {
            this.replace(slot, `recycled: WebAssembly memory ${Math.round(slot.heapBytes / MiB)} MiB`);
            return;
          }
        }
        this.dispatch();
        return;
      }
      case "poisoned":
        for (const r of msg.results) {
          const job = slot.jobs.get(r.id);
          if (!job) continue;
          slot.jobs.delete(r.id);
          this.settle(job, { ok: false, error: r.error, logs: r.logs, durationMs: Math.max(0, Date.now() - job.dispatchedAt) });
        }
        this.replace(slot, msg.reason);
        return;
    }
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
    }
    slot.worker.postMessage(reply);
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

function failure(kind: ScriptError["kind"], message: string): ScriptRunResult {
  return { ok: false, error: { kind, message }, logs: [], durationMs: 0 };
}
