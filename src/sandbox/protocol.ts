// Messages between the pool (main thread) and a sandbox worker. Structured clone carries JSON values and
// Uint8Array. Host operations that need the database or the network (kv, proxy) run on the main thread; the
// worker only runs QuickJS and the pure host functions (encode/decode, crypto, timers, console).
import type { LogEntry, ScriptError } from "./types";

export interface RunJob {
  t: "run";
  id: number;
  /** Offer cell and token (see pool.ts): the worker starts the job only if it swaps the cell from token to 0. */
  cell: number;
  token: number;
  source: string;
  context: unknown;
  memoryBytes: number;
  timeoutMs: number;
  stackBytes: number;
  kv: boolean;
  proxy: boolean;
}

export interface OpReply {
  t: "op-result";
  id: number;
  opId: number;
  ok: boolean;
  value?: unknown;
  error?: { message: string; code?: string };
}

/** `snapshot: false` turns the memory-image reset off (every execution then creates its runtime; tests and benchmarks). */
export type MainToWorker = RunJob | OpReply | { t: "init"; memoryMib: number; cells: SharedArrayBuffer; module?: WebAssembly.Module; snapshot?: boolean };

export type OpName = "proxy" | "kv";

export type WorkerToMain =
  /** `module`: the QuickJS WebAssembly.Module it compiled (absent when it was given one). */
  | { t: "ready"; module?: WebAssembly.Module; /** executions start from a memory image (see engine.ts) */ snapshot: boolean }
  | { t: "op"; id: number; opId: number; op: OpName; args: unknown; remainingMs: number }
  /** The job's synchronous slice ended and it now waits for a host operation or timer. */
  | { t: "park"; id: number }
  /** A parked job resumed on a worker-side event (timer, crypto). */
  | { t: "wake"; id: number }
  | {
      t: "done";
      id: number;
      ok: boolean;
      value?: unknown;
      error?: ScriptError;
      logs: LogEntry[];
      durationMs: number;
      heapBytes: number;
    }
  /** The WebAssembly instance is no longer trustworthy (native stack exhausted inside QuickJS, an abort): the
   *  worker must be replaced; jobs not reported done are lost. */
  | { t: "poisoned"; reason: string; results: { id: number; error: ScriptError; logs: LogEntry[] }[] };
