// The inside of a work thread (see pool.ts): `serveTasks()` is called by the worker entry (the composition root
// src/work-tasks.ts) with the task modules it knows, by the first segment of their tasks' names. A module is loaded
// on the first task that needs it (a thread that only evaluates CSP never loads the import checks). One task at a
// time per thread: the pool sends the next one after this one's answer.
// The message handler is installed synchronously, then "ready" is posted: the pool sends nothing before it (Bun
// drops messages that reach a worker before its first `onmessage`).
// A work thread runs at a lower scheduling priority (nice 10, Linux): when the CPUs are short, the event loop and the
// sandbox's short scripts go first and the heavy work waits, never the other way round.
// Owns: the thread's task registry and its database connections (read-only; writable for tasks that hold the writer).
import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import type { Db } from "../db/db";
import { SqliteDb } from "../db/sqlite";
import { ReaderDb } from "./reader";
import { toWireError, Transfer, type TaskContext, type TaskImpl } from "./task";

declare const self: Worker;

/** Main thread → work thread. */
export type ToWorker = { t: "init"; sqlitePath?: string; env: unknown } | { t: "run"; id: number; task: string; input: unknown };
/** Work thread → main thread. */
export type FromWorker =
  { t: "ready" } | { t: "done"; id: number; ok: true; value: unknown } | { t: "done"; id: number; ok: false; error: ReturnType<typeof toWireError> };

/** Task modules by the first segment of their task names: "csp" serves "csp.evaluate". */
export type TaskModules = Record<string, (env: unknown) => TaskImpl[] | Promise<TaskImpl[]>>;

/** Nice value of work threads. */
const WORK_NICE = 10;

function lowerPriority(): void {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isInteger(tid) && tid > 0 && getPriority(tid) < WORK_NICE) setPriority(tid, WORK_NICE);
  } catch {
    // not Linux, or not allowed: the thread keeps its priority
  }
}

export function serveTasks(modules: TaskModules): void {
  lowerPriority();
  const loaded = new Map<string, Promise<Map<string, TaskImpl>>>();
  let sqlitePath: string | undefined;
  let env: unknown;
  let reader: ReaderDb | undefined;
  let writer: SqliteDb | undefined;
  const ctx: TaskContext = {
    db(): Db {
      if (sqlitePath === undefined) throw new Error("no SQLite database for work threads (PostgreSQL: read on the main thread)");
      reader ??= new ReaderDb(sqlitePath);
      return reader;
    },
    writer(): Db {
      if (sqlitePath === undefined) throw new Error("no SQLite database for work threads (PostgreSQL: write on the main thread)");
      writer ??= new SqliteDb(sqlitePath);
      return writer;
    },
    get env() {
      return env;
    },
  };

  const find = async (name: string): Promise<TaskImpl> => {
    const prefix = name.split(".")[0]!;
    const load = modules[prefix];
    if (!load) throw new Error(`unknown task module: ${prefix}`);
    let tasks = loaded.get(prefix);
    if (!tasks) {
      tasks = Promise.resolve(load(env)).then((list) => new Map(list.map((t) => [t.name, t])));
      loaded.set(prefix, tasks);
      tasks.catch(() => loaded.delete(prefix));
    }
    const impl = (await tasks).get(name);
    if (!impl) throw new Error(`unknown task: ${name}`);
    return impl;
  };

  const run = async (id: number, name: string, input: unknown) => {
    try {
      const out = await (await find(name)).run(input, ctx);
      if (out instanceof Transfer) self.postMessage({ t: "done", id, ok: true, value: out.value } satisfies FromWorker, out.list as any);
      else self.postMessage({ t: "done", id, ok: true, value: out } satisfies FromWorker);
    } catch (err) {
      self.postMessage({ t: "done", id, ok: false, error: toWireError(err) } satisfies FromWorker);
    }
  };

  self.onmessage = (e: MessageEvent<ToWorker>) => {
    const msg = e.data;
    if (msg.t === "init") {
      sqlitePath = msg.sqlitePath;
      env = msg.env;
      return;
    }
    void run(msg.id, msg.task, msg.input);
  };
  self.postMessage({ t: "ready" } satisfies FromWorker);
}
