// In-page extractor (supplement §16.2 `extract`): the user's source runs inside the page, in an isolated
// JavaScript world created for the run through CDP (DOM shared with the page, page globals not; the page's
// scripts never see `context` or the secrets). Nothing of it is evaluated in the server process: the server
// only builds source text, hands it to Chromium and receives JSON data back.
//
// Source forms as §11.6: trim; drop one trailing `;`; compile as an expression
// `async (context) => (await (\n<src>\n))`; on a SyntaxError compile `async (context) => {\n<src>\n}` instead;
// a second SyntaxError is the failure. Syntax is checked with Runtime.compileScript (compiles, never runs).
import type { CDPSession } from "puppeteer-core";

export const MAX_RESULT_BYTES = 1024 * 1024;

export class ExtractError extends Error {}

/** The two candidate function expressions for a source (expression form first). */
export function extractorForms(source: string): [string, string] {
  let src = source.trim();
  if (src.endsWith(";")) src = src.slice(0, -1);
  return [`(async (context) => (await (\n${src}\n)))`, `(async (context) => {\n${src}\n})`];
}

/**
 * The function Chromium calls in the isolated world: sets the global `context`, runs the extractor and returns
 * `{s: string}` (a string result), `{j: jsonText}` (any other JSON value) or `{e: reason}`. All the checks that
 * need the live value (serializability, size) happen in the page so a huge or odd value never crosses CDP.
 */
function wrapper(form: string | null): string {
  const call =
    form === null
      ? `const __value = (document.body ? document.body.innerText : (document.documentElement ? document.documentElement.textContent || "" : "")).trim();
  return { s: __value.length > __max * 2 ? __value.slice(0, __max * 2) : __value };`
      : `const __fn = ${form};
  const __value = await __fn(__ctx);`;
  return `async function (__ctx, __max) {
  globalThis.context = __ctx;
  ${call}
  if (typeof __value === "string") return __value.length > __max ? { e: "too_large" } : { s: __value };
  if (__value === undefined || typeof __value === "function" || typeof __value === "symbol" || typeof __value === "bigint") return { e: "not_serializable" };
  let __text;
  try {
    __text = JSON.stringify(__value, function (k, v) {
      if (typeof v === "function" || typeof v === "symbol" || typeof v === "bigint") throw new TypeError("x");
      if (v !== null && typeof v === "object") {
        const p = Object.getPrototypeOf(v);
        if (p !== Object.prototype && p !== Array.prototype && p !== null) throw new TypeError("x");
      }
      return v;
    });
  } catch (err) {
    return { e: "not_serializable" };
  }
  if (typeof __text !== "string") return { e: "not_serializable" };
  return __text.length > __max ? { e: "too_large" } : { j: __text };
}`;
}

interface ExceptionDetails {
  text?: string;
  exception?: { className?: string; description?: string; value?: unknown; type?: string };
}

/** First line of a thrown value's description ("Error: boom"), without the stack. */
export function exceptionMessage(d: ExceptionDetails | undefined): string {
  const ex = d?.exception;
  let msg = "";
  if (ex) {
    if (typeof ex.description === "string") msg = ex.description;
    else if (ex.value !== undefined) msg = typeof ex.value === "string" ? ex.value : JSON.stringify(ex.value);
  }
  if (!msg) msg = d?.text ?? "Script failed";
  const at = msg.search(/\n\s+at /);
  if (at >= 0) msg = msg.slice(0, at);
  return msg.trim() || "Script failed";
}

export interface ExtractOutcome {
  /** Stored bytes of the value (UTF-8 text of a string, JSON text otherwise). */
  bytes: Uint8Array;
  /** The value as JSON data (for the resources wrapper): a string, or the parsed JSON text. */
  json: unknown;
}

const encoder = new TextEncoder();

/**
 * Runs the extractor (or the visible-text default when `source` is null/undefined) in a fresh isolated world of
 * the page's main frame. Throws ExtractError with the §16.2 failure message.
 */
