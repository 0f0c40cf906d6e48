// Pure helpers of the hit path: host and path-form parsing (supplement §11.3) and location matching with
// its precedence (§11.4). No I/O; unit-tested in match.test.ts and end to end in responders.hits.test.ts.
import type { PathType } from "./contract";
import { STANDARD_METHODS } from "./shared-rules";

const STANDARD_SET: ReadonlySet<string> = new Set(STANDARD_METHODS);
export const isStandardMethod = (m: string) => STANDARD_SET.has(m);

export interface HostHit {
  /** Lower-case handle. */
  handle: string;
  /** Lower-case prefix; "" = none. `null` = the label had an empty prefix (`-abc`), which no responder can own. */
  prefix: string | null;
}

/**
 * A responder host is `<label>.<domain>` (one DNS label, any case, any port, a trailing dot allowed). The label splits at its last
 * `-` into prefix and handle. Anything else (other hosts, IP literals, deeper names) is the API: undefined.
 */
export function parseResponderHost(hostHeader: string | null, domainSuffix: string): HostHit | undefined {
  if (hostHeader === null || hostHeader.length <= domainSuffix.length || hostHeader.charCodeAt(0) === 91 /* [ */) return undefined;
  let host = hostHeader;
  const colon = host.lastIndexOf(":");
  if (colon !== -1) host = host.slice(0, colon);
  host = host.toLowerCase();
  if (host.endsWith(".")) host = host.slice(0, -1); // the absolute form of a name (`abc.localhost.`)
  if (!host.endsWith(domainSuffix)) return undefined;
  const label = host.slice(0, host.length - domainSuffix.length);
  if (label.length === 0 || label.includes(".")) return undefined;
  const dash = label.lastIndexOf("-");
  if (dash === -1) return { handle: label, prefix: "" };
  const prefix = label.slice(0, dash);
  return { handle: label.slice(dash + 1), prefix: prefix === "" ? null : prefix };
}

export const PATH_FORM_PREFIX = "/api/webhooks/";

/**
 * `/api/webhooks/<handle>[/<rest>]` → handle and the responder path (`/` or `/<rest>`). The literal
 * `responders` is the management API, never a handle; an empty handle is not a hit either.
 */
export function parsePathForm(path: string): { handle: string; path: string } | undefined {
  if (!path.startsWith(PATH_FORM_PREFIX)) return undefined;
  const slash = path.indexOf("/", PATH_FORM_PREFIX.length);
  const handle = (slash === -1 ? path.slice(PATH_FORM_PREFIX.length) : path.slice(PATH_FORM_PREFIX.length, slash)).toLowerCase();
  if (handle === "" || handle === "responders") return undefined;
  return { handle, path: slash === -1 ? "/" : path.slice(slash) };
}

/**
 * Path and query of a request URL as Bun gives it: `http://host/path?query`; just `/path?query` when the
 * Host header is not a valid host; the authority (`host:443`) for an authority-form CONNECT.
 */
export function splitUrl(url: string): { path: string; rawQuery: string } {
  const scheme = url.indexOf("://");
  const start = url.charCodeAt(0) === 47 /* / */ ? 0 : scheme === -1 ? -1 : url.indexOf("/", scheme + 3);
  if (start === -1) {
    const q = url.indexOf("?");
    return { path: "/", rawQuery: q === -1 ? "" : url.slice(q + 1) };
  }
  const q = url.indexOf("?", start);
  const hash = url.indexOf("#", start);
  const end = q !== -1 ? q : hash !== -1 ? hash : url.length;
  const rawQuery = q === -1 ? "" : url.slice(q + 1, hash > q ? hash : url.length);
  return { path: url.slice(start, end), rawQuery };
}

/** Matching form of a path: trailing `/` removed (except for `/`), lower-cased (supplement §11.4 step 3). */
export function matchPath(path: string): string {
  let end = path.length;
  while (end > 1 && path.charCodeAt(end - 1) === 47 /* / */) end--;
  return (end === path.length ? path : path.slice(0, end)).toLowerCase();
}

export interface Matchable {
  method: string;
  pathType: PathType;
  /** `matchPath` of the stored path. */
  pathLower: string;
}

/** Does a stored location match the (matching-form) request path? */
export function locationMatches(pathType: PathType, stored: string, request: string): boolean {
  switch (pathType) {
    case "=":
      return request === stored;
    case "*":
      return stored === "/" || request === stored || (request.startsWith(stored) && request.charCodeAt(stored.length) === 47);
    case "^":
      return request.startsWith(stored);
  }
}

const TYPE_RANK: Record<PathType, number> = { "=": 0, "*": 1, "^": 2 };

/** Orders candidates so the first match wins: longest stored path, then `=` before `*` before `^`. */
export function byPrecedence(a: Matchable, b: Matchable): number {
  return b.pathLower.length - a.pathLower.length || TYPE_RANK[a.pathType] - TYPE_RANK[b.pathType];
}

/**
 * The winner among `sorted` (already in `byPrecedence` order) for an upper-case standard method and a
 * matching-form path: method equal or ANY, location matching. `HEAD` matches only HEAD and ANY.
 */
export function findWinner<T extends Matchable>(sorted: readonly T[], method: string, path: string): T | undefined {
  for (const r of sorted) {
    if (r.method !== method && r.method !== "ANY") continue;
    if (locationMatches(r.pathType, r.pathLower, path)) return r;
  }
  return undefined;
}

/** Two responders' methods overlap when equal or when either is ANY (supplement §11.2 conflicts). */
export const methodsOverlap = (a: string, b: string) => a === b || a === "ANY" || b === "ANY";
