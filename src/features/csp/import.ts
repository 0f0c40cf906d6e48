// The `serialized` import (supplement §13.3): policy text → stored directives plus warnings, keeping what browsers
// keep. The text is split the way Chromium splits a Content-Security-Policy header (W3C "parse a serialized CSP"):
// policies at `,`, directives at `;`, tokens at ASCII whitespace, names lower-cased, the first of a repeated directive
// wins. A directive whose text has a character outside printable ASCII is ignored whole, as browsers do. Then,
// unlike a strict validator, each invalid value is dropped on its own and the directive stays: a browser ignores
// `'unsafe_inline'` in `script-src 'self' 'unsafe_inline'` and still enforces `script-src 'self'`, so dropping the
// directive would store a weaker policy than the one enforced. A source list left empty, or written empty
// (`object-src;`), matches nothing: it is stored as 'none'. Everything dropped or changed is a warning.
//
// Only the first policy of several is imported (§13.3); the warning names how many were sent, since browsers
// enforce every one of them.
import { invalid } from "../../platform/core/errors";
import { checkValue, KNOWN, settle, SOURCE_LISTS, stored, type Directive } from "./directives";

/** Warnings in one answer are capped (a 2 MiB text of bad tokens would otherwise echo itself back). */
export const MAX_WARNINGS = 100;

/** ASCII whitespace (TAB, LF, FF, CR, SPACE). */
const WS = /[\t\n\f\r ]+/;
/** A directive token browsers parse: whitespace and printable ASCII only (Chromium's directive value characters). */
const DIRECTIVE_CHARS = /^[\t\n\f\r\x20-\x7e]*$/;

/** The non-empty policies of a serialized text (or header value), in order: split at every `,` as browsers do. */
export function splitPolicies(text: string): string[] {
  return text
    .split(",")
    .map((p) => p.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, ""))
    .filter((p) => p !== "");
}

export interface RawDirective {
  /** Lower-cased. */
  name: string;
  value: string[];
  /** The directive has characters outside printable ASCII: browsers ignore it whole. */
  unreadable: boolean;
}

/** One policy split at `;` then ASCII whitespace; every directive in order, repeats included. */
export function splitDirectives(policy: string): RawDirective[] {
  const out: RawDirective[] = [];
  for (const part of policy.split(";")) {
    const token = part.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, "");
    if (token === "") continue;
    const [rawName, ...value] = token.split(WS);
    out.push({ name: rawName!.toLowerCase(), value, unreadable: !DIRECTIVE_CHARS.test(token) });
  }
  return out;
}

/** Directive names browsers used to know (or never standardised): why they are not stored. */
const RETIRED = new Map<string, string>([
  ["block-all-mixed-content", "deprecated: browsers block mixed content anyway; use upgrade-insecure-requests"],
  ["plugin-types", "removed from CSP; use object-src 'none'"],
  ["prefetch-src", "removed from CSP and ignored by browsers"],
  ["navigate-to", "removed from CSP and ignored by browsers"],
  ["referrer", "removed from CSP; use the Referrer-Policy header"],
  ["reflected-xss", "removed from CSP; browsers dropped their XSS filters"],
  ["disown-opener", "never shipped; use the Cross-Origin-Opener-Policy header"],
  ["require-sri-for", "never standardised and ignored by browsers"],
  ["treat-as-public-address", "a Chromium-only Private Network Access switch, not stored"],
]);

export interface ImportResult {
  directives: Directive[];
  warnings: string[];
}

/** Collects warnings up to MAX_WARNINGS, then counts the rest. */
export class Warnings {
  private readonly list: string[] = [];
  private more = 0;

  add(message: string) {
    if (this.list.length < MAX_WARNINGS) this.list.push(message);
    else this.more++;
  }

  result(): string[] {
    return this.more > 0 ? [...this.list, `… and ${this.more} more warnings`] : [...this.list];
  }
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/**
 * Imports the first of `policies`; `sent(n)` says where the n policies came from, for the warning when there are
 * several. Nothing valid left → 400 on `field`.
 */
export function importPolicies(policies: string[], sent: (count: string) => string, field: string): ImportResult {
  const warnings = new Warnings();
  if (policies.length > 1)
    warnings.add(`${sent(plural(policies.length, "policy", "policies"))}; only the first was imported, while browsers enforce all of them`);
  const directives: Directive[] = [];
  const seen = new Set<string>();
  for (const raw of policies.length > 0 ? splitDirectives(policies[0]!) : []) {
    const { name } = raw;
    if (seen.has(name)) {
      if (KNOWN.has(name)) warnings.add(`${name}: dropped the repeated directive (browsers use only the first)`);
      else warnings.add(`${shown(name)}: dropped (${RETIRED.get(name) ?? "unknown directive"})`);
      continue;
    }
    seen.add(name);
    if (raw.unreadable) {
      warnings.add(`${shown(name)}: dropped (characters outside printable ASCII; browsers ignore the whole directive)`);
      continue;
    }
    if (!KNOWN.has(name)) {
      warnings.add(`${shown(name)}: dropped (${RETIRED.get(name) ?? "unknown directive"})`);
      continue;
    }
    const values: string[] = [];
    const distinct = new Set<string>();
    let dropped = 0;
    for (const v of raw.value) {
      const verdict = checkValue(name, v);
      if ("refused" in verdict) {
        warnings.add(`${name}: dropped ${shown(v)} (${verdict.refused})`);
        dropped++;
        continue;
      }
      if (verdict.repaired !== undefined) warnings.add(`${name}: ${shown(v)} stored as ${shown(verdict.value)} (${verdict.repaired})`);
      if (distinct.has(verdict.value)) warnings.add(`${name}: dropped the repeated ${shown(verdict.value)}`);
      else {
        distinct.add(verdict.value);
        values.push(verdict.value);
      }
    }
    const rule = settle(name, values);
    if (rule.ok) directives.push(stored(name, values));
    else if (!rule.empty) {
      for (const v of values) if (!rule.keep.includes(v)) warnings.add(`${name}: dropped ${shown(v)} (${rule.message})`);
      directives.push(stored(name, rule.keep));
    } else if (SOURCE_LISTS.has(name)) {
      // An empty source list matches nothing (CSP3 source list matching): the directive is 'none', never a fallback.
      if (dropped > 0) warnings.add(`${name}: no valid source left, stored as 'none' (an empty source list matches nothing)`);
      directives.push(stored(name, ["'none'"]));
    } else {
      warnings.add(`${name}: dropped (${rule.message}; nothing valid left)`);
    }
  }
  if (directives.length === 0) {
    const first = policies.length > 1 ? ` (the first of ${policies.length} policies)` : "";
    throw invalid(`${field}: no valid directive found in the policy${first}`);
  }
  return { directives, warnings: warnings.result() };
}

/** The `serialized` variant: the text's first policy (§13.3). */
export function parseSerialized(text: string, field: string): ImportResult {
  return importPolicies(splitPolicies(text), (n) => `the text holds ${n} (separated by ',')`, field);
}

/** A name or value as a warning shows it: characters outside printable ASCII escaped, at most 100 characters. */
function shown(s: string): string {
  const escaped = s.replace(/[^\x20-\x7e]/g, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  return escaped.length > 100 ? `${escaped.slice(0, 100)}…` : escaped;
}
