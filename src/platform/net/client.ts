// The one outbound HTTP client (supplement §1.1, §11.7, §22). Every feature that reaches the network on behalf
// of a user (op_proxy_request, API trackers, _test/_debug, CSP import, certificate _fetch) goes through here.
//
// - URL: http/https only (https only with `httpsOnly`), else INVALID_URL.
// - Guard: the host is resolved ONCE (resolveAllowed); every answer must be allowed; the socket then connects to
//   that checked address through a custom `lookup` (node:http/https under Bun honour it), so the Host header, SNI
//   and certificate verification still use the host name and no second DNS lookup happens. Every redirect hop is
//   re-checked the same way.
// - Timeout: one deadline for the whole request (DNS, connect, TLS, headers, body, decoding); it destroys the socket.
// - Size: the wire body is capped while streaming (Content-Length checked first); decoding (gzip, x-gzip, deflate
//   incl. raw deflate, br, zstd) runs with maxOutputLength = cap, so a decompression bomb stops at the cap.
//   With `overflow: "truncate"` a body above the cap is cut instead of failing: reading stops there (the rest is
//   never read, the connection is closed) and decoding stops at cap bytes of output; cap 0 reads no body at all.
// - Response head: at most `maxHeaderBytes` (default 16 KiB, at most 64 KiB) → TOO_LARGE "Upstream response header
//   too large"; a per-request limit although Bun's engine has one process-wide setting (see exchange.ts).
// - HTTP/1.1 with keep-alive, pinned to the checked address: idle connections are pooled per (scheme, host name,
//   port, checked IP address, TLS policy), so a socket is reused only by a request whose own DNS check (done for
//   every request and every redirect hop, as above) produced that same address, with the same SNI/certificate
//   name and certificate verification. Idle sockets close after AGENT_IDLE_MS; a request that fails on a reused
//   socket before any response (the server closed it meanwhile) is retried once on a new one if it is idempotent.
// Nothing here logs; error messages never contain bodies, header values or credentials.
//
// The client's parts: guard.ts (URL and address checks, resolving once), this file (the request: its headers and
// body, redirects re-checked hop by hop, the one deadline), exchange.ts (one exchange on a pooled connection pinned
// to the checked address), body.ts (reading the body under the cap, decoding).
import type http from "node:http";
import { VERSION } from "../runtime";
import { responseBody } from "./body";
import { MSG_TIMEOUT, MSG_UPSTREAM, OutboundError } from "./errors";
import { DEFAULT_MAX_HEADER_BYTES, invalidRequest, mapNetworkError, MAX_HEADER_BYTES, send, type Flight } from "./exchange";
import { parseOutboundUrl, resolveAllowed, type Resolver } from "./guard";
import { TOKEN_RE } from "./shared-rules";

export { OutboundError, type OutboundErrorCode, type OutboundErrorStage } from "./errors";
export { guardUrl, isForbiddenHostname, isPrivateAddress, literalTargetRefused, resolveAllowed, systemResolver, type Resolver } from "./guard";

export { DEFAULT_MAX_HEADER_BYTES, MAX_HEADER_BYTES, pooledConnections } from "./exchange";

export interface OutboundRequest {
  url: string;
  /** Default GET; any RFC 9110 token, sent upper-cased. */
  method?: string;
  headers?: Record<string, string> | [string, string][];
  body?: Uint8Array | string;
  /** Accept invalid/self-signed certificates. */
  insecure?: boolean;
  /** Whole request including DNS, connect and body read. */
  timeoutMs: number;
  /** Cap on the wire body and on the decompressed body → OutboundError TOO_LARGE. */
  maxBodyBytes: number;
  /** network.allow_private_targets. */
  allowPrivate: boolean;
  /** Default 0: redirects are returned as-is; > 0 follows up to that many hops, re-checking every hop. */
  maxRedirects?: number;
  /** Certificate _fetch: https only. */
  httpsOnly?: boolean;
  /** Default `Secbox/<version>` unless the headers set a User-Agent. */
  userAgent?: string;
  /** (addition) Default true. false: body and content-encoding/content-length are returned untouched. */
  decompress?: boolean;
  /** (addition) A body above maxBodyBytes: "fail" (default) → TOO_LARGE; "truncate" → the first maxBodyBytes bytes
   * are kept, the rest is never read (the connection is closed, not pooled) and the response has truncated: true.
   * The cap applies to the decoded body the same way (decoding stops at maxBodyBytes of output; a cut compressed
   * body decodes as far as it goes). maxBodyBytes 0 returns as soon as the head arrives, without reading the body. */
  overflow?: "fail" | "truncate";
  /** (addition) The response head (status line and header lines, of every redirect hop) may hold at most this many
   *  bytes, else OutboundError TOO_LARGE "Upstream response header too large (more than …)". Default
   *  DEFAULT_MAX_HEADER_BYTES (16 KiB); at most MAX_HEADER_BYTES (64 KiB). */
  maxHeaderBytes?: number;
  /** (addition) DNS resolver override (tests, custom DNS); default the system resolver. */
  resolver?: Resolver;
  /** (addition, tests) Address policy used when allowPrivate is false; default isPrivateAddress. Forbidden host
   * names stay refused whatever this returns. */
  refuseAddress?: (ip: string) => boolean;
}

