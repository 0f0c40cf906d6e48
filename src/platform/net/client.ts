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
// - HTTP/1.1 with keep-alive, pinned to the checked address: idle connections are pooled per (scheme, host name,
//   port, checked IP address, TLS policy), so a socket is reused only by a request whose own DNS check (done for
//   every request and every redirect hop, as above) produced that same address, with the same SNI/certificate
//   name and certificate verification. Idle sockets close after AGENT_IDLE_MS; a request that fails on a reused
//   socket before any response (the server closed it meanwhile) is retried once on a new one if it is idempotent.
// Nothing here logs; error messages never contain bodies, header values or credentials.
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import zlib from "node:zlib";
import { VERSION } from "../runtime";
import {
  MSG_CONNECT,
  MSG_DECOMPRESS,
  MSG_TIMEOUT,
  MSG_TOO_LARGE,
  MSG_UPSTREAM,
  OutboundError,
} from "./errors";
import { normalizeHost, parseOutboundUrl, resolveAllowed, type Resolver } from "./guard";

export { OutboundError, type OutboundErrorCode, type OutboundErrorStage } from "./errors";
export {
  guardUrl,
  isForbiddenHostname,
  isPrivateAddress,
  literalTargetRefused,
  resolveAllowed,
  systemResolver,
  type Resolver,
} from "./guard";

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

export const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
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
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer", "proxy-authenticate", "proxy-authorization"]);
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

function invalidRequest(message: string): OutboundError {
  return new OutboundError("INVALID_REQUEST", message);
}

function normalizeHeaders(h: OutboundRequest["headers"]): [string, string][] {
  if (h === undefined || h === null) return [];
  const pairs: [string, string][] = Array.isArray(h) ? h : Object.entries(h);
  const out: [string, string][] = [];
  for (const pair of pairs) {
    if (!Array.isArray(pair) || pair.length !== 2) throw invalidRequest("Invalid header");
    const [name, value] = pair;
    if (typeof name !== "string" || !TOKEN.test(name)) throw invalidRequest("Invalid header name");
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

// ---- one exchange -----------------------------------------------------------------------------------------

interface Flight {
  /** Set once the overall promise settled (timeout or result); later steps stop. */
  done: boolean;
  /** The request in progress; null once its response was read to the end (its socket may serve another request). */
  req: http.ClientRequest | null;
}

// ---- connection reuse -------------------------------------------------------------------------------------

/** Idle keep-alive sockets close after this (below common server keep-alive timeouts: Node 5 s, nginx 75 s). */
const AGENT_IDLE_MS = 4000;
/** Pools kept (least recently used dropped first); idle sockets per pool. */
const MAX_AGENTS = 64;
const MAX_FREE_SOCKETS = 4;
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE"]);

interface PinnedAgent extends http.Agent {
  /** Dropped from the pools: finishes its requests, keeps no socket. */
  retired: boolean;
}

function newAgent(secure: boolean): PinnedAgent {
  const options = { keepAlive: true, maxFreeSockets: MAX_FREE_SOCKETS, timeout: AGENT_IDLE_MS, scheduling: "lifo" as const };
  const agent = (secure ? new https.Agent(options) : new http.Agent(options)) as PinnedAgent;
  agent.retired = false;
  const keep = agent.keepSocketAlive.bind(agent);
  agent.keepSocketAlive = (socket) => !agent.retired && keep(socket);
  return agent;
}

/** One pool per checked destination: every socket of an agent was connected (through the pinned `lookup` of the
 *  requests it served) to `address`, with the same TLS name and verification. */
const agents = new Map<string, PinnedAgent>();

function agentFor(secure: boolean, host: string, port: number, address: string, insecure: boolean): PinnedAgent {
  const key = `${secure ? "https" : "http"} ${host} ${port} ${address} ${secure && insecure ? "insecure" : "verify"}`;
  let agent = agents.get(key);
  if (agent) {
    agents.delete(key); // most recently used last
  } else {
    agent = newAgent(secure);
    while (agents.size >= MAX_AGENTS) {
      const [oldKey, old] = agents.entries().next().value as [string, PinnedAgent];
      agents.delete(oldKey);
      old.retired = true;
      for (const list of Object.values(old.freeSockets)) for (const socket of list ?? []) socket.destroy();
    }
  }
  agents.set(key, agent);
  return agent;
}

/** (tests) Idle pooled connections per destination key. */
export function pooledConnections(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, agent] of agents) {
    const n = Object.values(agent.freeSockets).reduce((sum, list) => sum + (list?.length ?? 0), 0);
    if (n > 0) out[key] = n;
  }
  return out;
}

const TLS_CODE = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|HANDSHAKE|ALTNAME|SIGNATURE/i;

