// CSP directives (supplement §13.1): the rules for the values of the storable directives (their catalogue, the
// keywords and the source patterns are in shared-rules.ts, which the web shares), used by the `directives` content
// variant (validated here: anything invalid is a 400 naming the field) and the
// `serialized` import (import.ts: an invalid value is dropped with a warning, the directive stays).
//
// The rules follow what browsers keep (CSP Level 3 and current Chromium, checked against Chromium's own parse
// errors in csp-roundtrip.test.ts): a source expression is a keyword Chromium or CSP3 defines, a nonce, a sha256/384/512
// hash, a scheme, or a host source (ASCII labels of letters, digits and `-`, no IP-v6 literals, port digits or `*`,
// any path); `frame-ancestors` takes only hosts, schemes, 'self' and 'none'; 'inline-speculation-rules' only
// counts in script-src and script-src-elem. A host source's `?query` or `#fragment` is ignored by browsers: import
// stores the source without it (with a warning), the `directives` variant refuses it.
import { invalid } from "../../platform/core/errors";
import { TOKEN_RE } from "../../platform/net/shared-rules";
import { DIRECTIVE_NAMES, type Directive } from "./contract";
import {
  HASH_SOURCE_RE,
  HOST_SOURCE_RE,
  MAX_DIRECTIVES,
  NONCE_SOURCE_RE,
  OTHER_DIRECTIVES,
  POLICY_NAME_RE,
  SANDBOX_TOKENS,
  SCHEME_SOURCE_RE,
  SOURCE_KEYWORDS,
  SOURCE_LIST_DIRECTIVES,
  VALUE_RE,
} from "./shared-rules";

// The lists and patterns live in shared-rules.ts (the web's editor checks with the same ones).
export {
  HASH_SOURCE_RE,
  HOST_SOURCE_RE,
  MAX_DIRECTIVES,
  NONCE_SOURCE_RE,
  OTHER_DIRECTIVES,
  SANDBOX_TOKENS,
  SCHEME_SOURCE_RE,
  SOURCE_LIST_DIRECTIVES,
  VALUE_RE,
};
export type { Directive };

export const KNOWN = new Set(DIRECTIVE_NAMES);
export const SOURCE_LISTS = new Set<string>(SOURCE_LIST_DIRECTIVES);
/** The keyword sources (shared-rules.ts SOURCE_KEYWORDS), for lookups. */
export const KEYWORDS = new Set<string>(SOURCE_KEYWORDS);

/** Directives where 'inline-speculation-rules' means something (Chromium ignores it elsewhere). */
const SPECULATION_RULES_DIRECTIVES = new Set(["script-src", "script-src-elem"]);

// ---- grammar of source expressions (CSP3 §2.3.1, as Chromium parses it; the patterns are in shared-rules.ts) ----

