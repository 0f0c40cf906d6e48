// Cookies a page of the same site can plant (supplement §28, §28.1), handled for every request to the API host
// (app.ts `listen` runs it after the responder dispatch, so responder hits pass through untouched):
// - more than one session cookie: the auth plugin treats the request as signed out, and here its answer gets a
//   `Set-Cookie` expiring every copy this server can reach (cookies.ts expiredSessionCookies), placed before any
//   cookie the route itself sets (a sign-in in the same answer keeps its new cookie); on https the same for a lone
//   plain-named copy, which no longer signs in (only `__Host-` does);
// - a cookie bomb (a Cookie header over MAX_COOKIE_HEADER_BYTES): instead of a dead-end 431 the answer expires the
//   cookies it can, one batch per answer, so the user gets back in by reloading. Bun answers 431 by itself above
//   its header limit (16 KiB by default) before any handler runs; raiseHeaderLimit lifts that limit at start so
//   bombs as large as a browser can send (Chromium: 180 cookies × 4 KiB per site) reach this code.
import http from "node:http";
import type { Config } from "../../config/schema";
import { requestPath } from "../http/body";
import { expiredCookie, expiredSessionCookies, sessionCookieRules, sessionCookiesIn, cookiePairs, type SessionCookieRules } from "./cookies";
import { TOKEN_RE } from "../net/shared-rules";

/** A Cookie header longer than this is a bomb (Bun's own default limit for all headers together was 16 KiB). */
export const MAX_COOKIE_HEADER_BYTES = 16 * 1024;
/** Bun's request-header limit once raised: above the largest Cookie header a browser sends (~740 KB). */
export const SERVER_HEADER_LIMIT_BYTES = 1024 * 1024;
/** The `Set-Cookie` lines of one bomb answer stay under these (clients refuse answers with huge or too many headers:
 *  Chromium above 256 KiB, Bun's fetch above ~250 lines). */
const EXPIRY_BUDGET_BYTES = 96 * 1024;
const MAX_EXPIRY_LINES = 200;

/**
 * Raises Bun's limit on request headers for every server of the process. Bun reads the limit when it parses each
 * request, from one process-wide setting that `--max-http-header-size` (or BUN_OPTIONS) sets at launch and that
 * `node:http`'s `maxHeaderSize` setter changes at run time (measured with Bun 1.4.5, from a checkout and in a
 * compiled binary). Returns the limit in force afterwards (the old 16 KiB if a future Bun ignores the setter).
 */
export function raiseHeaderLimit(bytes = SERVER_HEADER_LIMIT_BYTES): number {
  try {
    if (http.maxHeaderSize < bytes) (http as { maxHeaderSize: number }).maxHeaderSize = bytes;
  } catch {
    // read-only in this runtime: the limit stays what the launch flags made it
  }
  return http.maxHeaderSize;
}

/**
 * Where a cookie sent with a request for `path` can be stored: every prefix that path-matches it (RFC 6265
 * §5.1.4), e.g. `/api/user` → `/`, `/api`, `/api/`, `/api/user`. At most 16.
 */
export function cookiePathsFor(path: string): string[] {
  const out = new Set<string>(["/"]);
  for (let i = path.indexOf("/", 1); i !== -1 && out.size < 16; i = path.indexOf("/", i + 1)) {
    out.add(path.slice(0, i));
    out.add(path.slice(0, i + 1));
  }
  if (out.size < 16) out.add(path);
  return [...out];
}

/**
 * The `Set-Cookie` lines that expire the cookies of an oversized Cookie header, within the budget: each name
 * host-only and with `Domain=` each of the UI host's parents, on each path the cookie can have, path by path (`/`
 * first, where bombs usually sit), so that every answer removes some and a reload continues with the rest. The
 * session cookie is kept when it is the only one (the user stays signed in); two or more are expired as on any request.
 */
