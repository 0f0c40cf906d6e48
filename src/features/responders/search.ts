// What search (supplement §20) reads of responders, as plain data (features/search/specs.ts gathers every feature's):
// name, id or location.path (stored lower-cased in `path_lower`; its index: migration 0016).
import type { SearchSpec } from "../../platform/db/search";

export const responderSearch: SearchSpec = { type: "responder", table: "responders", content: { kind: "text", column: "path_lower" } };