/** A host source followed by a `?query` or `#fragment` (which browsers ignore): group 1 is the source without it. */
const HOST_WITH_QUERY_RE = /^((?:[a-z][a-z0-9+.-]*:\/\/)?(?:\*|(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?)(?::(?:\d{1,5}|\*))?\/[^?#]*)[?#]/i;

/**
 * A source expression in its canonical form: keywords, bare schemes and the `'nonce-` / `'sha…-` prefixes
 * lower-cased (browsers read them case-insensitively: `'NONCE-abc'` is a nonce), everything else as given. The one
 * place that reads keywords: import stores this form, the evaluator judges it.
 */
export function canonicalSource(v: string): string {
  const lower = v.toLowerCase();
  if (KEYWORDS.has(lower) || SCHEME_SOURCE_RE.test(v)) return lower;
  const nonce = NONCE_SOURCE_RE.exec(v);
  if (nonce) return `'nonce-${nonce[1]}'`;
  const hash = HASH_SOURCE_RE.exec(v);
  if (hash) return `'${hash[1]!.toLowerCase()}-${hash[2]}'`;
  return v;
}

/** True when `v` is a source expression of the grammar above (whatever the directive). */
export function isSourceExpression(v: string): boolean {
  if (!VALUE_RE.test(v)) return false;
  if (KEYWORDS.has(v.toLowerCase())) return true;
  if (v.startsWith("'")) return NONCE_SOURCE_RE.test(v) || HASH_SOURCE_RE.test(v);
  return SCHEME_SOURCE_RE.test(v) || HOST_SOURCE_RE.test(v);
}

function isUriReference(v: string): boolean {
  try {
    new URL(v, "https://base.invalid/");
    return true;
  } catch {
    return false;
  }
}

/** The verdict on one value of a directive: kept (canonical form), kept after a repair, or refused (why). */
export type Verdict = { value: string; repaired?: string } | { refused: string };

/** Why a quoted source is not valid: names the likely mistake. */
function quotedProblem(v: string): string {
  if (/^'nonce-/i.test(v)) return "a nonce must be base64 (A-Z a-z 0-9 + / - _, up to two '=')";
  const hash = /^'([a-z0-9-]+)-/i.exec(v);
  if (hash && /^(sha|md5)/i.test(hash[1]!)) {
    return /^sha(256|384|512)$/i.test(hash[1]!)
      ? "a hash must be base64 (A-Z a-z 0-9 + / - _, up to two '=')"
      : "hash algorithms are sha256, sha384 and sha512";
  }
  return "unknown keyword";
}

/** One value of a source-list directive. */
function checkSource(name: string, v: string): Verdict {
  const lower = v.toLowerCase();
  if (name === "frame-ancestors" && (v.startsWith("'") ? lower !== "'self'" && lower !== "'none'" : false))
    return { refused: "frame-ancestors accepts only hosts, schemes, 'self' and 'none'" };
  if (lower === "'inline-speculation-rules'" && !SPECULATION_RULES_DIRECTIVES.has(name))
    return { refused: "only applies in script-src and script-src-elem" };
  if (isSourceExpression(v)) return { value: canonicalSource(v) };
  if (v.startsWith("'")) return { refused: quotedProblem(v) };
  const query = HOST_WITH_QUERY_RE.exec(v);
  if (query) return { value: query[1]!, repaired: "browsers ignore a source's query and fragment" };
  return { refused: "not a valid source expression" };
}

/** One value of any directive (names known and lower-case); values of the whole list are judged by `settle`. */
export function checkValue(name: string, v: string): Verdict {
  if (!VALUE_RE.test(v)) return { refused: "must be a non-empty printable ASCII string without whitespace, ';' or ','" };
  if (SOURCE_LISTS.has(name)) return checkSource(name, v);
  const lower = v.toLowerCase();
  switch (name) {
    case "report-uri":
      return isUriReference(v) ? { value: v } : { refused: "not a valid URI" };
    case "sandbox":
      return (SANDBOX_TOKENS as readonly string[]).includes(lower) ? { value: lower } : { refused: "not a sandbox token" };
    case "upgrade-insecure-requests":
      return { refused: "upgrade-insecure-requests takes no value" };
    case "webrtc":
      return lower === "'allow'" || lower === "'block'" ? { value: lower } : { refused: "must be 'allow' or 'block'" };
    case "require-trusted-types-for":
      return lower === "'script'" ? { value: lower } : { refused: "must be 'script'" };
    case "trusted-types":
      if (lower === "'none'" || lower === "'allow-duplicates'") return { value: lower };
      return v === "*" || POLICY_NAME_RE.test(v) ? { value: v } : { refused: "not a policy name, 'none', 'allow-duplicates' or *" };
    case "report-to":
      return TOKEN_RE.test(v) ? { value: v } : { refused: "not a reporting group name" };
  }
  return { refused: "not a known directive" };
}

/** What a directive's list of valid values needs as a whole (`values` are canonical and distinct). */
export type ListRule =
  | { ok: true }
  /** The list is empty where the grammar wants a value (import: an empty source list means 'none'). */
  | { ok: false; empty: true; message: string }
  /** More values than the grammar allows: keep `keep` (import) or refuse (`directives`). */
  | { ok: false; empty: false; message: string; keep: string[] };

export function settle(name: string, values: string[]): ListRule {
  if (SOURCE_LISTS.has(name))
    return values.length > 0 ? { ok: true } : { ok: false, empty: true, message: "must have at least one source expression" };
  switch (name) {
    case "report-uri":
      return values.length > 0 ? { ok: true } : { ok: false, empty: true, message: "must have at least one URI" };
    case "webrtc":
      if (values.length === 0) return { ok: false, empty: true, message: "must be exactly one of 'allow', 'block'" };
      // CSP3 webrtc: only a value of exactly 'allow' allows; anything else blocks.
      return values.length === 1 ? { ok: true } : { ok: false, empty: false, message: "must be exactly one of 'allow', 'block'", keep: ["'block'"] };
    case "require-trusted-types-for":
      return values.length === 1 ? { ok: true } : { ok: false, empty: true, message: "must be exactly 'script'" };
    case "report-to":
      if (values.length === 0) return { ok: false, empty: true, message: "must be exactly one reporting group name" };
      // Browsers use the first group and ignore the others.
      return values.length === 1
        ? { ok: true }
        : { ok: false, empty: false, message: "must be exactly one reporting group name", keep: values.slice(0, 1) };
  }
  return { ok: true };
}

/** The stored form: `upgrade-insecure-requests` has no value; every other directive has an array. */
export const stored = (name: string, value: string[]): Directive => (name === "upgrade-insecure-requests" ? { name } : { name, value });

/**
 * The `directives` variant (§13.1): an array of `{name, value?}`; anything invalid → 400 naming the field
 * (`<field>[2].value[0]: ...`). Names are matched case-insensitively and stored lower-case; repeated values are
 * dropped keeping the first.
 */
export function validateDirectives(raw: unknown, field: string): Directive[] {
  if (!Array.isArray(raw)) throw invalid(`${field}: must be an array of directives`);
  if (raw.length < 1 || raw.length > MAX_DIRECTIVES) throw invalid(`${field}: must have 1 to ${MAX_DIRECTIVES} directives`);
  const seen = new Set<string>();
  return raw.map((entry, i) => {
    const at = `${field}[${i}]`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) throw invalid(`${at}: must be an object {name, value}`);
    const { name: rawName, value: rawValue } = entry as { name?: unknown; value?: unknown };
    if (typeof rawName !== "string") throw invalid(`${at}.name: must be a string`);
    const name = rawName.toLowerCase();
    if (!KNOWN.has(name)) throw invalid(`${at}.name: unknown directive "${rawName}" (known: ${DIRECTIVE_NAMES.join(", ")})`);
    if (seen.has(name)) throw invalid(`${at}.name: directive "${name}" is repeated`);
    seen.add(name);
    if (rawValue !== undefined && rawValue !== null && !Array.isArray(rawValue)) throw invalid(`${at}.value: must be an array of strings`);
    const values: string[] = [];
    const distinct = new Set<string>();
    ((rawValue ?? []) as unknown[]).forEach((v, j) => {
      if (typeof v !== "string") throw invalid(`${at}.value[${j}]: must be a string`);
      const verdict = checkValue(name, v);
      if ("refused" in verdict) throw invalid(`${at}.value[${j}]: "${v}" is invalid: ${verdict.refused}`);
      if (verdict.repaired !== undefined) throw invalid(`${at}.value[${j}]: "${v}" is invalid: ${verdict.repaired}; give ${verdict.value}`);
      if (!distinct.has(verdict.value)) {
        distinct.add(verdict.value);
        values.push(verdict.value);
      }
    });
    const rule = settle(name, values);
    if (!rule.ok) throw invalid(`${at}.value: ${rule.message}`);
    return stored(name, values);
  });
}
