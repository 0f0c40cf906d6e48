// The search on the work pool (issue 29): on SQLite a search runs on a work thread over that thread's own read-only
// connection (platform/work reader.ts; WAL: it sees committed data), so its cost — index reads and the substring
// verification of a user's candidate rows, up to ~70 ms for a user's 5 MB of hostile scripts — never holds the event
// loop, and goes through the caller's fair share of the pool. The worker entry (src/work-tasks.ts) lists
// `searchTasks`. On PostgreSQL the search stays on the main thread (Bun.SQL is asynchronous: the database does the
// work).
import { runSearch } from "../../platform/db/search";
import { implement, taskRef, type TaskImpl } from "../../platform/work/task";
import { specsFor, type SearchType } from "./specs";

export interface SearchInput {
  userId: string;
  text: string;
  types: SearchType[];
  limit: number;
}

export type SearchOutput = Awaited<ReturnType<typeof runSearch>>;

export const searchTask = taskRef<SearchInput, SearchOutput>("search.run");

export const searchTasks: TaskImpl[] = [implement(searchTask, (i, ctx) => runSearch(ctx.db(), i.userId, i.text, specsFor(i.types), i.limit))];
