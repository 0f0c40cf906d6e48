// What search (supplement §20) reads of secrets, as plain data (features/search/specs.ts gathers every feature's):
// name or id, never the value.
import type { SearchSpec } from "../../platform/db/search";

export const secretSearch: SearchSpec = { type: "secret", table: "secrets" };
