// Search rules the web shares (supplement §20), import-free: web/api/rules.gen.ts is generated from this module
// (`bun run gen:api`, scripts/gen/rules.ts). The contract and the service import them from here. (Which queries match
// content is the platform's rule: src/platform/db/shared-rules.ts MIN_CONTENT_CHARS.)

/** Characters of a query, after trimming. */
export const MAX_QUERY_CHARS = 200;
/** Items of an answer: the default, and the most (a larger `limit` becomes this). */
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
