// Secret rules the web shares (supplement §7), import-free: web/api/rules.gen.ts is generated from this module
// (`bun run gen:api`, scripts/gen/rules.ts). The API's checks (service.ts) and the contract (contract.ts) import
// them from here.

/** Characters of a secret's name. */
export const SECRET_NAME_MAX = 128;
/** A secret's name, after trimming: a letter, then letters, digits, `_` and `-` (1..128 characters, case-sensitive). */
export const SECRET_NAME_RE = new RegExp(`^[A-Za-z][A-Za-z0-9_-]{0,${SECRET_NAME_MAX - 1}}$`);
/** UTF-8 bytes of a secret's value. */
export const MAX_SECRET_VALUE_BYTES = 10_240;
