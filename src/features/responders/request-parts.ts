// The parts of an inbound hit read from the wire, as pure functions (supplement §11.6, §11.10): header values as
// UTF-8 text and back, the client address from X-Real-IP / X-Forwarded-For / the peer, a record's header pairs and
// the query as fields. Owns no state; must never touch the database, the cache or the sandbox (engine.ts does).
import type { Server } from "bun";
import { isIP } from "node:net";
import type { RawHeaders } from "./cookies";
import { decodeQueryComponent } from "./har";
import type { HeaderList } from "./script-result";

const utf8Lenient = new TextDecoder("utf-8", { fatal: false });

const isAsciiOnly = (s: string) => {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
};

/** Header values arrive as one char per byte; reinterpret them as UTF-8 (invalid bytes → U+FFFD). */
export const headerText = (v: string) => (isAsciiOnly(v) ? v : utf8Lenient.decode(Buffer.from(v, "latin1")));

/** The reverse for sending: a value's UTF-8 bytes, one char per byte (Bun writes such a string byte for byte and
 *  rejects chars above U+00FF). ASCII is unchanged. */
export const wireValue = (v: string) => (isAsciiOnly(v) ? v : Buffer.from(v, "utf8").toString("latin1"));

/** `::ffff:1.2.3.4` → `1.2.3.4`. */
const plainIp = (ip: string) => (ip.startsWith("::ffff:") && ip.includes(".") ? ip.slice(7) : ip);

/** An address as a proxy header gives it → IP text without port (`1.2.3.4:80`, `[::1]:80`, `[::1]` accepted), or
 *  undefined when it is not an IP address. */
export function ipOnly(text: string): string | undefined {
  let ip = text.trim();
  if (ip.startsWith("[")) {
    const end = ip.indexOf("]");
    if (end === -1) return undefined;
    ip = ip.slice(1, end);
  } else if (ip.indexOf(":") === ip.lastIndexOf(":") && ip.includes(".")) {
    // IPv4 with a port (one colon; IPv6 text has at least two)
    const colon = ip.indexOf(":");
    if (colon !== -1) ip = ip.slice(0, colon);
  }
  return isIP(ip) ? plainIp(ip) : undefined;
}

/** X-Real-IP, else the first X-Forwarded-For entry, else the TCP peer (supplement §11.6.1); a header that holds no
 *  IP address (garbage, a name) is passed over. */
export function clientAddressOf(request: Request, server: Server<unknown> | null, raw: RawHeaders): string | undefined {
  const real = raw["x-real-ip"];
  if (typeof real === "string") {
    const ip = ipOnly(real);
    if (ip) return ip;
  }
  const fwd = raw["x-forwarded-for"];
  if (typeof fwd === "string") {
    const ip = ipOnly(fwd.split(",")[0]!);
    if (ip) return ip;
  }
  const peer = server?.requestIP(request)?.address;
  return peer ? plainIp(peer) : undefined;
}

/**
 * Record form of request headers (supplement §11.10): `[name, value]` pairs sorted by name, repeats joined
 * with `, ` (`cookie` with `; `), values as UTF-8 text. Run when a record is written, not on the hit path.
 */
export function headerPairs(raw: RawHeaders): HeaderList {
  const out: HeaderList = [];
  for (const name of Object.keys(raw)) {
    const v = raw[name]!;
    out.push([name, headerText(typeof v === "string" ? v : v.join(", "))]);
  }
  out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return out;
}

/** No prototype: a `__proto__` key is a field like any other (it reaches the script as JSON). */
export function parseQuery(rawQuery: string): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  if (rawQuery === "") return out;
  for (const part of rawQuery.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    const name = decodeQueryComponent(eq === -1 ? part : part.slice(0, eq));
    out[name] = eq === -1 ? "" : decodeQueryComponent(part.slice(eq + 1));
  }
  return out;
}