export function bombExpirations(header: string, path: string, rules: SessionCookieRules): { lines: string[]; complete: boolean } {
  const sessions = sessionCookiesIn(header, rules.names);
  const names = [...new Set(cookiePairs(header).map(([name]) => name))].filter((n) => n !== "" && !rules.names.includes(n) && TOKEN_RE.test(n));
  const groups: string[][] = sessions.length > 1 ? [expiredSessionCookies(rules)] : [];
  for (const p of cookiePathsFor(path))
    for (const name of names) groups.push([undefined, ...rules.domains].map((domain) => expiredCookie(name, p, domain, rules.secure)));
  const lines: string[] = [];
  let bytes = 0;
  for (const group of groups) {
    const size = group.reduce((n, l) => n + l.length + 14, 0);
    if (lines.length + group.length > MAX_EXPIRY_LINES || bytes + size > EXPIRY_BUDGET_BYTES) return { lines, complete: false };
    lines.push(...group);
    bytes += size;
  }
  return { lines, complete: true };
}

const PAGE_HEADERS: Record<string, string> = {
  "cache-control": "no-store",
  "content-security-policy": "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

function bombResponse(request: Request, header: string, rules: SessionCookieRules): Response {
  const path = requestPath(request);
  const { lines, complete } = bombExpirations(header, path, rules);
  const message = complete
    ? "This browser sent more cookies for this site than the server accepts; they have been removed. Reload to continue."
    : "This browser sent more cookies for this site than the server accepts; some have been removed. Reload to remove more.";
  const headers = new Headers();
  for (const line of lines) headers.append("set-cookie", line);
  const api = path === "/api" || path.startsWith("/api/");
  if (api) {
    headers.set("content-type", "application/json; charset=utf-8");
    headers.set("cache-control", "no-store");
    headers.set("x-content-type-options", "nosniff");
    return new Response(JSON.stringify({ message, code: "COOKIES_TOO_LARGE" }), { status: 431, headers });
  }
  for (const [k, v] of Object.entries(PAGE_HEADERS)) headers.set(k, v);
  headers.set("content-type", "text/html; charset=utf-8");
  const body =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<title>Too many cookies</title></head><body><h1>Too many cookies</h1><p>${message}</p><p><a href="">Reload</a></p></body></html>`;
  return new Response(request.method === "HEAD" ? null : body, { status: 431, headers });
}

/** `response` with `lines` set before its own cookies (a route's new session cookie must come after the expiry). */
function withCookiesFirst(response: Response, lines: string[]): Response {
  let res = response;
  const own = res.headers.getSetCookie();
  try {
    res.headers.delete("set-cookie");
  } catch {
    // immutable headers (a response passed through as is): copy it
    res = new Response(res.body, res);
    res.headers.delete("set-cookie");
  }
  for (const line of [...lines, ...own]) res.headers.append("set-cookie", line);
  return res;
}

export type Handler = (request: Request) => Response | Promise<Response>;

/** Wraps the API host's handler with the two cookie rules above. */
export function cookieGuard(config: Pick<Config, "server" | "security">, next: Handler): Handler {
  const rules = sessionCookieRules(config);
  const expiry = expiredSessionCookies(rules);
  const stalePlain = rules.name !== rules.plain;
  return (request) => {
    const header = request.headers.get("cookie");
    if (header === null) return next(request);
    if (header.length > MAX_COOKIE_HEADER_BYTES) return bombResponse(request, header, rules);
    const found = sessionCookiesIn(header, rules.names);
    // On https only the `__Host-` name counts: a plain copy (left from before the switch to https, or planted) is
    // expired too, so the next sign-in does not meet it again as a second session cookie.
    const stale = stalePlain && found.some(([name]) => name === rules.plain);
    if (found.length < 2 && !stale) return next(request);
    const answer = next(request);
    return answer instanceof Promise ? answer.then((res) => withCookiesFirst(res, expiry)) : withCookiesFirst(answer, expiry);
  };
}
