// The QuickJS execution engine of one sandbox worker (supplement §11.6). One WebAssembly module per worker,
// a fresh runtime + context per execution, several executions interleaved: while one waits for a host
// operation (kv, proxy, timers) another runs. Everything here runs on the worker thread.
//
// Limits
// - Time: one wall-clock deadline per execution. While QuickJS runs, the interrupt handler stops it; while it
//   waits, a timer does. The interrupt handler also ends other executions of this worker whose deadline passed
//   while this one held the thread (their results are posted at once, their runtimes freed after the slice).
// - Memory: QuickJS's own limit (setMemoryLimit) is unreliable in this build: the emscripten malloc reports no
//   usable size, so QuickJS counts 8 bytes per allocation and only bounds single allocations (quickjs-emscripten
//   issue #271). Three measures bound it instead: (1) setMemoryLimit still refuses any single allocation above the
//   limit and bounds the number of allocations; (2) every growth of the worker's WebAssembly memory during an
//   execution's slice is charged to it and refused beyond its limit, and the memory has a hard per-worker maximum
//   (a refused growth is an ordinary QuickJS "out of memory"); (3) every 25 ms of running time the runtime's
//   measured heap (JS_ComputeMemoryUsage) is compared with the limit.
// - Stack: setMaxStackSize. A native stack overflow inside the WebAssembly code (see DEFAULT_STACK_KIB) ends only
//   its execution (contain()); any other trap leaves the instance untrustworthy: the engine reports "poisoned"
//   and the pool replaces the worker.
//
// Resuming from the interrupt handler (fairness between owners, see pool.ts "Fairness")
// A parked execution's runtime lives in this worker's memory and cannot move to another thread, and the thread is
// held by whatever slice runs: without help, a job of user B that awaits a KV result or a timer would resume only
// once user A's `while (true) {}` on the same worker hit its time limit. So QuickJS's interrupt handler of a slice
// that has run NEST_AFTER_MS polls (at most every NEST_POLL_MS) for parked executions that can go on: the pool
// sends op results on a MessagePort of their own and counts them in a shared cell, so they are taken synchronously
// (receiveMessageOnPort) while the thread is busy; timers are due by their time. Such an execution runs its slice
// right there, nested above the interrupted one: a different runtime of the same module, entered from a host
// callback as any host function would, on the same emscripten stack above the interrupted frames (QuickJS sets
// each runtime's stack limit from where it is entered, so the nested one keeps its whole stack). Who may go first:
// an execution of another owner (never one of an owner already on the slice stack) whose owner has used less of
// this worker's time recently (decayed, half-life USAGE_HALF_LIFE_MS) than the interrupted slice's owner,
// including that slice's time so far: a looping user's resumed jobs do not cut into other users' long slices, other
// users' jobs cut into the loop. The slices held below do not run meanwhile: their deadlines move by the time held
// (the pool's backstop too: "freeze"/"thaw"), their owner is not charged for it. Not deeper than MAX_NEST slices,
// and not while the interrupted slice's stack is deeper than NEST_STACK_BYTES (its native frames plus the nested
// slice's could exhaust the thread's stack; contain() would still hold, ending the nested one). A native stack
// overflow inside a nested slice is contained as elsewhere, with the stack pointer put back where that slice was
// entered; what cannot run nested (an op result of an owner on the stack) waits in `inbox` until the thread is free.
//
// A slice that has run LOW_PRIORITY_AFTER_MS while more than one user uses the pool (the pool's CONTENDED_CELL)
// lowers its thread's scheduling priority (nice LOW_NICE, Linux: the thread's own id from /proc/thread-self) until
// it ends: a loop then takes the CPU only from other long runners, not from the HTTP thread or a worker running
// another user's short script (on 2 cores, two loops at normal priority made the other user's requests wait for
// CPU time: p99 ×10). A lone user's long scripts keep their priority (at nice 10 a busy host's other processes
// would stretch them towards their wall-clock limit). Raising it back needs privilege (CAP_SYS_NICE or RLIMIT_NICE;
// root has it): without, the thread stays at the lower priority for good.
import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { receiveMessageOnPort } from "node:worker_threads";
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
import baseVariant from "@jitl/quickjs-singlefile-mjs-release-sync";
import {
  CONSOLE_SNIPPET,
  DEFINE_SNIPPET,
  DESCRIBE_SNIPPET,
  EXPORT_SNIPPET,
  IMPORT_SNIPPET,
  SECBOX_SNIPPET,
  TEXT_SNIPPET,
  TIMERS_SNIPPET,
} from "./bridge";
import { CryptoInputError, sealSync, sha256Hex, sodiumReady } from "./crypto";
import type { ExecHeader, MainToWorker, OpReply, RunJob, WorkerToMain } from "./protocol";
import { MAX_LOG_BYTES, MAX_LOG_ENTRIES, type LogEntry, type ScriptError } from "./types";
import { encodeDone, pack, parseWithBytes, type Packed } from "./wire";

const PAGE = 65536;
/** Measured-heap checks: every MEM_CHECK_MS of running time, and at the end of any slice that ran at least
 *  MEM_SLICE_MS (allocating more than a few MiB takes longer than that, so short scripts skip the ~80 µs cost). */
const MEM_CHECK_MS = 5;
const MEM_SLICE_MS = 1;
const MAX_TIMERS = 100;
/** Host operations (kv, proxy) one execution may have in flight at once. */
const MAX_PENDING_OPS = 32;
const MAX_MESSAGE = 1000;
const MAX_STACK_LINES = 20;
const MAX_STACK_CHARS = 2000;
const LEVELS = new Set(["log", "info", "warn", "error", "debug"]);
/** Resuming parked executions from the interrupt handler (see the header): after the running slice has run this
 *  long, polling at most this often, at most this many slices deep, and only while the slices below use at most
 *  this much of the emscripten stack. */
const NEST_AFTER_MS = 5;
const NEST_POLL_MS = 1;
const MAX_NEST = 4;
const NEST_STACK_BYTES = 64 * 1024;
/** A slice running this long lowers its thread's priority to this nice value until it ends (see the header). */
const LOW_PRIORITY_AFTER_MS = 50;
const LOW_NICE = 10;
/** Running time per owner, halved every USAGE_HALF_LIFE_MS; at most MAX_USAGE owners remembered. */
const USAGE_HALF_LIFE_MS = 10_000;
const MAX_USAGE = 4096;

const utf8 = new TextEncoder();
const utf8Lenient = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const utf8Fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

type Reason = "timeout" | "memory";

interface Exec {
  id: number;
  job: RunJob;
  startedAt: number;
  deadline: number;
  memLimit: number;
  rt: QuickJSRuntime | null;
  ctx: QuickJSContext | null;
  /** Placeholder key for byte arrays in JSON crossing the boundary (made on first use, see bytesKey). */
  key: string | null;
  /** Handles owned by the execution, disposed with it. */
  handles: QuickJSHandle[];
  promise: QuickJSHandle | null;
  logs: LogEntry[];
  ops: Map<number, QuickJSDeferredPromise>;
  opSeq: number;
  /** Pending timers: `at` is when it is due (Date.now() time). */
  sleeps: Map<number, { d: QuickJSDeferredPromise; timer: ReturnType<typeof setTimeout>; at: number }>;
  deadlineTimer: ReturnType<typeof setTimeout> | null;
  parked: boolean;
  /** Its slice is held below a nested one (see "Resuming from the interrupt handler"); a count of such slices. */
  frozen: number;
  finished: boolean;
  reason: Reason | null;
  /** Bytes of WebAssembly memory growth charged to this execution. */
  grown: number;
  nextMemCheck: number;
  sliceStart: number;
  /** Start of its current slice as published to the pool (ms since the pool's epoch, int32; see attach()). */
  sliceAt: number;
  /** Lazy globals the script assigned itself. */
  userSet: Set<string>;
  helpers: Partial<Record<HelperSlot, QuickJSHandle>>;
  /** Byte arrays collected by the toJSON hook during exportValue. */
  exporting: Uint8Array[] | null;
  /** Bytes copied out by the current export (see toJSONHook). */
  exportedBytes: number;
  /** Built lazy globals, served by their accessors. */
  globals: Map<string, QuickJSHandle>;
  /** Started from its source's memory image (the compiled script included). */
  fromImage: boolean;
  /** Argument block for fastCall in this runtime's memory (0: none, calls go through ctx.callFunction). */
  argv: number;
}

/** Handles an execution looks up or creates at most once (host functions, snippet factories, built-ins). */
type HelperSlot =
  | "describe" | "construct" | "Uint8Array" | "isView" | "json" | "jsonParse" | "jsonStringify" | "define" | "toJSON" | "String"
  | "enc" | "dec" | "encode" | "decode" | "proxy" | "atob" | "btoa" | "log" | "seal" | "sha256" | "sleep" | "cancel" | "op"
  | "secboxF" | "consoleF" | "textF" | "timersF" | "Promise" | "promiseResolve" | "fnToString"
  | "importData" | "exportJson";

/** Lazy globals: name → group; a group is built on first access to any of its names. */
const GROUP_OF: Record<string, string> = {
  Sandbox: "sandbox",
  Deno: "sandbox",
  Secbox: "secbox",
  console: "console",
  TextEncoder: "text",
  TextDecoder: "text",
  atob: "text",
  btoa: "text",
  setTimeout: "timers",
  clearTimeout: "timers",
};
const LAZY_NAMES = Object.keys(GROUP_OF);

export class Engine {
  private mod: QuickJSWASMModule | null = null;
  private memory: WebAssembly.Memory | null = null;
  private readonly execs = new Map<number, Exec>();
  /** The execution whose slice runs (the top of `stack`). */
  private current: Exec | null = null;
  /** Executions whose slice is on the thread, outermost first (nested slices above, see the header). */
  private readonly stack: Exec[] = [];
  /** The stack pointer where each nested slice was entered (contain() puts it back there). */
  private readonly nestSp: number[] = [];
  /** emscripten's stackSave (null: no nesting). */
  private saveSp: (() => number) | null = null;
  /** Op results come on this port; `cells[mailCell]` counts them (see the header). */
  private replies: MessagePort | null = null;
  /** Shared with the pool: the mail count, and the job whose slice runs and since when (see attach()). */
  private cells: Int32Array | null = null;
  private mailCell = 0;
  private runCell = 0;
  private epoch = 0;
  private mailSeen = 0;
  /** Op results taken from the port, not run yet (oldest first). */
  private inbox: OpReply[] = [];
  private drainScheduled = false;
  private nextPoll = 0;
  /** This thread's id and nice value (null: unknown, its priority is left alone; see the header). */
  private tid: number | null = null;
  private baseNice = 0;
  /** Its priority is lowered: for the running slice, or for good (it could not be raised back). */
  private lowered: "slice" | "always" | null = null;
  /** Decayed running time (ms) per owner on this worker, as of `at` (performance.now()). */
  private readonly usage = new Map<string, { ms: number; at: number }>();
  private reapList: Exec[] = [];
  private poisoned = false;
  /** A failure inside a host callback that QuickJS must not run on after (a native stack overflow, a glue error):
   *  the guarded glue (see guard()) rethrows it until it leaves the WebAssembly code; slice() handles it. */
  private fault: Error | null = null;
  /** A native stack overflow was contained while other executions lived in this instance: they run to their end,
   *  no new job starts here (the pool retires the worker, see contain()). */
  private draining = false;
  /** The instance's stack pointer between calls (its top), put back after a native stack overflow. */
  private stackTop: number | null = null;
  private watchdogAt = Infinity;
  private instance: WebAssembly.Instance | null = null;
  /** The pristine runtime + context executions start from (null: every execution creates its own). */
  private tpl: Template | null = null;
  private view = new Uint8Array(0);
  private view32 = new Uint32Array(0);

  /** Called while script code runs (from QuickJS's interrupt handler, every few thousand operations): the worker
   *  posts the results it holds, so a result never waits for a long-running neighbour in its batch. */
  onRunning: (() => void) | null = null;

  /** `send` posts a message to the pool: an object, or a result as wire.ts text. */
  constructor(private readonly send: (msg: WorkerToMain | string | unknown[], transfer?: ArrayBuffer[]) => void) {}

