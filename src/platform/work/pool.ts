// The work pool (issue 29 "Isolation 2"): Bun Worker threads that run our own CPU-heavy tasks — import parsing and
// checks, KDFs (argon2id, PBKDF2), PKCS#8/#12, large CSP evaluations — so the event loop only parses, routes and
// answers. Tasks are trusted code of ours (task.ts), registered by name in the worker entry (src/work-tasks.ts);
// unlike the sandbox's pool (src/sandbox/README.md "Fairness") nothing here runs user code, so a task cannot be
// paused, priced or resumed elsewhere: it runs to its end on one thread, one task per thread at a time.
//
// Fair share (owners are user ids; a task without a user names its own owner):
// - Each owner waits in a FIFO of its own. A free thread takes the head of the waiting owner that runs the fewest
//   tasks now (ties: the owner served least recently, an owner's arrival counting as being served — round robin), so
//   a user with 20 tasks waiting does not stand in front of another user's one: that one is taken as soon as the
//   first user has had its turn.
// - Share: one owner holds at most `perOwner` threads at once (default: all but one, at least one), so another user's
//   task never waits behind a whole pool of one user's long tasks while there are 2 threads or more.
// - Caps: `queuePerOwner` tasks waiting per owner (beyond: 429 RATE_LIMITED with Retry-After), `queueTotal` waiting in
//   all (beyond: 503 UNAVAILABLE with Retry-After). Running tasks do not count.
// - Deadline (generous, default 120 s): a task still running then ends its thread (terminated, started again on
//   demand) and fails alone with 503; a thread that dies (a crash) fails only the task it was running (500).
//
// Threads start on demand (up to `threads`; 0 in the configuration = the number of CPUs, [server] work_threads) and
// end after `idleMs` without work. A thread loads a task module on its first task of that module.
// Reads: on SQLite each thread opens its own read-only connection on first use (reader.ts; WAL: it sees committed
// data only). On PostgreSQL tasks get no connection: reads stay on the main thread (Bun.SQL is asynchronous).
// Writes: a task run with `hold` (RunOptions) takes that resource once it has its thread — the SQLite writer, which
// the main thread then leaves alone — and gives it back when it settles; it writes through the thread's own
// connection (ctx.writer()). A task waiting in its owner's queue holds nothing, so one user's writes queue behind
// each other there, never in front of another user's.
// Owns: threads, queues and the per-owner counts. Must never: run a second task on a busy thread, lose a task (every
// task settles exactly once), or import a feature.
import { existsSync } from "node:fs";
import { ApiError, rateLimited } from "../core/errors";
import type { Logger } from "../log";
import { fromWireError, type TaskRef, WorkTaskError } from "./task";
import type { FromWorker, ToWorker } from "./worker";

export interface WorkPoolOptions {
  /** Threads at most (≥ 1). */
  threads: number;
  /** The worker entry (src/work-tasks.ts; see workerEntry()). */
  entry: string | URL;
  /** The SQLite file work threads may read (absent on PostgreSQL). */
  sqlitePath?: string;
  /** Handed to every task module (the configuration). Structured-cloned once per thread. */
  env?: unknown;
  log: Logger;
  /** Tasks one owner may have waiting; beyond → 429. Default 16. */
  queuePerOwner?: number;
  /** Tasks waiting in all; beyond → 503. Default 256. */
  queueTotal?: number;
  /** Threads one owner may hold at once. Default max(1, threads − 1). */
  perOwner?: number;
  /** A task running longer ends its thread and fails with 503. Default 120 s. */
  deadlineMs?: number;
  /** A thread without work this long ends. Default 60 s. */
  idleMs?: number;
}

export interface RunOptions {
  /** Buffers of the input to move to the thread instead of copying them. */
  transfer?: ArrayBuffer[];
  /** This task's deadline instead of the pool's. */
  deadlineMs?: number;
  /** Taken once the task has a thread, before it is sent there; the function it resolves to is called when the task
   *  settles (whatever the outcome). E.g. the SQLite writer for a task that writes (SqliteDb.holdWriter). */
  hold?: () => Promise<() => void>;
}

