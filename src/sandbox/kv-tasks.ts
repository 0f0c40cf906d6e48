// Secbox.kv work on the work pool (platform/work): a set's transaction (kv-write.ts) on the thread's own SQLite
// connection, run by kv.ts with the main thread's writer held. Listed by the worker entry (src/work-tasks.ts).
import { implement, taskRef, type TaskImpl } from "../platform/work/task";
import { writeEntry, type KvSetInput, type KvSetOutcome } from "./kv-write";

export const kvTask = {
  set: taskRef<KvSetInput, KvSetOutcome>("kv.set"),
};

export const kvTasks: TaskImpl[] = [implement(kvTask.set, (input, ctx) => ctx.writer().tx((tx) => writeEntry(tx, input)))];