export async function runExtractor(
  cdp: CDPSession,
  source: string | null | undefined,
  context: { previousContent?: unknown; params: { secrets: Record<string, string> } },
): Promise<ExtractOutcome> {
  try {
    return await extractIn(cdp, await isolatedWorld(cdp), source, context);
  } catch (err) {
    if (err instanceof ExtractError) throw err;
    if (CONTEXT_GONE.test((err as Error).message)) throw new ExtractError(NAVIGATED);
    throw err;
  }
}

const CONTEXT_GONE = /context was destroyed|Cannot find context|Execution context.*not found|navigated or closed/i;
const NAVIGATED = "Extractor failed: the page navigated away during extraction";

/** A fresh isolated world in the page's main frame (DOM shared, page globals not); its execution context id. */
export async function isolatedWorld(cdp: CDPSession): Promise<number> {
  const tree = await cdp.send("Page.getFrameTree");
  const world = await cdp.send("Page.createIsolatedWorld", {
    frameId: tree.frameTree.frame.id,
    worldName: "secbox-extractor",
    grantUniveralAccess: false,
  });
  return world.executionContextId;
}

/** True when `selector` is a valid CSS selector (checked by the page's own engine, in an isolated world). */
export async function validSelector(cdp: CDPSession, selector: string): Promise<boolean> {
  const r = await cdp.send("Runtime.callFunctionOn", {
    functionDeclaration: "function (s) { try { document.createDocumentFragment().querySelector(s); return true; } catch (e) { return false; } }",
    executionContextId: await isolatedWorld(cdp),
    arguments: [{ value: selector }],
    returnByValue: true,
  });
  return r.result.value === true;
}

async function extractIn(
  cdp: CDPSession,
  contextId: number,
  source: string | null | undefined,
  context: { previousContent?: unknown; params: { secrets: Record<string, string> } },
): Promise<ExtractOutcome> {
  let form: string | null = null;
  if (source !== null && source !== undefined) {
    const forms = extractorForms(source);
    let lastError: ExceptionDetails | undefined;
    for (const candidate of forms) {
      const c = await cdp.send("Runtime.compileScript", {
        expression: candidate,
        sourceURL: "extractor.js",
        persistScript: false,
        executionContextId: contextId,
      });
      if (!c.exceptionDetails) {
        form = candidate;
        break;
      }
      lastError = c.exceptionDetails as ExceptionDetails;
    }
    if (form === null) throw new ExtractError(`Extractor failed: ${exceptionMessage(lastError)}`);
  }
  const r = await cdp.send("Runtime.callFunctionOn", {
    functionDeclaration: wrapper(form),
    executionContextId: contextId,
    arguments: [{ value: context }, { value: MAX_RESULT_BYTES }],
    awaitPromise: true,
    returnByValue: true,
    userGesture: false,
  });
  if (r.exceptionDetails) {
    throw new ExtractError(`Extractor failed: ${exceptionMessage(r.exceptionDetails as ExceptionDetails)}`);
  }
  const out = r.result.value as { s?: string; j?: string; e?: string } | undefined;
  // The wrapper always returns an object: anything else means its world went away before it returned.
  if (!out || typeof out !== "object") throw new ExtractError(NAVIGATED);
  if (out.e === "too_large") throw new ExtractError("Extractor failed: the result is larger than 1 MiB");
  if (out.e !== undefined || (typeof out.s !== "string" && typeof out.j !== "string")) {
    throw new ExtractError("Extractor failed: the result is not JSON-serializable");
  }
  if (typeof out.s === "string") {
    const bytes = encoder.encode(out.s);
    // The default (visible text) is not limited here: the compare phase cuts every value to 1 MiB (§15.3).
    if (form !== null && bytes.length > MAX_RESULT_BYTES) throw new ExtractError("Extractor failed: the result is larger than 1 MiB");
    return { bytes, json: out.s };
  }
  const text = out.j as string;
  const bytes = encoder.encode(text);
  if (bytes.length > MAX_RESULT_BYTES) throw new ExtractError("Extractor failed: the result is larger than 1 MiB");
  return { bytes, json: JSON.parse(text) as unknown };
}
