// Database upkeep on the work pool: the SQLite checkpoint the main connection leaves to a work thread
// (SqliteDb.offloadCheckpoints). PASSIVE: it copies what it can of the WAL into the database without waiting for, or
// blocking, readers and the writer; its syncs happen on this thread. Listed by the worker entry (src/work-tasks.ts).
import { implement, taskRef, type TaskImpl } from "./task";

export const dbTask = {
  checkpoint: taskRef<null, void>("db.checkpoint"),
};

export const dbTasks: TaskImpl[] = [
  implement(dbTask.checkpoint, async (_input, ctx) => {
    await ctx.writer().exec("PRAGMA wal_checkpoint(PASSIVE)");
  }),
];
