// Tracker rules the web shares (supplement §14–§17), import-free: web/api/rules.gen.ts is generated from this module
// (`bun run gen:api`, scripts/gen/rules.ts). The core's checks (params.ts), the kinds' (api/target.ts,
// page/target.ts) and the contracts (contract.ts, api/contract.ts, page/contract.ts) import them from here. API_* and
// PAGE_* are the two kinds' own.

/** Characters of a tracker's name, after trimming. */
export const NAME_MAX = 100;
/** `config.revisions` when not given (capped by the tier's max_revisions). */
export const DEFAULT_REVISIONS = 3;
/** `config.job.retryStrategy`: interval (ms, at most the schedule's minimum interval too) and attempts. */
export const RETRY_MIN_INTERVAL_MS = 60_000;
export const RETRY_MAX_INTERVAL_MS = 43_200_000;
export const RETRY_MAX_ATTEMPTS = 10;

/** Target URLs: absolute http(s), at most this many characters. */
export const MAX_URL_CHARS = 2048;
/** Extra request headers of a target: at most this many; names are RFC 9110 tokens (platform/net/shared-rules.ts),
 *  values without control characters other than tab (HEADER_VALUE_BAD_RE; also user agents). */
export const MAX_HEADERS = 100;
export const HEADER_VALUE_BAD_RE = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** The phases every run ends with, after the kind's own. */
export const CORE_PHASES = ["compare", "persist", "notify"] as const;

/** API trackers (§15): request methods, requests per target, request body, accepted statuses, `config.timeout` and
 *  `_test`'s `timeout` (ms), and the kind's own phases. */
export const API_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export const API_MAX_REQUESTS = 10;
export const API_MAX_REQUEST_BODY_BYTES = 1_048_576;
export const API_MIN_STATUS = 100;
export const API_MAX_STATUS = 599;
export const API_MAX_ACCEPT_STATUSES = 500;
export const API_TIMEOUT_MS = { min: 1000, max: 60_000, default: 10_000 } as const;
export const API_PHASES = ["configurator", "request", "extractor"] as const;

/** Page trackers (§16): `waitFor` selector length and delay, user agent length, headers Chromium refuses to set
 *  (every navigation would fail), `config.timeout` (ms, the whole run), and the kind's own phases. */
export const PAGE_MAX_SELECTOR_CHARS = 1024;
export const PAGE_MAX_DELAY_MS = 30_000;
export const PAGE_MAX_USER_AGENT_CHARS = 512;
export const PAGE_BROWSER_CONTROLLED_HEADERS_RE =
  /^(host|connection|content-length|transfer-encoding|keep-alive|upgrade|te|trailer|cookie2|proxy-.*)$/i;
export const PAGE_TIMEOUT_MS = { min: 5000, max: 120_000, default: 30_000 } as const;
export const PAGE_PHASES = ["browser", "navigate", "extract"] as const;