  /** Instantiates the QuickJS module with a private WebAssembly memory capped at `maxMemoryMib`. `shared`: the
   *  compiled QuickJS WebAssembly.Module of another worker (JSC shares a module's compiled and tiered-up code between
   *  the instances of all threads, so a second worker does not JIT-compile QuickJS again). Returns the module this
   *  engine runs, for the next worker. */
  async init(maxMemoryMib: number, shared?: WebAssembly.Module, snapshot = true): Promise<WebAssembly.Module | null> {
    const maximum = Math.max(512, Math.ceil((maxMemoryMib * 1024 * 1024) / PAGE));
    const memory = new WebAssembly.Memory({ initial: 256, maximum });
    const realGrow = WebAssembly.Memory.prototype.grow;
    // The emscripten runtime grows the heap through this JS call (emscripten_resize_heap), so growth during an
    // execution's slice can be charged to it and refused.
    Object.defineProperty(memory, "grow", {
      value: (pages: number) => {
        const exec = this.current;
        const bytes = pages * PAGE;
        if (exec && exec.grown + bytes > exec.memLimit) {
          // QuickJS sees a failed malloc: a catchable "out of memory". The run still ends with its memory limit
          // (interrupt() stops it, pump() reports it), whether or not the script catches that error.
          exec.reason ??= "memory";
          throw new RangeError("sandbox: execution memory limit");
        }
        const before = realGrow.call(memory, pages);
        if (exec) exec.grown += bytes;
        return before;
      },
    });
    this.memory = memory;
    let compiled: WebAssembly.Module | null = shared ?? null;
    // Keep the instance (its stack-pointer export locates the regions of the memory image, see buildTemplate) and,
    // on the first worker, the module the single-file variant compiles from its embedded binary. Only while this
    // worker initializes; nothing else runs on this thread meanwhile.
    const real = WebAssembly.instantiate;
    const capture = async (source: unknown, imports?: object) => {
      const r = await (real as (s: unknown, i?: object) => Promise<unknown>)(source, imports);
      // Other modules may instantiate meanwhile (libsodium): QuickJS's is the one importing this memory.
      const ours = !!imports && Object.values(imports).some((ns) => !!ns && typeof ns === "object" && Object.values(ns).includes(memory));
      if (!ours) return r;
      if (r instanceof WebAssembly.Instance) this.instance ??= r;
      else if (r && typeof r === "object" && "instance" in r && r.instance instanceof WebAssembly.Instance) {
        this.instance ??= r.instance;
        if ("module" in r && r.module instanceof WebAssembly.Module) compiled ??= r.module;
      }
      return r;
    };
    WebAssembly.instantiate = capture as typeof WebAssembly.instantiate;
    try {
      this.mod = await newQuickJSWASMModuleFromVariant(newVariant(baseVariant, shared ? { wasmMemory: memory, wasmModule: shared } : { wasmMemory: memory }));
    } finally {
      WebAssembly.instantiate = real;
    }
    this.guard();
    this.stackTop = stackPointer(this.instance);
    if (this.stackTop !== null) this.saveSp = (this.instance!.exports as Record<string, () => number>).Oa!;
    await sodiumReady();
    if (snapshot) {
      try {
        this.tpl = this.buildTemplate();
      } catch {
        this.tpl = null; // unexpected: every execution then creates its own runtime
        this.fault = null;
      }
    }
    [this.tid, this.baseNice] = threadPriority();
    return compiled;
  }

  /** Executions start from a memory image of a pristine runtime + context (see buildTemplate). */
  get snapshotting(): boolean {
    return this.tpl !== null;
  }

  /** False once the instance is no longer trustworthy (see poison()) or drains (see contain()): the worker leaves
   *  its offers unclaimed. */
  get acceptsJobs(): boolean {
    return !this.poisoned && !this.draining;
  }

  /** A view of the whole WebAssembly memory, made again after it grew (growth detaches the old buffer; reading
   *  `memory.buffer` each time costs more than the copy of a small image). */
  private bytes(): Uint8Array {
    if (this.view.byteLength === 0) this.view = new Uint8Array(this.memory!.buffer);
    return this.view;
  }

  /** The same as 32-bit words. */
  private words(): Uint32Array {
    if (this.view32.byteLength === 0) this.view32 = new Uint32Array(this.memory!.buffer);
    return this.view32;
  }

  get heapBytes(): number {
    return this.memory ? this.bytes().byteLength : 0;
  }

  handle(msg: MainToWorker): void {
    if (msg.t === "op-result") {
      this.inbox.push(msg);
      this.drain();
    }
  }

  /** The port op results arrive on, the shared cell that counts them (see the header), and the cells where the
   *  running slice is published: `cells[runCell]` its job's token (0: none), `cells[runCell + 1]` its start (ms
   *  since `epoch`, int32). */
  attach(replies: MessagePort, cells: Int32Array, mailCell: number, runCell: number, epoch: number): void {
    this.replies = replies;
    this.cells = cells;
    this.mailCell = mailCell;
    this.runCell = runCell;
    this.epoch = epoch;
    replies.onmessage = (e: { data: unknown }) => {
      this.inbox.push(e.data as OpReply);
      this.drain();
    };
  }

  /** Between two jobs of a batch (worker.ts): op results that arrived and timers that are due go first, not after
   *  the rest of the batch (the port's messages and the timers would otherwise wait for the whole batch). */
  between(): void {
    if (this.current !== null) return;
    this.takeMail();
    this.drain();
    if (this.execs.size === 0) return;
    const now = Date.now();
    for (const e of [...this.execs.values()]) {
      if (!e.parked || e.finished || e.sleeps.size === 0) continue;
      for (const [id, sl] of e.sleeps) {
        if (sl.at <= now) {
          this.fireSleep(e, id);
          break; // the slice may have set new timers
        }
      }
    }
  }

  /** Runs the op results waiting in `inbox`, oldest first; only while no slice runs. */
  private drain(): void {
    while (this.inbox.length > 0 && this.current === null) this.opResult(this.inbox.shift()!);
  }

  /** Starts a job (see wire.ts decodeRun). */
  run(job: RunJob): void {
    this.start(job);
  }

  // ---------------------------------------------------------------- execution lifecycle

  private start(job: RunJob): void {
    if (this.poisoned || this.draining || !this.mod) {
      this.send(encodeDone({ id: job.id, ok: false, error: { kind: "internal", message: "Script worker unavailable" }, logs: [], durationMs: 0, heapBytes: this.heapBytes }, undefined, []).data);
      return;
    }
    const tpl = this.tpl;
    // The pristine runtime is free unless another execution uses it, or used it and other runtimes still live in
    // the memory (the image can only be restored when no execution is alive).
    if (tpl && !tpl.inUse && (!tpl.dirty || this.execs.size === 0)) {
      const src = normalizeSource(job.source);
      const key = Bun.hash(src);
      let img = tpl.sources.get(key) ?? null;
      if (img !== null && img.source !== src) img = null; // a hash collision: never another script's function
      if (tpl.dirty || tpl.at !== img) this.restoreImage(tpl, img);
      if (img !== null) {
        tpl.sources.delete(key); // most recently used last
        tpl.sources.set(key, img);
      }
      const exec = resetExec(tpl.exec, job);
      // the image's helpers, read through the prototype; what this execution adds stays its own
      exec.helpers = Object.create(tpl.helpers) as Exec["helpers"];
      exec.globals = tpl.globals[(job.proxy ? 2 : 0) + (job.kv ? 1 : 0)]!; // complete: never added to, never cleared
      exec.fromImage = img !== null;
      tpl.inUse = true;
      this.reseed(tpl);
      this.begin(exec, () => {
        exec.rt!.setMemoryLimit(job.memoryBytes);
        exec.rt!.setMaxStackSize(job.stackBytes);
        let compiled: { fn: QuickJSHandle; form: Form } | null = img;
        if (compiled === null) {
          const c = this.compile(exec, src, key);
          if (c === null) return;
          this.keepImage(tpl, src, key, c);
          compiled = c;
        }
        this.installContext(exec, job.context);
        this.invoke(exec, compiled.fn, compiled.form, img !== null); // an image's function is one (keepImage)
      });
      return;
    }
    const exec = newExec(job);
    this.begin(exec, () => {
      const rt = this.mod!.newRuntime();
      exec.rt = rt;
      rt.setMemoryLimit(job.memoryBytes);
      rt.setMaxStackSize(job.stackBytes);
      rt.setInterruptHandler(() => this.interrupt(exec));
      const ctx = rt.newContext();
      exec.ctx = ctx;
      this.installGlobals(exec);
      // before any code of the script: the built-ins they hold are the pristine ones
      exec.helpers.importData = this.snippet(exec, IMPORT_SNIPPET);
      exec.helpers.exportJson = this.snippet(exec, EXPORT_SNIPPET);
      const src = normalizeSource(job.source);
      const c = this.compile(exec, src, Bun.hash(src));
      if (c === null) return;
      this.own(exec, c.fn);
      this.installContext(exec, job.context);
      this.invoke(exec, c.fn, c.form);
    });
  }

  private begin(exec: Exec, setup: () => void): void {
    this.execs.set(exec.id, exec);
    this.watchdogAt = Math.min(this.watchdogAt, exec.deadline);
    this.slice(exec, setup);
    if (!exec.finished && !this.poisoned) {
      exec.deadlineTimer = setTimeout(() => this.timeUp(exec), Math.max(0, exec.deadline - Date.now()));
    }
  }

  /** Runs `fn` and then the execution's pending jobs, with the execution marked current (memory charging). */
  private slice(exec: Exec, fn: () => void): void {
    if (exec.finished || this.poisoned) return;
    exec.parked = false;
    exec.sliceStart = performance.now();
    const outer = this.current;
    this.current = exec;
    this.stack.push(exec);
    const cells = this.cells;
    if (cells !== null) {
      // published for the pool (its "stuck" and "hogging" rules): start first, so a token is never read with an
      // older start than its own
      exec.sliceAt = (Date.now() - this.epoch) | 0;
      Atomics.store(cells, this.runCell + 1, exec.sliceAt);
      Atomics.store(cells, this.runCell, exec.job.token);
    }
    try {
      try {
        fn();
      } catch (err) {
        // The script's own code threw while the host was calling into it (context setup, a helper).
        if (!(err instanceof ScriptThrew)) throw err;
        this.fail(exec, err.handle);
      }
      if (!exec.finished) this.pump(exec);
      if (this.fault) throw this.fault; // swallowed on the way out: still a fault
    } catch (err) {
      const fault = this.fault ?? err;
      this.fault = null;
      if (!isNativeOverflow(fault) || !this.contain(exec)) this.poison(exec, fault);
    } finally {
      this.stack.pop();
      this.current = outer;
      this.charge(exec, performance.now());
      if (cells !== null) {
        if (outer !== null) Atomics.store(cells, this.runCell + 1, outer.sliceAt);
        Atomics.store(cells, this.runCell, outer === null ? 0 : outer.job.token);
      }
      if (outer === null && this.lowered === "slice") this.raise();
    }
    this.reap();
    if (outer === null && this.inbox.length > 0 && !this.drainScheduled) {
      // op results taken while the thread was held that could not run nested
      this.drainScheduled = true;
      setImmediate(() => {
        this.drainScheduled = false;
        this.drain();
      });
    }
  }

  /** Adds the slice that ended at `end` to its owner's running time (see "Resuming from the interrupt handler"). */
  private charge(exec: Exec, end: number): void {
    const owner = exec.job.owner;
    if (!owner) return;
    let u = this.usage.get(owner);
    if (u === undefined) {
      if (this.usage.size >= MAX_USAGE) {
        for (const [o, v] of this.usage) if (v.ms * 0.5 ** ((end - v.at) / USAGE_HALF_LIFE_MS) < 1) this.usage.delete(o);
        if (this.usage.size >= MAX_USAGE) this.usage.clear();
      }
      u = { ms: 0, at: end };
      this.usage.set(owner, u);
    } else if (end - u.at > 1) {
      u.ms *= 0.5 ** ((end - u.at) / USAGE_HALF_LIFE_MS);
      u.at = end;
    }
    u.ms += end - exec.sliceStart;
  }

  /** An owner's decayed running time at `now` (performance.now()); 0 for jobs without owner. */
  private usageOf(owner: string, now: number): number {
    const u = owner ? this.usage.get(owner) : undefined;
    return u === undefined ? 0 : u.ms * 0.5 ** ((now - u.at) / USAGE_HALF_LIFE_MS);
  }

  private pump(exec: Exec): void {
    const rt = exec.rt!;
    const ctx = exec.ctx!;
    for (;;) {
      const r = rt.executePendingJobs(-1);
      if (r.error) {
        const err = r.error;
        this.fail(exec, err);
        return;
      }
      if (!rt.hasPendingJob()) break;
    }
    if (exec.finished) return;
    // The interrupt handler stopped a promise job (time or memory limit): QuickJS makes that a rejection of the
    // job's own promise, which nothing may observe; the execution still ends with the limit it hit.
    if (exec.reason === "timeout") {
      this.finishError(exec, timeoutError());
      return;
    }
    if (exec.reason === "memory") {
      this.finishError(exec, memoryError());
      return;
    }
    if (performance.now() - exec.sliceStart >= MEM_SLICE_MS && this.measuredHeap(exec) > exec.memLimit) {
      this.finishError(exec, memoryError());
      return;
    }
    const state = ctx.getPromiseState(exec.promise!);
    if (state.type === "pending") {
      if (exec.ops.size === 0 && exec.sleeps.size === 0) {
        this.finishError(exec, { kind: "error", message: "Script never settles: it awaits a promise that nothing will resolve" });
        return;
      }
      exec.parked = true;
      this.send({ t: "park", id: exec.id });
      return;
    }
    if (state.type === "fulfilled") {
      if (state.notAPromise) {
        this.succeed(exec, state.value);
        return;
      }
      try {
        this.succeed(exec, state.value);
      } finally {
        state.value.dispose();
      }
      return;
    }
    this.fail(exec, state.error);
  }

  private interrupt(exec: Exec): boolean {
    this.onRunning?.();
    if (exec.finished || exec.reason !== null || this.poisoned) return true;
    const now = Date.now();
    if (now >= exec.deadline) {
      exec.reason ??= "timeout";
      return true;
    }
    if (now >= exec.nextMemCheck) {
      exec.nextMemCheck = now + MEM_CHECK_MS;
      if (this.measuredHeap(exec) > exec.memLimit) {
        exec.reason ??= "memory";
        return true;
      }
    }
    if (now >= this.watchdogAt) this.watchdog(now);
    const outermost = this.stack[0];
    if (this.lowered === null && this.tid !== null && outermost !== undefined && this.cells !== null && ((now - this.epoch) | 0) - outermost.sliceAt > LOW_PRIORITY_AFTER_MS) {
      // only while other users want the CPU too (the pool says so)
      if (Atomics.load(this.cells, this.runCell + 2) === 1) this.lower();
    }
    if (now >= this.nextPoll && this.execs.size > this.stack.length) {
      this.resumeOthers(exec, now);
      return exec.finished || this.poisoned;
    }
    return false;
  }

