// CSP directives (supplement §13.1): the catalogue of storable directives, their value rules, and the
// `serialized` import (§13.3) on top of a spec-following CSP parser (content-security-policy-parser implements
// the W3C "parse a serialized CSP" algorithm: split at `;`, ASCII whitespace, names lower-cased, first of a
// repeated directive wins, non-ASCII tokens ignored).
import parseContentSecurityPolicy from "content-security-policy-parser";
import { invalid } from "../../platform/http/errors";

export interface Directive {
  name: string;
  /** Absent only for `upgrade-insecure-requests`. */
  value?: string[];
}

export const SOURCE_LIST_DIRECTIVES = [
  "default-src",
  "child-src",
  "connect-src",
  "font-src",
  "frame-src",
  "img-src",
  "manifest-src",
  "media-src",
  "object-src",
  "script-src",
  "script-src-elem",
  "script-src-attr",
  "style-src",
  "style-src-elem",
  "style-src-attr",
  "worker-src",
  "base-uri",
  "form-action",
  "frame-ancestors",
] as const;

export const SANDBOX_TOKENS = [
  "allow-downloads",
  "allow-forms",
  "allow-modals",
  "allow-orientation-lock",
  "allow-pointer-lock",
  "allow-popups",
  "allow-popups-to-escape-sandbox",
  "allow-presentation",
  "allow-same-origin",
  "allow-scripts",
  "allow-top-navigation",
  "allow-top-navigation-by-user-activation",
  "allow-top-navigation-to-custom-protocols",
] as const;

export const OTHER_DIRECTIVES = [
  "report-uri",
  "sandbox",
  "upgrade-insecure-requests",
  "webrtc",
  "require-trusted-types-for",
  "trusted-types",
  "report-to",
] as const;

/** Every directive a stored policy may hold (§13.1). */
export const DIRECTIVE_NAMES: readonly string[] = [...SOURCE_LIST_DIRECTIVES, ...OTHER_DIRECTIVES];
const KNOWN = new Set(DIRECTIVE_NAMES);
const SOURCE_LISTS = new Set<string>(SOURCE_LIST_DIRECTIVES);

export const MAX_DIRECTIVES = 50;

/** Keyword sources CSP defines (CSP3 and the current drafts), lower-case, quoted. */
export const KEYWORDS = new Set([
  "'self'",
  "'none'",
  "'unsafe-inline'",
  "'unsafe-eval'",
  "'strict-dynamic'",
  "'unsafe-hashes'",
  "'report-sample'",
  "'unsafe-allow-redirects'",
  "'wasm-unsafe-eval'",
  "'inline-speculation-rules'",
  "'trusted-types-eval'",
  "'report-sha256'",
  "'report-sha384'",
  "'report-sha512'",
  "'unsafe-webtransport-hashes'",
]);

// ---- grammar of source expressions (CSP3 §2.3.1), tolerant where browsers are ----------------------------

