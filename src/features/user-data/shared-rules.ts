// User data rules the web shares (supplement §19), import-free: web/api/rules.gen.ts is generated from this module
// (`bun run gen:api`, scripts/gen/rules.ts). The checks (file.ts, exporter.ts, importer.ts, plan.ts, crypto.ts,
// clone.ts) and the contract (contract.ts) import them from here.

/** `data` members holding entities, in the order of §19.2 (also the order an import writes them in, tags and secrets
 *  first so references to them can be remapped). */
export const ENTITY_TYPES = [
  "tags",
  "scripts",
  "secrets",
  "responders",
  "certificateTemplates",
  "privateKeys",
  "contentSecurityPolicies",
  "pageTrackers",
  "apiTrackers",
] as const;
/** The types whose export may include history (responder requests, tracker revisions): `includeHistory`. */
export const TYPES_WITH_HISTORY = ["responders", "pageTrackers", "apiTrackers"] as const;

/** Import modes and what to do with an entity whose name exists (§19.3). */
export const IMPORT_MODES = ["merge", "apply"] as const;
export const CONFLICT_RESOLUTIONS = ["rename", "overwrite", "skip"] as const;

/** `secretsPassphrase` of an export (and of an import of secret values): characters. */
export const MIN_PASSPHRASE_CHARS = 8;
export const MAX_PASSPHRASE_CHARS = 1024;

/** Operator clone (§19.5): `recoveryLinkExpiresIn` in seconds. */
export const CLONE_LINK_TTL_SEC = { min: 60, max: 604_800, default: 3600 } as const;
