// Search across the caller's resources (supplement §20, §28): every entity type, by name (case-insensitive
// substring), id (equal to the query) and content (script source, responder path, tracker URLs; queries of 3
// characters or more). The search feature owns no table: the matching is platform/db/search.ts's runSearch over the
// specs each owning feature exports as plain data (specs.ts), over the user's rows only. Names and ids are all a hit
// shows: never secret values or key material.
//
// One search per user at a time: a second one while the first runs answers 429 RATE_LIMITED (Retry-After: 1), so one
// user cannot queue searches against the database. (Per process: with several instances, one per instance.)
import { invalid, rateLimited } from "../../platform/core/errors";
import { charLength } from "../../platform/core/validate";
import { runSearch } from "../../platform/db/search";
import type { Runtime } from "../../platform/runtime";
import type { Work } from "../../platform/work/pool";
import { SEARCH_TYPES, specsFor, type SearchType } from "./specs";
import { searchTask } from "./tasks";
import type { SearchResults as SearchResult } from "./contract";
import { DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_CHARS } from "./shared-rules";

export { SEARCH_TYPES, type SearchType } from "./specs";

/** Runs one validated search: `text` trimmed and non-empty, `types` known, `limit` 1..100. */
export type SearchRunner = (userId: string, text: string, types: readonly SearchType[], limit: number) => Promise<SearchResult>;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export class SearchService {
  /** Users with a search running. */
  private readonly running = new Set<string>();
  /** Where a search runs: on SQLite a work thread's own read connection (tasks.ts), under the user's share of the
   *  work pool; on PostgreSQL (or without a pool) runSearch on the runtime's database. Replaceable (a test holding a
   *  search to see the second one refused). */
  runner: SearchRunner;

  constructor(rt: Runtime, work?: Work) {
    this.runner =
      work && rt.db.dialect === "sqlite"
        ? async (userId, text, types, limit) => (await work.run(userId, searchTask, { userId, text, types: [...types], limit })) as SearchResult
        : async (userId, text, types, limit) => (await runSearch(rt.db, userId, text, specsFor(types), limit)) as SearchResult;
  }

  /** `{query, types?, limit?}` → `{items, total}`; 429 while another search of the same user runs. */
  async search(userId: string, body: unknown): Promise<SearchResult> {
    if (!isObject(body)) throw invalid("body: must be a JSON object {query, types?, limit?}");
    if (typeof body.query !== "string") throw invalid("query: must be a string");
    const text = body.query.trim();
    if (charLength(text) > MAX_QUERY_CHARS) throw invalid(`query: must be at most ${MAX_QUERY_CHARS} characters`);
    if (text.includes("\u0000")) throw invalid("query: must not contain the NUL character (U+0000)");
    const types = parseTypes(body.types);
    const limit = parseLimit(body.limit);
    if (text === "") return { items: [], total: 0 };
    if (this.running.has(userId)) throw rateLimited(1, "Another search of yours is still running");
    this.running.add(userId);
    try {
      return await this.runner(userId, text, types, limit);
    } finally {
      this.running.delete(userId);
    }
  }
}

/** `types`: absent, null or [] = every type; unknown → 400; repeats collapse. */
function parseTypes(raw: unknown): readonly SearchType[] {
  if (raw === undefined || raw === null) return SEARCH_TYPES;
  if (!Array.isArray(raw)) throw invalid(`types: must be an array of ${SEARCH_TYPES.join(", ")}`);
  raw.forEach((t, i) => {
    if (typeof t !== "string" || !(SEARCH_TYPES as readonly string[]).includes(t))
      throw invalid(`types[${i}]: must be one of ${SEARCH_TYPES.join(", ")}`);
  });
  if (raw.length === 0) return SEARCH_TYPES;
  const wanted = new Set(raw as string[]);
  return SEARCH_TYPES.filter((t) => wanted.has(t));
}

/** `limit`: default 20, above 100 → 100, below 1 or not an integer → 400. */
function parseLimit(raw: unknown): number {
  if (raw === undefined || raw === null) return DEFAULT_LIMIT;
  if (typeof raw !== "number" || !Number.isInteger(raw)) throw invalid("limit: must be an integer");
  if (raw < 1) throw invalid("limit: must be at least 1");
  return Math.min(raw, MAX_LIMIT);
}
