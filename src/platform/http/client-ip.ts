// Client address for rate limits (supplement §3.3): the TCP peer, or with server.trust_proxy X-Real-IP, else the
// last X-Forwarded-For entry (the one the trusted proxy appended). Limiters key on clientRateKey: one IPv6
// client usually holds a whole /64 (SLAAC, privacy addresses) and can rotate through 2^64 addresses, so IPv6
// counts by its /64 prefix; an IPv4-mapped IPv6 peer (`::ffff:a.b.c.d`, what a dual-stack socket reports) is
// that IPv4 address.
import { normalizeHost, parseIPv4, parseIPv6 } from "../net/guard";

export function clientIp(request: Request, peer: string | undefined, trustProxy: boolean): string {
  if (trustProxy) {
    const real = request.headers.get("x-real-ip")?.trim();
    if (real) return real;
    const forwarded = request.headers.get("x-forwarded-for");
    if (forwarded) {
      const last = forwarded
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
        .at(-1);
      if (last) return last;
    }
  }
  return peer ?? "unknown";
}

/**
 * The rate-limit key of an address: IPv4 as is; IPv4-mapped IPv6 as the IPv4; other IPv6 as its /64
 * (`2001:db8:1:2::/64`); anything unparseable (a proxy's odd header) as the trimmed, lower-cased text.
 */
export function rateLimitKey(ip: string): string {
  const h = normalizeHost(ip);
  if (parseIPv4(h)) return h;
  const g = parseIPv6(h);
  if (!g) return h;
  if (g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff)
    return `${g[6]! >> 8}.${g[6]! & 0xff}.${g[7]! >> 8}.${g[7]! & 0xff}`;
  return `${g
    .slice(0, 4)
    .map((n) => n.toString(16))
    .join(":")}::/64`;
}

/** clientIp reduced to its rate-limit key: what every per-client limiter counts by. */
export function clientRateKey(request: Request, peer: string | undefined, trustProxy: boolean): string {
  return rateLimitKey(clientIp(request, peer, trustProxy));
}