  /** A long slice: the thread yields the CPU to normal-priority threads until the slice ends (see the header). */
  private lower(): void {
    try {
      setPriority(this.tid!, Math.max(this.baseNice, LOW_NICE));
      this.lowered = "slice";
    } catch {
      this.tid = null; // not permitted here: leave it
    }
  }

  /** The long slice ended: the thread's priority back, if it may (else it stays lower for good). */
  private raise(): void {
    try {
      setPriority(this.tid!, this.baseNice);
      this.lowered = null;
    } catch {
      this.lowered = "always";
    }
  }

  /** From the interrupt handler of `top`'s slice: runs, nested above it, the slices of parked executions that can
   *  go on and may go first (see "Resuming from the interrupt handler"). */
  private resumeOthers(top: Exec, now: number): void {
    if (this.current !== top) return; // QuickJS code outside a slice (the pristine runtime being built)
    const perf = performance.now();
    if (perf - top.sliceStart < NEST_AFTER_MS) return;
    this.nextPoll = now + NEST_POLL_MS;
    if (this.stack.length > MAX_NEST || this.draining || this.fault !== null || this.saveSp === null || this.stackTop === null) return;
    if (this.stackTop - this.saveSp() > NEST_STACK_BYTES) return;
    this.takeMail();
    const limit = this.usageOf(top.job.owner, perf) + (perf - top.sliceStart);
    const stackOwners = this.stack.map((e) => e.job.owner).filter((o) => o !== "");
    const mayGo = (b: Exec) => b.parked && !b.finished && !stackOwners.includes(b.job.owner) && this.usageOf(b.job.owner, perf) < limit;
    for (let i = 0; i < this.inbox.length; ) {
      const msg = this.inbox[i]!;
      const b = this.execs.get(msg.id);
      if (b === undefined || b.finished) {
        this.inbox.splice(i, 1); // its execution ended: nothing waits for it
        continue;
      }
      if (!mayGo(b)) {
        i++;
        continue;
      }
      this.inbox.splice(i, 1);
      this.nested(() => this.opResult(msg));
      if (top.finished || this.poisoned || this.draining) return;
    }
    for (const b of this.execs.values()) {
      if (b.sleeps.size === 0 || !mayGo(b)) continue;
      let due: number | null = null;
      let at = Infinity;
      for (const [id, sl] of b.sleeps) {
        if (sl.at < at) {
          at = sl.at;
          due = id;
        }
      }
      if (due === null || at > Date.now()) continue;
      const id = due;
      this.nested(() => this.fireSleep(b, id)); // one per poll: the slice may have set new timers
      if (top.finished || this.poisoned || this.draining) return;
    }
  }

  /** Takes the op results the pool sent since the last look (see "Resuming from the interrupt handler"). */
  private takeMail(): void {
    const mail = this.cells;
    if (mail === null || this.replies === null) return;
    const n = Atomics.load(mail, this.mailCell);
    if (n === this.mailSeen) return;
    this.mailSeen = n;
    for (let m = receiveMessageOnPort(this.replies); m !== undefined; m = receiveMessageOnPort(this.replies)) this.inbox.push(m.message as OpReply);
  }

  /** Runs `fn` (a slice of another execution) above the slices on the stack, which are held meanwhile: their
   *  deadlines move by the time held, and so does the pool's backstop (freeze/thaw); their owners are not charged. */
  private nested(fn: () => void): void {
    const held: Exec[] = [];
    for (const e of this.stack) if (e.frozen++ === 0) held.push(e);
    const ids = held.map((e) => e.id);
    if (ids.length > 0) this.send({ t: "freeze", ids });
    this.nestSp.push(this.saveSp!());
    const t0 = performance.now();
    try {
      fn();
    } finally {
      this.nestSp.pop();
      const ms = performance.now() - t0;
      for (const e of this.stack) e.frozen--;
      for (const e of held) {
        e.deadline += ms;
        e.sliceStart += ms;
      }
      if (ids.length > 0) this.send({ t: "thaw", ids, ms: Math.ceil(ms) });
      this.onRunning?.();
    }
  }

  /** Ends executions whose deadline passed while another one held the thread. */
  private watchdog(now: number): void {
    let next = Infinity;
    for (const e of this.execs.values()) {
      if (e.finished || e === this.current || e.frozen > 0) continue;
      if (now >= e.deadline) this.finishError(e, timeoutError());
      else next = Math.min(next, e.deadline);
    }
    if (this.current && !this.current.finished) next = Math.min(next, this.current.deadline);
    this.watchdogAt = next;
  }

  private measuredHeap(exec: Exec): number {
    const ctx = exec.ctx!;
    const usage = memoryUsage(exec.rt!, ctx);
    try {
      const used = ctx.getProp(usage, "memory_used_size");
      try {
        return ctx.typeof(used) === "number" ? ctx.getNumber(used) : 0;
      } finally {
        used.dispose();
      }
    } finally {
      usage.dispose();
    }
  }

  private timeUp(exec: Exec): void {
    exec.deadlineTimer = null;
    if (exec.finished || this.poisoned) return;
    const left = exec.deadline - Date.now();
    if (left > 0) {
      // moved while its slice was held below a nested one (see nested())
      exec.deadlineTimer = setTimeout(() => this.timeUp(exec), left);
      return;
    }
    this.finishError(exec, timeoutError());
    this.reap();
  }

  // ---------------------------------------------------------------- results

  private succeed(exec: Exec, value: QuickJSHandle): void {
    let out: { json: string | undefined; bytes: Uint8Array[] };
    try {
      out = this.exportJson(exec, value, true);
    } catch (err) {
      if (err instanceof ExportError) {
        this.finishError(exec, { kind: "error", message: err.message });
        return;
      }
      if (err instanceof ScriptThrew) {
        this.fail(exec, err.handle);
        return;
      }
      throw err;
    }
    this.post(exec, { ok: true, json: out.json, bytes: out.bytes });
    exec.finished = true;
    this.reapList.push(exec);
  }

  /** Ends the execution with the thrown value `err` (a handle in its context), and disposes `err`. */
  private fail(exec: Exec, err: QuickJSHandle): void {
    try {
      if (exec.reason === "timeout" || Date.now() >= exec.deadline) {
        this.finishError(exec, timeoutError());
        return;
      }
      if (exec.reason === "memory") {
        this.finishError(exec, memoryError());
        return;
      }
      const d = this.describe(exec, err);
      if (d.name === "InternalError" && d.message === "out of memory") {
        this.finishError(exec, memoryError());
        return;
      }
      const message = d.name && d.name !== "Error" && !d.code ? `${d.name}: ${d.message}` : d.message;
      const error: ScriptError = { kind: "error", message: clip(message, MAX_MESSAGE) };
      if (d.name) error.name = d.name;
      if (d.code) error.code = d.code;
      const stack = trimStack(d.stack);
      if (stack) error.stack = stack;
      this.finishError(exec, error);
    } finally {
      if (err.alive) err.dispose();
    }
  }

  private finishError(exec: Exec, error: ScriptError): void {
    if (exec.finished) return;
    exec.finished = true;
    this.post(exec, { ok: false, error });
    this.reapList.push(exec);
  }

  /** The result message (wire.ts): `json` is the value's JSON text, its byte arrays as placeholders (exec.key). */
  private post(exec: Exec, r: { ok: boolean; json?: string; bytes?: Uint8Array[]; error?: ScriptError }): void {
    const header: ExecHeader = {
      id: exec.id,
      ok: r.ok,
      logs: exec.logs,
      durationMs: Math.round((performance.now() - exec.startedAt) * 1000) / 1000,
      heapBytes: this.heapBytes,
    };
    if (exec.fromImage) header.image = true;
    const bytes = r.bytes ?? [];
    if (!r.ok) header.error = r.error;
    else if (bytes.length > 0) {
      header.key = exec.key!;
      header.bytes = bytes.length;
    }
    const { data, transfer } = encodeDone(header, r.json, bytes);
    this.send(data, transfer);
  }

  /** Frees finished executions; never while a slice runs (another runtime may be mid-execution). The pristine
   *  runtime's execution is not freed: its memory image is restored once no execution is alive. */
  private reap(): void {
    if (this.current || this.poisoned) return;
    const list = this.reapList;
    this.reapList = [];
    const tpl = this.tpl;
    for (const exec of list) {
      this.execs.delete(exec.id);
      if (exec.deadlineTimer) clearTimeout(exec.deadlineTimer);
      for (const s of exec.sleeps.values()) clearTimeout(s.timer);
      if (tpl && exec === tpl.exec) {
        releaseTemplate(tpl);
        continue;
      }
      try {
        for (const d of exec.ops.values()) d.dispose();
        for (const s of exec.sleeps.values()) s.d.dispose();
        exec.ops.clear();
        exec.sleeps.clear();
        for (const h of exec.handles) if (h.alive) h.dispose();
        for (const h of exec.globals.values()) if (h.alive) h.dispose();
        exec.globals.clear();
        exec.handles = [];
        if (exec.promise?.alive) exec.promise.dispose();
        exec.ctx?.dispose();
        exec.rt?.dispose();
      } catch (err) {
        this.poison(null, err);
        return;
      }
    }
    // Off the serial path: the result is already posted.
    if (tpl && tpl.dirty && !tpl.inUse && this.execs.size === 0) this.restoreImage(tpl, tpl.at);
  }

  /**
   * Keeps QuickJS from running on after a failure it cannot see. A JS exception thrown inside a call into the
   * WebAssembly code unwinds its frames at once; but quickjs-emscripten's glue catches every error of a host
   * callback (it logs it and returns null, or "interrupt"), and the host's own `finally` blocks free handles while
   * the exception passes. So: an error out of any FFI function (a native stack overflow, a trap) is the `fault`; while
   * a fault stands, no FFI call enters the instance (frees are skipped, anything else rethrows it); and the glue of
   * host-function calls and interrupts is replaced by one that rethrows a fault instead of swallowing it, until it
   * reaches slice() (see contain()).
   */
  private guard(): void {
    const mod = this.mod as unknown as {
      ffi: Record<string, unknown>;
      callbacks: { contextCallbacks: Map<number, { callFunction: (...a: number[]) => number }>; runtimeCallbacks: Map<number, { shouldInterrupt: (rt: number) => number }> };
      module: { callbacks: { callFunction: unknown; shouldInterrupt: unknown } };
    };
    const glue = mod.module?.callbacks;
    const { contextCallbacks, runtimeCallbacks } = mod.callbacks ?? {};
    if (!(contextCallbacks instanceof Map) || !(runtimeCallbacks instanceof Map) || typeof glue?.callFunction !== "function" || typeof glue.shouldInterrupt !== "function") {
      throw new Error("sandbox: unexpected quickjs-emscripten internals");
    }
    const fault = (err: unknown): Error => (this.fault ??= err instanceof Error ? err : new Error(String(err)));
    for (const [name, fn] of Object.entries(mod.ffi)) {
      if (!name.startsWith("QTS_") || typeof fn !== "function") continue;
      mod.ffi[name] = guarded(fn as Ffi, name.startsWith("QTS_Free"), () => this.fault, fault);
    }
    // The original glue minus its catch-all: a fault raised inside (or before) the callback leaves the instance.
    const escaping = <A extends number[]>(inner: (...a: A) => number) => (_asyncify: unknown, ...a: A): number => {
      if (this.fault !== null) throw this.fault;
      let r: number;
      try {
        r = inner(...a);
      } catch (err) {
        throw fault(err);
      }
      if (this.fault !== null) throw this.fault;
      return r;
    };
    glue.callFunction = escaping((ctx: number, thisPtr: number, argc: number, argv: number, fnId: number) => contextCallbacks.get(ctx)!.callFunction(ctx, thisPtr, argc, argv, fnId));
    glue.shouldInterrupt = escaping((rt: number) => runtimeCallbacks.get(rt)!.shouldInterrupt(rt));
  }

