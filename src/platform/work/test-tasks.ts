// Worker entry of the pool's own tests (pool.test.ts): tasks that sleep, spin, hang, crash, fail and read the
// database, so the tests can drive the pool's ordering, share, caps, deadline and reader without any feature.
import { ApiError } from "../core/errors";
import { implement, taskRef, transfer, type TaskImpl } from "./task";
import { serveTasks } from "./worker";

export interface Timed {
  tag: string;
  start: number;
  end: number;
}

export const testTasks = {
  echo: taskRef<unknown, unknown>("test.echo"),
  /** Waits `ms` (the thread is held, as by a long computation that awaits). */
  sleep: taskRef<{ tag: string; ms: number }, Timed>("test.sleep"),
  hang: taskRef<null, never>("test.hang"),
  exit: taskRef<null, never>("test.exit"),
  uncaught: taskRef<null, never>("test.uncaught"),
  apiError: taskRef<null, never>("test.apiError"),
  bug: taskRef<null, never>("test.bug"),
  bytes: taskRef<{ n: number }, ArrayBuffer>("test.bytes"),
  read: taskRef<{ sql: string; params: (string | number)[] }, unknown[]>("test.read"),
  /** A transaction on the thread's writable connection: the insert, then `ms` before the commit. */
  write: taskRef<{ name: string; ms: number }, number>("test.write"),
};

const impls: TaskImpl[] = [
  implement(testTasks.echo, (input) => input),
  implement(testTasks.sleep, async ({ tag, ms }) => {
    const start = Date.now();
    await Bun.sleep(ms);
    return { tag, start, end: Date.now() };
  }),
  implement(testTasks.hang, () => {
    for (;;) {
      // a task that never ends (the deadline must end its thread)
    }
  }),
  implement(testTasks.exit, () => process.exit(3)),
  implement(testTasks.uncaught, () => {
    setTimeout(() => {
      throw new Error("uncaught in a work thread");
    }, 0);
    return new Promise<never>(() => {});
  }),
  implement(testTasks.apiError, () => {
    throw new ApiError(400, "INVALID_INPUT", "field: bad value", { "x-test": "1" });
  }),
  implement(testTasks.bug, () => {
    throw new TypeError("a bug");
  }),
  implement(testTasks.bytes, ({ n }) => {
    const buf = new Uint8Array(n).fill(7).buffer;
    return transfer(buf, [buf]);
  }),
  implement(testTasks.read, ({ sql, params }, ctx) => ctx.db().all(sql, params)),
  implement(testTasks.write, ({ name, ms }, ctx) =>
    ctx.writer().tx(async (tx) => {
      await tx.run("INSERT INTO items (name) VALUES (?)", [name]);
      await Bun.sleep(ms);
      return Date.now();
    }),
  ),
];

if (!Bun.isMainThread) serveTasks({ test: () => impls });
