// What search (supplement §20) reads of certificate templates and private keys, as plain data
// (features/search/specs.ts gathers every feature's): name or id, never key material.
import type { SearchSpec } from "../../platform/db/search";

export const templateSearch: SearchSpec = { type: "certificateTemplate", table: "certificate_templates" };
export const privateKeySearch: SearchSpec = { type: "privateKey", table: "private_keys" };
