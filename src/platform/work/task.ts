// Tasks of the work pool (pool.ts), as both sides see them. A feature declares a task with `taskRef<Input, Output>(name)`
// (what the main thread calls) and implements it in its task module (`implement(ref, fn)`), which the worker entry (the
// composition root src/work-tasks.ts) lists by the name's first segment ("csp.evaluate" → the module of "csp").
// Inputs and outputs cross threads by structured clone: keep them small objects, strings and byte buffers; a big
// result goes back as ArrayBuffers listed with `transfer()` (moved, not copied). Errors: an ApiError thrown by a task
// arrives as the same ApiError (status, code, message, headers); anything else as a WorkTaskError (→ 500).
// Owns: the task reference/implementation types, the error wire form. Must never: import a feature.
import { ApiError, type ErrorCode } from "../core/errors";
import type { Db } from "../db/db";
import type { Config } from "../../config/schema";

/** What the main thread names when it runs a task; I and O are the input and output types. */
export interface TaskRef<I, O> {
  readonly name: string;
  /** Type carrier only. */
  readonly _types?: (input: I) => O;
}

export const taskRef = <I, O>(name: string): TaskRef<I, O> => ({ name });

/** A value and the buffers to move (not copy) with it. */
export class Transfer<T> {
  constructor(
    readonly value: T,
    readonly list: ArrayBuffer[],
  ) {}
}

export const transfer = <T>(value: T, list: ArrayBuffer[]): Transfer<T> => new Transfer(value, list);

/** What a running task may use besides its input. */
/** What the main thread (app.ts) hands every work thread (WorkPool `env`); work-tasks.ts builds from it. */
export interface WorkEnv {
  config: Config;
}

export interface TaskContext {
  /** A read-only connection of this thread to the SQLite database (opened on first use; it sees committed data).
   *  Throws on PostgreSQL (read there on the main thread: Bun.SQL is asynchronous). */
  db(): Db;
  /** A writable connection of this thread to the SQLite database (opened on first use), for tasks run with the
   *  database's writer held (RunOptions.hold: the main thread writes nothing meanwhile, so nothing waits on a lock).
   *  Throws on PostgreSQL. */
  writer(): Db;
  /** What the composition root handed the workers (e.g. the configuration). */
  readonly env: unknown;
}

export type TaskFn = (input: any, ctx: TaskContext) => unknown;

/** One implementation, as a task module lists it. */
export interface TaskImpl {
  readonly name: string;
  readonly run: TaskFn;
}

export function implement<I, O>(ref: TaskRef<I, O>, run: (input: I, ctx: TaskContext) => O | Transfer<O> | Promise<O | Transfer<O>>): TaskImpl {
  return { name: ref.name, run };
}

/** A task's error as it crosses threads. */
export type WireError =
  | { kind: "api"; status: number; code: ErrorCode; message: string; headers: Record<string, string> }
  | { kind: "error"; name: string; message: string; stack?: string };

export function toWireError(err: unknown): WireError {
  if (err instanceof ApiError) return { kind: "api", status: err.status, code: err.code, message: err.message, headers: err.headers };
  const e = err instanceof Error ? err : new Error(String(err));
  return { kind: "error", name: e.name, message: e.message, ...(e.stack ? { stack: e.stack } : {}) };
}

/** A task failed with something other than an ApiError (a bug: the HTTP layer answers 500 and logs it). */
export class WorkTaskError extends Error {
  constructor(task: string, message: string, workerStack?: string) {
    super(`work task ${task} failed: ${message}`);
    this.name = "WorkTaskError";
    if (workerStack) this.stack = `${this.name}: ${this.message}\n  (in the work thread)\n${workerStack}`;
  }
}

export function fromWireError(task: string, w: WireError): Error {
  if (w.kind === "api") return new ApiError(w.status, w.code, w.message, w.headers);
  return new WorkTaskError(task, w.message, w.stack);
}
