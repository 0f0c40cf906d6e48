// Responder rules the web shares (supplement §11.1, §11.2, and the "Try it" addition), import-free:
// web/api/rules.gen.ts is generated from this module (`bun run gen:api`, scripts/gen/rules.ts). The API's checks
// (rules.ts, try-request.ts, match.ts) and the contract (contract.ts) import them from here.

/** Methods a request can have; a responder may also answer `ANY` of them. */
export const STANDARD_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE"] as const;
export const RESPONDER_METHODS = [...STANDARD_METHODS, "ANY"] as const;
/** `location.pathType`: = exact, ^ prefix (as a plain string), * the path and any sub-path. */
export const PATH_TYPES = ["=", "^", "*"] as const;

/** Characters of a responder's name, after trimming. */
export const NAME_MAX = 100;
/** `location.path`: 1..PATH_MAX characters, RFC 3986 path characters (unreserved, %XX, sub-delims, :, @, /). */
export const PATH_MAX = 255;
export const PATH_RE = /^\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/;
/** `location.subdomainPrefix`: 1..36 lower-case letters, digits or -, not starting or ending with -. */
export const PREFIX_RE = /^[a-z0-9]([a-z0-9-]{0,34}[a-z0-9])?$/;

/** `settings.statusCode` range. */
export const MIN_STATUS = 200;
export const MAX_STATUS = 599;
/** `settings.headers` (and "Try it" headers): at most MAX_HEADERS pairs, values without CR, LF, NUL and at most
 *  MAX_HEADER_VALUE_BYTES UTF-8 bytes (names are RFC 9110 tokens: platform/net/shared-rules.ts). */
export const MAX_HEADERS = 100;
export const MAX_HEADER_VALUE_BYTES = 8 * 1024;
export const BAD_HEADER_VALUE_RE = /[\r\n\0]/;
/** `settings.body`: UTF-8 bytes. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** `settings.notifications.throttleSeconds` when not given (or the tier's first allowed value without it). */
export const DEFAULT_THROTTLE = 3600;

/** "Try it": request body (UTF-8 bytes) and path-and-query length. */
export const TRY_MAX_BODY_BYTES = 1024 * 1024;
export const TRY_MAX_TARGET = 2048;
/** "Try it": the path and optional query, RFC 3986 pchar, `/` and `?` (and `%XX`). */
export const TRY_TARGET_RE = /^\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})*$/;
/** "Try it": headers Secbox sets itself (the responder's host, the framing of the body). */
export const TRY_RESERVED_HEADERS = ["host", "content-length", "transfer-encoding"] as const;
/** "Try it": the response body comes back up to this size (the client of a real hit gets it all; this is a preview). */
export const TRY_MAX_RESPONSE_BYTES = 1024 * 1024;

/** `_history?limit=`: at most this many records in one window. */
export const HISTORY_MAX_LIMIT = 1000;