export const SCHEME_SOURCE_RE = /^[a-z][a-z0-9+.-]*:$/i;
/** [scheme "://"] host [":" port] [path]; host = "*" / ["*."] labels / [IPv6]. Groups: scheme, host, port, path. */
export const HOST_SOURCE_RE =
  /^(?:([a-z][a-z0-9+.-]*):\/\/)?(\*|(?:\*\.)?[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?|\[[0-9a-f:.]+\])(?::(\d{1,5}|\*))?(\/[A-Za-z0-9\-._~%!$&'()*+=:@/]*)?$/i;
export const NONCE_SOURCE_RE = /^'nonce-([A-Za-z0-9+/_-]+={0,2})'$/i;
export const HASH_SOURCE_RE = /^'(sha256|sha384|sha512)-([A-Za-z0-9+/_-]+={0,2})'$/i;
const POLICY_NAME_RE = /^[A-Za-z0-9\-#=_/@.%]+$/;
const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Printable ASCII other than space, `;` and `,` (§13.1 value rule; non-ASCII cannot travel in a header). */
const VALUE_RE = /^[\x21-\x2b\x2d-\x3a\x3c-\x7e]+$/;

/** A value in its canonical form: keywords and bare schemes lower-cased, everything else as given. */
function canonicalSource(v: string): string {
  const lower = v.toLowerCase();
  if (KEYWORDS.has(lower) || SCHEME_SOURCE_RE.test(v)) return lower;
  const nonce = NONCE_SOURCE_RE.exec(v);
  if (nonce) return `'nonce-${nonce[1]}'`;
  const hash = HASH_SOURCE_RE.exec(v);
  if (hash) return `'${hash[1]!.toLowerCase()}-${hash[2]}'`;
  return v;
}

/** True when `v` is a source expression of the CSP grammar. */
export function isSourceExpression(v: string): boolean {
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

/** Validation failure of one directive: which value (index) and why. */
class DirectiveProblem {
  constructor(
    readonly message: string,
    readonly index?: number,
  ) {}
}

const dedupe = (values: string[]) => [...new Set(values)];

/**
 * Checks one directive's values (names already known and lower-case) and returns the stored form.
 * Throws DirectiveProblem.
 */
function normalizeValues(name: string, values: string[]): string[] | undefined {
  values.forEach((v, i) => {
    if (!VALUE_RE.test(v)) throw new DirectiveProblem("must be a non-empty printable ASCII string without whitespace, ';' or ','", i);
  });
  if (SOURCE_LISTS.has(name)) {
    values.forEach((v, i) => {
      if (!isSourceExpression(v)) throw new DirectiveProblem(`"${v}" is not a valid source expression`, i);
    });
    const out = dedupe(values.map(canonicalSource));
    if (out.length === 0) throw new DirectiveProblem("must have at least one source expression");
    return out;
  }
  switch (name) {
    case "report-uri": {
      values.forEach((v, i) => {
        if (!isUriReference(v)) throw new DirectiveProblem(`"${v}" is not a valid URI`, i);
      });
      const out = dedupe(values);
      if (out.length === 0) throw new DirectiveProblem("must have at least one URI");
      return out;
    }
    case "sandbox": {
      const lower = values.map((v) => v.toLowerCase());
      lower.forEach((v, i) => {
        if (!(SANDBOX_TOKENS as readonly string[]).includes(v)) throw new DirectiveProblem(`"${values[i]}" is not a sandbox token (${SANDBOX_TOKENS.join(", ")})`, i);
      });
      return dedupe(lower);
    }
    case "upgrade-insecure-requests":
      if (values.length > 0) throw new DirectiveProblem("takes no value");
      return undefined;
    case "webrtc": {
      const lower = dedupe(values.map((v) => v.toLowerCase()));
      if (lower.length !== 1 || (lower[0] !== "'allow'" && lower[0] !== "'block'")) throw new DirectiveProblem("must be exactly one of 'allow', 'block'");
      return lower;
    }
    case "require-trusted-types-for": {
      const lower = dedupe(values.map((v) => v.toLowerCase()));
      if (lower.length !== 1 || lower[0] !== "'script'") throw new DirectiveProblem("must be exactly 'script'");
      return lower;
    }
    case "trusted-types": {
      const out = values.map((v, i) => {
        const lower = v.toLowerCase();
        if (lower === "'none'" || lower === "'allow-duplicates'") return lower;
        if (v === "*" || POLICY_NAME_RE.test(v)) return v;
        throw new DirectiveProblem(`"${v}" is not a policy name, 'none', 'allow-duplicates' or *`, i);
      });
      return dedupe(out);
    }
    case "report-to": {
      const out = dedupe(values);
      if (out.length !== 1 || !TOKEN_RE.test(out[0]!)) throw new DirectiveProblem("must be exactly one reporting group name");
      return out;
    }
  }
  throw new DirectiveProblem("is not a known directive");
}

const stored = (name: string, value: string[] | undefined): Directive => (value === undefined ? { name } : { name, value });

/**
 * The `directives` variant (§13.1): an array of `{name, value?}`; anything invalid → 400 naming the field
 * (`<field>[2].value[0]: ...`). Names are matched case-insensitively and stored lower-case.
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
    const values = (rawValue ?? []) as unknown[];
    values.forEach((v, j) => {
      if (typeof v !== "string") throw invalid(`${at}.value[${j}]: must be a string`);
    });
    try {
      return stored(name, normalizeValues(name, values as string[]));
    } catch (err) {
      if (!(err instanceof DirectiveProblem)) throw err;
      throw invalid(err.index === undefined ? `${at}.value: ${err.message}` : `${at}.value[${err.index}]: ${err.message}`);
    }
  });
}

/** The policy text split as in §13.3, nothing dropped (the evaluator sees unknown directives too). */
export function splitSerialized(text: string): { name: string; value: string[] }[] {
  return [...parseContentSecurityPolicy(text)].map(([name, value]) => ({ name, value }));
}

/**
 * The `serialized` variant (§13.3): unknown names and directives with invalid values are dropped, a repeated
 * directive keeps the first; nothing left → 400.
 */
export function parseSerialized(text: string, field: string): Directive[] {
  const out: Directive[] = [];
  for (const { name, value } of splitSerialized(text)) {
    if (!KNOWN.has(name) || out.length >= MAX_DIRECTIVES) continue;
    try {
      out.push(stored(name, normalizeValues(name, value)));
    } catch (err) {
      if (!(err instanceof DirectiveProblem)) throw err;
    }
  }
  if (out.length === 0) throw invalid(`${field}: no valid directive found in the policy`);
  return out;
}
