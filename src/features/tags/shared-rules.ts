// Tag rules the web shares (supplement §6), import-free: web/api/rules.gen.ts is generated from this module
// (`bun run gen:api`, scripts/gen/rules.ts). The API's checks (service.ts, routes.ts) import them from here.

/** Named tag colours; any other colour is `#rgb` / `#rrggbb` (stored lower-case). */
export const TAG_COLORS = ["default", "primary", "success", "accent", "warning", "danger"] as const;
export const HEX_COLOR_RE = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
/** Characters of a tag name, after trimming. */
export const TAG_NAME_MAX = 50;
/** Tags on one entity. */
export const MAX_TAGS_PER_ENTITY = 10;
