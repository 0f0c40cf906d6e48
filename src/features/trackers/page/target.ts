// Page tracker target (supplement §16.1): url, optional in-page extractor, waitFor {selector?, delayMs?}, user
// agent, extra headers, acceptInvalidCertificates, resources. Pure validation; the stored and echoed form is
// PageTarget (contract.ts; optional members omitted when unset; headers, acceptInvalidCertificates and resources
// always echoed), the limits are ../shared-rules.ts's.
import { invalid } from "../../../platform/core/errors";
import { checkBool, isPlainObject, parseHeaders, parseScript, parseUrl, present, type TargetOptions } from "../params";
import {
  HEADER_VALUE_BAD_RE,
  PAGE_BROWSER_CONTROLLED_HEADERS_RE,
  PAGE_MAX_DELAY_MS,
  PAGE_MAX_SELECTOR_CHARS,
  PAGE_MAX_USER_AGENT_CHARS,
} from "../shared-rules";
import type { PageTarget, WaitFor } from "./contract";
import { selectorProblem } from "./selector";

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

/** Request headers Chromium refuses to set (PAGE_BROWSER_CONTROLLED_HEADERS_RE: every navigation then fails with
 *  net::ERR_INVALID_ARGUMENT; measured with Chromium 156): refused when the tracker is saved instead. */
function pageHeaders(raw: unknown, field: string): Record<string, string> {
  const headers = parseHeaders(raw, field);
  for (const name of Object.keys(headers))
    if (PAGE_BROWSER_CONTROLLED_HEADERS_RE.test(name))
      throw invalid(`${field}: header ${JSON.stringify(name)} is set by the browser and cannot be given`);
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
    if (selector.length === 0 || selector.length > PAGE_MAX_SELECTOR_CHARS)
      throw invalid(`${field}.selector: must be a CSS selector of 1 to ${PAGE_MAX_SELECTOR_CHARS} characters`);
    // Checked as querySelector will (selector.ts): a selector no run can use is refused now, naming it.
    const problem = selectorProblem(selector);
    if (problem) throw invalid(`${field}.selector: ${JSON.stringify(selector)} is not a valid CSS selector (${problem})`);
    out.selector = selector;
  }
  if (present(raw.delayMs)) {
    const d = raw.delayMs;
    if (typeof d !== "number" || !Number.isInteger(d) || d < 0 || d > PAGE_MAX_DELAY_MS)
      throw invalid(`${field}.delayMs: must be an integer from 0 to ${PAGE_MAX_DELAY_MS}`);
    out.delayMs = d;
  }
  return out.selector === undefined && out.delayMs === undefined ? undefined : out;
}

/** ≤ 512 characters without control characters; "" or null = Chromium's own. */
function parseUserAgent(raw: unknown, field: string): string | undefined {
  if (!present(raw)) return undefined;
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  if (raw.length > PAGE_MAX_USER_AGENT_CHARS) throw invalid(`${field}: must be at most ${PAGE_MAX_USER_AGENT_CHARS} characters`);
  if (HEADER_VALUE_BAD_RE.test(raw)) throw invalid(`${field}: must not contain control characters`);
  return raw === "" ? undefined : raw;
}
