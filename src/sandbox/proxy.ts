// Sandbox.core.ops.op_proxy_request (supplement §11.7), on the main thread through platform/net's outboundFetch:
// the private-target guard, one deadline, the upstream body cap and decompression (x-original-* renaming) all live
// there. This file validates the script's options, clamps the timeout to the script's remaining time, shapes the
// result for the script and maps failures to the §11.7 codes.
import { OutboundError, stripHopByHop, type OutboundRequest, type OutboundResponse } from "../platform/net/client";
import { TOKEN_RE } from "../platform/net/shared-rules";

export type OutboundFetch = (req: OutboundRequest) => Promise<OutboundResponse>;

/** An error thrown into the script: `Error` with a `code` (§11.7). */
export class ProxyError extends Error {
  constructor(
    readonly code: "E_INVALID" | "E_BLOCKED" | "E_CONNECT" | "E_UPSTREAM" | "E_TIMEOUT" | "E_TOO_LARGE",
    message: string,
  ) {
    super(message);
  }
}

export interface ProxySettings {
  /** Remaining script time when the call was made. */
  remainingMs: number;
  /** Tier proxy_timeout_ms: the default timeout. */
  defaultTimeoutMs: number;
  maxBodyBytes: number;
  allowPrivate: boolean;
  fetch: OutboundFetch;
}

export interface ProxyResult {
  statusCode: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

function bodyOf(b: unknown): Uint8Array | string | undefined {
  if (b === undefined || b === null) return undefined;
  if (typeof b === "string" || b instanceof Uint8Array) return b;
  if (Array.isArray(b)) {
    const out = new Uint8Array(b.length);
    for (let i = 0; i < b.length; i++) {
      const n = b[i];
      if (typeof n !== "number" || !Number.isFinite(n)) throw new ProxyError("E_INVALID", "Invalid body: a number array must hold numbers");
      out[i] = n & 255;
    }
    return out;
  }
  throw new ProxyError("E_INVALID", "Invalid body: expected a Uint8Array, ArrayBuffer, number array or string");
}

/** The request outboundFetch gets for the script's `options`. Throws ProxyError E_INVALID. */
export function proxyRequest(options: unknown, s: Omit<ProxySettings, "fetch">): OutboundRequest {
  if (!isObject(options)) throw new ProxyError("E_INVALID", "Invalid URL: options must be an object with a url");
  const { url, method, headers, body, insecure, timeout, decompress } = options;
  if (typeof url !== "string" || url === "") throw new ProxyError("E_INVALID", "Invalid URL");
  let m = "GET";
  if (method !== undefined && method !== null) {
    if (typeof method !== "string" || !TOKEN_RE.test(method)) throw new ProxyError("E_INVALID", "Invalid HTTP method");
    m = method.toUpperCase();
  }
  const h: [string, string][] = [];
  if (headers !== undefined && headers !== null) {
    if (!isObject(headers)) throw new ProxyError("E_INVALID", "Invalid header: headers must be an object of names to strings");
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || value === null) continue;
      if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
        throw new ProxyError("E_INVALID", `Invalid header value for ${name.slice(0, 100)}`);
      }
      h.push([name, String(value)]);
    }
  }
  const remaining = Math.max(1, Math.floor(s.remainingMs));
  let timeoutMs = Math.min(s.defaultTimeoutMs, remaining);
  if (timeout !== undefined && timeout !== null) {
    if (typeof timeout !== "number" || Number.isNaN(timeout)) throw new ProxyError("E_INVALID", "Invalid timeout: expected milliseconds");
    timeoutMs = Math.min(Math.max(1, Math.floor(timeout)), remaining);
  }
  return {
    url,
    method: m,
    headers: h,
    body: bodyOf(body),
    insecure: insecure === true,
    timeoutMs: Math.max(1, timeoutMs),
    maxBodyBytes: s.maxBodyBytes,
    allowPrivate: s.allowPrivate,
    decompress: decompress !== false,
  };
}

/** The script's view of a response: lower-case names, repeats joined with ", ", hop-by-hop headers removed. */
export function proxyResult(res: OutboundResponse): ProxyResult {
  const headers: Record<string, string> = {};
  for (const [name, value] of stripHopByHop(res.headers)) {
    const n = name.toLowerCase();
    headers[n] = n in headers ? `${headers[n]}, ${value}` : value;
  }
  return { statusCode: res.status, headers, body: res.body };
}

/** outboundFetch errors → §11.7 codes (messages from platform/net already start with the §11.7 texts). */
export function proxyError(err: unknown): ProxyError {
  if (err instanceof ProxyError) return err;
  if (err instanceof OutboundError) {
    switch (err.code) {
      case "INVALID_URL":
      case "INVALID_REQUEST":
        return new ProxyError("E_INVALID", err.message);
      case "TARGET_NOT_ALLOWED":
        return new ProxyError("E_BLOCKED", err.message);
      case "TIMEOUT":
        return new ProxyError("E_TIMEOUT", err.message);
      case "TOO_LARGE":
        return new ProxyError("E_TOO_LARGE", err.message);
      case "TLS":
        return new ProxyError("E_CONNECT", err.message);
      case "NETWORK":
        return new ProxyError(err.stage === "upstream" ? "E_UPSTREAM" : "E_CONNECT", err.message);
    }
  }
  return new ProxyError("E_UPSTREAM", "Upstream request failed");
}

export async function runProxy(options: unknown, s: ProxySettings): Promise<ProxyResult> {
  try {
    const req = proxyRequest(options, s);
    return proxyResult(await s.fetch(req));
  } catch (err) {
    throw proxyError(err);
  }
}
