// Reference comparison: Google's CSP Evaluator (npm `csp_evaluator`, a development dependency used only here) and
// our evaluator (reached through HTTP, `_evaluate {serialized}`) run on the corpus of testdata/ (real-world shapes of
// big sites' policies and the classic bypasses). Every reference finding is translated into our vocabulary with
// MAPPING below; then, per policy, each reference finding must have its counterpart among ours (same code, directive
// and value, and the severity the mapping gives) and each of our findings must have one among the reference's.
// Whatever does not match is a difference, and every difference must be one of DIFFERENCES, the single table of
// intentional differences, each with its reason (most are rules of supplement §13.2 that differ from the reference
// on purpose). A difference no rule explains fails the test, and so does a rule that explains nothing in the corpus
// (the table cannot rot).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Csp } from "csp_evaluator/dist/csp.js";
import { checkHasConfiguredReporting } from "csp_evaluator/dist/checks/security_checks.js";
import { checkStrictDynamicNotStandalone } from "csp_evaluator/dist/checks/strictcsp_checks.js";
import { CspEvaluator, DEFAULT_CHECKS } from "csp_evaluator/dist/evaluator.js";
import { Severity, Type } from "csp_evaluator/dist/finding.js";
import { CspParser } from "csp_evaluator/dist/parser.js";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { loadCorpus } from "./testdata/corpus";

interface Ours {
  code: string;
  severity: string;
  directive: string;
  value?: string;
}
interface Ref {
  type: Type;
  severity: Severity;
  directive: string;
  value?: string;
}
/** A finding of ours that would be the counterpart of a reference finding. */
interface Counterpart {
  code: string;
  severity: string;
  /** When our finding names another directive than the reference's (no-reporting: report-to, not report-uri). */
  directive?: string;
  /** When our finding names a value the reference's does not (strict-dynamic-without-nonce: 'strict-dynamic'). */
  value?: string;
}

// ---- MAPPING: reference check type (and severity) → our code and severity -----------------------------------
// The reference's severities are HIGH, MEDIUM, SYNTAX, MEDIUM_MAYBE, INFO; ours high, medium, low, info. SYNTAX
// findings are rated by what they do: a keyword or directive that silently stops applying is medium, an unknown
// directive low. MEDIUM_MAYBE ("check this") maps to medium, except 'unsafe-hashes' (low: §13.2).
const SCHEME_CODE: Record<string, string> = { "data:": "data-scheme", "http:": "insecure-scheme", "https:": "broad-scheme" };
function counterparts(r: Ref): Counterpart[] | null {
  const q = (v?: string) => v?.startsWith("'") ?? false;
  switch (r.type) {
    case Type.SCRIPT_UNSAFE_INLINE:
      return [{ code: "unsafe-inline", severity: "high" }];
    case Type.SCRIPT_UNSAFE_HASHES:
      return [{ code: "unsafe-hashes", severity: "low" }];
    case Type.SCRIPT_UNSAFE_EVAL:
      return [{ code: "unsafe-eval", severity: "medium" }];
    // data:, http:, https: in script-src, object-src or base-uri (or default-src for either of the first two).
    case Type.PLAIN_URL_SCHEMES:
      return [
        { code: SCHEME_CODE[r.value!]!, severity: "high" },
        { code: "missing-object-src", severity: "high" },
        { code: "permissive-base-uri", severity: "high" },
      ];
    case Type.PLAIN_WILDCARD:
      return [
        { code: "wildcard-source", severity: "high" },
        { code: "permissive-base-uri", severity: "high" },
      ];
    case Type.MISSING_DIRECTIVES:
      return [{ code: `missing-${r.directive}`, severity: "high" }];
    case Type.SCRIPT_ALLOWLIST_BYPASS:
      return r.severity === Severity.HIGH
        ? [
            { code: "script-bypass-host", severity: "high" },
            { code: "plain-url-allowlist", severity: "medium" },
          ]
        : [{ code: "plain-url-allowlist", severity: "medium" }];
    case Type.OBJECT_ALLOWLIST_BYPASS:
      return [{ code: "missing-object-src", severity: r.severity === Severity.HIGH ? "high" : "medium" }];
    case Type.IP_SOURCE:
      return [{ code: "ip-source", severity: "info" }];
    case Type.NONCE_LENGTH:
      return [{ code: "nonce-too-short", severity: "medium" }];
    case Type.NONCE_CHARSET:
      return [{ code: "unknown-keyword", severity: "info" }];
    case Type.SRC_HTTP:
      return [{ code: "insecure-scheme", severity: "medium" }];
    case Type.DEPRECATED_DIRECTIVE:
      return [{ code: "deprecated-directive", severity: "info" }];
    case Type.UNKNOWN_DIRECTIVE:
      return [{ code: "unknown-directive", severity: "low" }];
    case Type.MISSING_SEMICOLON:
      return [{ code: "missing-semicolon", severity: "medium" }];
    case Type.INVALID_KEYWORD:
      return q(r.value)
        ? [
            { code: "unknown-keyword", severity: "medium" },
            { code: "invalid-hash", severity: "medium" },
          ]
        : [{ code: "unquoted-keyword", severity: "medium" }];
    case Type.REPORTING_DESTINATION_MISSING:
      return [{ code: "no-reporting", severity: "info", directive: "report-to" }];
    case Type.REPORT_TO_ONLY:
      return [];
    case Type.STRICT_DYNAMIC_NOT_STANDALONE:
      return [{ code: "strict-dynamic-without-nonce", severity: "info", value: "'strict-dynamic'" }];
    case Type.IGNORED:
      return null; // notes of the reference's own effective-policy computation, no finding
  }
  throw new Error(`unmapped reference finding type ${r.type}`);
}

