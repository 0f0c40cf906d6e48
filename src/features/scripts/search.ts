// What search (supplement §20) reads of scripts, as plain data (features/search/specs.ts gathers every feature's):
// name, id or the source (`content`; its index: migration 0016).
import type { SearchSpec } from "../../platform/db/search";

export const scriptSearch: SearchSpec = { type: "script", table: "scripts", content: { kind: "text", column: "content" } };