function mapNetworkError(err: unknown, afterResponse: boolean): OutboundError {
  if (err instanceof OutboundError) return err;
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : "";
  const msg = typeof e?.message === "string" ? e.message : "";
  if (!afterResponse && (TLS_CODE.test(code) || /certificate|ssl|tls/i.test(msg))) {
    return new OutboundError("TLS", `${MSG_CONNECT}: TLS error${code ? ` (${code})` : ""}`, "connect");
  }
  if (afterResponse) return new OutboundError("NETWORK", `${MSG_UPSTREAM}${code ? ` (${code})` : ": connection closed"}`, "upstream");
  return new OutboundError("NETWORK", `${MSG_CONNECT}${code ? ` (${code})` : ""}`, "connect");
}

interface Exchange {
  url: URL;
  address: string;
  method: string;
  headers: [string, string][];
  body: Uint8Array | undefined;
  insecure: boolean;
}

/** Sends one request to the checked address; resolves with the response head (body not read yet). */
async function send(flight: Flight, x: Exchange): Promise<http.IncomingMessage> {
  try {
    return await sendOnce(flight, x);
  } catch (err) {
    // A pooled socket the server closed while idle fails before any response: retry once on a new connection.
    if (!(err instanceof Reused) || flight.done) throw err instanceof Reused ? err.mapped : err;
    return sendOnce(flight, x, true);
  }
}

/** A failure on a reused socket before the response head, for an idempotent request. */
class Reused extends Error {
  constructor(readonly mapped: OutboundError) {
    super(mapped.message);
  }
}

function sendOnce(flight: Flight, x: Exchange, retry = false): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const host = normalizeHost(x.url.hostname);
    const secure = x.url.protocol === "https:";
    const port = x.url.port ? Number(x.url.port) : secure ? 443 : 80;
    const family = isIP(x.address) === 6 ? 6 : 4;
    // Group repeated names into arrays: Node/Bun then send one line per value, and a Host header stays ours.
    const headers: Record<string, string | string[]> = {};
    const firstName = new Map<string, string>();
    for (const [n, v] of x.headers) {
      const l = n.toLowerCase();
      const key = firstName.get(l) ?? n;
      firstName.set(l, key);
      const prev = headers[key];
      headers[key] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    if (x.body) headers["Content-Length"] = String(x.body.byteLength);
    const options: https.RequestOptions = {
      protocol: x.url.protocol,
      host,
      port,
      path: `${x.url.pathname || "/"}${x.url.search}`,
      method: x.method,
      headers,
      // Pooled per checked address (see agentFor): a reused socket was connected to this same address.
      agent: agentFor(secure, host, port, x.address, x.insecure),
      // The single checked address: no second DNS lookup, while host/SNI/certificate checks keep the name.
      lookup: ((_h: string, opts: { all?: boolean } | number | undefined, cb: (...args: unknown[]) => void) => {
        const callback = typeof opts === "function" ? (opts as unknown as (...args: unknown[]) => void) : cb;
        if (typeof opts === "object" && opts?.all) callback(null, [{ address: x.address, family }]);
        else callback(null, x.address, family);
      }) as unknown as http.RequestOptions["lookup"],
    };
    if (secure) {
      options.rejectUnauthorized = !x.insecure;
      if (isIP(host) === 0) options.servername = host;
    }
    let req: http.ClientRequest;
    try {
      req = (secure ? https : http).request(options);
    } catch (err) {
      reject(invalidRequest(`Invalid HTTP request: ${(err as { code?: string }).code ?? "rejected"}`));
      return;
    }
    flight.req = req;
    req.once("response", resolve);
    req.on("error", (err) => {
      const mapped = mapNetworkError(err, false);
      if (!retry && req.reusedSocket && IDEMPOTENT.has(x.method) && mapped.code === "NETWORK") reject(new Reused(mapped));
      else reject(mapped);
    });
    if (x.body && x.body.byteLength > 0) req.end(Buffer.from(x.body.buffer, x.body.byteOffset, x.body.byteLength));
    else req.end();
  });
}

interface ReadBody {
  body: Buffer;
  truncated: boolean;
}

/** Body chunks kept up to `cap` bytes (wire bytes, or decoded output). */
class CappedChunks {
  private readonly chunks: Buffer[] = [];
  private total = 0;
  constructor(private readonly cap: number) {}

  /** Keeps `chunk` and answers true when it fits; otherwise false, having kept the part that fits if `cut`. */
  add(chunk: Buffer, cut: boolean): boolean {
    if (this.total + chunk.length <= this.cap) {
      this.total += chunk.length;
      this.chunks.push(chunk);
      return true;
    }
    if (cut) {
      this.chunks.push(chunk.subarray(0, this.cap - this.total));
      this.total = this.cap;
    }
    return false;
  }