type Difference =
  { kind: "oursOnly"; ours: Ours } | { kind: "referenceOnly"; ref: Ref } | { kind: "severity"; ours: Ours; ref: Ref; expected: string };

interface Context {
  /** The policy as the reference parsed it (first of repeated directives, keywords lower-cased). */
  csp: Csp;
  values: (directive: string) => string[];
  /** Our findings on the policy. */
  ours: Ours[];
}

const TYPE_NAME = (t: Type) => Type[t];
const describeDiff = (d: Difference) =>
  d.kind === "oursOnly"
    ? `ours only: ${d.ours.code} ${d.ours.severity} ${d.ours.directive} ${d.ours.value ?? "-"}`
    : d.kind === "referenceOnly"
      ? `reference only: ${TYPE_NAME(d.ref.type)} ${Severity[d.ref.severity]} ${d.ref.directive} ${d.ref.value ?? "-"}`
      : `severity: ${d.ours.code} ${d.ours.directive} ${d.ours.value ?? "-"} is ${d.ours.severity}, the reference's ${Severity[d.ref.severity]} maps to ${d.expected}`;

// ---- DIFFERENCES: every intentional difference, with its reason ----------------------------------------------
interface Rule {
  id: string;
  reason: string;
  explains: (d: Difference, ctx: Context) => boolean;
}
const ours = (d: Difference, code: string, severity?: string): d is Extract<Difference, { ours: Ours }> =>
  d.kind !== "referenceOnly" && d.ours.code === code && (severity === undefined || d.ours.severity === severity);
const refOnly = (d: Difference, type: Type): d is Extract<Difference, { kind: "referenceOnly" }> => d.kind === "referenceOnly" && d.ref.type === type;
/** The directive the reference (and browsers) fall back to for object-src. */
const objectDirective = (ctx: Context) => (ctx.csp.directives["object-src"] !== undefined ? "object-src" : "default-src");
/** The directive was ignored by browsers: it has characters outside printable ASCII. */
const unreadable = (ctx: Context, directive: string) => ctx.values(directive).some((v) => /[^\x21-\x7e]/.test(v));

