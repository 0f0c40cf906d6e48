// Private-target guard for every outbound request (supplement §1.1). Pure address/name checks plus the single
// DNS resolution whose checked result the client connects to (no second lookup).
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { MSG_BLOCKED, MSG_CONNECT, OutboundError } from "./errors";

/** Resolves a host name to its addresses (IPv4/IPv6 text). Injectable for tests and custom DNS. */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) => {
  const rows = await lookup(host, { all: true });
  return rows.map((r) => r.address);
};

// ---- address parsing -------------------------------------------------------------------------------------

/** Strict dotted-decimal IPv4 (no octal/hex/short forms: those are not what a resolver returns). */
export function parseIPv4(s: string): [number, number, number, number] | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  const out: number[] = [];
  for (const p of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p)) return null;
    const n = Number(p);
    if (n > 255) return null;
    out.push(n);
  }
  return out as [number, number, number, number];
}

/** IPv6 text (optionally with an embedded IPv4 tail and a %zone) → 8 groups of 16 bits. */
export function parseIPv6(input: string): number[] | null {
  let s = input;
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(":")) return null;
  const lastColon = s.lastIndexOf(":");
  const last = s.slice(lastColon + 1);
  if (last.includes(".")) {
    // Embedded IPv4 tail → two hex groups.
    const v4 = parseIPv4(last);
    if (!v4) return null;
    const hi = ((v4[0] << 8) | v4[1]).toString(16);
    const lo = ((v4[2] << 8) | v4[3]).toString(16);
    s = `${s.slice(0, lastColon + 1)}${hi}:${lo}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const parseGroups = (h: string): number[] | null => {
    if (h === "") return [];
    const gs = h.split(":");
    const out: number[] = [];
    for (const g of gs) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
      out.push(parseInt(g, 16));
    }
    return out;
  };
  const head = parseGroups(halves[0] ?? "");
  if (!head) return null;
  let groups: number[];
  if (halves.length === 2) {
    const rest = parseGroups(halves[1] ?? "");
    if (!rest) return null;
    const fill = 8 - head.length - rest.length;
    if (fill < 1) return null;
    groups = [...head, ...new Array<number>(fill).fill(0), ...rest];
  } else {
    groups = head;
  }
  if (groups.length !== 8) return null;
  return groups;
}

function privateV4(a: number, b: number, c: number): boolean {
  return (
    a === 0 || // 0.0.0.0/8
    a === 10 || // 10.0.0.0/8
    (a === 100 && (b & 0xc0) === 64) || // 100.64.0.0/10
    a === 127 || // 127.0.0.0/8
    (a === 169 && b === 254) || // 169.254.0.0/16 (metadata 169.254.169.254)
    (a === 172 && (b & 0xf0) === 16) || // 172.16.0.0/12
    (a === 192 && b === 0 && c === 0) || // 192.0.0.0/24
    (a === 192 && b === 168) || // 192.168.0.0/16
    (a === 198 && (b & 0xfe) === 18) || // 198.18.0.0/15
    a >= 224 // 224.0.0.0/4 and 240.0.0.0/4 (255.255.255.255 included)
  );
}

function privateEmbeddedV4(hi: number, lo: number): boolean {
  return privateV4(hi >> 8, hi & 0xff, lo >> 8);
}

/**
 * Local-use NAT64 (64:ff9b:1::/48, RFC 8215): the operator picks the prefix length, /48 to /96, so where the IPv4
 * address sits (RFC 6052 §2.2) is not known here. Fail closed: private when any plausible embedding is. /96 (the
 * IPv4 in the last 32 bits) is always plausible; /48, /56 and /64 only when bits 64-71 (the "u" octet) and the
 * suffix after the IPv4 are zero, as RFC 6052 requires (else every /96 address would also read as some /48 one).
 */
function privateLocalNat64(g: number[]): boolean {
  const [, , , g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  if (privateEmbeddedV4(g6, g7)) return true; // /96
  if (g4 >> 8 !== 0) return false; // the u octet: no shorter prefix can apply
  // /64: IPv4 in bits 72-103, suffix 104-127.
  if ((g6 & 0xff) === 0 && g7 === 0 && privateV4(g4 & 0xff, g5 >> 8, g5 & 0xff)) return true;
  // /56: IPv4 in bits 56-63 and 72-95, suffix 96-127.
  if (g6 === 0 && g7 === 0 && privateV4(g3 & 0xff, g4 & 0xff, g5 >> 8)) return true;
  // /48: IPv4 in bits 48-63 and 72-87, suffix 88-127.
  if ((g5 & 0xff) === 0 && g6 === 0 && g7 === 0 && privateV4(g3 >> 8, g3 & 0xff, g4 & 0xff)) return true;
  return false;
}

function privateV6(g: number[]): boolean {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = g;
  const first64Zero = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  // ::/96 — "::", "::1" and IPv4-compatible ::a.b.c.d (:: and ::1 land in 0.0.0.0/8, which is private).
  if (first64Zero && g4 === 0 && g5 === 0) return privateEmbeddedV4(g6, g7);
  // ::ffff:0:0/96 IPv4-mapped.
  if (first64Zero && g4 === 0 && g5 === 0xffff) return privateEmbeddedV4(g6, g7);
  // ::ffff:0:0:0/96 IPv4-translated (SIIT).
  if (first64Zero && g4 === 0xffff && g5 === 0) return privateEmbeddedV4(g6, g7);
  // 64:ff9b::/96 NAT64 well-known prefix carrying an IPv4 address.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return privateEmbeddedV4(g6, g7);
  // 64:ff9b:1::/48 local-use NAT64 (RFC 8215).
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return privateLocalNat64(g);
  // 2002::/16 6to4: the IPv4 address of the site is bits 16-47.
  if (g0 === 0x2002) return privateEmbeddedV4(g1, g2);
  if ((g0 & 0xfe00) === 0xfc00) return true; // fc00::/7 unique local (fd00:ec2::254 included)
  if ((g0 & 0xffc0) === 0xfe80) return true; // fe80::/10 link-local
  if ((g0 & 0xffc0) === 0xfec0) return true; // fec0::/10 deprecated site-local
  if ((g0 & 0xff00) === 0xff00) return true; // ff00::/8 multicast
  return false;
}

/** Normalises a host as it appears in a URL or a resolver answer: brackets and a trailing dot removed, lower case. */
export function normalizeHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (!h.includes(":")) h = h.replace(/\.+$/, "");
  return h;
}

/**
 * True when the address is in a range §1.1 refuses (IPv4, IPv6, and the IPv6 forms that carry an IPv4 address:
 * IPv4-mapped/compatible/translated, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16). Text that is not an
 * IP address counts as private (fail closed).
 */
export function isPrivateAddress(ip: string): boolean {
  const h = normalizeHost(ip);
  const v4 = parseIPv4(h);
  if (v4) return privateV4(v4[0], v4[1], v4[2]);
  const v6 = parseIPv6(h);
  if (v6) return privateV6(v6);
  return true;
}

/** localhost, *.localhost and metadata.google.internal (case-insensitive, trailing dots ignored). */
export function isForbiddenHostname(host: string): boolean {
  const h = normalizeHost(host);
  return h === "localhost" || h.endsWith(".localhost") || h === "metadata.google.internal";
}

function isIpLiteral(h: string): boolean {
  return isIP(h) !== 0 || parseIPv6(h) !== null;
}

const blocked = () => new OutboundError("TARGET_NOT_ALLOWED", MSG_BLOCKED);

/**
 * Resolves `host` once and returns the address to connect to. With `allowPrivate` false every resolved
 * address must be public and the host name must not be a forbidden one; literal IPs are checked directly.
 * Prefers the first IPv4 answer, else the first answer. Throws OutboundError (TARGET_NOT_ALLOWED, NETWORK).
 * `resolver` and `refuseAddress` (default isPrivateAddress) are injectable for tests.
 */
export async function resolveAllowed(
  host: string,
  allowPrivate: boolean,
  resolver: Resolver = systemResolver,
  refuseAddress: (ip: string) => boolean = isPrivateAddress,
): Promise<string> {
  const h = normalizeHost(host);
  if (h === "") throw new OutboundError("INVALID_URL", "Invalid URL: missing host");
  if (isIpLiteral(h)) {
    if (!allowPrivate && refuseAddress(h)) throw blocked();
    return h;
  }
  if (!allowPrivate && isForbiddenHostname(h)) throw blocked();
  let addresses: string[];
  try {
    addresses = await resolver(h);
  } catch {
    throw new OutboundError("NETWORK", `${MSG_CONNECT}: could not resolve host`, "connect");
  }
  const clean = addresses.map(normalizeHost);
  if (clean.length === 0) throw new OutboundError("NETWORK", `${MSG_CONNECT}: could not resolve host`, "connect");
  for (const a of clean) {
    if (!isIpLiteral(a)) throw new OutboundError("NETWORK", `${MSG_CONNECT}: could not resolve host`, "connect");
    if (!allowPrivate && refuseAddress(a)) throw blocked();
  }
  return clean.find((a) => isIP(a) === 4) ?? (clean[0] as string);
}

/** Parses an outbound URL: http/https only (https only with `httpsOnly`), a host required. Throws INVALID_URL. */
export function parseOutboundUrl(url: string, httpsOnly = false): URL {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new OutboundError("INVALID_URL", "Invalid URL");
  }
  const ok = httpsOnly ? u.protocol === "https:" : u.protocol === "http:" || u.protocol === "https:";
  if (!ok) throw new OutboundError("INVALID_URL", httpsOnly ? "Invalid URL: https required" : "Invalid URL: only http and https are allowed");
  if (normalizeHost(u.hostname) === "") throw new OutboundError("INVALID_URL", "Invalid URL: missing host");
  return u;
}

/** True when the URL's host is a literal private IP or a forbidden host name (no DNS). Unparseable URL → false. */
export function literalTargetRefused(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  const h = normalizeHost(u.hostname);
  if (h === "") return false;
  return isIpLiteral(h) ? isPrivateAddress(h) : isForbiddenHostname(h);
}

/**
 * API input validation (no DNS): scheme rules of §1.1 and, unless `allowPrivate`, literal refused targets.
 * Returns the parsed URL; throws OutboundError INVALID_URL or TARGET_NOT_ALLOWED (callers map these to
 * 400 INVALID_INPUT / TARGET_NOT_ALLOWED).
 */
export function guardUrl(url: string, allowPrivate: boolean, httpsOnly = false): URL {
  const u = parseOutboundUrl(url, httpsOnly);
  if (!allowPrivate && literalTargetRefused(u.href)) throw blocked();
  return u;
}
