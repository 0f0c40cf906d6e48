// The policy evaluator (supplement §13.2 `_evaluate`): static checks of a policy's weaknesses, covering the
// checks of Google's CSP Evaluator plus the newer keywords. Pure: directives in, findings out. It agrees with the
// reference (npm `csp_evaluator`) wherever the §13.2 table does not say otherwise; csp-reference.test.ts runs both
// on a corpus and lists every intentional difference with its reason.
//
// Vocabulary. "Script sources" are script-src, else default-src (§13.2); the checks also visit script-src-elem and
// script-src-attr when the policy sets them. Inside one script directive, a nonce or hash neutralises
// 'unsafe-inline', and 'strict-dynamic' neutralises host and scheme sources, 'self' and 'unsafe-inline' (CSP3 §8.2,
// as browsers implement it). The §13.2 table draws the consequences: broad-scheme and plain-url-allowlist (and
// script-bypass-host, its sharper form) are not reported next to 'strict-dynamic'; insecure-scheme there is only
// `info` when a nonce or hash makes 'strict-dynamic' effective (Google's recommended `https: http:` fallback for
// browsers without CSP3); wildcard-source and data-scheme keep their severity (the table gives them no exception).
// Host allow-lists are judged only where URLs load scripts (script-src, default-src, script-src-elem), never in
// script-src-attr, which governs inline event handlers. A host source's `?query` or `#fragment` after a path is
// ignored for host matching, as browsers ignore it; without a path (`https://host?x`) the source is invalid and
// ignored whole, as Chromium does (§27). The table's codes are always emitted; the additions (permissive-base-uri, ...)
// come on top of them, never instead. Every finding names the effective directive it is about and, when there is
// one, the offending value.
//
// Input is read as browsers enforce it: the first of repeated directives wins, an empty source list (`object-src;`)
// matches nothing like 'none' (as import stores it), and a directive with characters outside printable ASCII is
// ignored (and reported as unreadable-directive). Keywords, nonces and hashes are read case-insensitively through
// the one canonical form import stores (directives.ts canonicalSource).
import { BYPASS_KIND, findBypass } from "./bypass-hosts";
import { CHECKS, DIRECTIVE_NAMES, SEVERITIES, type PolicyFinding, type Severity } from "./contract";
import { canonicalSource, HASH_SOURCE_RE, HOST_SOURCE_RE, KEYWORDS, SCHEME_SOURCE_RE, SOURCE_LIST_DIRECTIVES, SOURCE_LISTS } from "./directives";

/** A finding of one policy (the wire's, without `policyIndex`: contract.ts CspEvaluation). */
export type Finding = Omit<PolicyFinding, "policyIndex">;

/** Directives CSP dropped or never standardised; reported as deprecated rather than unknown. */
const DEPRECATED = new Map<string, string>([
  ["block-all-mixed-content", "is deprecated; use upgrade-insecure-requests"],
  ["plugin-types", "is deprecated and ignored by current browsers; use object-src 'none'"],
  ["prefetch-src", "is deprecated and ignored by current browsers"],
  ["referrer", "is deprecated; use the Referrer-Policy header"],
  ["reflected-xss", "is deprecated; browsers removed their XSS auditors"],
  ["disown-opener", "is deprecated; use the Cross-Origin-Opener-Policy header"],
  ["navigate-to", "was removed from CSP and is ignored"],
  ["require-sri-for", "was never standardised and is ignored"],
]);
const KNOWN_DIRECTIVES = new Set([...DIRECTIVE_NAMES, ...DEPRECATED.keys()]);
/** Fetch directives (plus the deprecated prefetch-src) for the non-script insecure-scheme check. */
const FETCH_DIRECTIVES = new Set<string>([
  ...SOURCE_LIST_DIRECTIVES.filter((d) => d.endsWith("-src") || d.endsWith("-src-elem") || d.endsWith("-src-attr")),
  "prefetch-src",
]);
/** Directives whose values are source lists (known ones, deprecated fetch ones, and unknown `*-src`). */
const isSourceList = (name: string) =>
  (SOURCE_LIST_DIRECTIVES as readonly string[]).includes(name) || name === "prefetch-src" || (!KNOWN_DIRECTIVES.has(name) && name.endsWith("-src"));

