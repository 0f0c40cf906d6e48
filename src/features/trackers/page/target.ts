// Page tracker target (supplement §16.1): url, optional in-page extractor, waitFor {selector?, delayMs?}, user
// agent, extra headers, acceptInvalidCertificates, resources. Pure validation; the stored and echoed form is
// PageTarget (optional members omitted when unset; headers, acceptInvalidCertificates and resources always echoed).
import { invalid } from "../../../platform/http/errors";
import { BAD_VALUE, checkBool, isPlainObject, parseHeaders, parseScript, parseUrl, present, type TargetOptions, type TimeoutRange } from "../params";
import { selectorProblem } from "./selector";

export const MAX_SELECTOR_CHARS = 1024;
export const MAX_DELAY_MS = 30_000;
export const MAX_USER_AGENT_CHARS = 512;
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
    headers: pageHeaders(raw.headers, `${field}.headers`),
    acceptInvalidCertificates: parseBool(raw.acceptInvalidCertificates, `${field}.acceptInvalidCertificates`),
    resources: parseBool(raw.resources, `${field}.resources`),
  };
}

/** Request headers Chromium refuses to set (every navigation then fails with net::ERR_INVALID_ARGUMENT; measured
 *  with Chromium 156): refused when the tracker is saved instead. */
const BROWSER_CONTROLLED = /^(host|connection|content-length|transfer-encoding|keep-alive|upgrade|te|trailer|cookie2|proxy-.*)$/i;

function pageHeaders(raw: unknown, field: string): Record<string, string> {
  const headers = parseHeaders(raw, field);
  for (const name of Object.keys(headers))
    if (BROWSER_CONTROLLED.test(name)) throw invalid(`${field}: header ${JSON.stringify(name)} is set by the browser and cannot be given`);
  return headers;
}

/** absent/null → false. */
const parseBool = (raw: unknown, field: string): boolean => (present(raw) ? checkBool(raw, field) : false);

/** `{selector?, delayMs?}`; null/absent (or neither member) = no waiting. */
function parseWaitFor(raw: unknown, field: string): WaitFor | undefined {
  if (!present(raw)) return undefined;
  if (!isPlainObject(raw)) throw invalid(`${field}: must be an object {selector?, delayMs?}`);
  const out: WaitFor = {};
  if (present(raw.selector)) {
    if (typeof raw.selector !== "string") throw invalid(`${field}.selector: must be a string`);
    const selector = raw.selector.trim();
    if (selector.length === 0 || selector.length > MAX_SELECTOR_CHARS) throw invalid(`${field}.selector: must be a CSS selector of 1 to ${MAX_SELECTOR_CHARS} characters`);
    // Checked as querySelector will (selector.ts): a selector no run can use is refused now, naming it.
    const problem = selectorProblem(selector);
    if (problem) throw invalid(`${field}.selector: ${JSON.stringify(selector)} is not a valid CSS selector (${problem})`);
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

