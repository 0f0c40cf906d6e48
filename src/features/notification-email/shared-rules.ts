// Notification email rules the web shares (supplement §10.2), import-free: web/api/rules.gen.ts is generated from this
// module (`bun run gen:api`, scripts/gen/rules.ts). The API's checks (service.ts) import them from here.

/** Digits of a verification code. */
export const VERIFICATION_CODE_DIGITS = 6;
/** Seconds a code is valid. */
export const CODE_TTL_SEC = 900;
/** Wrong codes before the code is invalidated. */
export const MAX_FAILED_ATTEMPTS = 5;
/** Seconds between two code emails, and code emails per hour. */
export const SEND_COOLDOWN_SEC = 60;
export const SENDS_PER_HOUR = 5;
