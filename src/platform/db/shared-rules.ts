// Rules of the platform's database mechanisms the web shares, import-free: web/api/rules.gen.ts is generated from
// this module (`bun run gen:api`, scripts/gen/rules.ts) as `db`. search.ts imports them from here.

/** Search (supplement §20): queries shorter than this many characters match names and ids only, not content (the
 *  content index is made of trigrams). */
export const MIN_CONTENT_CHARS = 3;