export interface OutboundResponse {
  status: number;
  /** Ordered, names lower-cased, duplicates kept (set-cookie). Hop-by-hop headers are kept (see stripHopByHop). */
  headers: [string, string][];
  /** Decompressed when a supported content-encoding was decoded; then content-encoding/content-length are
   * renamed x-original-content-encoding / x-original-content-length in place. */
  body: Uint8Array;
  /** Final URL after redirects. */
  url: string;
  /** The checked address the socket connected to. */
  remoteAddress: string;
  /** (addition) Present (true) when `overflow: "truncate"` cut the body (or, with maxBodyBytes 0, did not read it). */
  truncated?: true;
}

// ---- request preparation ----------------------------------------------------------------------------------

export const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** Request headers the client owns (connection management and framing). */
const DROPPED_REQUEST_HEADERS = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "content-length",
  "expect",
]);
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "transfer-encoding",
  "upgrade",
  "te",
  "trailer",
  "proxy-authenticate",
  "proxy-authorization",
]);
const CROSS_ORIGIN_DROPPED = new Set(["authorization", "cookie", "proxy-authorization", "host"]);
const BODY_HEADERS = new Set(["content-type", "content-encoding", "content-language", "content-location"]);

/** Removes hop-by-hop headers (and those named by Connection) from a response header list. */
export function stripHopByHop(headers: [string, string][]): [string, string][] {
  const named = new Set<string>();
  for (const [n, v] of headers) {
    if (n.toLowerCase() === "connection") for (const t of v.split(",")) named.add(t.trim().toLowerCase());
  }
  return headers.filter(([n]) => {
    const l = n.toLowerCase();
    return !HOP_BY_HOP.has(l) && !named.has(l);
  });
}

function normalizeHeaders(h: OutboundRequest["headers"]): [string, string][] {
  if (h === undefined || h === null) return [];
  const pairs: [string, string][] = Array.isArray(h) ? h : Object.entries(h);
  const out: [string, string][] = [];
  for (const pair of pairs) {
    if (!Array.isArray(pair) || pair.length !== 2) throw invalidRequest("Invalid header");
    const [name, value] = pair;
    if (typeof name !== "string" || !TOKEN_RE.test(name)) throw invalidRequest("Invalid header name");
    if (typeof value !== "string" || INVALID_VALUE.test(value)) throw invalidRequest(`Invalid header value: ${name}`);
    if (DROPPED_REQUEST_HEADERS.has(name.toLowerCase())) continue;
    out.push([name, value]);
  }
  return out;
}

function toBytes(body: OutboundRequest["body"]): Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string") return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  if ((body as unknown) instanceof ArrayBuffer) return new Uint8Array(body as unknown as ArrayBuffer);
  throw invalidRequest("Invalid body: must be a string or bytes");
}

const has = (headers: [string, string][], name: string) => headers.some(([n]) => n.toLowerCase() === name);

function userinfoAuth(u: URL): string | undefined {
  if (!u.username && !u.password) return undefined;
  let user: string;
  let pass: string;
  try {
    user = decodeURIComponent(u.username);
    pass = decodeURIComponent(u.password);
  } catch {
    throw new OutboundError("INVALID_URL", "Invalid URL: bad credentials encoding");
  }
  return `Basic ${Buffer.from(`${user}:${pass}`, "utf8").toString("base64")}`;
}

// ---- the client -------------------------------------------------------------------------------------------

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function headerList(res: http.IncomingMessage): [string, string][] {
  const raw = res.rawHeaders;
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) out.push([(raw[i] as string).toLowerCase(), raw[i + 1] as string]);
  return out;
}

