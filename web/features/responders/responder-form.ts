// The responder editor's form model: values from a stored responder (or defaults), the payload they become, the
// URL they give (previewed as you type), checks that need no server, and where an API error's field lands.
import { responders as responderRules, scripts as scriptRules } from "../../api/rules.gen";
import type { CodeLanguage } from "../../components/code-editor/code-editor";
import { headerRow, toHeaderPairs, toHeaderRows, type HeaderRow } from "../../components/header-list-editor";
import type { Method, Responder, ResponderInfo, ResponderPayload } from "./responders-api";

export type SecretsMode = "none" | "all" | "selected";

export interface ResponderValues {
  name: string;
  method: Method;
  pathType: "=" | "^" | "*";
  path: string;
  subdomainPrefix: string;
  statusCode: number | string;
  headers: HeaderRow[];
  body: string;
  script: string;
  secretsMode: SecretsMode;
  secretIds: string[];
  requestsToTrack: number | string;
  notify: boolean;
  throttle: string;
  tagIds: string[];
  enabled: boolean;
}

export const MAX_SCRIPT_BYTES = scriptRules.MAX_SCRIPT_BYTES;
const { MAX_BODY_BYTES, NAME_MAX, PATH_MAX, PATH_RE, PREFIX_RE, MIN_STATUS, MAX_STATUS, DEFAULT_THROTTLE } = responderRules;

export function initialValues(r: Responder | undefined, copy: boolean): ResponderValues {
  if (!r)
    return {
      name: "",
      method: "ANY",
      pathType: "*",
      path: "/",
      subdomainPrefix: "",
      statusCode: 200,
      headers: [headerRow("content-type", "application/json")],
      body: '{"ok": true}\n',
      script: "",
      secretsMode: "none",
      secretIds: [],
      requestsToTrack: 30,
      notify: false,
      throttle: String(DEFAULT_THROTTLE),
      tagIds: [],
      enabled: true,
    };
  const s = r.settings;
  const sel = s.secrets;
  return {
    name: copy ? `${r.name} (copy)`.slice(0, NAME_MAX) : r.name,
    method: r.method,
    pathType: r.location.pathType,
    path: r.location.path,
    subdomainPrefix: r.location.subdomainPrefix ?? "",
    statusCode: s.statusCode,
    headers: toHeaderRows(s.headers),
    body: s.body ?? "",
    script: s.script ?? "",
    secretsMode: sel === "all" ? "all" : sel === "none" ? "none" : "selected",
    secretIds: typeof sel === "object" ? sel.selected : [],
    requestsToTrack: s.requestsToTrack,
    notify: s.notifications?.enabled ?? false,
    throttle: String(s.notifications?.throttleSeconds ?? DEFAULT_THROTTLE),
    tagIds: r.tagIds,
    enabled: r.enabled,
  };
}

export function toPayload(v: ResponderValues): ResponderPayload {
  const track = Number(v.requestsToTrack) || 0;
  const headers = toHeaderPairs(v.headers);
  return {
    name: v.name.trim(),
    method: v.method,
    enabled: v.enabled,
    tagIds: v.tagIds,
    location: { pathType: v.pathType, path: v.path.trim(), ...(v.subdomainPrefix.trim() ? { subdomainPrefix: v.subdomainPrefix.trim() } : {}) },
    settings: {
      requestsToTrack: track,
      statusCode: Number(v.statusCode),
      ...(headers.length ? { headers } : {}),
      ...(v.body !== "" ? { body: v.body } : {}),
      script: v.script.trim() === "" ? null : v.script,
      secrets: v.secretsMode === "selected" ? { selected: v.secretIds } : v.secretsMode,
      // Kept once set (off is stored as off); never sent for a responder that never had them.
      ...(v.notify || track > 0 ? { notifications: { enabled: v.notify && track > 0, throttleSeconds: Number(v.throttle) } } : {}),
    },
  };
}