/** What the features see of the pool. */
export interface Work {
  run<I, O>(owner: string, task: TaskRef<I, O>, input: I, opts?: RunOptions): Promise<O>;
}

interface Job {
  id: number;
  owner: string;
  task: string;
  input: unknown;
  transfer: ArrayBuffer[];
  deadlineMs: number;
  hold: (() => Promise<() => void>) | undefined;
  /** Gives back what `hold` took (set once taken; called once). */
  release: (() => void) | undefined;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

interface Slot {
  n: number;
  worker: Worker;
  ready: boolean;
  dead: boolean;
  job: Job | null;
  deadline: ReturnType<typeof setTimeout> | undefined;
  idle: ReturnType<typeof setTimeout> | undefined;
}

const DEFAULTS = { queuePerOwner: 16, queueTotal: 256, deadlineMs: 120_000, idleMs: 60_000 };

/** The worker entry: `dev` from source; inside a compiled binary the extra entrypoint `bundled` (build.ts). */
export function workerEntry(bundled: string, dev: URL): string | URL {
  const here = import.meta.url;
  if (here.includes("$bunfs") || here.includes("~BUN")) {
    const root = here.includes("~BUN") ? "B:/~BUN/root" : "/$bunfs/root";
    for (const p of [bundled, `src/${bundled}`]) if (existsSync(`${root}/${p}`)) return `${root}/${p}`;
  }
  return dev;
}

export class WorkPool implements Work {
  readonly threads: number;
  readonly perOwner: number;
  private readonly o: Required<Omit<WorkPoolOptions, "sqlitePath" | "env" | "perOwner" | "threads">> & Pick<WorkPoolOptions, "sqlitePath" | "env">;
  private readonly slots: Slot[] = [];
  /** Waiting tasks per owner, oldest first. */
  private readonly queues = new Map<string, Job[]>();
  /** Tasks running per owner. */
  private readonly running = new Map<string, number>();
  /** Tasks started per owner since the pool began (stats: what one user's work cost, apart from upkeep such as checkpoints). */
  private readonly startedBy = new Map<string, number>();
  /** When each owner with work last got a thread (the `turn` of that start): round robin among equals. */
  private readonly served = new Map<string, number>();
  private turn = 0;
  private waiting = 0;
  private seq = 0;
  private spawned = 0;
  private closed = false;

  constructor(opts: WorkPoolOptions) {
    this.threads = Math.max(1, Math.floor(opts.threads));
    this.perOwner = Math.max(1, Math.min(this.threads, opts.perOwner ?? this.threads - 1));
    this.o = {
      entry: opts.entry,
      log: opts.log,
      queuePerOwner: opts.queuePerOwner ?? DEFAULTS.queuePerOwner,
      queueTotal: opts.queueTotal ?? DEFAULTS.queueTotal,
      deadlineMs: opts.deadlineMs ?? DEFAULTS.deadlineMs,
      idleMs: opts.idleMs ?? DEFAULTS.idleMs,
      sqlitePath: opts.sqlitePath,
      env: opts.env,
    };
  }

  /** Runs `task` for `owner` (see the file comment: queues, share, caps, deadline). */
  run<I, O>(owner: string, task: TaskRef<I, O>, input: I, opts: RunOptions = {}): Promise<O> {
    if (this.closed) return Promise.reject(busy("The server is shutting down"));
    const queue = this.queues.get(owner) ?? [];
    if (queue.length >= this.o.queuePerOwner) return Promise.reject(rateLimited(1, "Too much of your work is waiting"));
    if (this.waiting >= this.o.queueTotal) return Promise.reject(busy("The server is busy"));
    return new Promise<O>((resolve, reject) => {
      queue.push({
        id: ++this.seq,
        owner,
        task: task.name,
        input,
        transfer: opts.transfer ?? [],
        deadlineMs: opts.deadlineMs ?? this.o.deadlineMs,
        hold: opts.hold,
        release: undefined,
        resolve: resolve as (v: unknown) => void,
        reject,
      });
      this.queues.set(owner, queue);
      // an owner that arrives joins the round after everyone served so far
      if (!this.served.has(owner)) this.served.set(owner, this.turn + 0.5);
      this.waiting++;
      this.dispatch();
    });
  }

