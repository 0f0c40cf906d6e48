// "Try it" (POST /api/webhooks/responders/{id}/_test, an addition for the web UI): sends a request to the caller's
// own responder and answers with the response next to the record it left. The request never touches the network:
// it is built for the responder's own URL (its host, or the path form under url_style = "path"), from the caller's
// handle, and handed to the hit engine in-process, so it is matched, scripted, limited (concurrency, body size)
// and captured exactly as a hit from outside. It cannot reach any other user's handle or any other host, which is
// why it needs no outbound rules (supplement §1.1): nothing goes out. The match is the real one, so a more
// specific responder of the same user may answer instead; `responderId` says which one did (absent: none, 404).
// Differences from a hit over TCP: the request has no client address (no peer; an X-Real-IP or X-Forwarded-For
// header given here is used as on any hit), and Bun normalises the URL (dot segments) as curl does.
import { invalid } from "../../platform/core/errors";
import { utf8Length } from "../../platform/core/validate";
import type { Db } from "../../platform/db/db";
import { TOKEN_RE } from "../../platform/net/shared-rules";
import type { CaptureQueue } from "./capture";
import type { ResponderTestResult, TrackedRequest, TryInput } from "./contract";
import type { HitProbe, ResponderEngine } from "./engine";
import { wireValue } from "./request-parts";
import type { HeaderList } from "./script-result";
import {
  BAD_HEADER_VALUE_RE,
  MAX_HEADER_VALUE_BYTES,
  MAX_HEADERS,
  STANDARD_METHODS,
  TRY_MAX_BODY_BYTES,
  TRY_MAX_RESPONSE_BYTES,
  TRY_MAX_TARGET,
  TRY_RESERVED_HEADERS,
  TRY_TARGET_RE,
} from "./shared-rules";
import { respondersStore, toTrackedRequest, type ResponderRow } from "./store";

const RESERVED_HEADERS: ReadonlySet<string> = new Set(TRY_RESERVED_HEADERS);

export interface TryRequest {
  /** Absent: the responder's method (ANY → GET). */
  method?: string;
  /** Path and optional `?query`; absent: the responder's path. */
  target?: string;
  headers: HeaderList;
  body: string;
}

const present = (v: unknown) => v !== undefined && v !== null;

/** Checks the input (400 naming the field). */
export function checkTryInput(raw: TryInput): TryRequest {
  let method: string | undefined;
  if (present(raw.method)) {
    if (typeof raw.method !== "string" || !(STANDARD_METHODS as readonly string[]).includes(raw.method))
      throw invalid(`method: must be one of ${STANDARD_METHODS.join(", ")}`);
    method = raw.method;
  }
  let target: string | undefined;
  if (present(raw.path)) {
    if (typeof raw.path !== "string") throw invalid("path: must be a string");
    if (raw.path.length > TRY_MAX_TARGET) throw invalid(`path: must be at most ${TRY_MAX_TARGET} characters`);
    if (!TRY_TARGET_RE.test(raw.path))
      throw invalid("path: must start with / and hold only URL path and query characters (percent-encode the others, e.g. %20)");
    // A client resolves `.` and `..` before sending (so does URL parsing here): on the path form they would climb
    // out of /api/webhooks/<handle>, to another handle.
    if (
      raw.path
        .split("?", 1)[0]!
        .split("/")
        .some((seg) => /^(?:\.|%2e){1,2}$/i.test(seg))
    )
      throw invalid("path: must not contain . or .. segments");
    target = raw.path;
  }
  const headers: HeaderList = [];
  if (present(raw.headers)) {
    if (!Array.isArray(raw.headers)) throw invalid("headers: must be an array of [name, value] pairs");
    if (raw.headers.length > MAX_HEADERS) throw invalid(`headers: at most ${MAX_HEADERS} headers`);
    raw.headers.forEach((pair: unknown, i) => {
      const field = `headers[${i}]`;
      if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string" || typeof pair[1] !== "string")
        throw invalid(`${field}: must be a [name, value] pair of strings`);
      const [name, value] = pair as [string, string];
      if (!TOKEN_RE.test(name)) throw invalid(`${field}: header name must be an RFC 9110 token`);
      if (RESERVED_HEADERS.has(name.toLowerCase())) throw invalid(`${field}: ${name.toLowerCase()} is set by Secbox`);
      if (BAD_HEADER_VALUE_RE.test(value)) throw invalid(`${field}: header value must not contain CR, LF or NUL`);
      if (utf8Length(value) > MAX_HEADER_VALUE_BYTES) throw invalid(`${field}: header value must be at most ${MAX_HEADER_VALUE_BYTES} bytes`);
      headers.push([name, value]);
    });
  }
  let body = "";
  if (present(raw.body)) {
    if (typeof raw.body !== "string") throw invalid("body: must be a string");
    if (utf8Length(raw.body) > TRY_MAX_BODY_BYTES) throw invalid(`body: must be at most ${TRY_MAX_BODY_BYTES} UTF-8 bytes`);
    body = raw.body;
  }
  return { method, target, headers, body };
}

