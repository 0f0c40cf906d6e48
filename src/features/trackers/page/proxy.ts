// Loopback forward proxy for page runs (supplement §1.1): Chromium sends every request of a page (documents,
// subresources, redirects, WebSockets) through it, with no bypass. Each run opens its own session = its own
// listening port on 127.0.0.1 with that run's policy (allowPrivate differs per user/tier), so the proxy always
// knows which rule applies without credentials. For every target the session resolves the host once through
// `resolveAllowed` and connects to that checked address (no second lookup). Supports CONNECT (https, wss) and
// absolute-form plain HTTP forwarding (one request per client connection, `Connection: close` both ways).
import { createHash, randomBytes } from "node:crypto";
import { createServer, connect, type Server, type Socket } from "node:net";
import { OutboundError } from "../../../platform/net/errors";
import { isPrivateAddress, resolveAllowed, type Resolver } from "../../../platform/net/guard";

export interface ProxyPolicy {
  /** `network.allow_private_targets` (or the tier's equivalent) for this run. */
  allowPrivate: boolean;
  /** Refuse every target (the browser-wide default proxy: traffic outside a run's context goes nowhere). */
  denyAll?: boolean;
  /** Injectable for tests: see resolveAllowed. */
  resolver?: Resolver;
  refuseAddress?: (ip: string) => boolean;
  /** Connect timeout per upstream connection. */
  connectTimeoutMs?: number;
}

/** One refused or failed target, as the proxy saw it. */
export interface ProxyEvent {
  kind: "blocked" | "error";
  /** Lower-case host as requested (no brackets) and port. */
  host: string;
  port: number;
  /** URL of a plain HTTP request (cut to MAX_EVENT_URL_CHARS); absent for CONNECT tunnels (the proxy only sees
   * host:port). */
  url?: string;
  /** The §1.1 / §11.7 message (`URL not allowed (private address)`, `Failed to connect to upstream: …`). */
  message: string;
}

const MAX_HEAD = 64 * 1024;
const DEFAULT_CONNECT_TIMEOUT = 15_000;

/**
 * Memory bound of one session (= one run): a page can make refused requests in a loop, each with a URL of up to
 * MAX_HEAD bytes, so nothing per event is kept without limit. `events` keeps the first MAX_EVENTS events (later
 * ones only count in `dropped`; every event still reaches the listener, which bounds its own copy); the lookup
 * tables behind failureFor keep the MAX_LOOKUP_ENTRIES most recent URLs (as hashes) and tunnels; an event's `url`
 * is cut to MAX_EVENT_URL_CHARS. A refusal that fell out of the tables is still recognised on a page's main
 * response by the session's marker header (isOwnRefusal).
 */
export const MAX_EVENTS = 1000;
export const MAX_LOOKUP_ENTRIES = 1000;
export const MAX_EVENT_URL_CHARS = 2048;

/**
 * `s` cut to `max` UTF-16 units, as a string of its own: a slice of a long string may keep the whole original
 * alive (JavaScriptCore substrings share their base), which is exactly what a cut must not do.
 */
export function cutCopy(s: string, max: number): string {
  return s.length <= max ? s : Buffer.from(s.slice(0, max), "utf8").toString("utf8");
}

/**
 * The identity of a URL for failure lookups: without fragment and userinfo (the request line Chromium sends the
 * proxy carries neither, the URL a page was asked to load may have both), hashed so a key stays small whatever the
 * URL's length.
 */
export function urlKey(url: string): string {
  let s = url;
  try {
    const u = new URL(url);
    u.hash = "";
    u.username = "";
    u.password = "";
    s = u.href;
  } catch {
    /* not a URL: hashed as given */
  }
  return createHash("sha256").update(s).digest("base64");
}

/** Header name of the proxy's own refusal answers (value `refused <session marker>`). */
export const REFUSAL_HEADER = "x-secbox-proxy";

/** `host:port` key with IPv6 hosts bracketed, lower case. */
export function hostKey(host: string, port: number): string {
  let h = host.toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  return h.includes(":") ? `[${h}]:${port}` : `${h}:${port}`;
}

/** host:port of a URL as the proxy would see it (default ports filled in); null for non-network URLs. */
export function urlHostKey(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  const defaults: Record<string, number> = { "http:": 80, "https:": 443, "ws:": 80, "wss:": 443 };
  const def = defaults[u.protocol];
  if (def === undefined) return null;
  return hostKey(u.hostname, u.port ? Number(u.port) : def);
}

export class ProxySession {
  /** The first MAX_EVENTS refused/failed targets of the session. */
  readonly events: ProxyEvent[] = [];
  /** Events not kept in `events` (over MAX_EVENTS). */
  dropped = 0;
  /** Number of targets the session connected to (for tests and stats). */
  connections = 0;
  /** Random per session: marks the proxy's own refusal answers so a page's server cannot pass for one. */
  readonly marker = randomBytes(12).toString("hex");
  private readonly sockets = new Set<Socket>();
  private closed = false;
  /** urlKey → event of plain HTTP requests; host:port → event of tunnels. Both keep the most recent entries. */
  private readonly byUrl = new Map<string, ProxyEvent>();
  private readonly byTunnel = new Map<string, ProxyEvent>();