  get body(): Buffer {
    return Buffer.concat(this.chunks, this.total);
  }
}

/** Reads the wire body; beyond `cap` it aborts (TOO_LARGE), or with `truncate` keeps the first `cap` bytes and
 *  stops reading (the connection is closed). */
function readBody(flight: Flight, res: http.IncomingMessage, cap: number, truncate: boolean): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const kept = new CappedChunks(cap);
    let settled = false;
    const fail = (e: OutboundError) => {
      if (settled) return;
      settled = true;
      res.destroy();
      flight.req?.destroy();
      reject(e);
    };
    res.on("data", (chunk: Buffer) => {
      if (settled || kept.add(chunk, truncate)) return;
      if (!truncate) return fail(new OutboundError("TOO_LARGE", MSG_TOO_LARGE));
      // The rest is never read: the connection cannot serve another request, so it is closed.
      settled = true;
      res.destroy();
      flight.req?.destroy();
      resolve({ body: kept.body, truncated: true });
    });
    res.once("end", () => {
      if (settled) return;
      settled = true;
      // Read to the end: the socket goes back to its pool and may serve another request, so never destroy it.
      flight.req = null;
      resolve({ body: kept.body, truncated: false });
    });
    res.on("error", (err) => fail(mapNetworkError(err, true)));
    res.once("aborted", () => fail(new OutboundError("NETWORK", `${MSG_UPSTREAM}: connection closed`, "upstream")));
    res.once("close", () => {
      if (!settled && !res.complete) fail(new OutboundError("NETWORK", `${MSG_UPSTREAM}: connection closed`, "upstream"));
    });
  });
}

// ---- decoding ---------------------------------------------------------------------------------------------

type Decoder = (buf: Buffer, opts: zlib.ZlibOptions & zlib.BrotliOptions, cb: (err: Error | null, out: Buffer) => void) => void;
const zstdDecompress = (zlib as unknown as { zstdDecompress?: Decoder }).zstdDecompress;

/** RFC 9110 "deflate" is zlib-wrapped; many servers send raw deflate. Checks the zlib header. */
function zlibWrapped(buf: Buffer): boolean {
  const b0 = buf[0] ?? 0;
  const b1 = buf[1] ?? 0;
  return buf.length >= 2 && (b0 & 0x0f) === 8 && ((b0 << 8) | b1) % 31 === 0;
}

function decoderFor(coding: string, buf: Buffer): Decoder | undefined {
  switch (coding) {
    case "gzip":
    case "x-gzip":
      return zlib.gunzip as Decoder;
    case "deflate":
      return (zlibWrapped(buf) ? zlib.inflate : zlib.inflateRaw) as Decoder;
    case "br":
      return zlib.brotliDecompress as Decoder;
    case "zstd":
      return zstdDecompress;
    default:
      return undefined;
  }
}

function parseCodings(headers: [string, string][]): string[] {
  const out: string[] = [];
  for (const [n, v] of headers) {
    if (n !== "content-encoding") continue;
    for (const t of v.split(",")) {
      const c = t.trim().toLowerCase();
      if (c && c !== "identity") out.push(c);
    }
  }
  return out;
}

type StreamDecoder = (opts: zlib.ZlibOptions & zlib.BrotliOptions) => zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress;
const createZstdDecompress = (zlib as unknown as { createZstdDecompress?: StreamDecoder }).createZstdDecompress;

/** Streaming decoders for `overflow: "truncate"`, flushing at the end so that a cut input decodes as far as it goes. */
function streamDecoderFor(coding: string, buf: Buffer): (() => ReturnType<StreamDecoder>) | undefined {
  const sync = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  switch (coding) {
    case "gzip":
    case "x-gzip":
      return () => zlib.createGunzip(sync);
    case "deflate":
      return zlibWrapped(buf) ? () => zlib.createInflate(sync) : () => zlib.createInflateRaw(sync);
    case "br":
      return () => zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    case "zstd":
      return createZstdDecompress ? () => createZstdDecompress({}) : undefined;
    default:
      return undefined;
  }
}

/** Decodes `input` through `stream`, keeping at most `cap` bytes of output; stops the decoder once past them. */
function decodeUpTo(stream: ReturnType<StreamDecoder>, input: Buffer, cap: number, coding: string): Promise<ReadBody> {
  return new Promise((resolve, reject) => {
    const kept = new CappedChunks(cap);
    let settled = false;
    stream.on("data", (chunk: Buffer) => {
      if (settled || kept.add(chunk, true)) return;
      settled = true;
      stream.destroy();
      resolve({ body: kept.body, truncated: true });
    });
    stream.once("end", () => {
      if (settled) return;
      settled = true;
      resolve({ body: kept.body, truncated: false });
    });
    stream.once("error", () => {
      if (settled) return;
      settled = true;
      reject(new OutboundError("NETWORK", `${MSG_DECOMPRESS} (${coding})`, "upstream"));
    });
    stream.end(input);
  });
}

