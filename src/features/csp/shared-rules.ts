// CSP rules the web shares (supplement §13.1, §13.4), import-free: web/api/rules.gen.ts is generated from this module
// (`bun run gen:api`, scripts/gen/rules.ts). directives.ts (the value grammar), the contract and the service import
// them from here; the policy editor checks values with the same lists and patterns.

/** Directives whose value is a source list. */
export const SOURCE_LIST_DIRECTIVES = [
  "default-src",
  "child-src",
  "connect-src",
  "font-src",
  "frame-src",
  "fenced-frame-src",
  "img-src",
  "manifest-src",
  "media-src",
  "object-src",
  "script-src",
  "script-src-elem",
  "script-src-attr",
  "style-src",
  "style-src-elem",
  "style-src-attr",
  "worker-src",
  "base-uri",
  "form-action",
  "frame-ancestors",
] as const;

export const OTHER_DIRECTIVES = [
  "report-uri",
  "sandbox",
  "upgrade-insecure-requests",
  "webrtc",
  "require-trusted-types-for",
  "trusted-types",
  "report-to",
] as const;

/** Directives in one policy. */
export const MAX_DIRECTIVES = 50;
/** Characters of a policy's name, after trimming. */
export const MAX_POLICY_NAME = 100;

export const SANDBOX_TOKENS = [
  "allow-downloads",
  "allow-forms",
  "allow-modals",
  "allow-orientation-lock",
  "allow-pointer-lock",
  "allow-popups",
  "allow-popups-to-escape-sandbox",
  "allow-presentation",
  "allow-same-origin",
  "allow-scripts",
  "allow-top-navigation",
  "allow-top-navigation-by-user-activation",
  "allow-top-navigation-to-custom-protocols",
] as const;

/**
 * Keyword sources, lower-case, quoted: those of CSP3 and the current drafts that Chromium parses ('wasm-eval' is
 * Chromium's older name of 'wasm-unsafe-eval' and still enforced). Retired draft keywords ('unsafe-allow-redirects',
 * 'unsafe-hashed-attributes') are ignored by browsers, so they are unknown keywords here too.
 */
export const SOURCE_KEYWORDS = [
  "'self'",
  "'none'",
  "'unsafe-inline'",
  "'unsafe-eval'",
  "'strict-dynamic'",
  "'unsafe-hashes'",
  "'report-sample'",
  "'wasm-unsafe-eval'",
  "'wasm-eval'",
  "'inline-speculation-rules'",
  "'trusted-types-eval'",
  "'report-sha256'",
  "'report-sha384'",
  "'report-sha512'",
] as const;

// ---- grammar of source expressions (CSP3 §2.3.1, as Chromium parses it) ------------------------------------

export const SCHEME_SOURCE_RE = /^[a-z][a-z0-9+.-]*:$/i;
/**
 * [scheme "://"] host [":" port] [path]; host = "*" / ["*."] labels [.]; the path is anything up to a `?` or `#`.
 * Groups: scheme, host, port, path. Callers have checked the value is printable ASCII without `;` and `,`.
 */
export const HOST_SOURCE_RE = /^(?:([a-z][a-z0-9+.-]*):\/\/)?(\*|(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?)(?::(\d{1,5}|\*))?(\/[^?#]*)?$/i;
export const NONCE_SOURCE_RE = /^'nonce-([A-Za-z0-9+/_-]+={0,2})'$/i;
export const HASH_SOURCE_RE = /^'(sha256|sha384|sha512)-([A-Za-z0-9+/_-]+={0,2})'$/i;
/** A Trusted Types policy name (`trusted-types`). */
export const POLICY_NAME_RE = /^[A-Za-z0-9\-#=_/@.%]+$/;
/** Printable ASCII other than space, `;` and `,` (§13.1 value rule; non-ASCII cannot travel in a header). */
export const VALUE_RE = /^[\x21-\x2b\x2d-\x3a\x3c-\x7e]+$/;

/** Deliveries of `_serialize` (§13.4), and where a `remote` import reads the policy (§13.3). */
export const SERIALIZE_SOURCES = ["enforcingHeader", "reportOnlyHeader", "meta"] as const;
export const REMOTE_SOURCES = ["enforcingHeader", "reportOnlyHeader", "meta"] as const;
/** A remote import's one GET: its time limit, and the redirects it follows when asked. */
export const REMOTE_TIMEOUT_MS = 10_000;
export const REMOTE_MAX_REDIRECTS = 10;
