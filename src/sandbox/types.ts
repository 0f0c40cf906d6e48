// Public types of the script sandbox (supplement §11.6–§11.9, §15.3): what callers pass to ScriptPool.run and
// what they get back. Values crossing the boundary are data only: JSON values plus Uint8Array.
// The one declaration of the sandbox contract (issue 31 §1): responders and API trackers take a `ScriptRunner` (the
// pool, wired by app.ts) and read its results with these types; they declare no copy of their own.

/** Per-execution limits, from the caller's tier (§22) and §11.6. */
export interface ScriptLimits {
  /** Tier `script_memory_mib`. The pool adds the byte size of every byte array in `context` (§11.6 "+ the size of
   *  context.body"). */
  memoryMib: number;
  /** Tier `script_timeout_sec` × 1000: wall time from the start of the execution (queue wait excluded), including
   *  time spent awaiting host operations. */
  timeoutMs: number;
  /** QuickJS stack limit. Default DEFAULT_STACK_KIB (see README of this folder: why not 1 MiB). */
  stackKiB?: number;
  /** Tier `proxy_timeout_ms`: default `timeout` of op_proxy_request. */
  proxyTimeoutMs: number;
  /** Upstream body cap of op_proxy_request (10 MiB). */
  maxProxyBodyBytes: number;
}

/** Tier KV quotas (§11.8, §22). */
export interface KvLimits {
  maxEntries: number;
  maxBytes: number;
  maxTtlSec: number;
  opsPerRun: number;
  /** Stored bytes (key + value) one user may set per second, 0 = unlimited (tier kv_write_bytes_per_second). */
  writeBytesPerSecond: number;
}

export interface ScriptRunRequest {
  source: string;
  /** The global `context`: JSON values and Uint8Array/ArrayBuffer (delivered as Uint8Array). */
  context: unknown;
  limits: ScriptLimits;
  /** Owner of `Secbox.kv` (a responder id). Absent: no `Secbox.kv` (API configurator/extractor). */
  kvOwner?: string;
  /** Default: the §22 defaults. */
  kvLimits?: Partial<KvLimits>;
  /** `Sandbox.core.ops.op_proxy_request` present (responders). Default true; trackers pass false. */
  proxy?: boolean;
  /** Who the script belongs to (a user id): the pool's fair share (see pool.ts "Fairness"). Absent: the job is its
   *  own owner. */
  owner?: string;
  /** Check the syntax instead of running (supplement §27; syntax.ts): the result is `null`, or an `error` named
   *  SyntaxError whose stack is `    at script.js:LINE:COLUMN` in the wrapped text (1-based). */
  check?: SyntaxCheckMode;
}

/** A syntax check: `quickjs` compiles the source's forms (§11.6) as the engine would, without running anything
 *  (QuickJS's compile-only evaluation); `acorn` parses each of `forms` (whole texts, tried in order; the page
 *  extractor's wrappers, code that runs in Chromium) with acorn, ECMAScript "latest". */
export type SyntaxCheckMode = { parser: "quickjs" } | { parser: "acorn"; forms: string[] };

export type ScriptErrorKind = "timeout" | "memory" | "error" | "queue_full" | "internal";

export interface ScriptError {
  kind: ScriptErrorKind;
  /** `timeout`: "Script timed out"; `memory`: "Script exceeded its memory limit"; `queue_full`: "Script queue is
   *  full"; `error`: the thrown value's message, prefixed with its name unless the name is "Error"
   *  ("TypeError: x is not a function", "boom", "SyntaxError: unexpected token in expression: ')'"); for errors
   *  of op_proxy_request the message alone. At most 1,000 characters. */
  message: string;
  /** The thrown error's `name` when it had one. */
  name?: string;
  /** The thrown error's string `code` (op_proxy_request: E_INVALID, E_BLOCKED, E_CONNECT, E_UPSTREAM, E_TIMEOUT,
   *  E_TOO_LARGE — §11.7). */
  code?: string;
  /** Stack trace, at most 20 lines / 2,000 characters. */
  stack?: string;
}

export interface LogEntry {
  level: "log" | "info" | "warn" | "error" | "debug";
  message: string;
}

export type ScriptRunResult =
  { ok: true; value: unknown; logs: LogEntry[]; durationMs: number } | { ok: false; error: ScriptError; logs: LogEntry[]; durationMs: number };

/** The sandbox as features use it: ScriptPool (pool.ts) implements it; app.ts hands the pool to responders and
 *  trackers. Never throws: every failure is a result with `ok: false`. */
export interface ScriptRunner {
  run(req: ScriptRunRequest): Promise<ScriptRunResult>;
}

/** Default QuickJS stack limit. QuickJS measures only its own (emscripten) stack; the worker thread's native stack
 *  (fixed by Bun at ~4 MiB) holds the WebAssembly frames and, before the WASM code is optimized, runs out first for
 *  plain recursion deeper than ~1,500 QuickJS frames. 256 KiB keeps runaway recursion (plain, through callbacks,
 *  getters, generators, sort comparators) on QuickJS's own "stack overflow" error even on a cold worker; the rare
 *  cases that still exhaust the native stack (deeply nested eval/JSON text) are caught and the worker replaced. */
export const DEFAULT_STACK_KIB = 256;

export const DEFAULT_KV_LIMITS: KvLimits = {
  maxEntries: 100_000,
  maxBytes: 1_073_741_824,
  maxTtlSec: 2_592_000,
  opsPerRun: 200,
  writeBytesPerSecond: 0,
};

/** §11.6: console capture bounds. */
export const MAX_LOG_ENTRIES = 100;
export const MAX_LOG_BYTES = 2048;