  /**
   * `exec` ran the worker thread's native stack out inside the WebAssembly code (JSC's RangeError, see
   * isNativeOverflow): deeply nested text given to the parser, eval, JSON or RegExp, or deep data given to
   * JSON.stringify or Array.prototype.flat; QuickJS's own check (setMaxStackSize) measures only the emscripten
   * stack and trips later for these. JSC throws at a function's entry, so the instance's frames were cut off at a
   * call: the allocator (dlmalloc: its updates are macros, its calls start from a consistent state) and every other
   * runtime are as they were; only `exec`'s runtime may be half-updated. It is abandoned (never freed, no more of
   * its code runs: the guarded glue keeps it out, see guard()), the stack pointer goes back to the top, and `exec`
   * ends as QuickJS's "stack overflow". If no other execution lives in the instance, the memory image makes it
   * pristine again and the worker goes on; otherwise the others run to their end while the pool retires this
   * worker (it takes no new job) and starts a replacement. Another user's parked job is never lost to it.
   * False when the stack pointer cannot be put back: the caller poisons the instance.
   */
  private contain(exec: Exec): boolean {
    const restore = (this.instance?.exports as Record<string, unknown> | undefined)?.Ma;
    // a nested slice's frames start where it was entered: the slices below it keep theirs
    const entry = this.nestSp.length > 0 ? this.nestSp[this.nestSp.length - 1]! : this.stackTop;
    if (entry === null || typeof restore !== "function" || !this.execs.has(exec.id)) return false;
    (restore as (sp: number) => void)(entry);
    if (stackPointer(this.instance) !== entry) return false;
    this.execs.delete(exec.id);
    if (exec.deadlineTimer) clearTimeout(exec.deadlineTimer);
    for (const sl of exec.sleeps.values()) clearTimeout(sl.timer);
    const tpl = this.tpl;
    if (tpl && exec === tpl.exec) releaseTemplate(tpl);
    else {
      dropHandles(exec); // with its runtime: the next restore of the image takes their memory back
      if (tpl) tpl.dirty = true;
    }
    const error: ScriptError = exec.reason === "timeout" || Date.now() >= exec.deadline ? timeoutError() : { kind: "error", name: "InternalError", message: "InternalError: stack overflow" };
    const finished = exec.finished;
    exec.finished = true;
    // Nothing else alive: reap() (at the end of the slice) frees what finished and restores the image.
    if (tpl && ![...this.execs.values()].some((e) => !e.finished)) {
      if (!finished) this.post(exec, { ok: false, error });
      return true;
    }
    // Otherwise the result goes with the retirement (the pool settles it, then retires or replaces the worker).
    this.draining = true;
    this.send({ t: "retire", reason: "a script ran the worker's native stack out while other executions were alive", results: finished ? [] : [{ id: exec.id, error, logs: exec.logs }] });
    return true;
  }

  /** Reports the instance unusable, with the outcome of every unfinished execution, in ONE message (so the pool
   *  replaces the worker before it could hand it another job). */
  private poison(exec: Exec | null, err: unknown): void {
    if (this.poisoned) return;
    this.poisoned = true;
    const nativeOverflow = err instanceof RangeError && /call stack/i.test(err.message);
    const results: { id: number; error: ScriptError; logs: LogEntry[] }[] = [];
    for (const e of this.execs.values()) {
      if (e.finished) continue;
      e.finished = true;
      let error: ScriptError;
      if (e === exec && nativeOverflow) {
        // The script recursed until the worker thread's own stack ran out: report it like QuickJS's overflow.
        error = { kind: "error", name: "InternalError", message: "InternalError: stack overflow" };
      } else if (e === exec && (e.reason === "timeout" || Date.now() >= e.deadline)) {
        error = timeoutError();
      } else {
        error = { kind: "internal", message: "Script worker failed and was restarted; try again" };
      }
      results.push({ id: e.id, error, logs: e.logs });
    }
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    this.send({ t: "poisoned", reason: clip(reason, 300), results });
  }

  // ---------------------------------------------------------------- operations answered by the main thread

  private opResult(msg: OpReply): void {
    const exec = this.execs.get(msg.id);
    if (!exec || exec.finished) return;
    const d = exec.ops.get(msg.opId);
    if (!d) return;
    exec.ops.delete(msg.opId);
    this.slice(exec, () => {
      if (msg.ok) {
        const h = this.importValue(exec, msg.value);
        try {
          d.resolve(h);
        } finally {
          h.dispose();
        }
      } else {
        const e = this.newError(exec, msg.error?.message ?? "Operation failed", "Error", msg.error?.code);
        try {
          d.reject(e);
        } finally {
          e.dispose();
        }
      }
      d.dispose();
    });
  }

  // ---------------------------------------------------------------- the memory image

  /** Builds the pristine runtime + context that executions start from, and its memory image.
   *
   *  A QuickJS runtime lives entirely in the WebAssembly memory (the static area of the C program, whose allocator
   *  state is there too, and the heap). Copying the used parts of it back makes the runtime byte-for-byte what it
   *  was right after creation: nothing an execution did (globals, prototypes, atoms, pending jobs, allocator
   *  state) survives, exactly as with a new runtime, for ~15 µs instead of ~110 µs to create and free one. The
   *  stack needs no copy: between calls into the instance it holds no live data. What lives outside the memory is
   *  reset too: the host-function table of quickjs-emscripten (restored with the image) and Math.random's state,
   *  reseeded from the host's CSPRNG per execution (a new runtime seeds it from the clock).
   *
   *  Everything the engine would otherwise create per execution and that holds no per-execution state is made
   *  here, once: the lazy-global accessors, host functions, snippet factories and built-in lookups.
   *
   *  Returns null (every execution then creates its own runtime) when the build does not look as expected. */
  private buildTemplate(): Template | null {
    const memory = this.memory!;
    const sp = stackPointer(this.instance);
    if (sp === null || sp % 16 !== 0 || sp - WASM_STACK_BYTES < 1024 || sp >= memory.buffer.byteLength) return null;
    // The static area ends where the stack's reserved region starts; in a fresh instance that region is unused.
    const staticEnd = sp - WASM_STACK_BYTES;
    if (!allZero(new Uint8Array(memory.buffer, staticEnd, WASM_STACK_BYTES - 65536))) return null;
    const rt = this.mod!.newRuntime();
    const ctx = rt.newContext();
    const internals = ctx as unknown as { ctx?: { value?: unknown }; ffi?: object };
    const rtInternals = rt as unknown as { hostRefs?: HostRefs; rt?: { value?: unknown } };
    const ctxPtr = internals.ctx?.value;
    const refs = rtInternals.hostRefs;
    const usageInternals = ctx as unknown as { ffi?: { QTS_RuntimeComputeMemoryUsage?: unknown }; getMemory?: unknown };
    // The record of the executions that will run on this runtime; the job is a placeholder until the first one.
    const exec = newExec({ t: "run", id: 0, cell: 0, token: 0, source: "", context: { json: "null", paths: [], bytes: [] }, memoryBytes: 0, timeoutMs: 0, stackBytes: 0, kv: false, proxy: false, owner: "" });
    const discard = (): null => {
      for (const h of exec.handles) if (h.alive) h.dispose();
      ctx.dispose();
      rt.dispose();
      return null;
    };
    if (typeof usageInternals.ffi?.QTS_RuntimeComputeMemoryUsage !== "function" || typeof usageInternals.getMemory !== "function" || typeof ctxPtr !== "number" || !refs || typeof refs.nextId !== "number" || !Array.isArray(refs.freelist) || !(refs.groups instanceof Map)) {
      return discard();
    }
    exec.rt = rt;
    exec.ctx = ctx;
    exec.deadline = Infinity;
    exec.nextMemCheck = Infinity;
    rt.setInterruptHandler(() => this.interrupt(exec));
    // quickjs-emscripten caches these handles on first use: they must exist in the image.
    void [ctx.undefined, ctx.null, ctx.true, ctx.false, ctx.global];
    this.installGlobals(exec);
    this.primeBuiltins(exec);
    exec.helpers.describe = this.snippet(exec, DESCRIBE_SNIPPET);
    exec.helpers.define = this.snippet(exec, DEFINE_SNIPPET);
    exec.helpers.secboxF = this.snippet(exec, SECBOX_SNIPPET);
    exec.helpers.consoleF = this.snippet(exec, CONSOLE_SNIPPET);
    exec.helpers.textF = this.snippet(exec, TEXT_SNIPPET);
    exec.helpers.timersF = this.snippet(exec, TIMERS_SNIPPET);
    for (const make of [this.encFn, this.decFn, this.encodeFn, this.decodeFn, this.proxyFn, this.atobFn, this.btoaFn, this.logFn, this.sealFn, this.sha256Fn, this.sleepFn, this.cancelFn, this.opFunction, this.toJSONHook]) {
      make.call(this, exec);
    }
    // The lazy globals themselves, built once per variant (op_proxy_request and Secbox.kv depend on the job): an
    // execution's first access returns the image's object instead of building it.
    const built = { proxy: new Map(), plain: new Map(), kv: new Map(), noKv: new Map(), common: new Map() } as Record<string, Map<string, QuickJSHandle>>;
    const build = (group: string, name: string, flags: { proxy: boolean; kv: boolean }, into: Map<string, QuickJSHandle>) => {
      exec.job = { ...exec.job, ...flags };
      exec.globals = new Map();
      this.materialize(exec, group, name).dispose();
      for (const [n, h] of exec.globals) into.set(n, h);
    };
    build("sandbox", "Sandbox", { proxy: true, kv: false }, built.proxy!);
    build("sandbox", "Sandbox", { proxy: false, kv: false }, built.plain!);
    build("secbox", "Secbox", { proxy: false, kv: true }, built.kv!);
    build("secbox", "Secbox", { proxy: false, kv: false }, built.noKv!);
    for (const [group, name] of [["console", "console"], ["text", "TextEncoder"], ["timers", "setTimeout"]] as const) build(group, name, { proxy: false, kv: false }, built.common!);
    // One complete, read-only map per job variant (index: proxy × 2 + kv), shared by the executions.
    const globals = [false, true].flatMap((proxy) =>
      [false, true].map((kv) => new Map([...built.common!, ...(proxy ? built.proxy! : built.plain!), ...(kv ? built.kv! : built.noKv!)])),
    );
    exec.globals = new Map();
    const randomAt = findRandomState(ctx, memory, ctxPtr);
    if (randomAt === null) return discard();
    // Everything allocated lies below the allocator's top chunk. A block larger than the whole heap so far cannot
    // come from a free chunk inside it, so it is taken from the top: its address bounds the heap to copy.
    const module = (this.mod as unknown as { module?: { _malloc?: (n: number) => number; _free?: (p: number) => void } }).module;
    if (typeof module?._malloc !== "function" || typeof module._free !== "function") return discard();
    // fastCall's argument block, part of the image
    if (callInternals(ctx)) exec.argv = module._malloc(ARGV_SLOTS * 4);
    const extent = lastNonZero(new Uint8Array(memory.buffer)) + 1 - sp;
    if (extent <= 0) return discard();
    const probe = module._malloc(extent + 65536);
    if (!probe) return discard();
    module._free(probe);
    if (probe <= sp || probe > sp + extent + 64) return discard();
    const heapEnd = (probe + 16 + 15) & ~15;
    // Before the image is taken: the check allocates (and frees) the same block again.
    const topAt = findTopPointer(memory, staticEnd, probe, module._malloc, module._free, extent + 65536);
    const mem = new Uint8Array(memory.buffer);
    return {
      exec,
      helpers: { ...exec.helpers },
      globals,
      staticImage: mem.slice(0, staticEnd),
      heapStart: sp,
      heapImage: mem.slice(sp, heapEnd),
      refs: copyRefs(refs),
      liveRefs: refs,
      randomAt,
      seeds: new BigUint64Array(64),
      seedNext: 64,
      inUse: false,
      dirty: false,
      topAt,
      sources: new Map(),
      at: null,
      refsFrom: null,
    };
  }

  /** The runtime back to the pristine image, or to a source's image (no execution may be alive). */
  private restoreImage(tpl: Template, img: SourceImage | null): void {
    const mem = this.bytes();
    const from = img ?? tpl;
    mem.set(from.staticImage, 0);
    mem.set(from.heapImage, tpl.heapStart);
    // Host functions made during the execution are gone with the memory; the ones of the image are back. An
    // execution that made none (the usual case: the image holds the lazy globals) left the table as it was.
    const live = tpl.liveRefs;
    if (tpl.refsFrom !== from || live.nextId !== from.refs.nextId || live.freelist.length !== from.refs.freelist.length) {
      live.nextId = from.refs.nextId;
      live.freelist = from.refs.freelist.slice();
      live.groups = cloneGroups(from.refs.groups);
      tpl.refsFrom = from;
    }
    tpl.at = img;
    tpl.dirty = false;
  }

  /** After the pristine runtime compiled a source it had seen before (a source run once, e.g. a new one per run,
   *  makes no image): its memory (pristine image + the compiled function) becomes the source's image, so later
   *  executions of the source skip parsing. Only when evaluating the wrapper ran no code of the script: the
   *  function's source text (read with the pristine Function.prototype.toString) is the whole wrapper, i.e. the
   *  evaluated text was one function expression. The least recently used image's buffers are reused. */
  private keepImage(tpl: Template, src: string, key: number | bigint, c: { fn: QuickJSHandle; form: Form; text: string; seen: boolean }): void {
    if (!c.seen || tpl.topAt === null || tpl.at !== null || src.length > MAX_IMAGE_SOURCE) return;
    const exec = tpl.exec;
    const ctx = exec.ctx!;
    if (ctx.typeof(c.fn) !== "function" || !exec.helpers.fnToString) return;
    const r = ctx.callFunction(exec.helpers.fnToString, c.fn);
    if (r.error) {
      r.error.dispose();
      return;
    }
    const text = ctx.typeof(r.value) === "string" ? ctx.getString(r.value) : null;
    r.value.dispose();
    if (text !== c.text) return;
    const buffer = this.memory!.buffer;
    const top = new Uint32Array(buffer)[tpl.topAt >>> 2]!;
    const end = (top + 8 + 16 + 15) & ~15;
    if (top < tpl.heapStart || end > buffer.byteLength) return;
    const mem = this.bytes();
    let staticImage: Uint8Array | undefined;
    let heapSpace: Uint8Array | undefined;
    if (tpl.sources.size >= SOURCE_IMAGES) {
      const oldest = tpl.sources.keys().next().value!;
      const old = tpl.sources.get(oldest)!;
      tpl.sources.delete(oldest);
      staticImage = old.staticImage;
      heapSpace = old.heapSpace;
    }
    const heapLength = end - tpl.heapStart;
    if (staticImage === undefined) staticImage = new Uint8Array(tpl.staticImage.byteLength);
    // room for a little more than this heap, so that the buffer can serve the next source too
    if (heapSpace === undefined || heapSpace.byteLength < heapLength) heapSpace = new Uint8Array(heapLength + 16384);
    staticImage.set(mem.subarray(0, staticImage.byteLength));
    heapSpace.set(mem.subarray(tpl.heapStart, end));
    const refs = tpl.liveRefs;
    const img: SourceImage = {
      source: src,
      form: c.form,
      fn: c.fn,
      staticImage,
      heapSpace,
      heapImage: heapSpace.subarray(0, heapLength),
      refs: copyRefs(refs),
    };
    tpl.sources.set(key, img);
    tpl.at = img;
  }

