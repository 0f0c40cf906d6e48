// The CSP directives a policy can hold (supplement §13.1), with a short description each for the picker, the kind of
// values each takes, the suggestions the value editor offers, and a check of each value. The lists and patterns are
// the API's own (web/api/rules.gen.ts, from src/features/csp/shared-rules.ts); the descriptions are keyed by the
// document's directive names, so a directive the API adds or drops fails the type check until it is described here.
// The checks catch typos early and explain them ("quote keywords: 'self'"); a value the API still refuses is shown
// under the directive.
import { csp as cspRules, net as netRules } from "../../api/rules.gen";
import type { DirectiveName } from "../../api/types";
import type { Directive } from "./csp-api";

export type DirectiveKind = "sources" | "uris" | "sandbox" | "none" | "webrtc" | "trusted-types-for" | "trusted-types" | "group";

export interface DirectiveInfo {
  name: DirectiveName;
  kind: DirectiveKind;
  description: string;
}

/** What the picker says of each directive, in the picker's order. */
const DESCRIPTIONS: Record<DirectiveName, string> = {
  "default-src": "Fallback for every fetch directive not given",
  "script-src": "Where scripts may load from and which inline scripts run",
  "script-src-elem": "<script> elements only (overrides script-src)",
  "script-src-attr": "Inline event handlers (onclick=…) only",
  "style-src": "Stylesheets and inline styles",
  "style-src-elem": "<style> and <link rel=stylesheet> only",
  "style-src-attr": "Inline style=… attributes only",
  "img-src": "Images and favicons",
  "connect-src": "fetch, XHR, WebSocket and EventSource targets",
  "font-src": "Web fonts",
  "media-src": "<audio>, <video> and <track>",
  "object-src": "<object> and <embed> plugins; set it to 'none'",
  "frame-src": "Pages this page may embed in frames",
  "child-src": "Frames and workers (older fallback)",
  "worker-src": "Worker, SharedWorker and ServiceWorker scripts",
  "manifest-src": "Web app manifests",
  "fenced-frame-src": "<fencedframe> contents",
  "base-uri": "URLs allowed in <base href>; 'none' or 'self'",
  "form-action": "Where forms may submit",
  "frame-ancestors": "Who may frame this page (clickjacking); hosts, schemes, 'self', 'none'",
  "upgrade-insecure-requests": "Load http:// resources over https:// (no value)",
  sandbox: "Sandbox the page like an iframe; allow-* tokens lift restrictions",
  "report-to": "Reporting API group that receives violation reports",
  "report-uri": "URLs that receive violation reports (deprecated: prefer report-to)",
  "require-trusted-types-for": "Require Trusted Types for DOM XSS sinks: 'script'",
  "trusted-types": "Trusted Types policy names the page may create",
  webrtc: "Allow or block WebRTC connections: 'allow' or 'block'",
};

/** The value kind of each directive that is not a source list (those are the API's SOURCE_LIST_DIRECTIVES). */
const OTHER_KINDS: Record<(typeof cspRules.OTHER_DIRECTIVES)[number], Exclude<DirectiveKind, "sources">> = {
  "report-uri": "uris",
  sandbox: "sandbox",
  "upgrade-insecure-requests": "none",
  webrtc: "webrtc",
  "require-trusted-types-for": "trusted-types-for",
  "trusted-types": "trusted-types",
  "report-to": "group",
};
const SOURCE_LISTS: readonly string[] = cspRules.SOURCE_LIST_DIRECTIVES;
const kindOf = (name: DirectiveName): DirectiveKind => (SOURCE_LISTS.includes(name) ? "sources" : OTHER_KINDS[name as keyof typeof OTHER_KINDS]);

export const DIRECTIVES: DirectiveInfo[] = (Object.keys(DESCRIPTIONS) as DirectiveName[]).map((name) => ({
  name,
  kind: kindOf(name),
  description: DESCRIPTIONS[name],
}));

export const directiveInfo = (name: string) => DIRECTIVES.find((d) => d.name === name);
export const MAX_DIRECTIVES = cspRules.MAX_DIRECTIVES;
export const MAX_POLICY_NAME = cspRules.MAX_POLICY_NAME;

/** Why a policy name would be refused, or null (the API trims it and counts characters). */
export const policyNameProblem = (name: string): string | null => {
  const n = [...name.trim()].length;
  return n === 0 ? "Enter a name" : n > MAX_POLICY_NAME ? `At most ${MAX_POLICY_NAME} characters` : null;
};

export const KEYWORDS: readonly string[] = cspRules.SOURCE_KEYWORDS;
export const SANDBOX: readonly string[] = cspRules.SANDBOX_TOKENS;

const {
  VALUE_RE,
  SCHEME_SOURCE_RE: SCHEME_RE,
  HOST_SOURCE_RE: HOST_RE,
  NONCE_SOURCE_RE: NONCE_RE,
  HASH_SOURCE_RE: HASH_RE,
  POLICY_NAME_RE,
} = cspRules;
const { TOKEN_RE } = netRules;

