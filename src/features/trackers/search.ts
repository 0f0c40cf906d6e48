// What search (supplement §20) reads of trackers, as plain data (features/search/specs.ts gathers every feature's):
// name, id, and the URL (page trackers: target.url) or any request URL (API trackers: target.requests[].url). The
// index (migration 0016) holds those URLs on SQLite and the target JSON on PostgreSQL.
import type { SearchSpec } from "../../platform/db/search";

export const pageTrackerSearch: SearchSpec = {
  type: "pageTracker",
  table: "trackers",
  filter: { sql: "e.kind = ?", params: ["page"] },
  content: { kind: "jsonText", column: "target", path: "$.url" },
};
export const apiTrackerSearch: SearchSpec = {
  type: "apiTracker",
  table: "trackers",
  filter: { sql: "e.kind = ?", params: ["api"] },
  content: { kind: "jsonArrayAny", column: "target", arrayPath: "$.requests", path: "$.url" },
};
