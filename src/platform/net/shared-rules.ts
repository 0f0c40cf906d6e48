// HTTP syntax rules the web shares (RFC 9110 §5.1, §5.6.2), import-free: web/api/rules.gen.ts is generated from this
// module (`bun run gen:api`, scripts/gen/rules.ts). Every check of a header name or a method — the outbound client
// (client.ts), op_proxy_request (src/sandbox/proxy.ts), responder headers and script results, tracker headers, cookie
// names (platform/auth/cookie-guard.ts), CSP report-to group names (features/csp/directives.ts) — imports it from here.

/** An RFC 9110 token: a header name, a method, a cookie name (RFC 6265 uses the same token). */
export const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