  /** A new Math.random state for the next execution (never 0: xorshift would stay at 0). */
  private reseed(tpl: Template): void {
    if (tpl.seedNext >= tpl.seeds.length) {
      crypto.getRandomValues(tpl.seeds);
      tpl.seedNext = 0;
    }
    const seed = tpl.seeds[tpl.seedNext++]! || 1n;
    const mem = this.bytes();
    new DataView(mem.buffer, tpl.randomAt, 8).setBigUint64(0, seed, true);
  }

  /** Built-ins the host uses on the script's values (looked up before any script code runs). */
  private primeBuiltins(exec: Exec): void {
    const ctx = exec.ctx!;
    this.jsonFn(exec, "parse");
    this.jsonFn(exec, "stringify");
    const reflect = this.own(exec, ctx.getProp(ctx.global, "Reflect"));
    exec.helpers.construct = this.own(exec, ctx.getProp(reflect, "construct"));
    exec.helpers.Uint8Array = this.own(exec, ctx.getProp(ctx.global, "Uint8Array"));
    const abCtor = this.own(exec, ctx.getProp(ctx.global, "ArrayBuffer"));
    exec.helpers.isView = this.own(exec, ctx.getProp(abCtor, "isView"));
    exec.helpers.String = this.own(exec, ctx.getProp(ctx.global, "String"));
    exec.helpers.Promise = this.own(exec, ctx.getProp(ctx.global, "Promise"));
    exec.helpers.promiseResolve = this.own(exec, ctx.getProp(exec.helpers.Promise, "resolve"));
    const fnCtor = this.own(exec, ctx.getProp(ctx.global, "Function"));
    const fnProto = this.own(exec, ctx.getProp(fnCtor, "prototype"));
    exec.helpers.fnToString = this.own(exec, ctx.getProp(fnProto, "toString"));
    exec.helpers.importData = this.snippet(exec, IMPORT_SNIPPET);
    exec.helpers.exportJson = this.snippet(exec, EXPORT_SNIPPET);
  }

  // ---------------------------------------------------------------- globals

  private own(exec: Exec, h: QuickJSHandle): QuickJSHandle {
    exec.handles.push(h);
    return h;
  }

  private snippet(exec: Exec, source: string): QuickJSHandle {
    const ctx = exec.ctx!;
    const r = ctx.evalCode(source, "secbox-bridge.js", { type: "global", strict: true });
    if (r.error) {
      const e = r.error;
      throw new ScriptThrew(e);
    }
    return this.own(exec, r.value);
  }

  private call(exec: Exec, fn: QuickJSHandle, ...args: QuickJSHandle[]): QuickJSHandle {
    const r = this.callFn(exec, fn, exec.ctx!.undefined, args);
    if (r.error) throw new ScriptThrew(r.error);
    return r.value!;
  }

  /** ctx.callFunction, through fastCall when the runtime has an argument block (the pristine runtime does). */
  private callFn(exec: Exec, fn: QuickJSHandle, thisArg: QuickJSHandle, args: QuickJSHandle[]): { value?: QuickJSHandle; error?: QuickJSHandle } {
    if (exec.argv !== 0 && args.length <= ARGV_SLOTS) return fastCall(exec.ctx!, this.words(), exec.argv, fn, thisArg, args);
    const r = exec.ctx!.callFunction(fn, thisArg, ...args);
    return r.error ? { error: r.error } : { value: r.value };
  }

  /** Every lazy global gets an accessor whose getter and setter are one host function (0 args: get, 1: set).
   *  Defined through QTS_DefineProp directly: the public defineProp wraps a new host function per accessor, and
   *  a JS prelude doing the same costs ~75 µs per execution instead of ~15 µs. */
  private installGlobals(exec: Exec): void {
    const ctx = exec.ctx!;
    for (const name of LAZY_NAMES) {
      const fn = ctx.newFunction(name, (...args: QuickJSHandle[]) => {
        try {
          if (args.length > 0) {
            exec.userSet.add(name);
            this.defineData(exec, name, args[0]!);
            return;
          }
          const cached = exec.globals.get(name);
          if (cached) return cached.dup();
          return this.materialize(exec, GROUP_OF[name]!, name);
        } catch (err) {
          return { error: this.toScriptError(exec, err) };
        }
      });
      try {
        defineAccessor(ctx, ctx.global, name, fn);
      } finally {
        fn.dispose();
      }
    }
  }

  /** `globalThis[name] = value` as a writable, configurable, non-enumerable data property. */
  private defineData(exec: Exec, name: string, value: QuickJSHandle): void {
    const ctx = exec.ctx!;
    exec.helpers.define ??= this.snippet(exec, DEFINE_SNIPPET);
    const k = ctx.newString(name);
    try {
      this.call(exec, exec.helpers.define, k, value).dispose();
    } finally {
      k.dispose();
    }
  }

  /** Builds `group`, defines its names as plain data properties (unless the script set them) and returns a new
   *  handle to `wanted`. */
  private materialize(exec: Exec, group: string, wanted: string): QuickJSHandle {
    const ctx = exec.ctx!;
    const members = new Map<string, QuickJSHandle>();
    const temps: QuickJSHandle[] = [];
    try {
      switch (group) {
        case "sandbox": {
          // Built from handles (no JS to parse): Sandbox = Deno = { core: { encode, decode, ops: { op_proxy_request } } }.
          const sandbox = ctx.newObject();
          const core = ctx.newObject();
          const ops = ctx.newObject();
          temps.push(sandbox, core, ops);
          ctx.setProp(core, "encode", this.encodeFn(exec));
          ctx.setProp(core, "decode", this.decodeFn(exec));
          if (exec.job.proxy) ctx.setProp(ops, "op_proxy_request", this.proxyFn(exec));
          ctx.setProp(core, "ops", ops);
          ctx.setProp(sandbox, "core", core);
          members.set("Sandbox", sandbox).set("Deno", sandbox);
          break;
        }
        case "secbox": {
          const op = exec.job.kv ? this.opFunction(exec) : ctx.undefined;
          const fn = (exec.helpers.secboxF ??= this.snippet(exec, SECBOX_SNIPPET));
          const obj = this.call(exec, fn, op, this.sealFn(exec), this.sha256Fn(exec));
          temps.push(obj);
          members.set("Secbox", obj);
          break;
        }
        case "console": {
          const fn = (exec.helpers.consoleF ??= this.snippet(exec, CONSOLE_SNIPPET));
          const obj = this.call(exec, fn, this.logFn(exec));
          temps.push(obj);
          members.set("console", obj);
          break;
        }
        case "text": {
          const fn = (exec.helpers.textF ??= this.snippet(exec, TEXT_SNIPPET));
          const arr = this.call(exec, fn, this.encFn(exec), this.decFn(exec), this.atobFn(exec), this.btoaFn(exec));
          temps.push(arr);
          ["TextEncoder", "TextDecoder", "atob", "btoa"].forEach((n, i) => {
            const h = ctx.getProp(arr, i);
            temps.push(h);
            members.set(n, h);
          });
          break;
        }
        case "timers": {
          const fn = (exec.helpers.timersF ??= this.snippet(exec, TIMERS_SNIPPET));
          const arr = this.call(exec, fn, this.sleepFn(exec), this.cancelFn(exec));
          temps.push(arr);
          ["setTimeout", "clearTimeout"].forEach((n, i) => {
            const h = ctx.getProp(arr, i);
            temps.push(h);
            members.set(n, h);
          });
          break;
        }
        default:
          throw new Error(`unknown group ${group}`);
      }
      // The accessors stay: later reads return the cached object (a host call, cheaper than redefining).
      for (const [name, h] of members) exec.globals.set(name, h.dup());
      return members.get(wanted)!.dup();
    } finally {
      for (const h of temps) if (h.alive) h.dispose();
    }
  }

  /** A host function kept for the execution's lifetime (disposed with it). */
  private hostFn(exec: Exec, slot: keyof Exec["helpers"], name: string, impl: (...args: QuickJSHandle[]) => QuickJSHandle | undefined): QuickJSHandle {
    const existing = exec.helpers[slot];
    if (existing) return existing;
    const ctx = exec.ctx!;
    const fn = ctx.newFunction(name, (...args: QuickJSHandle[]) => {
      try {
        return impl(...args);
      } catch (err) {
        return { error: this.toScriptError(exec, err) };
      }
    });
    exec.helpers[slot] = this.own(exec, fn);
    return fn;
  }

