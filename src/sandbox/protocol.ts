// Messages between the pool (main thread) and a sandbox worker. A run job and its result travel as text (wire.ts);
// the other messages are objects (structured clone: JSON values and Uint8Array). Host operations that need the database or the network (kv, proxy) run on the main thread; the
// worker only runs QuickJS and the pure host functions (encode/decode, crypto, timers, console).
import type { LogEntry, ScriptError, SyntaxCheckMode } from "./types";

/** Where a byte array sits in a value: its keys and indexes from the top. */
export type Path = (string | number)[];

/** A value as JSON text with its byte arrays taken out (wire.ts pack): each is `null` in the text, at `paths[i]`. */
export interface Packed {
  json: string;
  paths: Path[];
  bytes: Uint8Array[];
}

/** A run job's header (see wire.ts: the job travels as `header` + its context's JSON text + byte arrays). */
export interface RunHeader {
  id: number;
  /** Offer cell and token (see pool.ts): the worker starts the job only if it swaps the cell from token to 0. */
  cell: number;
  token: number;
  source: string;
  memoryBytes: number;
  timeoutMs: number;
  stackBytes: number;
  kv: boolean;
  proxy: boolean;
  /** The job's owner (ScriptRunRequest.owner; "" when none): the worker's fair share of its thread
   *  (engine/nesting.ts). */
  owner: string;
  /** Where the context's byte arrays go (see wire.ts Packed). */
  paths: Path[];
  /** A syntax check instead of a run (types.ts SyntaxCheckMode): nothing of the source runs. */
  check?: SyntaxCheckMode;
}

/** A run job as the engine gets it. */
export interface RunJob extends Omit<RunHeader, "paths"> {
  t: "run";
  context: Packed;
}

/** An execution's outcome (see wire.ts: the header of a result message, followed by the value's JSON text). */
export interface ExecHeader {
  id: number;
  ok: boolean;
  error?: ScriptError;
  logs: LogEntry[];
  durationMs: number;
  heapBytes: number;
  /** It started from its source's memory image (engine/image.ts keepImage). */
  image?: boolean;
  /** The placeholder key of byte arrays in the value's JSON text, and how many follow the text. */
  key?: string;
  bytes?: number;
}

export interface OpReply {
  t: "op-result";
  id: number;
  opId: number;
  ok: boolean;
  value?: unknown;
  error?: { message: string; code?: string };
}

/** Object messages (run jobs travel as wire.ts text). `snapshot: false` turns the memory-image reset off (every
 *  execution then creates its runtime; tests and benchmarks). `replies`: the port the pool sends OpReply messages
 *  on; after each one it adds 1 to `cells[mailCell]`, so a worker whose thread a script holds can take them
 *  synchronously (receiveMessageOnPort) from QuickJS's interrupt handler. `cells[runCell]`: the token of the job
 *  whose slice runs now (0: none), `cells[runCell + 1]` when that slice started (ms since `epoch`, int32): the
 *  pool tells long-running jobs from what the worker itself says, not from when this thread got to its messages.
 *  `cells[runCell + 2]`: 1 while more than one owner uses the pool (a long slice then lowers its priority). */
export type MainToWorker =
  | OpReply
  | {
      t: "init";
      memoryMib: number;
      cells: SharedArrayBuffer;
      mailCell: number;
      runCell: number;
      epoch: number;
      replies: MessagePort;
      module?: WebAssembly.Module;
      snapshot?: boolean;
      /** The package versions the engine's quickjs-emscripten internals count as verified for (default: the pinned
       *  ones, engine/quickjs-internals.ts; tests force a mismatch). */
      quickjs?: { core: string; variant: string };
    };

export type OpName = "proxy" | "kv";

/** Object messages (results travel as wire.ts text). */
export type WorkerToMain =
  /** `module`: the QuickJS WebAssembly.Module it compiled (absent when it was given one). */
  | {
      t: "ready";
      module?: WebAssembly.Module;
      /** executions start from a memory image (see engine/image.ts) */
      snapshot: boolean;
      /** Why the worker takes the slow safe path or runs without the memory image (engine/quickjs-internals.ts). */
      fallback?: string;
    }
  | { t: "op"; id: number; opId: number; op: OpName; args: unknown; remainingMs: number }
  /** The job's synchronous slice ended and it now waits for a host operation or timer. */
  | { t: "park"; id: number }
  /** A parked job resumed on a worker-side event (timer, crypto). */
  | { t: "wake"; id: number }
  /** Jobs whose slice is held below a job resumed from the interrupt handler (they cannot run until it returns):
   *  their deadline stops meanwhile; `thaw` moves it by `ms` (see engine/nesting.ts nested()). */
  | { t: "freeze"; ids: number[] }
  | { t: "thaw"; ids: number[]; ms: number }
  /** A native stack overflow was contained while other executions lived in the instance (engine/faults.ts contain()): it
   *  runs them to their end but claims no new job; the pool starts a replacement and ends this worker once idle.
   *  `results`: the outcome of the execution that overflowed. */
  | { t: "retire"; reason: string; results: { id: number; error: ScriptError; logs: LogEntry[] }[] }
  /** The WebAssembly instance is no longer trustworthy (native stack exhausted inside QuickJS, an abort): the
   *  worker must be replaced; jobs not reported done are lost. `retry`: the execution was not on the thread when
   *  it happened and never started a host operation (nothing outside the worker saw it), so the pool may run it
   *  again elsewhere (engine/faults.ts poison(), pool/workers.ts settleReported()). */
  | { t: "poisoned"; reason: string; results: { id: number; error: ScriptError; logs: LogEntry[]; retry?: boolean }[] };