/** `decode` for `overflow: "truncate"`: output cut at `cap` per coding instead of failing. */
async function decodeTruncating(raw: Buffer, codings: string[], cap: number): Promise<ReadBody | undefined> {
  if (!codings.every((c) => streamDecoderFor(c, raw) !== undefined)) return undefined;
  let out: ReadBody = { body: raw, truncated: false };
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i] as string;
    const make = streamDecoderFor(coding, out.body) as () => ReturnType<StreamDecoder>;
    const next = await decodeUpTo(make(), out.body, cap, coding);
    out = { body: next.body, truncated: out.truncated || next.truncated };
  }
  return out;
}

/** Undoes the content codings (last applied first). Returns undefined when one is unsupported (body kept raw). */
async function decode(raw: Buffer, codings: string[], cap: number): Promise<Buffer | undefined> {
  if (!codings.every((c) => decoderFor(c, raw) !== undefined)) return undefined;
  let buf = raw;
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i] as string;
    const fn = decoderFor(coding, buf) as Decoder;
    buf = await new Promise<Buffer>((resolve, reject) => {
      fn(buf, { maxOutputLength: Math.max(1, cap) }, (err, out) => {
        if (!err) return resolve(out);
        if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || err instanceof RangeError) {
          return reject(new OutboundError("TOO_LARGE", MSG_TOO_LARGE));
        }
        reject(new OutboundError("NETWORK", `${MSG_DECOMPRESS} (${coding})`, "upstream"));
      });
    });
    if (buf.length > cap) throw new OutboundError("TOO_LARGE", MSG_TOO_LARGE);
  }
  return buf;
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
  if (!TOKEN.test(method)) throw invalidRequest("Invalid HTTP method");
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
    const res = await send(flight, { url, address, method: currentMethod, headers: sent, body, insecure: r.insecure === true });
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

    const contentLength = resHeaders.find(([n]) => n === "content-length")?.[1];
    const declared = Number(contentLength ?? "");
    const bodyless = currentMethod === "HEAD" || status === 204 || status === 304 || (status >= 100 && status < 200);
    if (!bodyless && !truncate && Number.isFinite(declared) && declared > cap) {
      res.destroy();
      flight.req?.destroy();
      throw new OutboundError("TOO_LARGE", MSG_TOO_LARGE);
    }
    let read: ReadBody;
    if (truncate && cap === 0 && !bodyless && !(contentLength !== undefined && declared === 0)) {
      // Nothing of the body is wanted: do not wait for it (it may be slow or endless).
      res.destroy();
      flight.req?.destroy();
      read = { body: Buffer.alloc(0), truncated: true };
    } else {
      read = await readBody(flight, res, cap, truncate);
    }
    const raw = read.body;
    let truncated = read.truncated;
    let out: Buffer = raw;
    let outHeaders = resHeaders;
    const codings = parseCodings(resHeaders);
    if (r.decompress !== false && codings.length > 0 && raw.length > 0) {
      let decoded: Buffer | undefined;
      if (truncate) {
        const cut = await decodeTruncating(raw, codings, cap);
        decoded = cut?.body;
        truncated ||= cut?.truncated ?? false;
      } else {
        decoded = await decode(raw, codings, cap);
      }
      if (decoded) {
        out = decoded;
        outHeaders = resHeaders.map(([n, v]): [string, string] =>
          n === "content-encoding" ? ["x-original-content-encoding", v] : n === "content-length" ? ["x-original-content-length", v] : [n, v],
        );
      }
    }
    const finalUrl = new URL(url.href);
    finalUrl.username = "";
    finalUrl.password = "";
    return {
      status,
      headers: outHeaders,
      body: new Uint8Array(out.buffer, out.byteOffset, out.byteLength),
      url: finalUrl.href, // credentials from the URL are never echoed back
      remoteAddress: address,
      ...(truncated ? { truncated: true as const } : {}),
    };
  }
}

/** Sends one outbound request under the §1.1 rules. Rejects only with OutboundError. */
export function outboundFetch(req: OutboundRequest): Promise<OutboundResponse> {
  if (!Number.isFinite(req.timeoutMs) || req.timeoutMs <= 0) return Promise.reject(invalidRequest("Invalid timeout"));
  if (!Number.isFinite(req.maxBodyBytes) || req.maxBodyBytes < 0) return Promise.reject(invalidRequest("Invalid body limit"));
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
        reject(err instanceof OutboundError ? err : mapNetworkError(err, false));
      },
    );
  });
}
