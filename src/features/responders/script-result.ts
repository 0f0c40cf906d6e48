// The pure rules that turn a script run of the QuickJS sandbox pool (its contract: src/sandbox/types.ts) into the
// HTTP response (supplement §11.5 steps 2, 3 and 6, §11.7 error codes).
// Pure: unit-tested in script-result.test.ts with runner results as data.
import { MAX_RESULT_BODY_BYTES, ResultBodyError, resultBodyBytes } from "../../sandbox/result-body";
import type { ScriptError, ScriptRunResult } from "../../sandbox/types";
import { TOKEN_RE } from "../../platform/net/shared-rules";

/** Header list as produced: ordered `[name, value]` pairs, repeats kept. */
export type HeaderList = [string, string][];

export interface ResponseDefaults {
  statusCode: number;
  headers: HeaderList;
  body: Uint8Array;
}

export interface ProducedResponse {
  statusCode: number;
  headers: HeaderList;
  body: Uint8Array;
  /** Script asked not to record the request (beats trackResponse). */
  skipRequest: boolean;
  /** Store the response with the tracked record (script asked, or the script failed). */
  trackResponse: boolean;
  /** The response is a failure of §11.5 step 6. */
  failed: boolean;
}

export { MAX_RESULT_BODY_BYTES };
const MAX_FAILURE_MESSAGE = 1000;
/** Header value characters no HTTP response may carry (CR, LF, NUL). */
export const BAD_VALUE_RE = /[\r\n\0]/;
const utf8 = new TextEncoder();

/** A failure response of §11.5 step 6: plain text, stored as the tracked response. */
export function failureResponse(statusCode: number, message: string, extra: HeaderList = []): ProducedResponse {
  const text = message.length > MAX_FAILURE_MESSAGE ? message.slice(0, MAX_FAILURE_MESSAGE) : message;
  return {
    statusCode,
    headers: [["content-type", "text/plain; charset=utf-8"], ...extra],
    body: utf8.encode(text),
    skipRequest: false,
    trackResponse: true,
    failed: true,
  };
}

const scriptFailed = (message: string) => failureResponse(500, `Script failed: ${message}`);

/** Uncaught errors of a run, by kind and `op_proxy_request` code (§11.5 step 6, §11.7). */
export function failureFor(error: Pick<ScriptError, "kind" | "message" | "code">): ProducedResponse {
  const message = String(error.message ?? "");
  switch (error.kind) {
    case "timeout":
      return failureResponse(504, "Script timed out");
    case "queue_full":
      return failureResponse(503, "Script queue is full", [["retry-after", "1"]]);
    case "error":
      switch (error.code) {
        case "E_TIMEOUT":
          return failureResponse(504, message);
        case "E_BLOCKED":
        case "E_CONNECT":
        case "E_UPSTREAM":
          return failureResponse(502, message);
        case "E_TOO_LARGE":
          return failureResponse(413, message);
      }
      return scriptFailed(message);
    default:
      return scriptFailed(message);
  }
}

/**
 * Body conversion (§11.5 step 3), the sandbox's own (src/sandbox/result-body.ts): bytes (Uint8Array, ArrayBuffer, any
 * typed array / DataView) as they are; an array whose first element is a number → bytes (`& 255`); an empty array →
 * empty; a string → UTF-8; other arrays, objects, numbers, booleans → JSON text; over 10 MiB or not serializable →
 * ResultBodyError. `null`/`undefined` mean "keep the default" and are handled by the caller (here: empty).
 */
export const convertBody = (value: unknown): Uint8Array => resultBodyBytes(value) ?? new Uint8Array(0);

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v) && !(v instanceof ArrayBuffer);

/**
 * The response for a script run (§11.5 step 2): `null`/`undefined` → defaults; an object → each field
 * falls back to its default when absent (`null` counts as absent); `headers` replaces the default list;
 * `skipRequest` beats `trackResponse`; anything else, or an invalid field → failure 500.
 */
export function responseFromScript(out: ScriptRunResult, defaults: ResponseDefaults): ProducedResponse {
  if (!out.ok) return failureFor(out.error);
  const value = out.value;
  if (value === null || value === undefined) return { ...defaults, skipRequest: false, trackResponse: false, failed: false };
  if (!isPlainObject(value)) return scriptFailed("Script must return an object or null");

  let statusCode = defaults.statusCode;
  if (value.statusCode !== undefined && value.statusCode !== null) {
    const s = value.statusCode;
    if (typeof s !== "number" || !Number.isInteger(s) || s < 200 || s > 599) return scriptFailed("statusCode must be an integer from 200 to 599");
    statusCode = s;
  }

  let headers = defaults.headers;
  if (value.headers !== undefined && value.headers !== null) {
    if (!isPlainObject(value.headers)) return scriptFailed("headers must be an object of header names to values");
    headers = [];
    for (const [name, raw] of Object.entries(value.headers)) {
      if (raw === undefined) continue;
      if (!TOKEN_RE.test(name)) return scriptFailed(`Invalid header name ${JSON.stringify(name.slice(0, 100))}`);
      const v = typeof raw === "string" ? raw : String(raw);
      if (BAD_VALUE_RE.test(v)) return scriptFailed(`Invalid value for header ${name}`);
      headers.push([name, v]);
    }
  }

  let body = defaults.body;
  if (value.body !== undefined && value.body !== null) {
    try {
      body = convertBody(value.body);
    } catch (err) {
      return scriptFailed(err instanceof ResultBodyError ? err.message : String(err));
    }
  }

  const skipRequest = value.skipRequest === true;
  return { statusCode, headers, body, skipRequest, trackResponse: !skipRequest && value.trackResponse === true, failed: false };
}
