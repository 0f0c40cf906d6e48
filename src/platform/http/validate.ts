// Value rules shared by several features (supplement §1, §3.3).
import { invalid, notFound } from "./errors";
import { isUuid } from "./ids";

/** Trimmed, lower-cased email: ≤ 254 chars, one `@`, non-empty parts, no whitespace or control characters. */
export function normalizeEmail(raw: unknown, field = "email"): string {
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const email = raw.trim().toLowerCase();
  const at = email.indexOf("@");
  const ok =
    email.length > 0 &&
    email.length <= 254 &&
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
  if (name.length < 1 || name.length > max) throw invalid(`${field}: must be 1 to ${max} characters`);
  return name;
}

/** A path id that is not a UUID is simply not found (supplement §1). */
export function pathId(raw: string | undefined, what = "Resource"): string {
  if (!isUuid(raw)) throw notFound(what);
  return raw.toLowerCase();
}

/** A future unix-seconds timestamp. */
export function futureTimestamp(raw: unknown, now: number, field: string): number {
  if (typeof raw !== "number" || !Number.isInteger(raw)) throw invalid(`${field}: must be an integer unix timestamp`);
  if (raw <= now) throw invalid(`${field}: must be in the future`);
  return raw;
}

export const utf8Length = (s: string) => Buffer.byteLength(s, "utf8");