/** The Request a client would send to `base` (the responder URL without its path); `host` is its authority. */
export function buildTryRequest(t: Required<TryRequest>, base: string): Request {
  const url = new URL(base + t.target);
  // Only ever the responder's own URL space (checkTryInput refuses dot segments; this holds whatever comes in).
  const own = new URL(base);
  if (url.origin !== own.origin || !(url.pathname === own.pathname || url.pathname.startsWith(own.pathname.replace(/\/$/, "") + "/")))
    throw invalid("path: leaves the responder's URL");
  const headers = new Headers();
  for (const [name, value] of t.headers) headers.append(name, wireValue(value));
  headers.set("host", url.host);
  // Bytes, not a string: a string body would make Request add a Content-Type of its own.
  const body = t.body === "" ? undefined : new TextEncoder().encode(t.body);
  if (body) headers.set("content-length", String(body.byteLength));
  return new Request(url.href, { method: t.method, headers, body });
}

/** Response headers as a list: names lower-case, a repeated name as one `, `-joined pair except Set-Cookie (as a
 *  client reads them off the wire). */
export function responseHeaderList(headers: Headers): HeaderList {
  return [...headers].map(([name, value]) => [name, value]);
}

/** Serves `t` on the responder's URL base through the engine, reads the whole response and the record it left. */
export async function runTry(
  deps: { engine: ResponderEngine; capture: CaptureQueue; db: Db },
  t: TryRequest,
  row: ResponderRow,
  base: string,
): Promise<ResponderTestResult> {
  const full: Required<TryRequest> = { ...t, method: t.method ?? (row.method === "ANY" ? "GET" : row.method), target: t.target ?? row.path };
  const request = buildTryRequest(full, base);
  const probe: HitProbe = {};
  const started = performance.now();
  const served = deps.engine.dispatch(request, null, probe);
  if (served === undefined) throw new Error(`try: ${request.url} is not a responder URL`);
  const response = await served;
  const bytes = new Uint8Array(await response.arrayBuffer());
  const durationMs = Math.round(performance.now() - started);
  const shown = bytes.byteLength > TRY_MAX_RESPONSE_BYTES ? bytes.subarray(0, TRY_MAX_RESPONSE_BYTES) : bytes;
  let record: TrackedRequest | undefined;
  if (probe.capture && probe.responderId) {
    await deps.capture.flush();
    const id = probe.capture.id;
    const stored = id ? await respondersStore.record(deps.db, probe.responderId, id) : undefined;
    if (stored) record = toTrackedRequest(stored);
  }
  return {
    ...(probe.responderId ? { responderId: probe.responderId } : {}),
    durationMs,
    request: { method: full.method, url: request.url },
    response: {
      statusCode: response.status,
      headers: responseHeaderList(response.headers),
      ...(shown.byteLength > 0 ? { body: Buffer.from(shown).toString("base64") } : {}),
      bodySize: bytes.byteLength,
      truncated: shown.byteLength < bytes.byteLength,
    },
    ...(record ? { record } : {}),
  };
}
