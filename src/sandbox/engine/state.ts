// The engine's state (one per worker): what the run loop (../engine.ts) and its parts share, each part owning the
// fields its header names; and the pristine runtime's record (Template, image.ts). The parts take the state
// (`eng: EngineState`), never the Engine: the run loop's methods they call are declared here, so no part imports
// the loop that imports it.
// Owns: the declarations of the state. Must never: hold logic beyond reading it.
import type { QuickJSHandle, QuickJSWASMModule } from "quickjs-emscripten-core";
import type { OpReply, WorkerToMain } from "../protocol";
import type { Form } from "./compile";
import type { Exec, MemoryView } from "./exec";
import type { HostRefs } from "./quickjs-internals";

export interface Template {
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
  /** Address of the context's Math.random state (8 bytes), and its offset in any JSContext (see seedFresh). */
  randomAt: number;
  randomOffset: number;
  seeds: BigUint64Array;
  seedNext: number;
  inUse: boolean;
  /** An execution ran since the last restore. */
  dirty: boolean;
  /** The WebAssembly memory's size when the image was taken: what lies beyond it after a restore is free memory
   *  that earlier executions grew (engine/memory.ts startCharge). */
  imageBytes: number;
  /** Address of the allocator's top-chunk pointer in the static area (see findTopPointer); null: no source images. */
  topAt: number | null;
  /** Source images (see keepImage) by source hash, least recently used first. */
  sources: Map<number | bigint, SourceImage>;
  /** The image the memory was last restored to or taken from: null for the pristine one. */
  at: SourceImage | null;
  /** The image whose host-function table the live one was last set from (see restoreImage). */
  refsFrom: Template | SourceImage | null;
}

/** The pristine image with one source compiled in it: `fn` is the script as a function (a handle into the image). */
export interface SourceImage {
  source: string;
  form: Form;
  fn: QuickJSHandle;
  staticImage: Uint8Array;
  /** The copied heap: heapImage, a view of the start of heapSpace (reused by the image that replaces this one). */
  heapImage: Uint8Array;
  heapSpace: Uint8Array;
  refs: HostRefs;
}

export abstract class EngineState {
  mod: QuickJSWASMModule | null = null;
  memory: WebAssembly.Memory | null = null;
  /** Views of `memory` (image.ts, fastCall); set by init(). */
  view!: MemoryView;
  instance: WebAssembly.Instance | null = null;
  /** The speed internals of quickjs-internals.ts are verified (pinned versions, self-check passed); false: the slow
   *  safe path. `fallback`: why the worker does without them (or without the memory image), for the pool's log. */
  fast = false;
  fallback: string | null = null;
  readonly execs = new Map<number, Exec>();
  /** The execution whose slice runs (the top of `stack`). */
  current: Exec | null = null;
  /** Executions whose slice is on the thread, outermost first (nested slices above, see nesting.ts). */
  readonly stack: Exec[] = [];
  reapList: Exec[] = [];
  watchdogAt = Infinity;
  /** The pristine runtime + context executions start from (null: every execution creates its own; image.ts). */
  tpl: Template | null = null;

  // faults.ts
  poisoned = false;
  /** A failure inside a host callback that QuickJS must not run on after (a native stack overflow, a glue error):
   *  the guarded glue (see faults.ts guard()) rethrows it until it leaves the WebAssembly code; slice() handles it. */
  fault: Error | null = null;
  /** A native stack overflow was contained while other executions lived in this instance: they run to their end,
   *  no new job starts here (the pool retires the worker, see faults.ts contain()). */
  draining = false;
  /** JSContext.interrupt_counter's offset (engine/memory.ts interruptNow; null: not found, the slow safe path). */
  counterOffset: number | null = null;
  /** Runtimes left to the next image restore because JS_FreeRuntime aborted on them (faults.ts abandon()). */
  abandoned = 0;
  /** The instance's stack pointer between calls (its top), put back after a native stack overflow (null: not
   *  verified, no containment and no nesting). */
  stackTop: number | null = null;

  // nesting.ts
  /** The stack pointer where each nested slice was entered (contain() puts it back there). */
  readonly nestSp: number[] = [];
  /** emscripten's stackSave (null: no nesting). */
  saveSp: (() => number) | null = null;
  /** Op results come on this port; `cells[mailCell]` counts them (see nesting.ts). */
  replies: MessagePort | null = null;
  /** Shared with the pool: the mail count, and the job whose slice runs and since when (see attach()). */
  cells: Int32Array | null = null;
  mailCell = 0;
  runCell = 0;
  epoch = 0;
  mailSeen = 0;
  /** Op results taken from the port, not run yet (oldest first). */
  inbox: OpReply[] = [];
  drainScheduled = false;
  nextPoll = 0;
  /** This thread's id and nice value (null: unknown, its priority is left alone; see nesting.ts). */
  tid: number | null = null;
  baseNice = 0;
  /** Its priority is lowered: for the running slice, or for good (it could not be raised back). */
  lowered: "slice" | "always" | null = null;
  /** Decayed running time (ms) per owner on this worker, as of `at` (performance.now()). */
  readonly usage = new Map<string, { ms: number; at: number }>();

  /** Called while script code runs (from QuickJS's interrupt handler, every few thousand operations): the worker
   *  posts the results it holds, so a result never waits for a long-running neighbour in its batch. */
  onRunning: (() => void) | null = null;

  /** `send` posts a message to the pool: an object, or a result as wire.ts text. */
  constructor(readonly send: (msg: WorkerToMain | string | unknown[], transfer?: ArrayBuffer[]) => void) {}

  get heapBytes(): number {
    return this.memory ? this.view.bytes().byteLength : 0;
  }

  /** QuickJS's interrupt handler of `exec`'s runtime: true stops the running code. */
  abstract interrupt(exec: Exec): boolean;
  /** The main thread answered one of an execution's host operations (kv, proxy). */
  abstract opResult(msg: OpReply): void;
  /** Timer `id` of `exec` is due. */
  abstract fireSleep(exec: Exec, id: number): void;
}