/** The URL a responder with these values gets (supplement §11.3), from the caller's URL bases. */
export function previewUrl(info: ResponderInfo | undefined, v: Pick<ResponderValues, "path" | "subdomainPrefix">): string | undefined {
  if (!info) return undefined;
  const prefix = v.subdomainPrefix.trim();
  const base = prefix && info.prefixedBaseUrl ? info.prefixedBaseUrl.replace("{prefix}", prefix) : info.baseUrl;
  let path = v.path.trim() || "/";
  while (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
  return base + path;
}

/** The editor mode for a body, from the Content-Type header in the list. */
export function bodyLanguage(headers: HeaderRow[]): CodeLanguage {
  const type = headers.find((h) => h.name.trim().toLowerCase() === "content-type")?.value.toLowerCase() ?? "";
  if (/json/.test(type)) return "json";
  if (/html/.test(type)) return "html";
  if (/xml/.test(type)) return "xml";
  if (/javascript|ecmascript/.test(type)) return "javascript";
  return "text";
}

/** An API error's field → the form's: "location.path" → "path", "settings.headers[2]: header value …" → "headers.2.value". */
export function formField(apiField: string, message: string): string | undefined {
  const header = /^settings\.headers\[(\d+)\]$/.exec(apiField);
  if (header) return `headers.${header[1]}.${/value/.test(message) ? "value" : "name"}`;
  if (apiField.startsWith("settings.secrets")) return "secretIds";
  if (apiField === "settings.notifications.throttleSeconds") return "throttle";
  if (apiField.startsWith("settings.notifications")) return "notify";
  const table: Record<string, string> = {
    location: "path",
    "location.path": "path",
    "location.pathType": "pathType",
    "location.subdomainPrefix": "subdomainPrefix",
    "settings.requestsToTrack": "requestsToTrack",
    "settings.statusCode": "statusCode",
    "settings.headers": "headers",
    "settings.body": "body",
    "settings.script": "script",
  };
  return table[apiField];
}

const utf8 = new TextEncoder();
export const utf8Length = (s: string) => utf8.encode(s).byteLength;

/** Requests to track: a whole number from 0 to the plan's maximum (`_info` maxRequestsToTrack). */
export const requestsToTrackRule = (max: number) => (v: number | string) =>
  v === "" || !Number.isInteger(Number(v)) || Number(v) < 0 ? "A whole number from 0" : Number(v) > max ? `At most ${max} on your plan` : null;

/** Checks that need no server (the API checks them all again and has the last word). */
export const validate = {
  name: (v: string) => (v.trim() === "" ? "Enter a name" : v.trim().length > NAME_MAX ? `At most ${NAME_MAX} characters` : null),
  path: (v: string) =>
    !v.trim().startsWith("/")
      ? "Start with /"
      : v.trim().length > PATH_MAX
        ? `At most ${PATH_MAX} characters`
        : PATH_RE.test(v.trim())
          ? null
          : "Only URL path characters: letters, digits, - . _ ~ ! $ & ' ( ) * + , ; = : @ / and %XX escapes",
  subdomainPrefix: (v: string) =>
    v.trim() === "" || PREFIX_RE.test(v.trim()) ? null : "Lower-case letters, digits and -, not at the start or end; at most 36",
  statusCode: (v: number | string) =>
    Number.isInteger(Number(v)) && Number(v) >= MIN_STATUS && Number(v) <= MAX_STATUS && v !== ""
      ? null
      : `A status from ${MIN_STATUS} to ${MAX_STATUS}`,
  body: (v: string) => (utf8Length(v) > MAX_BODY_BYTES ? `At most ${MAX_BODY_BYTES / 1024 / 1024} MiB` : null),
  script: (v: string) => (utf8Length(v) > MAX_SCRIPT_BYTES ? `Over the ${MAX_SCRIPT_BYTES.toLocaleString()}-byte limit` : null),
  secretIds: (v: string[], values: ResponderValues) =>
    values.secretsMode === "selected" && v.length === 0 ? "Pick at least one secret, or choose None" : null,
};