  private encFn(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "enc", "encode", (s) => {
      const ctx = exec.ctx!;
      const text = s && ctx.typeof(s) === "string" ? this.readString(exec, s) : "";
      return ctx.newArrayBuffer(utf8.encode(text).buffer);
    });
  }

  private decFn(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "dec", "decode", (ab, fatal) => {
      const ctx = exec.ctx!;
      const bytes = ctx.getArrayBuffer(ab!);
      try {
        const strict = fatal !== undefined && ctx.typeof(fatal) === "boolean" && ctx.dump(fatal) === true;
        let text: string;
        try {
          text = (strict ? utf8Fatal : utf8Lenient).decode(bytes.value);
        } catch {
          throw new HostThrow("TypeError", "The encoded data was not valid utf-8");
        }
        return this.newString(exec, text);
      } finally {
        bytes.dispose();
      }
    });
  }

  /** Sandbox.core.encode(text) → Uint8Array (UTF-8). */
  private encodeFn(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "encode", "encode", (arg) => {
      const ctx = exec.ctx!;
      let text = "";
      if (arg && ctx.typeof(arg) === "string") text = this.readString(exec, arg);
      else if (arg && ctx.typeof(arg) !== "undefined") {
        exec.helpers.String ??= this.own(exec, ctx.getProp(ctx.global, "String"));
        const s = this.call(exec, exec.helpers.String, arg);
        try {
          text = this.readString(exec, s);
        } finally {
          s.dispose();
        }
      }
      return this.newU8(exec, utf8.encode(text));
    });
  }

  /** Sandbox.core.decode(bytes) → string (UTF-8, invalid sequences → U+FFFD, a leading BOM dropped). */
  private decodeFn(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "decode", "decode", (arg) => {
      const text = arg ? this.withBytes(exec, arg, (bytes) => utf8Lenient.decode(bytes)) : null;
      if (text === null) throw new HostThrow("TypeError", "Sandbox.core.decode: expected a Uint8Array or ArrayBuffer");
      return this.newString(exec, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    });
  }

  private proxyFn(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "proxy", "op_proxy_request", (options) => this.startOp(exec, "proxy", options ?? exec.ctx!.undefined));
  }

  private atobFn(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "atob", "atob", (s) => {
      const ctx = exec.ctx!;
      try {
        return this.newString(exec, atob(this.readString(exec, s!)));
      } catch {
        throw new HostThrow("InvalidCharacterError", "atob: the string is not correctly encoded");
      }
    });
  }

  private btoaFn(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "btoa", "btoa", (s) => {
      const ctx = exec.ctx!;
      try {
        return ctx.newString(btoa(this.readString(exec, s!)));
      } catch {
        throw new HostThrow("InvalidCharacterError", "btoa: the string contains characters outside of the Latin1 range");
      }
    });
  }

  private logFn(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "log", "log", (level, message) => {
      const ctx = exec.ctx!;
      if (exec.logs.length >= MAX_LOG_ENTRIES) return ctx.false;
      const l = ctx.getString(level!);
      exec.logs.push({ level: (LEVELS.has(l) ? l : "log") as LogEntry["level"], message: clipBytes(this.readString(exec, message!), MAX_LOG_BYTES) });
      return exec.logs.length < MAX_LOG_ENTRIES ? ctx.true : ctx.false;
    });
  }

  private sealFn(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "seal", "seal", (pk, data) => {
      const ctx = exec.ctx!;
      const key = pk && ctx.typeof(pk) === "string" ? ctx.getString(pk) : null;
      try {
        return ctx.newString(sealSync(key, this.stringOrBytes(exec, data!)));
      } catch (err) {
        if (err instanceof CryptoInputError) throw new HostThrow("TypeError", err.message);
        throw err;
      }
    });
  }

  private sha256Fn(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "sha256", "sha256", (data) => exec.ctx!.newString(sha256Hex(this.stringOrBytes(exec, data!))));
  }

  private sleepFn(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "sleep", "sleep", (idH, msH) => {
      const ctx = exec.ctx!;
      if (exec.sleeps.size >= MAX_TIMERS) throw new HostThrow("RangeError", `setTimeout: too many pending timers (${MAX_TIMERS})`);
      const id = ctx.getNumber(idH!);
      const requested = ctx.getNumber(msH!);
      const remaining = Math.max(0, exec.deadline - Date.now());
      const delay = Math.min(Math.max(0, Number.isFinite(requested) ? requested : 0), remaining);
      const d = ctx.newPromise();
      const timer = setTimeout(() => this.fireSleep(exec, id), delay);
      exec.sleeps.set(id, { d, timer, at: Date.now() + delay });
      return d.handle;
    });
  }

  /** Timer `id` of `exec` is due (its setTimeout, or resumeOthers while another slice holds the thread). */
  private fireSleep(exec: Exec, id: number): void {
    const s = exec.sleeps.get(id);
    if (s === undefined || exec.finished) return;
    if (Date.now() >= exec.deadline) {
      // Clamped to the remaining time: the run is over (the deferred is freed with the execution).
      this.timeUp(exec);
      return;
    }
    clearTimeout(s.timer);
    exec.sleeps.delete(id);
    if (exec.parked) this.send({ t: "wake", id: exec.id });
    this.slice(exec, () => {
      s.d.resolve();
      s.d.dispose();
    });
  }

  private cancelFn(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "cancel", "cancel", (idH) => {
      const ctx = exec.ctx!;
      const id = ctx.getNumber(idH!);
      const s = exec.sleeps.get(id);
      if (s) {
        clearTimeout(s.timer);
        exec.sleeps.delete(id);
        s.d.dispose();
      }
      return undefined;
    });
  }

  /** `op(name, payload)` for the Secbox snippet (kv). */
  private opFunction(exec: Exec): QuickJSHandle {
    return this.hostFn(exec, "op", "op", (nameH, payload) => {
      const op = exec.ctx!.getString(nameH!);
      if (op !== "kv" && op !== "proxy") throw new HostThrow("TypeError", "unknown operation");
      return this.startOp(exec, op, payload ?? exec.ctx!.undefined);
    });
  }

  /** kv and proxy: the payload goes to the main thread as data; the returned promise settles when it answers. */
  private startOp(exec: Exec, op: "kv" | "proxy", payload: QuickJSHandle): QuickJSHandle {
    const ctx = exec.ctx!;
    const d = ctx.newPromise();
    let exported: { value: unknown; transfer: ArrayBuffer[] };
    try {
      if (exec.ops.size >= MAX_PENDING_OPS) throw new HostThrow("RangeError", `Too many operations in flight (at most ${MAX_PENDING_OPS})`);
      exported = this.exportValue(exec, payload);
    } catch (err) {
      // Not data (or its toJSON threw): the returned promise rejects.
      const e = this.toScriptError(exec, err);
      d.reject(e);
      e.dispose();
      const h = d.handle.dup();
      d.dispose();
      return h;
    }
    const opId = ++exec.opSeq;
    exec.ops.set(opId, d);
    this.send({ t: "op", id: exec.id, opId, op, args: exported.value, remainingMs: Math.max(0, exec.deadline - Date.now()) }, exported.transfer);
    return d.handle;
  }

  private stringOrBytes(exec: Exec, h: QuickJSHandle): string | Uint8Array {
    const ctx = exec.ctx!;
    if (ctx.typeof(h) === "string") return this.readString(exec, h);
    const view = ctx.getArrayBuffer(h);
    try {
      return view.value.slice();
    } finally {
      view.dispose();
    }
  }

  /** A host-side failure inside a host function, as a QuickJS error handle to throw. */
  private toScriptError(exec: Exec, err: unknown): QuickJSHandle {
    if (err instanceof ScriptThrew) return err.handle;
    if (err instanceof HostThrow) return this.newError(exec, err.message, err.errorName);
    if (err instanceof ExportError) return this.newError(exec, err.message, "TypeError");
    // Unexpected: keep host details (paths, stacks) out of the script.
    return this.newError(exec, "Internal error in a sandbox host function", "InternalError");
  }

  private newError(exec: Exec, message: string, name = "Error", code?: string): QuickJSHandle {
    const ctx = exec.ctx!;
    const e = ctx.newError({ name, message });
    if (code) {
      const c = ctx.newString(code);
      ctx.setProp(e, "code", c);
      c.dispose();
    }
    return e;
  }

  // ---------------------------------------------------------------- data across the boundary

  /** The global `context` from its packed form (wire.ts). */
  private installContext(exec: Exec, packed: Packed): void {
    this.importPacked(exec, packed, true).dispose();
  }

  /** Host data → a new handle (op results): primitives directly, anything else through the import helper. */
  private importValue(exec: Exec, value: unknown): QuickJSHandle {
    const ctx = exec.ctx!;
    if (value === undefined) return ctx.undefined.dup();
    if (value === null) return ctx.null.dup();
    if (typeof value === "string") return this.newString(exec, value);
    if (typeof value === "number") return ctx.newNumber(value);
    if (typeof value === "boolean") return (value ? ctx.true : ctx.false).dup();
    return this.importPacked(exec, pack(value), false);
  }

  /** One call of the import helper (IMPORT_SNIPPET): the JSON text, then the byte arrays. */
  private importPacked(exec: Exec, packed: Packed, install: boolean): QuickJSHandle {
    const ctx = exec.ctx!;
    // JSON text holds no raw U+0000 (JSON.stringify escapes it), so newString is exact here (see newString)
    const args = [ctx.newString(packed.paths.length === 0 ? `[[],${packed.json}]` : `[${JSON.stringify(packed.paths)},${packed.json}]`), install ? ctx.true : ctx.false];
    try {
      for (const b of packed.bytes) {
        // an empty one is made inside (a request without a body: no buffer to copy in)
        if (b.byteLength === 0) args.push(ctx.undefined);
        else args.push(ctx.newArrayBuffer(b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? (b.buffer as ArrayBuffer) : b.slice().buffer));
      }
      return this.call(exec, exec.helpers.importData!, ...args);
    } finally {
      args[0]!.dispose();
      for (let i = 2; i < args.length; i++) if (args[i] !== ctx.undefined) args[i]!.dispose();
    }
  }

  /** getString, NUL-safe: quickjs-emscripten passes strings as C strings, so a string holding U+0000 comes back cut
   *  at the first one; then it is read through JSON.stringify instead. */
  private readString(exec: Exec, h: QuickJSHandle): string {
    const ctx = exec.ctx!;
    const s = ctx.getString(h);
    const lengthH = ctx.getProp(h, "length");
    const n = ctx.typeof(lengthH) === "number" ? ctx.getNumber(lengthH) : s.length;
    lengthH.dispose();
    if (n === s.length) return s;
    const r = ctx.callFunction(this.jsonFn(exec, "stringify"), ctx.undefined, h);
    if (r.error) throw new ScriptThrew(r.error);
    try {
      return JSON.parse(ctx.getString(r.value)) as string;
    } finally {
      r.value.dispose();
    }
  }

  /** newString, NUL-safe (see readString). */
  private newString(exec: Exec, s: string): QuickJSHandle {
    if (!s.includes("\u0000")) return exec.ctx!.newString(s);
    return this.parseJson(exec, JSON.stringify(s));
  }

  /** JSON.parse / JSON.stringify of the context (looked up once per execution; the first lookup happens before any
   *  script code when the context holds data, otherwise a script that replaced them only affects its own data). */
  private jsonFn(exec: Exec, name: "parse" | "stringify"): QuickJSHandle {
    const slot = name === "parse" ? "jsonParse" : "jsonStringify";
    const existing = exec.helpers[slot];
    if (existing) return existing;
    const ctx = exec.ctx!;
    exec.helpers.json ??= this.own(exec, ctx.getProp(ctx.global, "JSON"));
    return (exec.helpers[slot] = this.own(exec, ctx.getProp(exec.helpers.json, name)));
  }

  private parseJson(exec: Exec, json: string): QuickJSHandle {
    const ctx = exec.ctx!;
    const s = ctx.newString(json);
    try {
      const r = ctx.callFunction(this.jsonFn(exec, "parse"), ctx.undefined, s);
      if (r.error) throw new ScriptThrew(r.error);
      return r.value;
    } finally {
      s.dispose();
    }
  }

  /** `new Uint8Array(bytes)` in the context, through Reflect.construct (no JS to parse). */
  private newU8(exec: Exec, bytes: Uint8Array): QuickJSHandle {
    const ctx = exec.ctx!;
    if (!exec.helpers.construct || !exec.helpers.Uint8Array) {
      const reflect = this.own(exec, ctx.getProp(ctx.global, "Reflect"));
      exec.helpers.construct = this.own(exec, ctx.getProp(reflect, "construct"));
      exec.helpers.Uint8Array = this.own(exec, ctx.getProp(ctx.global, "Uint8Array"));
    }
    const ab = ctx.newArrayBuffer(bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : bytes.slice().buffer);
    const args = ctx.newArray();
    try {
      ctx.setProp(args, 0, ab);
      return this.call(exec, exec.helpers.construct, exec.helpers.Uint8Array, args);
    } finally {
      args.dispose();
      ab.dispose();
    }
  }

  /** The bytes of an ArrayBuffer / typed array / DataView handle (a copy), or null when it is none of them. */
  private readBytes(exec: Exec, h: QuickJSHandle): Uint8Array | null {
    return this.withBytes(exec, h, (bytes) => bytes.slice());
  }

  /** `use(bytes)` with the bytes of an ArrayBuffer / typed array / DataView handle (a view of a temporary copy, valid
   *  during the call), or null when the handle is none of them. Native lookups only, no JS to parse (a helper snippet
   *  cost ~18 µs per execution): ArrayBuffer.isView, then the view's buffer, byteOffset and byteLength, checked
   *  against the buffer's real length. A script that replaced those accessors gets its own bytes or a TypeError
   *  from the caller, never bytes outside its buffer: QTS_GetArrayBuffer copies exactly the buffer's real length. */
  private withBytes<T>(exec: Exec, h: QuickJSHandle, use: (bytes: Uint8Array) => T): T | null {
    const ctx = exec.ctx!;
    if (ctx.typeof(h) !== "object") return null;
    if (!exec.helpers.isView) {
      const abCtor = this.own(exec, ctx.getProp(ctx.global, "ArrayBuffer"));
      exec.helpers.isView = this.own(exec, ctx.getProp(abCtor, "isView"));
    }
    let isView = false;
    if (ctx.typeof(exec.helpers.isView) === "function") {
      const r = ctx.callFunction(exec.helpers.isView, ctx.undefined, h);
      if (r.error) throw new ScriptThrew(r.error);
      isView = ctx.typeof(r.value) === "boolean" && ctx.getNumber(r.value) === 1;
      r.value.dispose();
    }
    let buffer = h;
    let offset = 0;
    let length = -1;
    if (isView) {
      buffer = ctx.getProp(h, "buffer");
      const o = ctx.getProp(h, "byteOffset");
      const l = ctx.getProp(h, "byteLength");
      offset = ctx.typeof(o) === "number" ? ctx.getNumber(o) : NaN;
      length = ctx.typeof(l) === "number" ? ctx.getNumber(l) : NaN;
      o.dispose();
      l.dispose();
    }
    try {
      if (ctx.typeof(buffer) !== "object" || !Number.isInteger(offset) || offset < 0 || (length !== -1 && (!Number.isInteger(length) || length < 0))) return null;
      let copy: { value: Uint8Array; dispose(): void };
      try {
        copy = ctx.getArrayBuffer(buffer);
      } catch {
        return null; // not an ArrayBuffer (a plain object, or a view whose accessors were replaced)
      }
      try {
        const all = copy.value;
        if (length === -1) length = all.byteLength - offset;
        if (offset + length > all.byteLength) return null;
        return use(offset === 0 && length === all.byteLength ? all : all.subarray(offset, offset + length));
      } finally {
        copy.dispose();
      }
    } finally {
      if (buffer !== h) buffer.dispose();
    }
  }

  /** A handle → host data: JSON values, byte arrays as Uint8Array (see exportJson). */
  private exportValue(exec: Exec, h: QuickJSHandle): { value: unknown; transfer: ArrayBuffer[] } {
    const { json, bytes } = this.exportJson(exec, h, false);
    if (json === undefined) return { value: undefined, transfer: [] };
    // bytes is non-empty only if the hook ran, which made the key
    return { value: parseWithBytes(json, exec.key ?? undefined, bytes), transfer: bytes.map((b) => b.buffer as ArrayBuffer) };
  }

  /** A handle → JSON text (undefined for no value; NaN and ±Infinity are null, as in JSON) and the byte arrays it
   *  holds: during the native JSON.stringify
   *  (of the export helper, held from before any script code) a host `toJSON` on the ArrayBuffer, %TypedArray% and
   *  DataView prototypes swaps each byte array for a placeholder holding a random per-execution key (exec.key).
   *  `final`: the result of a finished execution (the hook stays installed: no script code runs any more). Throws
   *  ExportError for values that are not data, ScriptThrew when script code run by the serialization (toJSON,
   *  getters) threw or the value cannot be serialized (BigInt, cycles). */
  private exportJson(exec: Exec, h: QuickJSHandle, final: boolean): { json: string | undefined; bytes: Uint8Array[] } {
    const ctx = exec.ctx!;
    const bytes: Uint8Array[] = [];
    exec.exporting = bytes;
    exec.exportedBytes = 0;
    let json: string | undefined;
    try {
      const r = this.callFn(exec, exec.helpers.exportJson!, ctx.undefined, [h, this.toJSONHook(exec), final ? ctx.true : ctx.false]);
      if (r.error) throw new ScriptThrew(r.error);
      const value = r.value!;
      try {
        // JSON text holds no raw U+0000 (JSON.stringify escapes it), so getString is exact here (see readString);
        // the helper answers "" when JSON.stringify gives no text
        json = ctx.getString(value) || undefined;
      } finally {
        value.dispose();
      }
    } finally {
      exec.exporting = null;
    }
    // JSON text never starts with "#": the helper's answer for values that are not data
    if (json?.startsWith("#")) throw new ExportError(`Script result must be data (JSON values or byte arrays), not a ${json.slice(1)}`);
    return { json, bytes };
  }

  /** The `toJSON` installed on byte-array prototypes while exportValue serializes: records the bytes and returns
   *  the placeholder. Outside an export it is not installed. */
  private toJSONHook(exec: Exec): QuickJSHandle {
    if (exec.helpers.toJSON) return exec.helpers.toJSON;
    const ctx = exec.ctx!;
    const engine = this;
    const fn = ctx.newFunction("toJSON", function (this: QuickJSHandle) {
      try {
        const list = exec.exporting;
        if (!list) return undefined;
        const bytes = engine.readBytes(exec, this);
        if (!bytes) return undefined;
        // Each reference is a copy on the host: a result naming one big array many times must not grow the
        // worker's own memory without bound. In all, the copies may not exceed the execution's memory limit.
        exec.exportedBytes += bytes.byteLength;
        if (exec.exportedBytes > exec.memLimit) {
          list.length = 0;
          return { error: engine.newError(exec, "Script result too large: its byte arrays exceed the script memory limit", "RangeError") };
        }
        list.push(bytes);
        const marker = ctx.newObject();
        const n = ctx.newNumber(list.length - 1);
        ctx.setProp(marker, bytesKey(exec), n);
        n.dispose();
        return marker;
      } catch (err) {
        return { error: engine.toScriptError(exec, err) };
      }
    });
    return (exec.helpers.toJSON = this.own(exec, fn));
  }

  /** ArrayBuffer.prototype, %TypedArray%.prototype, DataView.prototype (looked up once per execution). */
  private describe(exec: Exec, err: QuickJSHandle): { name: string; message: string; stack: string; code: string } {
    const ctx = exec.ctx!;
    try {
      exec.helpers.describe ??= this.snippet(exec, DESCRIBE_SNIPPET);
      const r = ctx.callFunction(exec.helpers.describe, ctx.undefined, err);
      if (r.error) {
        r.error.dispose();
        return { name: "", message: "Script failed with an error that could not be read", stack: "", code: "" };
      }
      const text = this.readString(exec, r.value);
      r.value.dispose();
      let parts: unknown;
      try {
        parts = JSON.parse(text);
      } catch {
        parts = null;
      }
      if (!Array.isArray(parts) || !parts.every((p) => typeof p === "string")) {
        return { name: "", message: "Script failed with an error that could not be read", stack: "", code: "" };
      }
      return { name: parts[0] ?? "", message: parts[1] ?? "", stack: parts[2] ?? "", code: parts[3] ?? "" };
    } catch (e) {
      if (e instanceof ScriptThrew) {
        e.handle.dispose();
        return { name: "", message: "Script failed with an error that could not be read", stack: "", code: "" };
      }
      throw e;
    }
  }

  /** `name` of an error QuickJS itself threw before any script code ran (so no getter can be involved). */
  private errorName(exec: Exec, err: QuickJSHandle): string {
    const ctx = exec.ctx!;
    if (ctx.typeof(err) !== "object") return "";
    const n = ctx.getProp(err, "name");
    try {
      return ctx.typeof(n) === "string" ? ctx.getString(n) : "";
    } finally {
      n.dispose();
    }
  }

  // ---------------------------------------------------------------- source forms

  /** §11.6: trim; drop one trailing `;`; an expression whose awaited value is the result, or, when that does not
   *  parse, an async function body. Three ways to run a source, decided on its first run in this worker (parsing
   *  is deterministic, the answer is kept):
   *  - "direct": the source parses as `(source)`: it is evaluated as that, and its value awaited the way `await`
   *    does (Promise.resolve of the intrinsic Promise, so thenables are adopted). Cheapest: no wrapper function.
   *  - "await": it parses only inside an async function (it uses `await`): `(async () => (await (source)))()`.
   *  - "body": it parses as neither: `(async () => { source })()`. */
  /**
   * The script as a function: its source wrapped as an expression (`() => (src)`), an awaited expression
   * (`async () => (await (src))`) or an async function body, the first form that parses (remembered per source).
   * Evaluating the wrapper only creates the function, so the compiled function can be kept in a memory image and
   * called by later executions (see keepImage). Null once the execution failed (a syntax error, or the limits).
   */
  private compile(exec: Exec, src: string, key: number | bigint): { fn: QuickJSHandle; form: Form; text: string; seen: boolean } | null {
    const ctx = exec.ctx!;
    const known = forms.get(key);
    const order = known ? [known] : FORMS;
    for (let i = 0; i < order.length; i++) {
      const form = order[i]!;
      const text = WRAPPERS[form](src);
      const r = ctx.evalCode(text, "script.js", { type: "global" });
      if (r.error) {
        // Not this form (a SyntaxError; a runtime SyntaxError cannot happen: no code of the script ran): the next one.
        if (i < order.length - 1 && !exec.reason && this.errorName(exec, r.error) === "SyntaxError") {
          r.error.dispose();
          continue;
        }
        this.fail(exec, r.error);
        return null;
      }
      if (!known) rememberForm(key, form);
      return { fn: r.value, form, text, seen: known !== undefined };
    }
    return null;
  }

  /** Calls the compiled script; its value (awaited) is the result. An expression's value that is not an object goes
   *  straight to the result; objects go through Promise.resolve, so a thenable is adopted as `await` would. */
  private invoke(exec: Exec, fn: QuickJSHandle, form: Form, isFunction = false): void {
    const ctx = exec.ctx!;
    let r: QuickJSHandle;
    if (isFunction || ctx.typeof(fn) === "function") {
      const call = this.callFn(exec, fn, ctx.undefined, []);
      if (call.error) {
        const e = call.error;
        this.fail(exec, e);
        return;
      }
      r = call.value!;
    } else {
      // the wrapper's text was not one function (a source that closes it early): its value is the result
      r = fn.dup();
    }
    if (form !== "direct") {
      exec.promise = r;
      return;
    }
    const type = ctx.typeof(r);
    if (type !== "object" && type !== "function") {
      exec.promise = r;
      return;
    }
    exec.helpers.Promise ??= this.own(exec, ctx.getProp(ctx.global, "Promise"));
    exec.helpers.promiseResolve ??= this.own(exec, ctx.getProp(exec.helpers.Promise, "resolve"));
    try {
      const p = this.callFn(exec, exec.helpers.promiseResolve, exec.helpers.Promise, [r]);
      if (p.error) throw new ScriptThrew(p.error);
      exec.promise = p.value!;
    } finally {
      r.dispose();
    }
  }
}

