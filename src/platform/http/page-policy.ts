// The Content-Security-Policy of our own HTML pages (the web UI, platform/ui/serve.ts; the API docs, http/docs.ts):
// pageContentSecurityPolicy builds both headers, each page says only where it differs. Supplement §28.1: scripts are pinned to a path of the page's own origin, `<origin>/assets/`;
// `'self'` would also allow every same-origin URL, the path-form responders under /api/webhooks/ included.
//
// pathSource: `<origin><path>` for the request's origin, which is the Host header when it is a plain host[:port]
// (anything else falls back to `server.public_url`), with the scheme of `server.public_url` when the host is its
// host (a TLS proxy in front talks http to us), else the request's own. CSP lets an `http:` source match the same
// host over https too, so a proxy that terminates TLS under another name still works. CSP host sources cannot
// name an IPv6 literal or a name with `_`: a page reached as http://[::1]:7070 gets `'self'` (not path-restricted).
const HOST_RE = /^(?:[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?)*\.?|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/;

/** What a CSP host-source can express (RFC-style labels of letters, digits and `-`). */
const CSP_ORIGIN_RE = /^https?:\/\/[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?(?::[0-9]{1,5})?$/;

export function requestOrigin(request: Request, publicUrl: string): string {
  const pub = new URL(publicUrl);
  const host = request.headers.get("host")?.toLowerCase();
  if (!host || !HOST_RE.test(host) || host === pub.host) return pub.origin;
  return `${request.url.startsWith("https:") ? "https:" : "http:"}//${host}`;
}

/** The CSP source for `path` (e.g. "/assets/") on the request's origin; `'self'` where CSP cannot name the host. */
export function pathSource(request: Request, publicUrl: string, path: string): string {
  const origin = requestOrigin(request, publicUrl);
  return CSP_ORIGIN_RE.test(origin) ? `${origin}${path}` : "'self'";
}

/** `'sha256-…'` sources for every inline <script> of an HTML page, for script-src. */
export function inlineScriptHashes(html: string): string[] {
  const hashes: string[] = [];
  for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    if (/\bsrc\s*=/i.test(m[1]!)) continue;
    hashes.push(`'sha256-${new Bun.CryptoHasher("sha256").update(m[2]!).digest("base64")}'`);
  }
  return hashes;
}

/** What a page of ours varies in its CSP; everything else is the same for every page. */
export interface PagePolicy {
  /** `default-src`: `'self'` (the UI) or `'none'` (the docs page). */
  defaultSrc: "'self'" | "'none'";
  /** The source scripts and styles load from (pathSource of the page's assets path). */
  assets: string;
  /** `'sha256-…'` sources of the page's inline scripts. */
  scriptHashes: readonly string[];
  /** `font-src`, when the page loads fonts (the UI: `'self'`). */
  fontSrc?: string;
}

/** The CSP header value of one of our pages: scripts from `assets` and the inline scripts' hashes only, styles from
 *  `assets` plus `'unsafe-inline'` (Mantine and Swagger UI set style attributes), images from our origin and data:,
 *  fetches and forms to our origin only, no plugins, no <base>, no framing. */
export function pageContentSecurityPolicy(p: PagePolicy): string {
  return [
    `default-src ${p.defaultSrc}`,
    [`script-src ${p.assets}`, ...p.scriptHashes].join(" "),
    `style-src ${p.assets} 'unsafe-inline'`,
    "img-src 'self' data:",
    ...(p.fontSrc === undefined ? [] : [`font-src ${p.fontSrc}`]),
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}