const DIFFERENCES: Rule[] = [
  {
    id: "self-is-not-a-host-list",
    reason:
      "The reference notes 'self' in script sources as a maybe-bypass (JSONP or uploads on the site itself); §13.2's plain-url-allowlist is about allow-listed hosts, and 'self' is in nearly every policy.",
    explains: (d) => refOnly(d, Type.SCRIPT_ALLOWLIST_BYPASS) && d.ref.value === "'self'",
  },
  {
    id: "base-uri-medium",
    reason:
      "§13.2: without base-uri, medium even when scripts use no nonce or hash (an injected <base> re-targets every relative URL); the reference only reports the high case.",
    explains: (d) => ours(d, "missing-base-uri", "medium"),
  },
  {
    id: "base-uri-with-hashes",
    reason:
      "§13.2: missing-base-uri is high whenever the script sources use nonces or hashes; the reference only with nonces, or hashes plus 'strict-dynamic' (a hashed script that loads a relative URL is re-targeted by <base> just the same).",
    explains: (d, ctx) => {
      const script = ctx.values(ctx.csp.directives["script-src"] ? "script-src" : "default-src");
      return (
        d.kind === "oursOnly" &&
        ours(d, "missing-base-uri", "high") &&
        script.some((v) => /^'sha(256|384|512)-/.test(v)) &&
        !script.some((v) => /^'nonce-/.test(v))
      );
    },
  },
  {
    id: "object-src-effective-value",
    reason:
      "§13.2: missing-object-src (high) whenever the effective object-src value allows plugins (`*`, a scheme, a host), also through default-src; the reference is silent on default-src hosts and rates object-src hosts medium-maybe.",
    explains: (d, ctx) =>
      (ours(d, "missing-object-src", "high") &&
        d.kind === "oursOnly" &&
        d.ours.directive === "default-src" &&
        ctx.csp.directives["object-src"] === undefined) ||
      (d.kind === "severity" && d.ours.code === "missing-object-src" && d.ref.type === Type.OBJECT_ALLOWLIST_BYPASS),
  },
  {
    id: "one-object-src-finding",
    reason:
      "§13.2: one missing-object-src per policy, naming the first offending value; the reference reports each offending value of the effective object-src (11 findings on one real policy).",
    explains: (d, ctx) =>
      d.kind === "referenceOnly" &&
      d.ref.directive === objectDirective(ctx) &&
      [Type.PLAIN_URL_SCHEMES, Type.PLAIN_WILDCARD, Type.OBJECT_ALLOWLIST_BYPASS].includes(d.ref.type) &&
      ctx.ours.some((o) => o.code === "missing-object-src" && o.directive === d.ref.directive && o.value !== d.ref.value),
  },
  {
    id: "empty-source-list-is-none",
    reason:
      "CSP3 (and Chromium): an empty source list matches nothing, so `object-src;` is 'none' (import stores it so, §13.3); the reference reads it as a missing object-src.",
    explains: (d, ctx) => refOnly(d, Type.MISSING_DIRECTIVES) && d.ref.directive === "object-src" && ctx.csp.directives["object-src"]?.length === 0,
  },
  {
    id: "http-host-in-script-sources-high",
    reason:
      "§13.2: an http:// host in script sources is high (a script over plain HTTP is as good as attacker-supplied on a hostile network); the reference rates every http:// source medium.",
    explains: (d) => d.kind === "severity" && d.ours.code === "insecure-scheme" && d.ours.severity === "high" && d.ref.type === Type.SRC_HTTP,
  },
  {
    id: "http-scheme-in-other-fetch-directives",
    reason: "§13.2: `http:` is insecure-scheme (medium) in every fetch directive; the reference checks only http:// URLs outside its XSS directives.",
    explains: (d) => ours(d, "insecure-scheme", "medium") && d.ours.value === "http:",
  },
  {
    id: "http-fallback-next-to-strict-dynamic",
    reason:
      "§13.2: `http:` or an http:// host next to 'strict-dynamic' with a nonce or hash is info (Google's recommended fallback for pre-CSP3 browsers); the reference drops it from the CSP3 effective policy and says nothing.",
    explains: (d) => ours(d, "insecure-scheme", "info"),
  },
  {
    id: "strict-dynamic-without-nonce-medium",
    reason:
      "§13.2: 'strict-dynamic' without a nonce or hash is medium (every script is blocked, so sites weaken the policy to recover); the reference's optional strict-CSP check rates it info.",
    explains: (d) => d.kind === "severity" && d.ours.code === "strict-dynamic-without-nonce",
  },
  {
    id: "wildcard-with-port",
    reason:
      "`https://*:443` matches every host on port 443: a wildcard (§13.2 wildcard-source); the reference only recognises a bare `*` after the scheme.",
    explains: (d) => ours(d, "wildcard-source", "high") && d.kind === "oursOnly" && /^(?:[a-z][a-z0-9+.-]*:\/\/)?\*:/i.test(d.ours.value ?? ""),
  },
  {
    id: "none-is-ignored-next-to-sources",
    reason:
      "'none' next to other sources is ignored by browsers (Chromium logs it), so the hosts still apply; the reference skips the allow-list check of a directive that holds 'none'.",
    explains: (d, ctx) =>
      (ours(d, "plain-url-allowlist") || ours(d, "script-bypass-host")) && d.kind === "oursOnly" && ctx.values(d.ours.directive).includes("'none'"),
  },
  {
    id: "nonce-outside-base64",
    reason:
      "A nonce with characters outside base64 is no nonce to browsers (Chromium drops the source, and so does import), so it is an unknown-keyword (medium) like 'unsafe_inline'; the reference notes the charset as info.",
    explains: (d) => d.kind === "severity" && d.ours.code === "unknown-keyword" && d.ref.type === Type.NONCE_CHARSET,
  },
  {
    id: "unreadable-directive",
    reason:
      "Browsers ignore a directive with characters outside printable ASCII (Chromium: 'invalid characters'), so script-src is missing (unreadable-directive says why); the reference reads the directive.",
    explains: (d, ctx) =>
      (d.kind === "referenceOnly" && unreadable(ctx, d.ref.directive)) ||
      ours(d, "unreadable-directive") ||
      (ours(d, "missing-script-src") && unreadable(ctx, "script-src")),
  },
  {
    id: "sources-browsers-drop",
    reason:
      "A host Chromium refuses (an '_' in a label, an IPv6 literal, a ?query or #fragment without a path before it: §27) is dropped by browsers and by import, so it is neither an allow-list entry nor an insecure source; the reference still reads it as a host.",
    explains: (d) =>
      d.kind === "referenceOnly" &&
      (/^(?:[a-z][a-z0-9+.-]*:\/\/)?(?:[^/:]*_|\[)/i.test(d.ref.value ?? "") || /^(?:[a-z][a-z0-9+.-]*:\/\/)?[^/?#]*[?#]/i.test(d.ref.value ?? "")),
  },
  {
    id: "nonce-and-hash-case",
    reason:
      "§27: nonce and hash keywords are case-insensitive, as in Chromium ('NONCE-x' is a nonce, so 'unsafe-inline' next to it is ignored); the reference lower-cases only the plain keywords, so it calls them invalid keywords and keeps 'unsafe-inline'.",
    explains: (d, ctx) =>
      d.kind === "referenceOnly" &&
      ((d.ref.type === Type.INVALID_KEYWORD &&
        /^'(nonce|sha256|sha384|sha512)-/i.test(d.ref.value ?? "") &&
        !/^'(nonce|sha256|sha384|sha512)-/.test(d.ref.value ?? "")) ||
        (d.ref.type === Type.SCRIPT_UNSAFE_INLINE &&
          ctx.values(d.ref.directive).some((v) => /^'(nonce|sha256|sha384|sha512)-/i.test(v) && !/^'(nonce|sha256|sha384|sha512)-/.test(v)))),
  },
  {
    id: "report-uri-http-low",
    reason:
      "An http:// report-uri exposes the reports (page and blocked URLs) on the network path but runs no script: insecure-scheme low (issue 30); the reference rates every http:// source medium.",
    explains: (d) =>
      d.kind === "severity" &&
      d.ours.code === "insecure-scheme" &&
      d.ours.severity === "low" &&
      d.ours.directive === "report-uri" &&
      d.ref.type === Type.SRC_HTTP,
  },
  {
    id: "directives-newer-than-the-reference",
    reason: "fenced-frame-src is a directive browsers enforce today (§13.1); the reference does not know it and calls it unknown.",
    explains: (d) => refOnly(d, Type.UNKNOWN_DIRECTIVE) && d.ref.directive === "fenced-frame-src",
  },
  {
    id: "deprecated-directives",
    reason:
      "§13.2 deprecated-directive lists block-all-mixed-content and plugin-types (the reference still treats them as current) and report-uri without report-to.",
    explains: (d) => ours(d, "deprecated-directive") && ["block-all-mixed-content", "plugin-types", "report-uri"].includes(d.ours.directive),
  },
  {
    id: "report-to-alone-is-fine",
    reason:
      "report-to is CSP3's reporting mechanism; §13.2 notes report-uri without report-to (deprecated-directive), not report-to without report-uri as the reference does.",
    explains: (d) => refOnly(d, Type.REPORT_TO_ONLY),
  },
  {
    id: "reflected-xss-block",
    reason:
      "`reflected-xss block` is that (deprecated) directive's own syntax; the reference flags the word because its keyword list holds webrtc's 'block'.",
    explains: (d) => refOnly(d, Type.INVALID_KEYWORD) && d.ref.directive === "reflected-xss",
  },
  {
    id: "checks-without-counterpart",
    reason:
      "§13.2 checks the reference does not have: missing-frame-ancestors (clickjacking), and notes on keywords newer than it ('wasm-unsafe-eval', 'inline-speculation-rules').",
    explains: (d) => ours(d, "missing-frame-ancestors") || ours(d, "wasm-unsafe-eval") || ours(d, "inline-speculation-rules"),
  },
];

// ---- the comparison --------------------------------------------------------------------------------------------
let srv: TestServer;
let a: TestUser;

beforeAll(async () => {
  srv = await startTestServer();
  a = await srv.createUser();
});
afterAll(() => srv.stop());

/**
 * The reference's default checks, plus two of its optional ones that have a §13.2 counterpart: the reporting check
 * (no-reporting) and the strict-CSP check of 'strict-dynamic' without a nonce or hash.
 */
function reference(policy: string): { findings: Ref[]; csp: Csp } {
  const csp = new CspParser(policy).csp;
  const findings = new CspEvaluator(csp)
    .evaluate([checkStrictDynamicNotStandalone], [...DEFAULT_CHECKS, checkHasConfiguredReporting])
    .map((f) => ({ type: f.type, severity: f.severity, directive: f.directive, value: f.value }));
  return { findings, csp };
}

async function evaluateOurs(policy: string): Promise<Ours[]> {
  const res = await a.client.post("/api/web_security/csp/_evaluate", { serialized: policy });
  expect({ policy, status: res.status }).toEqual({ policy, status: 200 });
  return res.json.findings.map(({ code, severity, directive, value }: Ours) =>
    value === undefined ? { code, severity, directive } : { code, severity, directive, value },
  );
}

/** The differences, and the codes of ours that agreed with a reference finding (code, directive, value, severity). */
function compare(oursFindings: Ours[], refFindings: Ref[]): { diffs: Difference[]; agreed: string[] } {
  const diffs: Difference[] = [];
  const agreed: string[] = [];
  const matched = new Set<Ours>();
  for (const r of refFindings) {
    const cps = counterparts(r);
    if (cps === null) continue;
    let found = false;
    for (const cp of cps) {
      for (const o of oursFindings) {
        if (o.code !== cp.code || o.directive !== (cp.directive ?? r.directive) || (o.value ?? "") !== (cp.value ?? r.value ?? "")) continue;
        found = true;
        matched.add(o);
        if (o.severity !== cp.severity) diffs.push({ kind: "severity", ours: o, ref: r, expected: cp.severity });
        else agreed.push(o.code);
      }
    }
    if (!found) diffs.push({ kind: "referenceOnly", ref: r });
  }
  for (const o of oursFindings) if (!matched.has(o)) diffs.push({ kind: "oursOnly", ours: o });
  return { diffs, agreed };
}

describe("csp evaluator vs Google's CSP Evaluator (reference)", () => {
  test("every finding agrees per the mapping, except the intentional differences listed in DIFFERENCES", async () => {
    const corpus = loadCorpus();
    expect(corpus.length).toBeGreaterThanOrEqual(60);
    const used = new Map<string, number>(DIFFERENCES.map((r) => [r.id, 0]));
    const unexplained: string[] = [];
    const agreements = new Map<string, number>();
    for (const { name, policy } of corpus) {
      const ref = reference(policy);
      const oursFindings = await evaluateOurs(policy);
      const ctx: Context = { csp: ref.csp, values: (d) => ref.csp.directives[d] ?? [], ours: oursFindings };
      const { diffs, agreed } = compare(oursFindings, ref.findings);
      for (const code of agreed) agreements.set(code, (agreements.get(code) ?? 0) + 1);
      for (const d of diffs) {
        const rules = DIFFERENCES.filter((r) => r.explains(d, ctx));
        for (const r of rules) used.set(r.id, used.get(r.id)! + 1);
        if (rules.length === 0) unexplained.push(`${name}: ${describeDiff(d)}`);
      }
    }
    expect(unexplained).toEqual([]);
    expect([...used].filter(([, n]) => n === 0).map(([id]) => id)).toEqual([]);
    // The agreement is not vacuous: every mapped check of ours agrees with the reference on some corpus policy.
    const MAPPED = [
      "unsafe-inline",
      "unsafe-hashes",
      "unsafe-eval",
      "data-scheme",
      "insecure-scheme",
      "broad-scheme",
      "wildcard-source",
      "missing-object-src",
      "missing-script-src",
      "missing-base-uri",
    ];
    const MAPPED_2 = [
      "script-bypass-host",
      "plain-url-allowlist",
      "permissive-base-uri",
      "ip-source",
      "nonce-too-short",
      "deprecated-directive",
      "unknown-directive",
      "missing-semicolon",
      "unknown-keyword",
      "invalid-hash",
      "unquoted-keyword",
      "no-reporting",
    ];
    expect([...MAPPED, ...MAPPED_2].filter((code) => !agreements.has(code))).toEqual([]);
    expect([...agreements.values()].reduce((x, y) => x + y, 0)).toBeGreaterThanOrEqual(400);
  });
});
