// One HTTP exchange of the outbound client (see client.ts): the request sent to the address the guard checked, on a
// keep-alive connection pooled per checked destination, with one retry on a pooled socket the server closed while
// idle; the response head held to the request's header limit; and the mapping of socket and TLS errors to
// OutboundError.
//
// The header limit. Bun's HTTP client has one process-wide limit on a response head (`node:http` maxHeaderSize,
// 16 KiB by default; the server raises it to 1 MiB at listen for its own request parsing, platform/auth/cookie-guard):
// no per-request option. So the engine's limit is only raised (never lowered) to the largest limit a request asks
// for, and each exchange holds the head it received to its own `maxHeaderBytes`: a caller that asks for 64 KiB gets
// 64 KiB, every other one keeps 16 KiB whatever the process-wide setting is.
// Owns: the connection pools (agents). Must never: connect to any address but the checked one (the custom `lookup`
// answers it; no second DNS lookup), reuse a socket for another destination, name or TLS policy, or put header
// values, bodies or credentials into an error message.
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { MSG_CONNECT, MSG_HEADER_TOO_LARGE, MSG_UPSTREAM, OutboundError } from "./errors";
import { normalizeHost } from "./guard";

export function invalidRequest(message: string): OutboundError {
  return new OutboundError("INVALID_REQUEST", message);
}

export interface Flight {
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

// ---- the response head's size --------------------------------------------------------------------------------

/** A response head may hold this much unless the request says otherwise (Node's and Bun's default limit). */
export const DEFAULT_MAX_HEADER_BYTES = 16 * 1024;
/** The most a request may ask for. */
export const MAX_HEADER_BYTES = 64 * 1024;

const kib = (bytes: number) => (bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} bytes`);
export const headerTooLarge = (limit: number) => new OutboundError("TOO_LARGE", `${MSG_HEADER_TOO_LARGE} (more than ${kib(limit)})`);

/** Raises the engine's process-wide head limit to at least `bytes` (never lowers it: see the header). */
function engineAllows(bytes: number) {
  try {
    if (http.maxHeaderSize < bytes) (http as { maxHeaderSize: number }).maxHeaderSize = bytes;
  } catch {
    // read-only in this runtime: heads above its limit fail as HPE_HEADER_OVERFLOW, reported as too large below
  }
}

/** Bytes of the response head as received: status line, header lines, the empty line. */
function headBytes(res: http.IncomingMessage): number {
  let n = `HTTP/x.x ${res.statusCode ?? 0} ${res.statusMessage ?? ""}\r\n\r\n`.length;
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) n += (raw[i] as string).length + 2 + (raw[i + 1] as string).length + 2;
  return n;
}

const TLS_CODE = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|HANDSHAKE|ALTNAME|SIGNATURE/i;

export function mapNetworkError(err: unknown, afterResponse: boolean, maxHeaderBytes = DEFAULT_MAX_HEADER_BYTES): OutboundError {
  if (err instanceof OutboundError) return err;
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === "string" ? e.code : "";
  const msg = typeof e?.message === "string" ? e.message : "";
  // The engine's own limit (when it is lower than or close to ours): the same answer as our check.
  if (code === "HPE_HEADER_OVERFLOW") return headerTooLarge(maxHeaderBytes);
  if (!afterResponse && (TLS_CODE.test(code) || /certificate|ssl|tls/i.test(msg))) {
    return new OutboundError("TLS", `${MSG_CONNECT}: TLS error${code ? ` (${code})` : ""}`, "connect");
  }
  if (afterResponse) return new OutboundError("NETWORK", `${MSG_UPSTREAM}${code ? ` (${code})` : ": connection closed"}`, "upstream");
  return new OutboundError("NETWORK", `${MSG_CONNECT}${code ? ` (${code})` : ""}`, "connect");
}

export interface Exchange {
  url: URL;
  address: string;
  method: string;
  headers: [string, string][];
  body: Uint8Array | undefined;
  insecure: boolean;
  /** The response head may hold at most this many bytes (DEFAULT_MAX_HEADER_BYTES..MAX_HEADER_BYTES). */
  maxHeaderBytes: number;
}

/** Sends one request to the checked address; resolves with the response head (body not read yet). */
export async function send(flight: Flight, x: Exchange): Promise<http.IncomingMessage> {
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
    engineAllows(x.maxHeaderBytes);
    let req: http.ClientRequest;
    try {
      req = (secure ? https : http).request(options);
    } catch (err) {
      reject(invalidRequest(`Invalid HTTP request: ${(err as { code?: string }).code ?? "rejected"}`));
      return;
    }
    flight.req = req;
    req.once("response", (res: http.IncomingMessage) => {
      if (headBytes(res) <= x.maxHeaderBytes) return resolve(res);
      // Above this request's own limit (the engine's may be higher): nothing of it is read, the socket is closed.
      res.destroy();
      req.destroy();
      reject(headerTooLarge(x.maxHeaderBytes));
    });
    req.on("error", (err) => {
      const mapped = mapNetworkError(err, false, x.maxHeaderBytes);
      if (!retry && req.reusedSocket && IDEMPOTENT.has(x.method) && mapped.code === "NETWORK") reject(new Reused(mapped));
      else reject(mapped);
    });
    if (x.body && x.body.byteLength > 0) req.end(Buffer.from(x.body.buffer, x.body.byteOffset, x.body.byteLength));
    else req.end();
  });
}
