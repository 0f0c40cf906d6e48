// Cookies on the hit path (supplement §3.2, §11.3, §11.5 step 4): the visitor's Secbox session cookie is removed
// from what a path-form hit shows its script and history; a responder can never set the session cookie; path-form
// responses (the API's own origin) set no cookies at all and cannot clear the origin's data; on responder hosts a
// cookie's Domain attribute is removed so it stays on that host (never the API host or other users' hosts under
// the same parent domain). Pure functions, no I/O.

/** Request headers as Bun's `toJSON` gives them: lower-case names, repeats joined (`cookie` with `; `), `set-cookie` as a list. */
export type RawHeaders = Record<string, string | string[]>;

/** Headers a path-form response (the API origin) never sends: cookies for that origin, or clearing its data. */
export const PATH_FORM_DROPPED = new Set(["set-cookie", "clear-site-data"]);

/** A Set-Cookie value without its Domain attribute(s): the cookie stays host-only (RFC 6265 §5.3 step 6). */
export function hostOnlyCookie(value: string): string {
  if (!/;\s*domain\s*=/i.test(value)) return value;
  return value
    .split(";")
    .filter((part, i) => i === 0 || part.split("=", 1)[0]!.trim().toLowerCase() !== "domain")
    .join(";");
}

/** `raw` without the cookies `names` in its `cookie` header (the header goes when nothing else is left). */
export function withoutCookie(raw: RawHeaders, names: readonly string[]): RawHeaders {
  const header = raw.cookie;
  const text = typeof header === "string" ? header : (header ?? []).join("; ");
  const kept = text.split(";").filter((pair) => {
    const eq = pair.indexOf("=");
    return !names.includes((eq === -1 ? pair : pair.slice(0, eq)).trim());
  });
  const out: RawHeaders = { ...raw };
  const joined = kept
    .map((pair) => pair.trim())
    .filter((pair) => pair !== "")
    .join("; ");
  if (joined === "") delete out.cookie;
  else out.cookie = joined;
  return out;
}

/**
 * Whether a `Set-Cookie` value sets one of the cookies `names`. A nameless cookie (`=name=value`, or no `=` at all)
 * is sent back by browsers as its bare value, i.e. as `name=value`, so it counts as the cookie its value names.
 */
export function setsCookie(value: string, names: readonly string[]): boolean {
  const pair = value.split(";", 1)[0]!;
  const eq = pair.indexOf("=");
  const own = eq === -1 ? "" : pair.slice(0, eq).trim();
  if (own !== "") return names.includes(own);
  const bare = (eq === -1 ? pair : pair.slice(eq + 1)).trim();
  const eq2 = bare.indexOf("=");
  return names.includes((eq2 === -1 ? bare : bare.slice(0, eq2)).trim());
}
