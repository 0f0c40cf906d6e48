// The execution record and the small vocabulary every part of the engine shares (see ../engine.ts for the map):
// what one execution is (its runtime, limits, pending work, handles), the errors that cross between the parts, the
// two limit errors and the cached view of the worker's WebAssembly memory.
// Owns: the shape of an execution (Exec) and its reset. Must never: call into QuickJS, post messages, or decide
// anything about an execution's outcome (that is the run loop's and results.ts').
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import type { RunJob } from "../protocol";
import type { LogEntry, ScriptError } from "../types";

/** Measured-heap checks: every MEM_CHECK_MS of running time (see Engine.interrupt). */
export const MEM_CHECK_MS = 5;

export type Reason = "timeout" | "memory";

export interface Exec {
  id: number;
  job: RunJob;
  startedAt: number;
  deadline: number;
  memLimit: number;
  rt: QuickJSRuntime | null;
  ctx: QuickJSContext | null;
  /** Placeholder key for byte arrays in JSON crossing the boundary (made on first use, see marshal.ts bytesKey). */
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
  /** Its slice is held below a nested one (see nesting.ts); a count of such slices. */
  frozen: number;
  finished: boolean;
  reason: Reason | null;
  /** Bytes of WebAssembly memory growth charged to this execution. */
  grown: number;
  nextMemCheck: number;
  sliceStart: number;
  /** Start of its current slice as published to the pool (ms since the pool's epoch, int32; see Engine.attach()). */
  sliceAt: number;
  /** Lazy globals the script assigned itself. */
  userSet: Set<string>;
  helpers: Partial<Record<HelperSlot, QuickJSHandle>>;
  /** Byte arrays collected by the toJSON hook during exportValue. */
  exporting: Uint8Array[] | null;
  /** Bytes copied out by the current export (see marshal.ts toJSONHook). */
  exportedBytes: number;
  /** Built lazy globals, served by their accessors. */
  globals: Map<string, QuickJSHandle>;
  /** Started from its source's memory image (the compiled script included). */
  fromImage: boolean;
  /** Argument block for fastCall in this runtime's memory (0: none, calls go through ctx.callFunction), and the
   *  memory it lies in (see quickjs-internals.ts fastCall). */
  argv: number;
  mem: MemoryView | null;
  /** The engine's speed internals are verified (Engine.fast): the heap is measured through them (marshal.ts
   *  heapUsed). Set when the execution begins. */
  fast: boolean;
}

/** Handles an execution looks up or creates at most once (host functions, snippet factories, built-ins). */
export type HelperSlot =
  | "describe"
  | "construct"
  | "Uint8Array"
  | "isView"
  | "json"
  | "jsonParse"
  | "jsonStringify"
  | "define"
  | "toJSON"
  | "String"
  | "enc"
  | "dec"
  | "encode"
  | "decode"
  | "proxy"
  | "atob"
  | "btoa"
  | "log"
  | "seal"
  | "sha256"
  | "sleep"
  | "cancel"
  | "op"
  | "codeUnits"
  | "secboxF"
  | "consoleF"
  | "textF"
  | "timersF"
  | "Promise"
  | "promiseResolve"
  | "fnToString"
  | "importData"
  | "exportJson";

/** A new execution record for `job` (its runtime and context are set by the caller). */
export function newExec(job: RunJob): Exec {
  return resetExec({ rt: null, ctx: null, argv: 0, mem: null, fast: false } as Exec, job);
}

/** Every per-execution field set for `job` (rt, ctx, argv and mem kept). */
export function resetExec(exec: Exec, job: RunJob): Exec {
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

/** Forgets an execution's handles without disposing them (their memory is overwritten or abandoned). */
export function dropHandles(exec: Exec): void {
  exec.ops = new Map();
  exec.sleeps = new Map();
  exec.handles = [];
  exec.globals = new Map();
  exec.promise = null;
}

/** A value the export found not to be data (a function, a symbol…): the run fails with its message. */
export class ExportError extends Error {}

/** The script's code threw while the host called into it; carries the thrown value. */
export class ScriptThrew extends Error {
  constructor(readonly handle: QuickJSHandle) {
    super("script threw");
  }
}

/** A host function's own failure, thrown into the script as an error named `errorName`. */
export class HostThrow extends Error {
  constructor(
    readonly errorName: string,
    message: string,
  ) {
    super(message);
  }
}

/** Host data for the execution that its memory limit or the worker's memory cannot hold (marshal.ts admit(), and
 *  any host-side allocation in the instance that failed: faults.ts guard()). Thrown where the data would have been
 *  made; the script sees QuickJS's own catchable "out of memory", and the run ends as its memory limit anyway
 *  (whoever throws it sets `reason`). */
export class OutOfMemory extends HostThrow {
  constructor() {
    super("InternalError", "out of memory");
  }
}

export const timeoutError = (): ScriptError => ({ kind: "timeout", message: "Script timed out" });
export const memoryError = (): ScriptError => ({ kind: "memory", message: "Script exceeded its memory limit" });

export function clip(s: string, max: number): string {
  return s.length > max ? s.slice(0, max) : s;
}

/** Views of the worker's WebAssembly memory, made again after it grew (growth detaches the old buffer; reading
 *  `memory.buffer` each time costs more than the copy of a small image). */
export class MemoryView {
  private view = new Uint8Array(0);
  private view32 = new Uint32Array(0);

  constructor(readonly memory: WebAssembly.Memory) {}

  bytes(): Uint8Array {
    if (this.view.byteLength === 0) this.view = new Uint8Array(this.memory.buffer);
    return this.view;
  }

  /** The same as 32-bit words. */
  words(): Uint32Array {
    if (this.view32.byteLength === 0) this.view32 = new Uint32Array(this.memory.buffer);
    return this.view32;
  }
}