// ---------------------------------------------------------------- the memory image (see Engine.buildTemplate)

/** The stack reserved by this QuickJS build (emscripten STACK_SIZE of @jitl/quickjs-singlefile-mjs-release-sync
 *  0.32: 5 MiB, below the heap). buildTemplate checks it: the region must be unused in a fresh instance. */
const WASM_STACK_BYTES = 5 * 1024 * 1024;

/** Pointers in an argument block of fastCall. */
const ARGV_SLOTS = 8;

interface CallInternals {
  ffi: {
    QTS_Call(ctx: number, fn: number, thisArg: number, argc: number, argv: number): number;
    QTS_ResolveException(ctx: number, ptr: number): number;
    QTS_FreeValuePointer(ctx: number, ptr: number): void;
  };
  ctx: { value: number };
  memory: { heapValueHandle(ptr: number): QuickJSHandle };
}

/** The internals fastCall uses, or null if this quickjs-emscripten-core does not have them. */
function callInternals(ctx: QuickJSContext): CallInternals | null {
  const c = ctx as unknown as Partial<CallInternals>;
  const ok =
    typeof c.ffi?.QTS_Call === "function" && typeof c.ffi.QTS_ResolveException === "function" && typeof c.ffi.QTS_FreeValuePointer === "function" &&
    typeof c.ctx?.value === "number" && typeof c.memory?.heapValueHandle === "function";
  return ok ? (c as CallInternals) : null;
}

/**
 * ctx.callFunction (quickjs-emscripten-core 0.32) without its per-call argument array (a malloc, two typed-array
 * copies and a free, ~1 µs): the arguments' JSValue pointers go into `argv`, a block of ARGV_SLOTS pointers made
 * once in the runtime's memory. QTS_Call copies the values out of the block before it calls, so a nested call
 * (a host function the script calls back into) may reuse it.
 */
function fastCall(ctx: QuickJSContext, heap: Uint32Array, argv: number, fn: QuickJSHandle, thisArg: QuickJSHandle, args: QuickJSHandle[]): { value?: QuickJSHandle; error?: QuickJSHandle } {
  const c = ctx as unknown as CallInternals;
  for (let i = 0; i < args.length; i++) heap[(argv >>> 2) + i] = args[i]!.value as unknown as number;
  const ctxPtr = c.ctx.value;
  const result = c.ffi.QTS_Call(ctxPtr, fn.value as unknown as number, thisArg.value as unknown as number, args.length, argv);
  const error = c.ffi.QTS_ResolveException(ctxPtr, result);
  if (error) {
    c.ffi.QTS_FreeValuePointer(ctxPtr, result);
    return { error: c.memory.heapValueHandle(error) };
  }
  return { value: c.memory.heapValueHandle(result) };
}

interface HostRefs {
  nextId: number;
  freelist: number[];
  groups: Map<number, Map<number, unknown>>;
}

interface Template {
  /** The execution record bound to the pristine runtime, reused by each execution that runs on it. */
  exec: Exec;
  helpers: Exec["helpers"];
  /** The lazy globals built in the image, all ten names, per job variant (index: proxy × 2 + kv): Sandbox/Deno
   *  with or without op_proxy_request, Secbox with or without kv. */
  globals: Map<string, QuickJSHandle>[];
  staticImage: Uint8Array;
  heapStart: number;
  heapImage: Uint8Array;
  /** quickjs-emscripten's host-function table as it was in the image, and the live one. */
  refs: HostRefs;
  liveRefs: HostRefs;
  /** Address of the context's Math.random state (8 bytes). */
  randomAt: number;
  seeds: BigUint64Array;
  seedNext: number;
  inUse: boolean;
  /** An execution ran since the last restore. */
  dirty: boolean;
  /** Address of the allocator's top-chunk pointer in the static area (see findTopPointer); null: no source images. */
  topAt: number | null;
  /** Source images (see Engine.keepImage) by source hash, least recently used first. */
  sources: Map<number | bigint, SourceImage>;
  /** The image the memory was last restored to or taken from: null for the pristine one. */
  at: SourceImage | null;
  /** The image whose host-function table the live one was last set from (see restoreImage). */
  refsFrom: Template | SourceImage | null;
}

/** The pristine image with one source compiled in it: `fn` is the script as a function (a handle into the image). */
interface SourceImage {
  source: string;
  form: Form;
  fn: QuickJSHandle;
  staticImage: Uint8Array;
  /** The copied heap: heapImage, a view of the start of heapSpace (reused by the image that replaces this one). */
  heapImage: Uint8Array;
  heapSpace: Uint8Array;
  refs: HostRefs;
}

/** Forgets an execution's handles without disposing them (their memory is overwritten or abandoned). */
function dropHandles(exec: Exec): void {
  exec.ops = new Map();
  exec.sleeps = new Map();
  exec.handles = [];
  exec.globals = new Map();
  exec.promise = null;
}

/** The pristine runtime's execution ended: its handles point into the memory the next restore overwrites, so they
 *  are dropped, never disposed. */
function releaseTemplate(tpl: Template): void {
  dropHandles(tpl.exec);
  tpl.inUse = false;
  tpl.dirty = true;
}

type Ffi = (a?: unknown, b?: unknown, c?: unknown, d?: unknown) => unknown;

/** An FFI function that does not enter the instance while a fault stands (a free is skipped, anything else rethrows
 *  the fault) and makes any error thrown out of it the fault (see Engine.guard). Fixed arity where it can: this
 *  is on every call into QuickJS (extra arguments to a wasm export are ignored). */
function guarded(fn: Ffi, free: boolean, current: () => Error | null, fault: (err: unknown) => Error): Ffi {
  if (free) {
    return (a, b, c) => {
      if (current() === null) return fn(a, b, c);
    };
  }
  // A wasm export's length is its parameter count; cwrap's string-converting closures (length 0) read `arguments`.
  const n = fn.length;
  if (n === 0 || n > 4) {
    const any = fn as (...args: unknown[]) => unknown;
    return ((...args: unknown[]) => {
      const standing = current();
      if (standing !== null) throw standing;
      try {
        return any(...args);
      } catch (err) {
        throw fault(err); // only a trap or a native stack overflow gets here
      }
    }) as Ffi;
  }
  return (a, b, c, d) => {
    const standing = current();
    if (standing !== null) throw standing;
    try {
      return fn(a, b, c, d);
    } catch (err) {
      throw fault(err);
    }
  };
}

/** JSC's error when the thread's native stack runs out (thrown at the entry of the function that would overflow). */
function isNativeOverflow(err: unknown): err is RangeError {
  return err instanceof RangeError && err.message.startsWith("Maximum call stack size exceeded");
}

/** A new execution record for `job` (its runtime and context are set by the caller). */
function newExec(job: RunJob): Exec {
  return resetExec({ rt: null, ctx: null, argv: 0 } as Exec, job);
}

