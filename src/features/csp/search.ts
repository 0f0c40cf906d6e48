// What search (supplement §20) reads of content security policies, as plain data (features/search/specs.ts gathers
// every feature's): name or id.
import type { SearchSpec } from "../../platform/db/search";

export const policySearch: SearchSpec = { type: "contentSecurityPolicy", table: "content_security_policies" };