  constructor(
    private readonly server: Server,
    readonly port: number,
    private policy: ProxyPolicy,
    private onEvent?: (e: ProxyEvent) => void,
  ) {
    server.on("connection", (s) => this.accept(s));
  }

  /**
   * Sets the policy and listener (a session opened ahead of its run — a prepared spare context — denies
   * everything until its run configures it).
   */
  configure(policy: ProxyPolicy, onEvent?: (e: ProxyEvent) => void): void {
    this.policy = policy;
    this.onEvent = onEvent;
  }

  /** `http://127.0.0.1:<port>` for Chromium's proxy settings. */
  get address(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /**
   * Why the proxy refused or failed this URL, if it did (among the most recent MAX_LOOKUP_ENTRIES): plain HTTP by
   * URL (fragment and userinfo ignored), tunnels by host:port (a tunnel is refused for the whole host, so every
   * https URL of that host shares the event).
   */
  failureFor(url: string): ProxyEvent | undefined {
    const direct = this.byUrl.get(urlKey(url));
    if (direct) return direct;
    const key = urlHostKey(url);
    return key ? this.byTunnel.get(key) : undefined;
  }

  /** True when response headers (lower-case names, as puppeteer gives them) are this session's own refusal. */
  isOwnRefusal(headers: Record<string, string>): boolean {
    return headers[REFUSAL_HEADER] === `refused ${this.marker}`;
  }

  /** Stops listening and destroys every open connection (tunnels and WebSockets included). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await new Promise<void>((res) => this.server.close(() => res()));
  }

  private track(s: Socket): Socket {
    if (this.closed) {
      s.destroy();
      return s;
    }
    this.sockets.add(s);
    s.once("close", () => this.sockets.delete(s));
    // Errors are handled where the socket is used; this keeps an unhandled 'error' from throwing.
    s.on("error", () => {});
    return s;
  }

  private record(full: ProxyEvent, fullUrl: string | undefined): void {
    const e = full.url !== undefined && full.url.length > MAX_EVENT_URL_CHARS ? { ...full, url: cutCopy(full.url, MAX_EVENT_URL_CHARS) } : full;
    if (this.events.length < MAX_EVENTS) this.events.push(e);
    else this.dropped++;
    if (fullUrl !== undefined) remember(this.byUrl, urlKey(fullUrl), e);
    else remember(this.byTunnel, hostKey(e.host, e.port), e);
    try {
      this.onEvent?.(e);
    } catch {
      /* listener errors never break the proxy */
    }
  }

  /** The proxy's own answer (refusal, failure, bad request): the message as text, with this session's marker. */
  private reply(client: Socket, status: number, reason: string, message = reason): void {
    if (client.destroyed) return;
    const b = Buffer.from(message, "utf8");
    client.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${b.length}\r\nConnection: close\r\nX-Secbox-Proxy: refused ${this.marker}\r\n\r\n${message}`,
    );
  }

  private accept(client: Socket): void {
    this.track(client);
    client.setNoDelay(true);
    let buf: Buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) {
        if (buf.length > MAX_HEAD) this.reply(client, 431, "Request Header Fields Too Large");
        return;
      }
      client.off("data", onData);
      client.pause();
      const head = buf.subarray(0, end).toString("latin1");
      const rest = buf.subarray(end + 4);
      void this.handle(client, head, rest).catch(() => client.destroy());
    };
    client.on("data", onData);
  }

  private async handle(client: Socket, head: string, rest: Buffer): Promise<void> {
    const lines = head.split("\r\n");
    const [method = "", target = "", version = ""] = (lines[0] ?? "").split(" ");
    if (!/^HTTP\/1\.[01]$/.test(version) || method === "") return this.reply(client, 400, "Bad Request");
    if (method === "CONNECT") {
      const m = /^(\[[0-9a-fA-F:.%]+\]|[^:\s/]+):([0-9]{1,5})$/.exec(target);
      const port = m ? Number(m[2]) : 0;
      if (!m || port < 1 || port > 65535) return this.reply(client, 400, "Bad Request");
      const host = (m[1] as string).replace(/^\[|\]$/g, "").toLowerCase();
      const upstream = await this.open(client, host, port, undefined);
      if (!upstream) return;
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (rest.length > 0) upstream.write(rest);
      upstream.pipe(client);
      client.pipe(upstream);
      client.resume();
      return;
    }
    let url: URL;
    try {
      url = new URL(target);
    } catch {
      return this.reply(client, 400, "Bad Request");
    }
    if (url.protocol !== "http:" || url.hostname === "") return this.reply(client, 400, "Bad Request");
    const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
    const port = url.port ? Number(url.port) : 80;
    const headers: string[] = [];
    for (const line of lines.slice(1)) {
      const name = line.slice(0, line.indexOf(":")).trim().toLowerCase();
      if (name === "proxy-connection" || name === "proxy-authorization" || name === "connection" || name === "keep-alive") continue;
      headers.push(line);
    }
    headers.push("Connection: close");
    const upstream = await this.open(client, host, port, url.href);
    if (!upstream) return;
    upstream.write(`${method} ${url.pathname}${url.search} ${version}\r\n${headers.join("\r\n")}\r\n\r\n`);
    if (rest.length > 0) upstream.write(rest);
    client.pipe(upstream);
    client.resume();
    pipeResponse(upstream, client);
  }

  /** Policy check + connect to the checked address; on refusal/failure answers the client and returns null. */
  private async open(client: Socket, host: string, port: number, url: string | undefined): Promise<Socket | null> {
    let address: string;
    try {
      if (this.policy.denyAll) throw new OutboundError("TARGET_NOT_ALLOWED", "URL not allowed (private address)");
      address = await resolveAllowed(host, this.policy.allowPrivate, this.policy.resolver, this.policy.refuseAddress ?? isPrivateAddress);
    } catch (err) {
      const blocked = err instanceof OutboundError && err.code === "TARGET_NOT_ALLOWED";
      const message = err instanceof Error ? err.message : "Failed to connect to upstream";
      this.record({ kind: blocked ? "blocked" : "error", host, port, ...(url !== undefined ? { url } : {}), message }, url);
      this.reply(client, blocked ? 403 : 502, blocked ? "Forbidden" : "Bad Gateway", message);
      return null;
    }
    if (this.closed || client.destroyed) return null;
    return await new Promise<Socket | null>((resolve) => {
      const upstream = this.track(connect({ host: address, port, noDelay: true }));
      const timer = setTimeout(() => upstream.destroy(new Error("connect timeout")), this.policy.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT);
      const fail = (err: Error) => {
        clearTimeout(timer);
        const message = `Failed to connect to upstream: ${err.message === "connect timeout" ? "connection timed out" : "connection failed"}`;
        this.record({ kind: "error", host, port, ...(url !== undefined ? { url } : {}), message }, url);
        this.reply(client, 502, "Bad Gateway", message);
        resolve(null);
      };
      upstream.once("error", fail);
      upstream.once("connect", () => {
        clearTimeout(timer);
        upstream.off("error", fail);
        this.connections++;
        // Upstream gone: finish the client side gracefully (pending response bytes are flushed first).
        upstream.once("close", () => client.end());
        client.once("close", () => upstream.destroy());
        resolve(upstream);
      });
    });
  }
}

/** Copies the upstream response to the client, rewriting each response head to `Connection: close`. */
function pipeResponse(upstream: Socket, client: Socket): void {
  let buf: Buffer = Buffer.alloc(0);
  let passthrough = false;
  upstream.on("data", (chunk: Buffer) => {
    if (passthrough) {
      if (!client.write(chunk)) {
        upstream.pause();
        client.once("drain", () => upstream.resume());
      }
      return;
    }
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    for (;;) {
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) {
        if (buf.length > MAX_HEAD) upstream.destroy();
        return;
      }
      const lines = buf.subarray(0, end).toString("latin1").split("\r\n");
      const status = Number((lines[0] ?? "").split(" ")[1] ?? 0);
      const kept = lines.filter((l, i) => {
        if (i === 0) return true;
        const name = l.slice(0, l.indexOf(":")).trim().toLowerCase();
        return name !== "connection" && name !== "keep-alive" && name !== "proxy-connection";
      });
      const interim = status >= 100 && status < 200 && status !== 101;
      if (!interim) kept.push("Connection: close");
      client.write(`${kept.join("\r\n")}\r\n\r\n`);
      buf = buf.subarray(end + 4);
      if (interim) continue;
      passthrough = true;
      if (buf.length > 0) client.write(buf);
      buf = Buffer.alloc(0);
      return;
    }
  });
  upstream.on("end", () => client.end());
}

/** Sets `key` as the newest entry of `map`, dropping the oldest beyond MAX_LOOKUP_ENTRIES. */
function remember(map: Map<string, ProxyEvent>, key: string, e: ProxyEvent): void {
  map.delete(key);
  map.set(key, e);
  if (map.size > MAX_LOOKUP_ENTRIES) {
    const oldest = map.keys().next().value;
    if (oldest !== undefined) map.delete(oldest);
  }
}

/**
 * Opens a session on a fresh ephemeral loopback port. `onEvent` sees every refused/failed target. Without a
 * policy the session refuses everything until `configure` gives it one.
 */
export async function openProxySession(
  policy: ProxyPolicy = { allowPrivate: false, denyAll: true },
  onEvent?: (e: ProxyEvent) => void,
): Promise<ProxySession> {
  const server = createServer({ noDelay: true });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return new ProxySession(server, port, policy, onEvent);
}