const NONCE_RE = /^'nonce-(.*)'$/i;
const STRICT_NONCE_RE = /^'nonce-[A-Za-z0-9+/_-]+={0,2}'$/;
const HASHLIKE_RE = /^'(sha-?\d*|md5)-(.*)'$/i;
const HASH_BYTES = new Map<string, number>([
  ["sha256", 32],
  ["sha384", 48],
  ["sha512", 64],
]);
const UNQUOTED_KEYWORDS = new Set([...KEYWORDS].map((k) => k.slice(1, -1)));
/** A keyword, nonce or hash without its quotes: read as a host name, reported as unquoted-keyword. */
const isUnquotedKeyword = (v: string) => UNQUOTED_KEYWORDS.has(v.toLowerCase()) || /^(nonce|sha256|sha384|sha512)-/i.test(v);

const isNonce = (v: string) => STRICT_NONCE_RE.test(v);
const isHash = (v: string) => HASH_SOURCE_RE.test(v);
const isScheme = (v: string) => SCHEME_SOURCE_RE.test(v);

interface HostSource {
  scheme?: string;
  host: string;
  path: string;
}

/**
 * A host source, a `?query` or `#fragment` after its path ignored as browsers ignore it. Without a path before it
 * (`https://host?x`, `host#x`) the whole source is invalid: Chromium ignores it, so it allows nothing (§27).
 */
