// API tracker target (supplement §15.1): 1..10 requests issued in order, optional configurator and extractor, and
// the flat single-request alias. Pure validation; the stored and echoed form is ApiTarget.
import { invalid } from "../../../platform/http/errors";
import { utf8Length } from "../../../platform/http/validate";
import { checkBool, isPlainObject, parseHeaders, parseScript, parseUrl, present, type TargetOptions, type TimeoutRange } from "../params";

export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type Method = (typeof METHODS)[number];

export const MAX_REQUESTS = 10;
export const MAX_REQUEST_BODY_BYTES = 1_048_576;
/** `config.timeout` of API trackers and `_test`'s `timeout` (ms). */
export const API_TIMEOUT: TimeoutRange = { min: 1000, max: 60_000, default: 10_000 };

export interface ApiRequest {
  url: string;
  method: Method;
  headers: Record<string, string>;
  /** Stored requests carry text; a configurator may return bytes. */
  body?: string;
  acceptInvalidCertificates: boolean;
  acceptStatuses?: number[];
}

/** A request as sent: after a configurator, the body may be bytes. */
export type RunRequest = Omit<ApiRequest, "body"> & { body?: string | Uint8Array };

export interface ApiTarget {
  requests: ApiRequest[];
  configurator?: string;
  extractor?: string;
}

/** `target` of create/update/_test/_debug: the `requests` form or the flat single-request alias. */
export function parseTarget(raw: unknown, opts: TargetOptions, field = "target"): ApiTarget {
  if (!present(raw)) throw invalid(`${field}: is required`);
  if (!isPlainObject(raw)) throw invalid(`${field}: must be an object`);
  let requests: ApiRequest[];
  if (present(raw.requests)) {
    if (!Array.isArray(raw.requests)) throw invalid(`${field}.requests: must be an array of requests`);
    if (raw.requests.length < 1 || raw.requests.length > MAX_REQUESTS) throw invalid(`${field}.requests: must have 1 to ${MAX_REQUESTS} requests`);
    requests = raw.requests.map((r, i) => parseRequest(r, `${field}.requests[${i}]`, opts) as ApiRequest);
  } else if (present(raw.url)) {
    requests = [parseRequest(raw, field, opts) as ApiRequest];
  } else {
    throw invalid(`${field}.requests: is required`);
  }
  const target: ApiTarget = { requests };
  const configurator = parseScript(raw.configurator, `${field}.configurator`);
  const extractor = parseScript(raw.extractor, `${field}.extractor`);
  if (configurator !== undefined) target.configurator = configurator;
  if (extractor !== undefined) target.extractor = extractor;
  return target;
}

/**
 * One request object. `bytesBody` (configurator results) also accepts a byte array body. Refused literal targets →
 * 400 TARGET_NOT_ALLOWED unless private targets are allowed.
 */
export function parseRequest(raw: unknown, field: string, opts: TargetOptions & { bytesBody?: boolean }): RunRequest {
  if (!isPlainObject(raw)) throw invalid(`${field}: must be an object`);
  const url = parseUrl(raw.url, `${field}.url`, opts.allowPrivate);
  let method: Method = "GET";
  if (present(raw.method)) {
    if (typeof raw.method !== "string" || !(METHODS as readonly string[]).includes(raw.method)) throw invalid(`${field}.method: must be one of ${METHODS.join(", ")}`);
    method = raw.method as Method;
  }
  const headers = parseHeaders(raw.headers, `${field}.headers`, { outbound: true });
  const req: RunRequest = { url, method, headers, acceptInvalidCertificates: false };
  if (present(raw.body)) {
    if (typeof raw.body === "string") {
      if (utf8Length(raw.body) > MAX_REQUEST_BODY_BYTES) throw invalid(`${field}.body: must be at most ${MAX_REQUEST_BODY_BYTES} bytes`);
      req.body = raw.body;
    } else if (opts.bytesBody && (raw.body instanceof Uint8Array || (Array.isArray(raw.body) && raw.body.every((x) => typeof x === "number")))) {
      const bytes = raw.body instanceof Uint8Array ? raw.body : Uint8Array.from(raw.body as number[], (x) => x & 255);
      if (bytes.byteLength > MAX_REQUEST_BODY_BYTES) throw invalid(`${field}.body: must be at most ${MAX_REQUEST_BODY_BYTES} bytes`);
      req.body = bytes;
    } else {
      throw invalid(`${field}.body: must be a string${opts.bytesBody ? " or bytes" : ""}`);
    }
  }
  if (present(raw.acceptInvalidCertificates)) req.acceptInvalidCertificates = checkBool(raw.acceptInvalidCertificates, `${field}.acceptInvalidCertificates`);
  if (present(raw.acceptStatuses)) req.acceptStatuses = parseStatuses(raw.acceptStatuses, `${field}.acceptStatuses`);
  return req;
}

function parseStatuses(raw: unknown, field: string): number[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > 500) throw invalid(`${field}: must be a non-empty array of status codes (100 to 599)`);
  const set = new Set<number>();
  for (const [i, v] of raw.entries()) {
    if (typeof v !== "number" || !Number.isInteger(v) || v < 100 || v > 599) throw invalid(`${field}[${i}]: must be an integer from 100 to 599`);
    set.add(v);
  }
  return [...set];
}

/** True when the status is accepted: the listed statuses, else any 2xx. */
export const statusAccepted = (req: { acceptStatuses?: number[] }, status: number) =>
  req.acceptStatuses ? req.acceptStatuses.includes(status) : status >= 200 && status <= 299;
