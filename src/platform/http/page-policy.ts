// Pieces of the Content-Security-Policy of our own HTML pages (the web UI, platform/ui/serve.ts; the API docs,
// http/docs.ts). Supplement §28.1: scripts are pinned to a path of the page's own origin, `<origin>/assets/`;
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