async function run(flight: Flight, r: OutboundRequest): Promise<OutboundResponse> {
  if (r.method !== undefined && typeof r.method !== "string") throw invalidRequest("Invalid HTTP method");
  const method = (r.method ?? "GET").toUpperCase();
  if (!TOKEN_RE.test(method)) throw invalidRequest("Invalid HTTP method");
  const cap = r.maxBodyBytes;
  const truncate = r.overflow === "truncate";
  const maxRedirects = Math.max(0, Math.floor(r.maxRedirects ?? 0));
  let url = parseOutboundUrl(r.url, r.httpsOnly === true);
  let headers = normalizeHeaders(r.headers);
  let body = toBytes(r.body);
  let currentMethod = method;
  if (!has(headers, "user-agent")) headers.push(["User-Agent", r.userAgent ?? `Secbox/${VERSION}`]);

  for (let hop = 0; ; hop++) {
    const address = await resolveAllowed(url.hostname, r.allowPrivate, r.resolver, r.refuseAddress);
    if (flight.done) throw new OutboundError("TIMEOUT", MSG_TIMEOUT);
    const sent = [...headers];
    if (!has(sent, "host")) sent.unshift(["Host", url.host]);
    const auth = userinfoAuth(url);
    if (auth && !has(sent, "authorization")) sent.push(["Authorization", auth]);
    const res = await send(flight, {
      url,
      address,
      method: currentMethod,
      headers: sent,
      body,
      insecure: r.insecure === true,
      maxHeaderBytes: r.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES,
    });
    const status = res.statusCode ?? 0;
    const resHeaders = headerList(res);

    if (maxRedirects > 0 && REDIRECTS.has(status)) {
      const location = resHeaders.find(([n]) => n === "location")?.[1];
      if (location !== undefined) {
        res.destroy();
        flight.req?.destroy();
        if (hop >= maxRedirects) throw new OutboundError("NETWORK", `${MSG_UPSTREAM}: too many redirects`, "upstream");
        let next: URL;
        try {
          next = parseOutboundUrl(new URL(location, url).href, r.httpsOnly === true);
        } catch {
          throw new OutboundError("INVALID_URL", "Invalid URL in redirect");
        }
        if ((status === 303 && currentMethod !== "HEAD") || ((status === 301 || status === 302) && currentMethod === "POST")) {
          currentMethod = "GET";
          body = undefined;
          headers = headers.filter(([n]) => !BODY_HEADERS.has(n.toLowerCase()));
        }
        if (next.origin !== url.origin) headers = headers.filter(([n]) => !CROSS_ORIGIN_DROPPED.has(n.toLowerCase()));
        url = next;
        continue;
      }
    }

    const read = await responseBody(flight, res, currentMethod, status, resHeaders, cap, truncate, r.decompress !== false);
    const out = read.body;
    const finalUrl = new URL(url.href);
    finalUrl.username = "";
    finalUrl.password = "";
    return {
      status,
      headers: read.headers,
      body: new Uint8Array(out.buffer, out.byteOffset, out.byteLength),
      url: finalUrl.href, // credentials from the URL are never echoed back
      remoteAddress: address,
      ...(read.truncated ? { truncated: true as const } : {}),
    };
  }
}

/** Sends one outbound request under the §1.1 rules. Rejects only with OutboundError. */
export function outboundFetch(req: OutboundRequest): Promise<OutboundResponse> {
  if (!Number.isFinite(req.timeoutMs) || req.timeoutMs <= 0) return Promise.reject(invalidRequest("Invalid timeout"));
  if (!Number.isFinite(req.maxBodyBytes) || req.maxBodyBytes < 0) return Promise.reject(invalidRequest("Invalid body limit"));
  if (
    req.maxHeaderBytes !== undefined &&
    !(Number.isInteger(req.maxHeaderBytes) && req.maxHeaderBytes >= 1024 && req.maxHeaderBytes <= MAX_HEADER_BYTES)
  )
    return Promise.reject(invalidRequest("Invalid header limit"));
  const flight: Flight = { done: false, req: null };
  return new Promise<OutboundResponse>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (flight.done) return;
      flight.done = true;
      flight.req?.destroy();
      reject(new OutboundError("TIMEOUT", MSG_TIMEOUT));
    }, req.timeoutMs);
    run(flight, req).then(
      (res) => {
        clearTimeout(timer);
        if (flight.done) return;
        flight.done = true;
        resolve(res);
      },
      (err: unknown) => {
        clearTimeout(timer);
        flight.req?.destroy();
        if (flight.done) return;
        flight.done = true;
        reject(err instanceof OutboundError ? err : mapNetworkError(err, false, req.maxHeaderBytes));
      },
    );
  });
}
