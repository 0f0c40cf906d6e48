// Page tracker target (supplement §16.1): url, optional in-page extractor, waitFor {selector?, delayMs?}, user
// agent, extra headers, acceptInvalidCertificates, resources. Pure validation; the stored and echoed form is
// PageTarget (optional members omitted when unset; headers, acceptInvalidCertificates and resources always echoed).
import { ApiError, invalid } from "../../../platform/http/errors";
import { utf8Length } from "../../../platform/http/validate";
import { literalTargetRefused } from "../../../platform/net/guard";
import { isPlainObject, present, type TimeoutRange } from "../params";

export const MAX_URL_CHARS = 2048;
export const MAX_SCRIPT_BYTES = 51_200;
export const MAX_SELECTOR_CHARS = 1024;
export const MAX_DELAY_MS = 30_000;
export const MAX_USER_AGENT_CHARS = 512;
export const MAX_HEADERS = 100;
/** `config.timeout` of page trackers and `_debug` (ms, the whole run). */
export const PAGE_TIMEOUT: TimeoutRange = { min: 5000, max: 120_000, default: 30_000 };

export interface WaitFor {
  selector?: string;
  delayMs?: number;
}

export interface PageTarget {
  url: string;
  extractor?: string;
  waitFor?: WaitFor;
  userAgent?: string;
  headers: Record<string, string>;
  acceptInvalidCertificates: boolean;
  resources: boolean;
}

export interface TargetOptions {
  allowPrivate: boolean;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/** `target` of create/update/_debug. Refused literal targets → 400 TARGET_NOT_ALLOWED unless private targets are allowed. */
export function parsePageTarget(raw: unknown, opts: TargetOptions, field = "target"): PageTarget {
  if (!present(raw)) throw invalid(`${field}: is required`);
  if (!isPlainObject(raw)) throw invalid(`${field}: must be an object`);
  const url = parseUrl(raw.url, `${field}.url`, opts.allowPrivate);
  const extractor = parseScript(raw.extractor, `${field}.extractor`);
  const waitFor = parseWaitFor(raw.waitFor, `${field}.waitFor`);
  const userAgent = parseUserAgent(raw.userAgent, `${field}.userAgent`);
  return {
    url,
    ...(extractor !== undefined ? { extractor } : {}),
    ...(waitFor !== undefined ? { waitFor } : {}),
    ...(userAgent !== undefined ? { userAgent } : {}),
    headers: parseHeaders(raw.headers, `${field}.headers`),
    acceptInvalidCertificates: parseBool(raw.acceptInvalidCertificates, `${field}.acceptInvalidCertificates`),
    resources: parseBool(raw.resources, `${field}.resources`),
  };
}

function parseBool(raw: unknown, field: string): boolean {
  if (!present(raw)) return false;
  if (typeof raw !== "boolean") throw invalid(`${field}: must be a boolean`);
  return raw;
}

function parseUrl(raw: unknown, field: string, allowPrivate: boolean): string {
  if (!present(raw)) throw invalid(`${field}: is required`);
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const text = raw.trim();
  if (text.length === 0 || text.length > MAX_URL_CHARS) throw invalid(`${field}: must be an http or https URL of at most ${MAX_URL_CHARS} characters`);
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw invalid(`${field}: must be an absolute http or https URL`);
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.hostname === "") throw invalid(`${field}: must be an absolute http or https URL`);
  if (!allowPrivate && literalTargetRefused(u.href)) throw new ApiError(400, "TARGET_NOT_ALLOWED", `${field}: URL not allowed (private address)`);
  return text;
}

function parseScript(raw: unknown, field: string): string | undefined {
  if (!present(raw)) return undefined;
  if (typeof raw !== "string") throw invalid(`${field}: must be a string or null`);
  const n = utf8Length(raw);
  if (n < 1 || n > MAX_SCRIPT_BYTES) throw invalid(`${field}: must be 1 to ${MAX_SCRIPT_BYTES} bytes`);
  return raw;
}

/** `{selector?, delayMs?}`; null/absent (or neither member) = no waiting. */
function parseWaitFor(raw: unknown, field: string): WaitFor | undefined {
  if (!present(raw)) return undefined;
  if (!isPlainObject(raw)) throw invalid(`${field}: must be an object {selector?, delayMs?}`);
  const out: WaitFor = {};
  if (present(raw.selector)) {
    if (typeof raw.selector !== "string") throw invalid(`${field}.selector: must be a string`);
    const selector = raw.selector.trim();
    if (selector.length === 0 || selector.length > MAX_SELECTOR_CHARS) throw invalid(`${field}.selector: must be a CSS selector of 1 to ${MAX_SELECTOR_CHARS} characters`);
    out.selector = selector;
  }
  if (present(raw.delayMs)) {
    const d = raw.delayMs;
    if (typeof d !== "number" || !Number.isInteger(d) || d < 0 || d > MAX_DELAY_MS) throw invalid(`${field}.delayMs: must be an integer from 0 to ${MAX_DELAY_MS}`);
    out.delayMs = d;
  }
  return out.selector === undefined && out.delayMs === undefined ? undefined : out;
}

/** ≤ 512 characters without control characters; "" or null = Chromium's own. */
function parseUserAgent(raw: unknown, field: string): string | undefined {
  if (!present(raw)) return undefined;
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  if (raw.length > MAX_USER_AGENT_CHARS) throw invalid(`${field}: must be at most ${MAX_USER_AGENT_CHARS} characters`);
  if (BAD_VALUE.test(raw)) throw invalid(`${field}: must not contain control characters`);
  return raw === "" ? undefined : raw;
}

function parseHeaders(raw: unknown, field: string): Record<string, string> {
  if (!present(raw)) return {};
  if (!isPlainObject(raw)) throw invalid(`${field}: must be an object of header names to string values`);
  const entries = Object.entries(raw);
  if (entries.length > MAX_HEADERS) throw invalid(`${field}: at most ${MAX_HEADERS} headers`);
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!TOKEN.test(name)) throw invalid(`${field}: invalid header name ${JSON.stringify(name.slice(0, 100))}`);
    if (typeof value !== "string") throw invalid(`${field}.${name}: must be a string`);
    if (BAD_VALUE.test(value)) throw invalid(`${field}.${name}: must not contain control characters`);
    out[name] = value;
  }
  return out;
}