/** A fresh random nonce source ('nonce-<22 base64 chars>') to suggest. */
export function randomNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return `'nonce-${btoa(String.fromCharCode(...bytes)).replace(/=+$/, "")}'`;
}

/** Why `v` is not a valid value of directive `name`, or null when it is. */
export function valueProblem(name: string, v: string): string | null {
  if (!VALUE_RE.test(v)) return "no spaces, ';' or ',' (one value per token)";
  const lower = v.toLowerCase();
  const kind = directiveInfo(name)?.kind;
  switch (kind) {
    case "sources": {
      if (KEYWORDS.includes(`'${lower}'`)) return `keywords are quoted: '${lower}'`;
      if (name === "frame-ancestors" && v.startsWith("'") && lower !== "'self'" && lower !== "'none'")
        return "frame-ancestors takes only hosts, schemes, 'self' and 'none'";
      if (lower === "'inline-speculation-rules'" && name !== "script-src" && name !== "script-src-elem")
        return "only applies in script-src and script-src-elem";
      if (KEYWORDS.includes(lower) || NONCE_RE.test(v) || HASH_RE.test(v)) return null;
      if (v.startsWith("'")) {
        if (/^'nonce-/i.test(v)) return "a nonce is base64: 'nonce-<base64>'";
        if (/^'(sha|md5)/i.test(v)) return "a hash is 'sha256-<base64>', 'sha384-…' or 'sha512-…'";
        return "not a CSP keyword";
      }
      if (SCHEME_RE.test(v) || HOST_RE.test(v)) return null;
      if (/[?#]/.test(v)) return "browsers ignore a source's ?query and #fragment: leave them out";
      return "not a host (example.com, *.example.com, https://cdn.example.com/js/), a scheme (https:) or a keyword";
    }
    case "uris":
      try {
        new URL(v, "https://base.invalid/");
        return null;
      } catch {
        return "not a URI";
      }
    case "sandbox":
      return SANDBOX.includes(lower) ? null : "not a sandbox token (allow-scripts, allow-forms, …)";
    case "webrtc":
      return lower === "'allow'" || lower === "'block'" ? null : "'allow' or 'block'";
    case "trusted-types-for":
      return lower === "'script'" ? null : "must be 'script'";
    case "trusted-types":
      return lower === "'none'" || lower === "'allow-duplicates'" || v === "*" || POLICY_NAME_RE.test(v)
        ? null
        : "a policy name, 'none', 'allow-duplicates' or *";
    case "group":
      return TOKEN_RE.test(v) ? null : "a reporting group name";
    case "none":
      return "takes no value";
  }
  return "unknown directive";
}

/** What the directive's whole value list needs (§13.1), or null. */
export function listProblem(name: string, values: string[]): string | null {
  const kind = directiveInfo(name)?.kind;
  if ((kind === "sources" || kind === "uris") && values.length === 0)
    return kind === "sources" ? "Add at least one source ('none' blocks everything)" : "Add at least one URI";
  if ((kind === "webrtc" || kind === "trusted-types-for" || kind === "group") && values.length !== 1) return "Exactly one value";
  return null;
}

/** Values the editor suggests for a directive (keywords, schemes, a fresh nonce). */
export function suggestions(name: string): string[] {
  const kind = directiveInfo(name)?.kind;
  switch (kind) {
    case "sources":
      if (name === "frame-ancestors") return ["'self'", "'none'", "https:"];
      if (name === "base-uri" || name === "object-src") return ["'none'", "'self'"];
      if (name.startsWith("script-src") || name === "default-src")
        return [
          "'self'",
          "'none'",
          "'strict-dynamic'",
          randomNonce(),
          "'unsafe-inline'",
          "'unsafe-eval'",
          "'wasm-unsafe-eval'",
          "'unsafe-hashes'",
          "'report-sample'",
          "https:",
          "data:",
          "blob:",
        ];
      if (name.startsWith("style-src"))
        return ["'self'", "'none'", randomNonce(), "'unsafe-inline'", "'unsafe-hashes'", "'report-sample'", "https:", "data:"];
      return ["'self'", "'none'", "https:", "data:", "blob:", "wss:", "*"];
    case "sandbox":
      return [...SANDBOX];
    case "webrtc":
      return ["'allow'", "'block'"];
    case "trusted-types-for":
      return ["'script'"];
    case "trusted-types":
      return ["'none'", "'allow-duplicates'", "*"];
    default:
      return [];
  }
}

/** Directives as a policy text (what `_evaluate {serialized}` reads): `name v1 v2; name2`. */
export const serializeDirectives = (ds: { name: string; value?: string[] }[]) => ds.map((d) => [d.name, ...(d.value ?? [])].join(" ")).join("; ");

/** The API shape: upgrade-insecure-requests without `value`. Names come from the picker (DIRECTIVES), so they are known. */
export const toApiDirectives = (ds: { name: string; value: string[] }[]): Directive[] =>
  ds.map((d) => {
    const name = d.name as DirectiveName;
    return directiveInfo(name)?.kind === "none" ? { name } : { name, value: d.value };
  });
