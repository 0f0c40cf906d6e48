// Script rules the web shares (supplement §8, §22), import-free: web/api/rules.gen.ts is generated from this module
// (`bun run gen:api`, scripts/gen/rules.ts). Responder and tracker scripts have the same source limit.

/** UTF-8 bytes of one script source (library scripts, responder scripts, tracker configurators and extractors). */
export const MAX_SCRIPT_BYTES = 51_200;
/** Characters of a library script's name. */
export const MAX_SCRIPT_NAME = 128;
export const SCRIPT_TYPES = ["responder", "api_configurator", "api_extractor", "page_extractor", "universal"] as const;
/** `?context=` of the list: which script types a consumer may pick from. */
export const SCRIPT_CONTEXTS = {
  responder: ["responder", "universal"],
  api_tracker: ["api_configurator", "api_extractor", "universal"],
  page_tracker: ["page_extractor", "universal"],
} as const;
