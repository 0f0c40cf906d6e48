// A responder's records for its HAR (har.ts), page by page (issue 29: a HAR of 1,000 records with 1 MB bodies must
// neither be read in one query nor held at once): the source the service hands HarDocument. On SQLite a work thread
// reads each page on its own read-only connection and renders it (`harPageTask`, under the owner's share of the work
// pool), so the records never reach the event loop; on PostgreSQL the main thread reads each page (Bun.SQL is
// asynchronous) and the pool renders it (har.ts harEntriesTask).
import type { Db } from "../../platform/db/db";
import { implement, taskRef, transfer, type TaskImpl } from "../../platform/work/task";
import { RENDER_BYTES, renderEntries, type HarOptions, type HarPageInput, type HarPageOutput, type HarSource } from "./har";
import { respondersStore } from "./store";

export const harPageTask = taskRef<HarPageInput, HarPageOutput>("responders.harPage");

export function harSource(db: Db, responderId: string, opts: HarOptions, readOnThread: boolean): HarSource {
  return {
    page: (after) => respondersStore.historyPageForward(db, responderId, after, RENDER_BYTES),
    ...(readOnThread
      ? { onThread: (after: string | null) => ({ task: harPageTask, input: { responderId, after, maxBytes: RENDER_BYTES, opts } }) }
      : {}),
  };
}

export const harPageTasks: TaskImpl[] = [
  implement(harPageTask, async ({ responderId, after, maxBytes, opts }, ctx) => {
    const rows = await respondersStore.historyPageForward(ctx.db(), responderId, after, maxBytes);
    const bytes = renderEntries(rows, opts);
    return transfer({ bytes, last: rows.at(-1)?.id ?? null }, [bytes]);
  }),
];