/** Every per-execution field set for `job` (rt and ctx kept). */
function resetExec(exec: Exec, job: RunJob): Exec {
  const now = Date.now();
  exec.id = job.id;
  exec.job = job;
  exec.startedAt = performance.now();
  exec.deadline = now + job.timeoutMs;
  exec.memLimit = job.memoryBytes;
  exec.key = null;
  exec.handles = [];
  exec.promise = null;
  exec.logs = [];
  exec.ops = new Map();
  exec.opSeq = 0;
  exec.sleeps = new Map();
  exec.deadlineTimer = null;
  exec.parked = false;
  exec.frozen = 0;
  exec.finished = false;
  exec.reason = null;
  exec.grown = 0;
  exec.nextMemCheck = now + MEM_CHECK_MS;
  exec.sliceStart = 0;
  exec.sliceAt = 0;
  exec.userSet = new Set();
  exec.helpers = {};
  exec.exporting = null;
  exec.exportedBytes = 0;
  exec.globals = new Map();
  exec.fromImage = false;
  return exec;
}

/** This thread's id (Linux: /proc/thread-self) and its nice value, or [null, 0] where that is not available. */
function threadPriority(): [number | null, number] {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isInteger(tid) || tid <= 0) return [null, 0];
    return [tid, getPriority(tid)];
  } catch {
    return [null, 0];
  }
}

/** The instance's stack pointer between calls (= the stack's top = the heap's start). The variant's minified export
 *  `Oa` is emscripten's stackSave (its glue: `ra=a.Oa`, used as `h=ra()` … `sa(h)`); the package version is
 *  pinned, and the shape is checked: stackSave takes no argument, stackRestore (`Ma`) and stackAlloc (`Na`) one. */
function stackPointer(instance: WebAssembly.Instance | null): number | null {
  const ex = instance?.exports as Record<string, unknown> | undefined;
  const save = ex?.Oa;
  const restore = ex?.Ma;
  const alloc = ex?.Na;
  if (typeof save !== "function" || typeof restore !== "function" || typeof alloc !== "function") return null;
  if (save.length !== 0 || restore.length !== 1 || alloc.length !== 1) return null;
  const a = (save as () => unknown)();
  const b = (save as () => unknown)();
  return typeof a === "number" && Number.isInteger(a) && a === b && a > 0 ? a : null;
}

/**
 * The address of the allocator's top-chunk pointer (emscripten's dlmalloc: `_gm_.top`, a static variable): the heap
 * in use ends at the top chunk, so a source image copies the heap up to it. Found as the one static word that holds
 * the top chunk (`probe` − 8, where `probe` is a block the allocator just took from the top and freed), follows the
 * top when a block of `size` bytes is taken from it, and returns when the block is freed. Null if that is not so.
 */
function findTopPointer(memory: WebAssembly.Memory, staticEnd: number, probe: number, malloc: (n: number) => number, free: (p: number) => void, size: number): number | null {
  const words = (): Uint32Array => new Uint32Array(memory.buffer, 0, staticEnd >>> 2);
  const top = probe - 8;
  const found: number[] = [];
  const before = words();
  for (let i = 0; i < before.length; i++) if (before[i] === top) found.push(i);
  if (found.length === 0 || found.length > 16) return null;
  const block = malloc(size);
  if (block !== probe) {
    if (block) free(block);
    return null;
  }
  const during = words();
  const moved = found.filter((i) => during[i]! > block && during[i]! <= block + size + 16);
  free(block);
  const after = words();
  const back = moved.filter((i) => after[i] === top);
  return back.length === 1 ? back[0]! * 4 : null;
}

const ZERO_CHUNK = new Uint8Array(65536);

/** Whether every byte is 0 (native comparisons, 64 KiB at a time: this runs while a worker starts, cold). */
function allZero(bytes: Uint8Array): boolean {
  for (let at = 0; at < bytes.byteLength; at += ZERO_CHUNK.byteLength) {
    const part = bytes.subarray(at, at + ZERO_CHUNK.byteLength);
    if (Buffer.compare(part, ZERO_CHUNK.subarray(0, part.byteLength)) !== 0) return false;
  }
  return true;
}

/** Index of the last non-zero byte (−1 if none). */
function lastNonZero(mem: Uint8Array): number {
  const size = ZERO_CHUNK.byteLength;
  for (let end = mem.byteLength; end > 0; end -= size) {
    const start = Math.max(0, end - size);
    const part = mem.subarray(start, end);
    if (Buffer.compare(part, ZERO_CHUNK.subarray(0, part.byteLength)) === 0) continue;
    for (let j = end - 1; j >= start; j--) if (mem[j] !== 0) return j;
  }
  return -1;
}

/** A copy of quickjs-emscripten's host-function table (kept with an image). */
function copyRefs(refs: HostRefs): HostRefs {
  return { nextId: refs.nextId, freelist: refs.freelist.slice(), groups: cloneGroups(refs.groups) };
}

function cloneGroups(groups: Map<number, Map<number, unknown>>): Map<number, Map<number, unknown>> {
  const out = new Map<number, Map<number, unknown>>();
  for (const [k, v] of groups) out.set(k, new Map(v));
  return out;
}

const M64 = (1n << 64n) - 1n;
/** QuickJS's Math.random step: xorshift64* (quickjs.c); returns [next state, output]. */
function xorshift64star(x: bigint): [bigint, bigint] {
  x ^= x >> 12n;
  x = (x ^ (x << 25n)) & M64;
  x ^= x >> 27n;
  return [x, (x * 0x2545f4914f6cdd1dn) & M64];
}
/** js_math_random: the output's top 52 bits as a double in [0, 1). */
function randomDouble(v: bigint): number {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setBigUint64(0, (0x3ffn << 52n) | (v >> 12n));
  return dv.getFloat64(0) - 1;
}

/** Finds the context's Math.random state: the 8-byte slot of the JSContext that one call moves by exactly one
 *  xorshift64* step and whose output is the value returned; then confirmed by writing a state and predicting the
 *  next value. Null when not found (the build differs). */
function findRandomState(ctx: QuickJSContext, memory: WebAssembly.Memory, ctxPtr: number): number | null {
  const SCAN = 1024;
  if (ctxPtr % 8 !== 0 || ctxPtr + SCAN > memory.buffer.byteLength) return null;
  const math = ctx.getProp(ctx.global, "Math");
  const random = ctx.getProp(math, "random");
  math.dispose();
  const call = (): number | null => {
    const r = ctx.callFunction(random, ctx.undefined);
    if (r.error) {
      r.error.dispose();
      return null;
    }
    const v = ctx.typeof(r.value) === "number" ? ctx.getNumber(r.value) : null;
    r.value.dispose();
    return v;
  };
  try {
    const read = () => new BigUint64Array(memory.buffer.slice(ctxPtr, ctxPtr + SCAN));
    const before = read();
    const got = call();
    const after = read();
    if (got === null) return null;
    for (let i = 0; i < before.length; i++) {
      if (before[i] === after[i]) continue;
      const [state, out] = xorshift64star(before[i]!);
      if (state !== after[i] || randomDouble(out) !== got) continue;
      const at = ctxPtr + i * 8;
      const probe = 0x9e3779b97f4a7c15n;
      new DataView(memory.buffer).setBigUint64(at, probe, true);
      return call() === randomDouble(xorshift64star(probe)[1]) ? at : null;
    }
    return null;
  } finally {
    random.dispose();
  }
}

/** JS_ComputeMemoryUsage with the usage object made in the execution's own context (the public computeMemoryUsage
 *  creates a second, "system" context on first use, which must not happen in the pristine runtime's image). */
function memoryUsage(rt: QuickJSRuntime, ctx: QuickJSContext): QuickJSHandle {
  const c = ctx as unknown as {
    ffi?: { QTS_RuntimeComputeMemoryUsage?: (rt: unknown, ctx: unknown) => number };
    ctx?: { value: unknown };
    getMemory?: (rt: unknown) => { heapValueHandle(ptr: number): QuickJSHandle };
  };
  const r = rt as unknown as { rt?: { value: unknown } };
  const compute = c.ffi?.QTS_RuntimeComputeMemoryUsage;
  if (typeof compute === "function" && c.ctx && r.rt && typeof c.getMemory === "function") {
    return c.getMemory(r.rt.value).heapValueHandle(compute.call(c.ffi, r.rt.value, c.ctx.value));
  }
  return rt.computeMemoryUsage();
}

type Form = "direct" | "await" | "body";
const FORMS: Form[] = ["direct", "await", "body"];
/** The wrappers of Engine.compile. The script's first line is line 2 of script.js in each form. */
const WRAPPERS: Record<Form, (src: string) => string> = {
  direct: (src) => `() => (\n${src}\n)`,
  await: (src) => `async () => (await (\n${src}\n))`,
  body: (src) => `async () => {\n${src}\n}`,
};

/** A source as compiled: trimmed, without a trailing semicolon (so that `expr;` is still an expression). */
function normalizeSource(source: string): string {
  const src = source.trim();
  return src.endsWith(";") ? src.slice(0, -1) : src;
}

/** Memory images with a compiled source kept per worker (each about the size of the pristine image, ~200 KiB,
 *  plus the compiled code), least recently used dropped first; longer sources are compiled per execution. */
const SOURCE_IMAGES = 16;
const MAX_IMAGE_SOURCE = 64 * 1024;

/** How each source runs (see Engine.compile), keyed by a 64-bit hash of the source (not the text: 4,096 scripts
 *  of up to 64 KiB would hold 256 MiB). A collision could only change how that one script runs, i.e. its own
 *  result. Bounded, oldest dropped first. */
const forms = new Map<number | bigint, Form>();
const FORM_CACHE = 4096;
function rememberForm(key: number | bigint, form: Form): void {
  if (forms.size >= FORM_CACHE) forms.delete(forms.keys().next().value!);
  forms.set(key, form);
}

class ExportError extends Error {}
/** The script's code threw while the host called into it; carries the thrown value. */
class ScriptThrew extends Error {
  constructor(readonly handle: QuickJSHandle) {
    super("script threw");
  }
}
class HostThrow extends Error {
  constructor(
    readonly errorName: string,
    message: string,
  ) {
    super(message);
  }
}

/** The per-execution placeholder key for byte arrays in exported JSON: random, so a script cannot forge one (no NUL:
 *  quickjs-emscripten passes strings as C strings). */
function bytesKey(exec: Exec): string {
  return (exec.key ??= `__secbox_bytes_${crypto.randomUUID().replaceAll("-", "")}`);
}

const timeoutError = (): ScriptError => ({ kind: "timeout", message: "Script timed out" });
const memoryError = (): ScriptError => ({ kind: "memory", message: "Script exceeded its memory limit" });

function clip(s: string, max: number): string {
  return s.length > max ? s.slice(0, max) : s;
}

/** Cuts to at most `max` UTF-8 bytes on a character boundary. */
function clipBytes(s: string, max: number): string {
  if (s.length * 3 <= max) return s;
  const bytes = utf8.encode(s);
  if (bytes.length <= max) return s;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return utf8Lenient.decode(bytes.subarray(0, end));
}

function trimStack(stack: string): string {
  if (!stack) return "";
  const lines = stack.split("\n").filter((l) => l.trim() !== "");
  let out = lines.slice(0, MAX_STACK_LINES).join("\n");
  if (lines.length > MAX_STACK_LINES) out += `\n    … ${lines.length - MAX_STACK_LINES} more`;
  return clip(out, MAX_STACK_CHARS);
}

/** QTS_DefineProp with a getter and a setter (quickjs-emscripten-core 0.32 internals: `ffi`, `ctx`), falling back to
 *  the public API if they ever move. */
function defineAccessor(ctx: QuickJSContext, obj: QuickJSHandle, name: string, fn: QuickJSHandle): void {
  const internals = ctx as unknown as {
    ffi?: { QTS_DefineProp?: (...a: unknown[]) => void };
    ctx?: { value: unknown };
  };
  const define = internals.ffi?.QTS_DefineProp;
  if (typeof define === "function" && internals.ctx) {
    const key = ctx.newString(name);
    try {
      define.call(internals.ffi, internals.ctx.value, obj.value, key.value, ctx.undefined.value, fn.value, fn.value, true, false, false);
    } finally {
      key.dispose();
    }
    return;
  }
  ctx.defineProp(obj, name, {
    configurable: true,
    enumerable: false,
    get: () => ctx.unwrapResult(ctx.callFunction(fn, ctx.undefined)),
    set: (v) => ctx.unwrapResult(ctx.callFunction(fn, ctx.undefined, v)).dispose(),
  });
}

/** obj[key] = value through QTS_DefineProp (an own data property even for "__proto__"; existing attributes kept),
 *  falling back to setProp. */
function defineValue(ctx: QuickJSContext, obj: QuickJSHandle, key: string | number, value: QuickJSHandle, enumerable = false): void {
  const internals = ctx as unknown as {
    ffi?: { QTS_DefineProp?: (...a: unknown[]) => void };
    ctx?: { value: unknown };
  };
  const define = internals.ffi?.QTS_DefineProp;
  if (typeof define !== "function" || !internals.ctx) {
    ctx.setProp(obj, key, value);
    return;
  }
  const k = typeof key === "number" ? ctx.newNumber(key) : ctx.newString(key);
  try {
    define.call(internals.ffi, internals.ctx.value, obj.value, k.value, value.value, ctx.undefined.value, ctx.undefined.value, true, enumerable, true);
  } finally {
    k.dispose();
  }
}
