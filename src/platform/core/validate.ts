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

/**
 * Control characters (Unicode Cc: C0 U+0000–U+001F with NUL, TAB, LF, CR; DEL; C1 U+0080–U+009F) and UTF-16
 * surrogates without their pair. A lone surrogate cannot be stored as UTF-8 (it comes back as U+FFFD, so a read
 * would differ from the create response), and controls in a name hide or forge text wherever it is shown (logs,
 * emails, terminals). TAB is a control too: names are one-line labels.
 */
const CONTROL_CHAR_RE = /\p{Cc}/u;
const LONE_SURROGATE_RE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export function hasForbiddenChars(s: string): boolean {
  return CONTROL_CHAR_RE.test(s) || LONE_SURROGATE_RE.test(s);
}

/**
 * Characters that make a name read differently from what it is (supplement §28.1): bidi embeddings, overrides and
 * isolates (U+202A–U+202E, U+2066–U+2069: `invoice\u202Egpj.exe` shows as "invoiceexe.jpg") and zero-width
 * characters (U+200B–U+200D, U+2060, U+FEFF: two names that look the same). Refused in names; stripped from file
 * names built from names stored before the rule (stripInvisible).
 */
const INVISIBLE_RE = /[\u202a-\u202e\u2066-\u2069\u200b-\u200d\u2060\ufeff]/;
const INVISIBLE_RE_G = new RegExp(INVISIBLE_RE.source, "g");

export const hasInvisibleChars = (s: string) => INVISIBLE_RE.test(s);
export const stripInvisible = (s: string) => s.replace(INVISIBLE_RE_G, "");

/** 400 INVALID_INPUT naming the field when the name `s` holds control characters, unpaired surrogates, bidi controls
 *  or zero-width characters. */
export function checkNameChars(s: string, field = "name"): string {
  if (hasForbiddenChars(s)) throw invalid(`${field}: must not contain control characters or unpaired UTF-16 surrogates`);
  if (hasInvisibleChars(s)) throw invalid(`${field}: must not contain bidirectional controls or zero-width characters`);
  return s;
}

/**
 * Trimmed, lower-cased email: ≤ 254 chars, one `@`, non-empty parts, no whitespace, control characters or
 * unpaired surrogates.
 */
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
    !/\s/.test(email) &&
    !hasForbiddenChars(email);
  if (!ok) throw invalid(`${field}: must be a valid email address`);
  return email;
}

/**
 * Trimmed name of 1..max characters without control characters, unpaired surrogates, bidi controls or zero-width
 * characters (checkNameChars; checked after trimming,
 * so surrounding whitespace such as a trailing newline is simply dropped). The one name rule of every entity;
 * tags add lower-casing, secrets a stricter pattern.
 */
export function normalizeName(raw: unknown, max: number, field = "name"): string {
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const name = raw.trim();
  const len = charLength(name);
  if (len < 1 || len > max) throw invalid(`${field}: must be 1 to ${max} characters`);
  return checkNameChars(name, field);
}

/** A required body member (a `looseBody` route's service checks presence itself): absent or `null` → 400
 *  `<field>: is required`, the message a schema-validated body gave. */
export function required(raw: unknown, field: string): unknown {
  if (raw === undefined || raw === null) throw invalid(`${field}: is required`);
  return raw;
}

/** A required string member: `<field>: is required` when absent or null, `<field>: must be a string` otherwise. */
export function requiredString(raw: unknown, field: string): string {
  if (typeof required(raw, field) !== "string") throw invalid(`${field}: must be a string`);
  return raw as string;
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
