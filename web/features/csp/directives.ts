// The CSP directives a policy can hold (supplement §13.1), with a short description each for the picker, the kind of
// values each takes, the suggestions the value editor offers, and a check of each value. The checks follow the
// API's grammar (src/features/csp/directives.ts is the authority; a value it refuses is shown under the directive);
// here they catch typos early and explain them ("quote keywords: 'self'").
import type { DirectiveName } from "../../api/types";
import type { Directive } from "./csp-api";

export type DirectiveKind = "sources" | "uris" | "sandbox" | "none" | "webrtc" | "trusted-types-for" | "trusted-types" | "group";

export interface DirectiveInfo {
  name: DirectiveName;
  kind: DirectiveKind;
  description: string;
}

const fetch = (name: DirectiveName, description: string): DirectiveInfo => ({ name, kind: "sources", description });

export const DIRECTIVES: DirectiveInfo[] = [
  fetch("default-src", "Fallback for every fetch directive not given"),
  fetch("script-src", "Where scripts may load from and which inline scripts run"),
  fetch("script-src-elem", "<script> elements only (overrides script-src)"),
  fetch("script-src-attr", "Inline event handlers (onclick=…) only"),
  fetch("style-src", "Stylesheets and inline styles"),
  fetch("style-src-elem", "<style> and <link rel=stylesheet> only"),
  fetch("style-src-attr", "Inline style=… attributes only"),
  fetch("img-src", "Images and favicons"),
  fetch("connect-src", "fetch, XHR, WebSocket and EventSource targets"),
  fetch("font-src", "Web fonts"),
  fetch("media-src", "<audio>, <video> and <track>"),
  fetch("object-src", "<object> and <embed> plugins; set it to 'none'"),
  fetch("frame-src", "Pages this page may embed in frames"),
  fetch("child-src", "Frames and workers (older fallback)"),
  fetch("worker-src", "Worker, SharedWorker and ServiceWorker scripts"),
  fetch("manifest-src", "Web app manifests"),
  fetch("fenced-frame-src", "<fencedframe> contents"),
  fetch("base-uri", "URLs allowed in <base href>; 'none' or 'self'"),
  fetch("form-action", "Where forms may submit"),
  fetch("frame-ancestors", "Who may frame this page (clickjacking); hosts, schemes, 'self', 'none'"),
  { name: "upgrade-insecure-requests", kind: "none", description: "Load http:// resources over https:// (no value)" },
  { name: "sandbox", kind: "sandbox", description: "Sandbox the page like an iframe; allow-* tokens lift restrictions" },
  { name: "report-to", kind: "group", description: "Reporting API group that receives violation reports" },
  { name: "report-uri", kind: "uris", description: "URLs that receive violation reports (deprecated: prefer report-to)" },
  { name: "require-trusted-types-for", kind: "trusted-types-for", description: "Require Trusted Types for DOM XSS sinks: 'script'" },
  { name: "trusted-types", kind: "trusted-types", description: "Trusted Types policy names the page may create" },
  { name: "webrtc", kind: "webrtc", description: "Allow or block WebRTC connections: 'allow' or 'block'" },
];

export const directiveInfo = (name: string) => DIRECTIVES.find((d) => d.name === name);
export const MAX_DIRECTIVES = 50;

export const KEYWORDS = [
  "'self'",
  "'none'",
  "'unsafe-inline'",
  "'unsafe-eval'",
  "'strict-dynamic'",
  "'unsafe-hashes'",
  "'report-sample'",
  "'wasm-unsafe-eval'",
  "'wasm-eval'",
  "'inline-speculation-rules'",
  "'trusted-types-eval'",
  "'report-sha256'",
  "'report-sha384'",
  "'report-sha512'",
];
export const SANDBOX = [
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
];

const VALUE_RE = /^[\x21-\x2b\x2d-\x3a\x3c-\x7e]+$/;
const SCHEME_RE = /^[a-z][a-z0-9+.-]*:$/i;
const HOST_RE = /^(?:([a-z][a-z0-9+.-]*):\/\/)?(\*|(?:\*\.)?[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?)(?::(\d{1,5}|\*))?(\/[^?#]*)?$/i;
const NONCE_RE = /^'nonce-[A-Za-z0-9+/_-]+={0,2}'$/i;
const HASH_RE = /^'(sha256|sha384|sha512)-[A-Za-z0-9+/_-]+={0,2}'$/i;
const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const POLICY_NAME_RE = /^[A-Za-z0-9\-#=_/@.%]+$/;

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
      if (name === "frame-ancestors" && v.startsWith("'") && lower !== "'self'" && lower !== "'none'") return "frame-ancestors takes only hosts, schemes, 'self' and 'none'";
      if (lower === "'inline-speculation-rules'" && name !== "script-src" && name !== "script-src-elem") return "only applies in script-src and script-src-elem";
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
      return lower === "'none'" || lower === "'allow-duplicates'" || v === "*" || POLICY_NAME_RE.test(v) ? null : "a policy name, 'none', 'allow-duplicates' or *";
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
  if ((kind === "sources" || kind === "uris") && values.length === 0) return kind === "sources" ? "Add at least one source ('none' blocks everything)" : "Add at least one URI";
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
        return ["'self'", "'none'", "'strict-dynamic'", randomNonce(), "'unsafe-inline'", "'unsafe-eval'", "'wasm-unsafe-eval'", "'unsafe-hashes'", "'report-sample'", "https:", "data:", "blob:"];
      if (name.startsWith("style-src")) return ["'self'", "'none'", randomNonce(), "'unsafe-inline'", "'unsafe-hashes'", "'report-sample'", "https:", "data:"];
      return ["'self'", "'none'", "https:", "data:", "blob:", "wss:", "*"];
    case "sandbox":
      return SANDBOX;
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