function hostSource(v: string): HostSource | undefined {
  if (v.startsWith("'") || isScheme(v)) return undefined;
  const cut = v.search(/[?#]/);
  const m = HOST_SOURCE_RE.exec(cut < 0 ? v : v.slice(0, cut));
  if (!m || (cut >= 0 && m[4] === undefined)) return undefined;
  return { scheme: m[1]?.toLowerCase(), host: m[2]!.toLowerCase(), path: m[4] ?? "" };
}

// `*`, `https://*`, `*:443` or `*` followed by a path: a host part that matches any host.
const isWildcard = (v: string) => hostSource(v)?.host === "*";
/** IPv6 literals are no host source browsers accept, but they are still reported as IP sources. */
const IPV6_SOURCE_RE = /^(?:[a-z][a-z0-9+.-]*:\/\/)?\[[0-9a-f:.]+\](?::(?:\d+|\*))?(?:\/.*)?$/i;

/** Base64 (standard or URL alphabet) of exactly `bytes` bytes, padding optional but correct when present. */
function isBase64OfLength(value: string, bytes: number): boolean {
  const m = /^([A-Za-z0-9+/_-]*)(=*)$/.exec(value);
  if (!m) return false;
  const unpadded = Math.ceil((bytes * 4) / 3);
  const padding = (4 - (unpadded % 4)) % 4;
  return m[1]!.length === unpadded && (m[2]!.length === 0 || m[2]!.length === padding);
}

const RANK: Record<Severity, number> = { high: 0, medium: 1, low: 2, info: 3 };

export interface EvaluatedDirective {
  name: string;
  value?: string[];
  /** Characters outside printable ASCII: browsers ignore the directive (import.ts `splitDirectives`). */
  unreadable?: boolean;
}

/** Evaluates a policy's directives as browsers enforce them (see the header). */
export function evaluatePolicy(input: EvaluatedDirective[]): Finding[] {
  const dirs = new Map<string, string[]>();
  const unreadable: string[] = [];
  const named = new Set<string>();
  for (const d of input) {
    const name = d.name.toLowerCase();
    if (named.has(name)) continue;
    named.add(name);
    if (d.unreadable) {
      unreadable.push(name);
      continue;
    }
    const vs = (d.value ?? []).map(canonicalSource);
    // An empty source list matches nothing (CSP3 source list matching): 'none', as import stores it.
    dirs.set(name, vs.length === 0 && SOURCE_LISTS.has(name) ? ["'none'"] : vs);
  }
  const has = (name: string) => dirs.has(name);
  const values = (name: string) => dirs.get(name) ?? [];
  const findings: Finding[] = [];
  const add = (code: string, severity: Severity, directive: string, message: string, value?: string) =>
    findings.push(value === undefined ? { directive, severity, code, message } : { directive, value, severity, code, message });

  // ---- script directives ----------------------------------------------------------------------------------
  const scriptSrc = has("script-src") ? "script-src" : has("default-src") ? "default-src" : undefined;
  const elem = has("script-src-elem") ? "script-src-elem" : scriptSrc;
  const scriptDirs = [...new Set([scriptSrc, elem, has("script-src-attr") ? "script-src-attr" : scriptSrc])].filter(
    (d): d is string => d !== undefined,
  );
  /** Directives whose host sources load scripts (script-src-attr governs inline event handlers only). */
  const loading = new Set([scriptSrc, elem]);
  if (scriptSrc === undefined)
    add(
      "missing-script-src",
      "high",
      "script-src",
      "Neither script-src nor default-src is set: scripts from anywhere, inline scripts and eval are allowed.",
    );

  for (const d of scriptDirs) {
    const vs = values(d);
    const nonceOrHash = vs.some((v) => isNonce(v) || isHash(v));
    const strictDynamic = vs.includes("'strict-dynamic'");
    // CSP3 browsers ignore scheme and host sources here; only pre-CSP3 browsers would use them (§13.2: info).
    const schemesIgnored = strictDynamic && nonceOrHash;
    const evalAllowed = vs.includes("'unsafe-eval'");
    if (strictDynamic && !nonceOrHash)
      add(
        "strict-dynamic-without-nonce",
        "medium",
        d,
        "'strict-dynamic' without a nonce or hash blocks every script: no script can be trusted to load others.",
        "'strict-dynamic'",
      );
    const insecure = (v: string, message: string) =>
      schemesIgnored
        ? add(
            "insecure-scheme",
            "info",
            d,
            `${v} is ignored by CSP3 browsers next to 'strict-dynamic' with a nonce or hash; only browsers without CSP3 would load scripts over plain HTTP through it.`,
            v,
          )
        : add("insecure-scheme", "high", d, message, v);
    for (const v of vs) {
      if (v === "'unsafe-inline'") {
        if (!nonceOrHash && !strictDynamic)
          add(
            "unsafe-inline",
            "high",
            d,
            "'unsafe-inline' allows inline scripts and event handlers, so any HTML injection becomes script execution. Use nonces or hashes instead.",
            v,
          );
        continue;
      }
      if (v === "'unsafe-eval'") {
        add(
          "unsafe-eval",
          "medium",
          d,
          "'unsafe-eval' allows eval(), new Function() and string timers, turning DOM injection into script execution.",
          v,
        );
        continue;
      }
      if (v.startsWith("'")) continue;
      if (isScheme(v)) {
        if (v === "http:") insecure(v, "http: allows scripts from any host over plain HTTP, which anyone on the network path can alter.");
        else if (v === "data:") add("data-scheme", "high", d, "data: allows an attacker to supply a script inline as a data: URL.", v);
        else if (v === "https:" && !strictDynamic)
          add("broad-scheme", "high", d, "https: alone allows scripts from any HTTPS host, including attacker-controlled ones.", v);
        continue;
      }
      const hs = hostSource(v);
      if (!hs) continue;
      if (hs.scheme === "http") insecure(v, "A script host over plain HTTP can be altered by anyone on the network path; use https://.");
      if (hs.host === "*") {
        add("wildcard-source", "high", d, `${d} should not allow '*': scripts from any host are allowed.`, v);
        continue;
      }
      // Host allow-lists: ignored by CSP3 browsers next to 'strict-dynamic' (§13.2: "without 'strict-dynamic'").
      // A keyword without quotes or a directive name (a missing ';') is a mistake reported as such, not a list.
      if (strictDynamic || !loading.has(d) || isUnquotedKeyword(v) || KNOWN_DIRECTIVES.has(v.toLowerCase())) continue;
      add(
        "plain-url-allowlist",
        "medium",
        d,
        "Host allow-lists are often bypassable (JSONP endpoints, CDNs hosting old libraries, user uploads); prefer nonces or hashes with 'strict-dynamic'.",
        v,
      );
      const bypass = findBypass(hs.host, hs.path, evalAllowed);
      if (bypass) add("script-bypass-host", "high", d, `${bypass.host} hosts ${BYPASS_KIND[bypass.kind]} that can be used to bypass this policy.`, v);
    }
  }

  // ---- object-src -----------------------------------------------------------------------------------------
  const objectSrc = has("object-src") ? "object-src" : has("default-src") ? "default-src" : undefined;
  if (objectSrc === undefined) {
    add(
      "missing-object-src",
      "high",
      "object-src",
      "Neither object-src nor default-src is set: plugins (<object>, <embed>) can load and run script. Set object-src 'none'.",
    );
  } else {
    let reported = false;
    for (const v of values(objectSrc)) {
      if (v.startsWith("'")) continue;
      if (isWildcard(v)) add("wildcard-source", "high", objectSrc, `${objectSrc} should not allow '*': plugins from any host are allowed.`, v);
      // §13.2: a value allowing plugins (`*`, a scheme, a host) is also missing-object-src, once per policy.
      if (!reported && (isScheme(v) || hostSource(v))) {
        add(
          "missing-object-src",
          "high",
          objectSrc,
          "object-src allows plugin content (<object>, <embed>), which can run script. Set object-src 'none'.",
          v,
        );
        reported = true;
      }
    }
  }

  // ---- base-uri -------------------------------------------------------------------------------------------
  if (!has("base-uri")) {
    // High when the script sources rely on nonces or hashes (§13.2); one only in script-src-elem/-attr: medium.
    if (scriptSrc !== undefined && values(scriptSrc).some((v) => isNonce(v) || isHash(v)))
      add(
        "missing-base-uri",
        "high",
        "base-uri",
        "Without base-uri an injected <base> tag re-targets relative script URLs to an attacker's host, defeating nonces and hashes. Set base-uri 'none' or 'self'.",
      );
    else
      add(
        "missing-base-uri",
        "medium",
        "base-uri",
        "Without base-uri an injected <base> tag can re-target every relative URL of the page. Set base-uri 'none' or 'self'.",
      );
  } else {
    for (const v of values("base-uri")) {
      if (isWildcard(v) || isScheme(v))
        add(
          "permissive-base-uri",
          "high",
          "base-uri",
          "base-uri allows an injected <base> tag to point relative (script) URLs at any host. Use 'none' or 'self'.",
          v,
        );
    }
  }

  // ---- insecure schemes in the other fetch directives -------------------------------------------------------
  for (const [name, vs] of dirs) {
    if (!FETCH_DIRECTIVES.has(name) || scriptDirs.includes(name)) continue;
    for (const v of vs) {
      if (v === "http:" || hostSource(v)?.scheme === "http")
        add("insecure-scheme", "medium", name, "Resources over plain HTTP can be read and altered on the network path; allow only https.", v);
    }
  }

  // ---- reporting endpoints over plain HTTP (the reference's "Use HTTPS to send violation reports securely") ------
  // Reports carry the page's URL and the blocked URLs; on plain HTTP they can be read and altered (or dropped) on
  // the network path. No script runs through them: low.
  for (const v of values("report-uri")) {
    if (/^http:\/\//i.test(v))
      add(
        "insecure-scheme",
        "low",
        "report-uri",
        "Violation reports sent over plain HTTP (page and blocked URLs) can be read, altered or dropped on the network path; use an https:// endpoint.",
        v,
      );
  }

  // ---- per-value checks over every directive --------------------------------------------------------------
  for (const [name, vs] of dirs) {
    const sourceList = isSourceList(name);
    for (const v of vs) {
      const nonce = NONCE_RE.exec(v);
      if (nonce && nonce[1]!.replace(/=+$/, "").length < 8)
        add(
          "nonce-too-short",
          "medium",
          name,
          "Nonces should be at least 8 base64 characters (128 random bits recommended) so they cannot be guessed.",
          v,
        );
      const hashlike = HASHLIKE_RE.exec(v);
      if (hashlike) {
        const alg = hashlike[1]!.toLowerCase();
        const bytes = HASH_BYTES.get(alg);
        if (bytes === undefined)
          add("invalid-hash", "medium", name, `Hash algorithm ${hashlike[1]} is not supported; use sha256, sha384 or sha512.`, v);
        else if (!isBase64OfLength(hashlike[2]!, bytes))
          add("invalid-hash", "medium", name, `The ${alg} hash must be the base64 encoding of a ${bytes}-byte digest; this one never matches.`, v);
      }
      if (v === "'unsafe-hashes'")
        add(
          "unsafe-hashes",
          "low",
          name,
          "'unsafe-hashes' lets hashed inline event handlers and style attributes run; refactor them away when possible.",
          v,
        );
      if (v === "'wasm-unsafe-eval'" || v === "'wasm-eval'")
        add("wasm-unsafe-eval", "info", name, `${v} allows WebAssembly compilation (not JavaScript eval); fine when the site uses WebAssembly.`, v);
      if (v === "'inline-speculation-rules'")
        add(
          "inline-speculation-rules",
          "info",
          name,
          "'inline-speculation-rules' allows inline <script type=\"speculationrules\">; check that injected rules cannot cause harmful prefetches.",
          v,
        );
      if (KNOWN_DIRECTIVES.has(v.toLowerCase()) && v.toLowerCase() !== name)
        add("missing-semicolon", "medium", name, `"${v}" is a directive name, not a value: a ';' is probably missing.`, v);
      if (!sourceList) continue;
      if (v.startsWith("'")) {
        if (!KEYWORDS.has(v) && !isNonce(v) && !hashlike) add("unknown-keyword", "medium", name, `${v} is not a CSP keyword; browsers ignore it.`, v);
      } else if (isUnquotedKeyword(v)) {
        add("unquoted-keyword", "medium", name, `"${v}" is read as a host name; keywords, nonces and hashes must be in single quotes ('${v}').`, v);
      } else {
        const hs = hostSource(v);
        if ((hs && /^\d{1,3}(\.\d{1,3}){3}\.?$/.test(hs.host)) || IPV6_SOURCE_RE.test(v))
          add(
            "ip-source",
            "info",
            name,
            "IP address sources are matched only by URLs that use the address literally; 127.0.0.1 sources should not ship to production.",
            v,
          );
      }
    }
    if (name === "trusted-types" || name === "require-trusted-types-for" || name === "webrtc") {
      const allowed =
        name === "trusted-types" ? ["'none'", "'allow-duplicates'"] : name === "require-trusted-types-for" ? ["'script'"] : ["'allow'", "'block'"];
      for (const v of vs) {
        if (v.startsWith("'") && !allowed.includes(v.toLowerCase()))
          add("unknown-keyword", "medium", name, `${v} is not a keyword of ${name} (${allowed.join(", ")}).`, v);
      }
    }
  }

  // ---- directive-level checks ---------------------------------------------------------------------------
  for (const name of unreadable)
    add(
      "unreadable-directive",
      "medium",
      name,
      `${name} has characters outside printable ASCII (hosts must be punycode, paths percent-encoded); browsers ignore the whole directive.`,
    );
  if (!has("frame-ancestors"))
    add(
      "missing-frame-ancestors",
      "low",
      "frame-ancestors",
      "No frame-ancestors: any site may frame this page (clickjacking) unless X-Frame-Options is sent. Set frame-ancestors 'none' or 'self'.",
    );
  for (const name of dirs.keys()) {
    const deprecated = DEPRECATED.get(name);
    if (deprecated !== undefined) add("deprecated-directive", "info", name, `${name} ${deprecated}.`);
    else if (!KNOWN_DIRECTIVES.has(name))
      add(
        "unknown-directive",
        "low",
        name,
        name.endsWith(":")
          ? `"${name}": directive names do not end with a colon; browsers ignore it.`
          : `"${name}" is not a CSP directive; browsers ignore it.`,
      );
  }
  if (has("report-uri") && !has("report-to"))
    add("deprecated-directive", "info", "report-uri", "report-uri is deprecated in CSP3; keep it for older browsers and add report-to.");
  if (!has("report-uri") && !has("report-to"))
    add("no-reporting", "info", "report-to", "No report-to or report-uri: violations (attacks and breakage alike) go unnoticed.");

  // One finding per (code, directive, value); most severe first, check order kept within a severity.
  const seen = new Set<string>();
  const unique = findings.filter((f) => {
    const key = `${f.code}\u0000${f.directive}\u0000${f.value ?? ""}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return unique
    .map((f, i) => ({ f, i }))
    .sort((a, b) => RANK[a.f.severity] - RANK[b.f.severity] || a.i - b.i)
    .map(({ f }) => f);
}