  /** Counts, for tests and the status of the pool. */
  stats(): {
    threads: number;
    busy: number;
    waiting: number;
    running: Record<string, number>;
    spawned: number;
    started: number;
    startedBy: Record<string, number>;
  } {
    return {
      threads: this.slots.length,
      busy: this.slots.filter((s) => s.job !== null).length,
      waiting: this.waiting,
      running: Object.fromEntries(this.running),
      spawned: this.spawned,
      started: this.turn,
      startedBy: Object.fromEntries(this.startedBy),
    };
  }

  /** Ends every thread; waiting and running tasks fail with 503. */
  async close(): Promise<void> {
    this.closed = true;
    for (const queue of this.queues.values()) for (const job of queue) job.reject(busy("The server is shutting down"));
    this.queues.clear();
    this.waiting = 0;
    for (const slot of [...this.slots]) this.end(slot, busy("The server is shutting down"));
  }

  // ---- scheduling ----

  /** The owner whose head task a free thread takes next, or undefined. */
  private pick(): string | undefined {
    let best: string | undefined;
    let bestRunning = Infinity;
    let bestServed = Infinity;
    for (const [owner, queue] of this.queues) {
      if (queue.length === 0) continue;
      const running = this.running.get(owner) ?? 0;
      if (running >= this.perOwner) continue;
      const served = this.served.get(owner) ?? 0;
      if (running < bestRunning || (running === bestRunning && served < bestServed)) {
        best = owner;
        bestRunning = running;
        bestServed = served;
      }
    }
    return best;
  }

  private dispatch(): void {
    if (this.closed) return;
    for (;;) {
      const owner = this.pick();
      if (owner === undefined) return;
      const slot = this.slots.find((s) => s.ready && !s.dead && s.job === null);
      if (!slot) {
        // A thread is starting for every task that could start now, or the pool is full.
        const starting = this.slots.filter((s) => !s.ready).length;
        if (this.slots.length < this.threads && starting < this.startable()) this.spawn();
        return;
      }
      const queue = this.queues.get(owner)!;
      const job = queue.shift()!;
      if (queue.length === 0) this.queues.delete(owner);
      this.waiting--;
      this.start(slot, job);
    }
  }

  /** Waiting tasks that could start now (per owner: up to its share). */
  private startable(): number {
    let n = 0;
    for (const [owner, queue] of this.queues) n += Math.min(queue.length, Math.max(0, this.perOwner - (this.running.get(owner) ?? 0)));
    return n;
  }

  private start(slot: Slot, job: Job): void {
    slot.job = job;
    this.running.set(job.owner, (this.running.get(job.owner) ?? 0) + 1);
    this.served.set(job.owner, ++this.turn);
    this.startedBy.set(job.owner, (this.startedBy.get(job.owner) ?? 0) + 1);
    clearTimeout(slot.idle);
    slot.idle = undefined;
    if (!job.hold) return this.send(slot, job);
    // the thread stays reserved for this task while it takes what it holds
    job.hold().then(
      (release) => {
        if (slot.job !== job || slot.dead) return release(); // failed meanwhile (the pool closed, the thread died)
        job.release = release;
        this.send(slot, job);
      },
      (err) => {
        if (slot.job !== job || slot.dead) return;
        this.finish(slot, job);
        job.reject(err);
        this.idleOrDispatch(slot);
      },
    );
  }

