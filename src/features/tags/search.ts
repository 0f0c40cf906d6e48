// What search (supplement §20) reads of tags, as plain data (features/search/specs.ts gathers every feature's): name
// or id.
import type { SearchSpec } from "../../platform/db/search";

export const tagSearch: SearchSpec = { type: "tag", table: "tags" };
