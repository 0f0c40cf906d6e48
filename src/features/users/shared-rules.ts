// Account rules the web shares (supplement §3.3, §4.1), import-free: web/api/rules.gen.ts is generated from this
// module (`bun run gen:api`, scripts/gen/rules.ts). The API's checks (service.ts) and the contract (contract.ts)
// import them from here.

/** Characters of a password (400 WEAK_PASSWORD outside). */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 1024;
/** An operator-chosen handle (the user's responder subdomain label). */
export const HANDLE_RE = /^[a-z0-9]{3,26}$/;
/** Handles no user can have. */
export const RESERVED_HANDLES = ["api", "www", "responders"] as const;
