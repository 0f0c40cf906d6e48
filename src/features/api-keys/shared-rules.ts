// API key rules the web shares (supplement §5, §22), import-free: web/api/rules.gen.ts is generated from this module
// (`bun run gen:api`, scripts/gen/rules.ts). The API's checks (service.ts) import them from here.

/** Characters of a key's name, after trimming. */
export const API_KEY_NAME_MAX = 128;
/** Keys per user (a fixed limit, not a tier's). */
export const MAX_API_KEYS = 30;
