// Message rules (supplement §21, §4.2 EmailParams), import-free: web/api/rules.gen.ts is generated from this module
// (`bun run gen:api`, scripts/gen/rules.ts). The contract's constraints and the service's checks import them.

/** Characters of a contact message. */
export const MESSAGE_MAX_CHARS = 10_000;
/** Accepted contact messages per client IP and hour. */
export const MESSAGES_PER_HOUR = 5;
/** Characters of an operator email's subject, text and HTML body. */
export const SUBJECT_MAX_CHARS = 200;
export const TEXT_MAX_CHARS = 100_000;
export const HTML_MAX_CHARS = 500_000;
