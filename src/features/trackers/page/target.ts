// Page tracker target (supplement §16.1): url, optional in-page extractor, waitFor {selector?, delayMs?}, user
// agent, extra headers, acceptInvalidCertificates, resources. Pure validation; the stored and echoed form is
// PageTarget (optional members omitted when unset; headers, acceptInvalidCertificates and resources always echoed).
import { invalid } from "../../../platform/http/errors";
import { BAD_VALUE, checkBool, isPlainObject, parseHeaders, parseScript, parseUrl, present, type TargetOptions, type TimeoutRange } from "../params";

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
    const problem = selectorSyntaxProblem(selector);
    if (problem) throw invalid(`${field}.selector: invalid CSS selector (${problem})`);
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

const NAME_CHAR = /[A-Za-z0-9_\-\u0080-\uFFFF]/;
const IDENT_START = /[A-Za-z_\-\u0080-\uFFFF]/;
const WHITESPACE = /[ \t\n\r\f]/;
/** The end of a name right before `(`: a name character, a hex escape (with its optional whitespace) or an escaped
 * character. (Looked at over the last 8 characters: the longest escape is `\` + 6 hex digits + one space.) */
const FUNCTION_NAME_END = /(?:[A-Za-z0-9_\-\u0080-\uFFFF]|\\[0-9a-fA-F]{1,6}[ \t\n\r\f]?|\\[^\n\r\f0-9a-fA-F])$/;

/**
 * Why a CSS selector is certainly invalid (what `querySelector` would throw on), or null. Without a browser this
 * only rejects what no valid selector contains, so every valid selector passes (the run checks the rest):
 * a `)` or `]` closing nothing or the wrong block; `(` not opening a function (`:not(`, `:nth-child(`…); an
 * attribute selector `[` not starting with a name, `*` or `|`; `#` or `.` not followed by a name; a newline
 * inside a string; a `\` escaping a newline. Comments, strings and escapes are skipped like the CSS tokenizer
 * does; blocks still open at the end are closed by CSS itself and accepted.
 */
export function selectorSyntaxProblem(sel: string): string | null {
  const open: string[] = [];
  let i = 0;
  /** Index after the comment starting at j (an unterminated comment runs to the end). */
  const afterComment = (j: number) => {
    const end = sel.indexOf("*/", j + 2);
    return end < 0 ? sel.length : end + 2;
  };
  /** The character at j is the start of a name (or an escape). */
  const nameAt = (j: number, start: RegExp) => {
    const c = sel[j];
    if (c === undefined) return false;
    if (c === "\\") return sel[j + 1] !== "\n" && sel[j + 1] !== "\r" && sel[j + 1] !== "\f";
    return start.test(c);
  };
  while (i < sel.length) {
    const c = sel[i] as string;
    if (c === "\\") {
      const next = sel[i + 1];
      if (next === "\n" || next === "\r" || next === "\f") return "escaped newline";
      i += 2;
      continue;
    }
    if (c === "/" && sel[i + 1] === "*") {
      i = afterComment(i);
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      for (; j < sel.length && sel[j] !== c; j++) {
        const d = sel[j];
        if (d === "\n" || d === "\r" || d === "\f") return "newline in a string";
        if (d === "\\") j++;
      }
      i = j + 1;
      continue;
    }
    if (c === "(") {
      // Only a function token opens a parenthesis in a selector: a name (or escape) right before it.
      if (!FUNCTION_NAME_END.test(sel.slice(Math.max(0, i - 8), i))) return "unexpected (";
      open.push(")");
    } else if (c === "[") {
      let j = i + 1;
      for (;;) {
        if (j < sel.length && WHITESPACE.test(sel[j] as string)) j++;
        else if (sel[j] === "/" && sel[j + 1] === "*") j = afterComment(j);
        else break;
      }
      if (j < sel.length && !(sel[j] === "*" || sel[j] === "|" || nameAt(j, IDENT_START))) return "attribute selector without a name";
      open.push("]");
    } else if (c === ")" || c === "]") {
      if (open.pop() !== c) return `unbalanced ${c}`;
    } else if (c === "#") {
      if (!nameAt(i + 1, NAME_CHAR)) return "# without a name";
    } else if (c === ".") {
      if (!nameAt(i + 1, IDENT_START)) return ". without a class name";
    }
    i++;
  }
  return null;
}
