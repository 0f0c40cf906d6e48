// Settings rules the web shares (supplement §9), import-free: web/api/rules.gen.ts is generated from this module
// (`bun run gen:api`, scripts/gen/rules.ts). The contract and the service import them from here.

/** Values of `common.uiTheme`. */
export const UI_THEMES = ["light", "dark", "system"] as const;
/** UTF-8 bytes of a user's stored settings object. */
export const MAX_SETTINGS_BYTES = 65_536;