  private send(slot: Slot, job: Job): void {
    slot.deadline = setTimeout(() => this.overdue(slot, job), job.deadlineMs);
    const msg: ToWorker = { t: "run", id: job.id, task: job.task, input: job.input };
    try {
      if (job.transfer.length > 0) slot.worker.postMessage(msg, job.transfer as any);
      else slot.worker.postMessage(msg);
    } catch (err) {
      // the input could not be cloned: that task's own fault
      this.finish(slot, job);
      job.reject(new WorkTaskError(job.task, `its input cannot be sent to a work thread: ${(err as Error).message}`));
      this.idleOrDispatch(slot);
    }
    job.input = undefined;
  }

  /** The task settled (or was failed): the owner's count goes down, the thread is free. */
  private finish(slot: Slot, job: Job): void {
    clearTimeout(slot.deadline);
    slot.deadline = undefined;
    const release = job.release;
    job.release = undefined;
    release?.();
    if (slot.job === job) slot.job = null;
    const n = (this.running.get(job.owner) ?? 1) - 1;
    if (n > 0) this.running.set(job.owner, n);
    else {
      this.running.delete(job.owner);
      if (!this.queues.has(job.owner)) this.served.delete(job.owner);
    }
  }

  private idleOrDispatch(slot: Slot): void {
    this.dispatch();
    if (!slot.dead && slot.job === null) {
      clearTimeout(slot.idle);
      slot.idle = setTimeout(() => {
        if (slot.job === null && !slot.dead) this.end(slot);
      }, this.o.idleMs);
      slot.idle.unref?.();
    }
  }

  private overdue(slot: Slot, job: Job): void {
    if (slot.job !== job || slot.dead) return;
    this.o.log.warn("work task outlived its deadline; its thread is ended", { task: job.task, deadlineMs: job.deadlineMs });
    this.end(slot, busy(`The operation took longer than ${Math.round(job.deadlineMs / 1000)} s and was stopped`));
  }

  // ---- threads ----

  private spawn(): void {
    const worker = new Worker(this.o.entry);
    const slot: Slot = { n: ++this.spawned, worker, ready: false, dead: false, job: null, deadline: undefined, idle: undefined };
    this.slots.push(slot);
    worker.onmessage = (e: MessageEvent<FromWorker>) => this.onMessage(slot, e.data);
    worker.onerror = (e: ErrorEvent) => this.died(slot, `error: ${e.message}`);
    worker.addEventListener("close", () => this.died(slot, "exited"));
    worker.unref();
  }

  private onMessage(slot: Slot, msg: FromWorker): void {
    if (slot.dead) return;
    if (msg.t === "ready") {
      slot.ready = true;
      slot.worker.postMessage({
        t: "init",
        ...(this.o.sqlitePath !== undefined ? { sqlitePath: this.o.sqlitePath } : {}),
        env: this.o.env,
      } satisfies ToWorker);
      this.idleOrDispatch(slot);
      return;
    }
    const job = slot.job;
    if (!job || job.id !== msg.id) return;
    this.finish(slot, job);
    if (msg.ok) job.resolve(msg.value);
    else job.reject(fromWireError(job.task, msg.error));
    this.idleOrDispatch(slot);
  }

  /** The thread failed or exited on its own: only its task fails. */
  private died(slot: Slot, reason: string): void {
    if (slot.dead) return;
    if (!this.closed) this.o.log.error("work thread ended unexpectedly", { reason: reason.slice(0, 300), task: slot.job?.task });
    this.end(slot, slot.job ? new WorkTaskError(slot.job.task, `its work thread ended (${reason.slice(0, 200)})`) : undefined);
  }

  /** Terminates the thread; its task (if any) fails with `err`. Others start a thread again on demand. */
  private end(slot: Slot, err?: Error): void {
    if (slot.dead) return;
    slot.dead = true;
    clearTimeout(slot.idle);
    const i = this.slots.indexOf(slot);
    if (i >= 0) this.slots.splice(i, 1);
    const job = slot.job;
    if (job) {
      this.finish(slot, job);
      job.reject(err ?? new WorkTaskError(job.task, "its work thread ended"));
    }
    slot.worker.terminate();
    this.dispatch();
  }
}

const busy = (message: string) => new ApiError(503, "UNAVAILABLE", `${message}; retry in 1 s`, { "retry-after": "1" });
