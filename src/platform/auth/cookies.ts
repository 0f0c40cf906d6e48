// The session cookie (supplement §3.2, §28, §28.1): HttpOnly, SameSite=Lax, Path=/, never a Domain attribute, so
// responder hosts never receive it. When `server.public_url` is https it is Secure and named
// `__Host-<security.session_cookie>`: browsers accept that name only host-only, on Path=/, from the host itself, so a
// page on another host of the same site (a responder host) cannot plant or replace it. A request carrying more than
// one session cookie (either name) is signed out (auth/plugin.ts) and its answer expires every copy this server can
// reach (auth/cookie-guard.ts, expiredSessionCookies below).
import { getDomain } from "tldts";
import type { Config } from "../../config/schema";

export const HOST_PREFIX = "__Host-";

/** What the server needs to know about its session cookie, derived once from the configuration. */
export interface SessionCookieRules {
  /** The name that authenticates and that sign-in sets: `__Host-<name>` on https (a prefixed name as is). */
  name: string;
  /** Every name that counts as a session cookie: the configured one and its `__Host-` form (or just a prefixed name). */
  names: string[];
  /** The configured name without a `__Host-` prefix added (the copies a same-site page could plant). */
  plain: string;
  secure: boolean;
  /** The UI's host (`server.public_url`) and the parents of it a cookie `Domain` can name (not public suffixes). */
  uiHost: string;
  domains: string[];
}

const isPrefixed = (name: string) => name.startsWith(HOST_PREFIX) || name.startsWith("__Secure-");

export function sessionCookieRules(config: Pick<Config, "server" | "security">): SessionCookieRules {
  const configured = config.security.session_cookie;
  const url = new URL(config.server.public_url);
  const secure = url.protocol === "https:";
  const prefixed = isPrefixed(configured);
  const name = secure && !prefixed ? HOST_PREFIX + configured : configured;
  const names = prefixed ? [configured] : [configured, HOST_PREFIX + configured];
  const uiHost = url.hostname.toLowerCase().replace(/\.$/, "");
  return { name, names, plain: configured, secure, uiHost, domains: cookieDomains(uiHost) };
}

/** The effective session cookie name for a configuration (see SessionCookieRules.name). */
export const sessionCookieName = (config: Pick<Config, "server" | "security">) => sessionCookieRules(config).name;

/**
 * The host and each parent of it that a cookie's `Domain` attribute can name: up to the registrable domain, per
 * the public suffix list (private section included; an unknown TLD such as `lan` counts as a suffix). None for
 * an IP address, `localhost` or a public suffix itself (browsers refuse those as a Domain).
 * `ui.secbox.example.com` → [ui.secbox.example.com, secbox.example.com, example.com]; `secbox.lan` → [secbox.lan].
 */
export function cookieDomains(host: string): string[] {
  const registrable = getDomain(host, { allowPrivateDomains: true });
  if (!registrable) return [];
  const out: string[] = [];
  let h = host;
  for (;;) {
    out.push(h);
    if (h === registrable) return out;
    const dot = h.indexOf(".");
    if (dot === -1) return out;
    h = h.slice(dot + 1);
  }
}

export function sessionCookie(name: string, token: string, maxAgeSec: number, secure: boolean): string {
  return `${name}=${token}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSec}${secure ? "; Secure" : ""}`;
}

export const clearedSessionCookie = (name: string, secure: boolean) => sessionCookie(name, "", 0, secure);

/** A `Set-Cookie` that expires the cookie `name` stored for `path` (and `domain`, host-only when absent). */
export function expiredCookie(name: string, path: string, domain: string | undefined, secure: boolean): string {
  return `${name}=; Path=${path}${domain ? `; Domain=${domain}` : ""}; Max-Age=0; Expires=Thu, 01 Jan 1970 00:00:00 GMT${secure ? "; Secure" : ""}`;
}

/**
 * The answer to a request with more than one session cookie (§28.1): the plain name host-only on `/` and `/api`,
 * and with `Domain=` each of `rules.domains` on both paths. The `__Host-` cookie is left alone: only this host
 * can set it, so once the planted copies are gone it authenticates again. A configured `__Host-` name can only
 * exist host-only on `/`.
 */
export function expiredSessionCookies(rules: SessionCookieRules): string[] {
  const { plain, secure } = rules;
  if (plain.startsWith(HOST_PREFIX)) return [expiredCookie(plain, "/", undefined, true)];
  const out: string[] = [];
  for (const domain of [undefined, ...rules.domains])
    for (const path of ["/", "/api"]) out.push(expiredCookie(plain, path, domain, secure || plain.startsWith("__Secure-")));
  return out;
}

/** The `name=value` pairs of a Cookie header, in order (a pair without `=` has an empty name, as browsers send it). */
export function cookiePairs(header: string | null): [string, string][] {
  if (!header) return [];
  const out: [string, string][] = [];
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) {
      if (part.trim() !== "") out.push(["", part.trim()]);
      continue;
    }
    out.push([part.slice(0, eq).trim(), part.slice(eq + 1).trim()]);
  }
  return out;
}

/** The session cookies of a Cookie header (any of `names`), in order. */
export function sessionCookiesIn(header: string | null, names: readonly string[]): [string, string][] {
  return cookiePairs(header).filter(([name]) => names.includes(name));
}

export function readCookie(header: string | null, name: string): string | undefined {
  return cookiePairs(header).find(([n]) => n === name)?.[1];
}
