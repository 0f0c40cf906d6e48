// Where the sign-in pages send a user once signed in: the `next` parameter, when it is a path of this app
// (supplement §28.1). Pure, so bun test covers it (safe-next.test.ts).

/**
 * `next` when it is a same-origin path (with its query and fragment), else "/". Tab, CR and LF are removed first,
 * since the URL parser drops them (`/%09/evil.example` arrives as "/\t/evil.example", which a browser reads as
 * "//evil.example"); the answer is the path as the URL parser resolves it against `origin`, so it is checked in
 * the form it is used: never absolute, protocol-relative (`//`, `/\`) or another origin (open redirect).
 */
export function safeNext(next: string | null, origin: string): string {
  if (!next) return "/";
  const path = next.replace(/[\t\n\r]/g, "");
  const protocolRelative = (p: string) => p.startsWith("//") || p.startsWith("/\\");
  if (!path.startsWith("/") || protocolRelative(path)) return "/";
  let url: URL;
  try {
    url = new URL(path, origin);
  } catch {
    return "/";
  }
  const out = url.pathname + url.search + url.hash;
  return url.origin === origin && !protocolRelative(out) ? out : "/";
}
