// Value rules shared by several features (supplement §1, §3.3).
import { invalid, notFound } from "./errors";
import { isUuid } from "./ids";

/** Length in characters (Unicode code points), as the spec counts them; `.length` counts UTF-16 units. */
export function charLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++, n++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
  }
  return n;
}

/** Trimmed, lower-cased email: ≤ 254 chars, one `@`, non-empty parts, no whitespace or control characters. */
export function normalizeEmail(raw: unknown, field = "email"): string {
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const email = raw.trim().toLowerCase();
  const at = email.indexOf("@");
  const ok =
    email.length > 0 &&
    charLength(email) <= 254 &&
    at > 0 &&
    at === email.lastIndexOf("@") &&
    at < email.length - 1 &&
    !/[\s\u0000-\u001f\u007f]/.test(email);
  if (!ok) throw invalid(`${field}: must be a valid email address`);
  return email;
}

/** Trimmed name of 1..max characters. */
export function normalizeName(raw: unknown, max: number, field = "name"): string {
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const name = raw.trim();
  const len = charLength(name);
  if (len < 1 || len > max) throw invalid(`${field}: must be 1 to ${max} characters`);
  return name;
}

/** A path id that is not a UUID is simply not found (supplement §1). */
export function pathId(raw: string | undefined, what = "Resource"): string {
  if (!isUuid(raw)) throw notFound(what);
  return raw.toLowerCase();
}

/** Latest accepted unix-seconds timestamp: 9999-12-31T23:59:59Z. */
export const MAX_TIMESTAMP = 253_402_300_799;

/** A future unix-seconds timestamp, at most MAX_TIMESTAMP (so it stays a safe integer and a valid date). */
export function futureTimestamp(raw: unknown, now: number, field: string): number {
  if (typeof raw !== "number" || !Number.isInteger(raw)) throw invalid(`${field}: must be an integer unix timestamp`);
  if (raw <= now) throw invalid(`${field}: must be in the future`);
  if (raw > MAX_TIMESTAMP) throw invalid(`${field}: must be at most ${MAX_TIMESTAMP} (year 9999)`);
  return raw;
}

export const utf8Length = (s: string) => Buffer.byteLength(s, "utf8");
