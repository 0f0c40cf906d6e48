// API tracker target (supplement §15.1): 1..10 requests issued in order, optional configurator and extractor, and
// the flat single-request alias. Pure validation; the stored and echoed form is ApiTarget (contract.ts), the limits
// are ../shared-rules.ts's.
import { invalid } from "../../../platform/core/errors";
import { utf8Length } from "../../../platform/core/validate";
import { checkBool, isPlainObject, parseHeaders, parseScript, parseUrl, present, type TargetOptions } from "../params";
import { API_MAX_ACCEPT_STATUSES, API_MAX_REQUEST_BODY_BYTES, API_MAX_REQUESTS, API_MAX_STATUS, API_METHODS, API_MIN_STATUS } from "../shared-rules";
import type { ApiMethod, ApiRequest, ApiTarget } from "./contract";

/** A request as sent: after a configurator, the body may be bytes (stored requests carry text). */
export type RunRequest = Omit<ApiRequest, "body"> & { body?: string | Uint8Array };

/** `target` of create/update/_test/_debug: the `requests` form or the flat single-request alias. */
export function parseTarget(raw: unknown, opts: TargetOptions, field = "target"): ApiTarget {
  if (!present(raw)) throw invalid(`${field}: is required`);
  if (!isPlainObject(raw)) throw invalid(`${field}: must be an object`);
  let requests: ApiRequest[];
  if (present(raw.requests)) {
    if (!Array.isArray(raw.requests)) throw invalid(`${field}.requests: must be an array of requests`);
    if (raw.requests.length < 1 || raw.requests.length > API_MAX_REQUESTS)
      throw invalid(`${field}.requests: must have 1 to ${API_MAX_REQUESTS} requests`);
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
  let method: ApiMethod = "GET";
  if (present(raw.method)) {
    if (typeof raw.method !== "string" || !(API_METHODS as readonly string[]).includes(raw.method))
      throw invalid(`${field}.method: must be one of ${API_METHODS.join(", ")}`);
    method = raw.method as ApiMethod;
  }
  const headers = parseHeaders(raw.headers, `${field}.headers`, { outbound: true });
  const req: RunRequest = { url, method, headers, acceptInvalidCertificates: false };
  if (present(raw.body)) {
    if (typeof raw.body === "string") {
      if (utf8Length(raw.body) > API_MAX_REQUEST_BODY_BYTES) throw invalid(`${field}.body: must be at most ${API_MAX_REQUEST_BODY_BYTES} bytes`);
      req.body = raw.body;
    } else if (opts.bytesBody && (raw.body instanceof Uint8Array || (Array.isArray(raw.body) && raw.body.every((x) => typeof x === "number")))) {
      const bytes = raw.body instanceof Uint8Array ? raw.body : Uint8Array.from(raw.body as number[], (x) => x & 255);
      if (bytes.byteLength > API_MAX_REQUEST_BODY_BYTES) throw invalid(`${field}.body: must be at most ${API_MAX_REQUEST_BODY_BYTES} bytes`);
      req.body = bytes;
    } else {
      throw invalid(`${field}.body: must be a string${opts.bytesBody ? " or bytes" : ""}`);
    }
  }
  if (present(raw.acceptInvalidCertificates))
    req.acceptInvalidCertificates = checkBool(raw.acceptInvalidCertificates, `${field}.acceptInvalidCertificates`);
  if (present(raw.acceptStatuses)) req.acceptStatuses = parseStatuses(raw.acceptStatuses, `${field}.acceptStatuses`);
  return req;
}

function parseStatuses(raw: unknown, field: string): number[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > API_MAX_ACCEPT_STATUSES)
    throw invalid(`${field}: must be a non-empty array of status codes (${API_MIN_STATUS} to ${API_MAX_STATUS})`);
  const set = new Set<number>();
  for (const [i, v] of raw.entries()) {
    if (typeof v !== "number" || !Number.isInteger(v) || v < API_MIN_STATUS || v > API_MAX_STATUS)
      throw invalid(`${field}[${i}]: must be an integer from ${API_MIN_STATUS} to ${API_MAX_STATUS}`);
    set.add(v);
  }
  return [...set];
}

/** True when the status is accepted: the listed statuses, else any 2xx. */
export const statusAccepted = (req: { acceptStatuses?: number[] }, status: number) =>
  req.acceptStatuses ? req.acceptStatuses.includes(status) : status >= 200 && status <= 299;
