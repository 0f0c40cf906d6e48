// The hit path (supplement §11.3–§11.6, §11.10): host/path dispatch, a per-handle cache of compiled
// responders, matching, the concurrency limit, the inbound body cap, default and script responses, and
// handing the tracked record to the capture batch after the response is ready (strict capture: waiting for its
// write first). No Elysia, no SQL on a warm static hit. Hit rate (supplement §28): each handle has a token bucket
// of tier `max_hits_per_second` (refilled continuously, up to one second's worth); a hit without a token is
// answered 429 `Retry-After: 1` before its body is read, matched or captured, after a 1 s hold (a timer, nothing
// else): a client hammering a handle over its rate then sends one request per second per connection instead of
// keeping the HTTP thread busy with refusals, and the held requests count in its per-source cap
// (platform/http/source-caps.ts). Per process: with several instances each allows the rate (README). How a hit's parts are read (header text, client address,
// query) is in request-parts.ts.
// Long hits: the HTTP server closes a connection idle for HTTP_IDLE_TIMEOUT_SEC, also while a handler is still
// working on its request (Bun). A scripted hit lifts that timeout for its request while the script is queued and
// runs (the sandbox's limits end it: time limit, proxy and kv.watch timeouts are all within script_timeout_sec) and
// restores it before answering, so a hit ends in its response or the contract's 504, never a reset; the body is
// read under the normal timeout (a client that stalls mid-body is still cut off).
// Cookies (cookies.ts): path-form responses (the API's own origin) set none (a pile of large cookies would lock the
// user out of the API with 431); on responder hosts cookies lose their Domain attribute.
import type { Server } from "bun";
import type { TierLimits } from "../../config/schema";
import { sessionCookieRules } from "../../platform/auth/cookies";
import { readBodyBytes } from "../../platform/http/body";
import { HTTP_IDLE_TIMEOUT_SEC, tierLimits, type Runtime } from "../../platform/runtime";
import type { SecretsSelector } from "../secrets/contract";
import { selectorFromText, type SecretsService } from "../secrets/service";
import type { UsersService } from "../users/service";
import type { CaptureQueue, PendingCapture } from "./capture";
import { hostOnlyCookie, PATH_FORM_DROPPED, setsCookie, withoutCookie, type RawHeaders } from "./cookies";
import {
  byPrecedence,
  findWinner,
  isStandardMethod,
  matchPath,
  parsePathForm,
  parseResponderHost,
  PATH_FORM_PREFIX,
  splitUrl,
  type Matchable,
} from "./match";
import type { PathType } from "./contract";
import type { ScriptRunner } from "../../sandbox/types";
import {
  BAD_VALUE_RE,
  failureFor,
  failureResponse,
  responseFromScript,
  type HeaderList,
  type ProducedResponse,
  type ResponseDefaults,
} from "./script-result";
import { clientAddressOf, headerPairs, headerText, parseQuery, wireValue } from "./request-parts";
import { respondersStore, type ResponderRow } from "./store";
import { TokenBuckets } from "../../platform/core/token-buckets";

export const MAX_INBOUND_BODY_BYTES = 10 * 1024 * 1024;
export const PATH_FORM_CSP = "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads";
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"]);
const SECRET_REF_RE = /\$\{secrets\.([A-Za-z][A-Za-z0-9_-]{0,127})\}/g;
const utf8 = new TextEncoder();
const EMPTY = new Uint8Array(0);

/** How long a handle's compiled responders (and its owner's tier) are served from memory without a re-read. */
const CACHE_TTL_MS = 5_000;
const NEGATIVE_TTL_MS = 1_000;
const CACHE_MAX_HANDLES = 10_000;

/** How long a hit over its handle's rate waits for its 429, and how many may wait at once (beyond: at once). */
const RATE_HOLD_MS = 1000;
const RATE_MAX_HELD = 10_000;

/** Statuses and methods whose responses carry no body on the wire (RFC 9110 §6.4.1). */
const sendsNoBody = (method: string, status: number) => method === "HEAD" || status === 204 || status === 304 || (status >= 100 && status < 200);

export interface CompiledResponder extends Matchable {
  id: string;
  userId: string;
  prefix: string;
  enabled: boolean;
  /** min(requestsToTrack, tier max_requests_to_track). */
  trackLimit: number;
  statusCode: number;
  /** Default headers as stored. */
  headers: HeaderList;
  bodyText: string;
  body: Uint8Array;
  script: string | null;
  selector: SecretsSelector;
  /** Defaults contain `${secrets.…}` and the selector exposes secrets: substitute per hit. */
  templated: boolean;
  /** Precomputed response parts for non-templated defaults. */
  staticOut: WireParts | undefined;
}

type Slot = { value: HandleEntry | null; expiresAt: number } | { loading: Promise<HandleEntry | null> };

interface HandleEntry {
  userId: string;
  limits: TierLimits;
  byPrefix: Map<string, CompiledResponder[]>;
}

interface WireParts {
  /** Headers to send (hop-by-hop, content-length and the session cookie removed), on a responder host and on the
   *  path form (there without cookies, plus the sandbox CSP). */
  wire: HeaderList;
  pathWire: HeaderList;
  /** The init of a Response without and with the path-form CSP: prebuilt Headers for a responder's own headers
   *  (reused by every hit; a prebuilt Headers makes Response cheaper), the list itself for a script's (used once). */
  hostInit: Headers | HeaderList;
  pathInit: Headers | HeaderList;
  /** The list as sent on a responder host and recorded (names lower-case, same filter). */
  record: HeaderList;
  /** The same on the path form (no Set-Cookie, no Clear-Site-Data). */
  pathRecord: HeaderList;
  hasContentType: boolean;
}

/** What dispatch() tells its caller about a hit ("Try it", try-request.ts): who answered, the record (id once written). */
export interface HitProbe {
  responderId?: string;
  capture?: PendingCapture;
}

export interface EngineDeps {
  secrets: SecretsService;
  users: UsersService;
  capture: CaptureQueue;
  scripts?: ScriptRunner;
}

/** Lifts (0 = none) or restores the idle timeout of a request's connection; a closed connection is left alone. */
function setIdleTimeout(server: Server<unknown> | null, request: Request, seconds: number): void {
  try {
    server?.timeout(request, seconds);
  } catch {
    /* connection already gone */
  }
}

class TooLarge extends Error {}

/** The hit's body within `limit` (readBodyBytes: a declared Content-Length is checked up front, the bytes counted as
 *  they arrive). */
async function readBody(request: Request, limit: number): Promise<Uint8Array> {
  if (request.body === null) return EMPTY;
  return readBodyBytes(request, limit, () => new TooLarge());
}

const substitute = (text: string, values: Record<string, string>) =>
  text.includes("${secrets.") ? text.replace(SECRET_REF_RE, (whole, name: string) => (Object.hasOwn(values, name) ? values[name]! : whole)) : text;

export class ResponderEngine {
  private readonly cache = new Map<string, Slot>();
  private generation = 0;
  private readonly handlesByUser = new Map<string, Set<string>>();
  private readonly inflight = new Map<string, number>();
  /** Hit-rate buckets per handle (tier max_hits_per_second), on the runtime's clock. */
  private readonly hits: TokenBuckets;
  private rateHeld = 0;
  private readonly domainSuffix: string;
  /** The session cookie's names, plain and `__Host-` (platform/auth/cookies.ts): never shown, never set. */
  private readonly sessionCookies: string[];
  /** `[responders] capture = "strict"`: a tracked hit is answered once its record is written. */
  private readonly strictCapture: boolean;
  private readonly notFoundApi: ResponseInit;
  private readonly notFoundPath: ResponseInit;
  /** The sandbox pool; replaceable after construction (wiring order, tests). */
  scripts: ScriptRunner | undefined;
  /** Hits being served (matched or not), and the waiters of settle(). */
  private serving = 0;
  private settled: (() => void)[] = [];

  constructor(
    private readonly rt: Runtime,
    private readonly deps: EngineDeps,
  ) {
    this.domainSuffix = `.${rt.config.responders.domain.toLowerCase().replace(/\.$/, "")}`;
    this.sessionCookies = sessionCookieRules(rt.config).names;
    this.strictCapture = rt.config.responders.capture === "strict";
    this.notFoundApi = { status: 404 };
    this.notFoundPath = { status: 404, headers: [["content-security-policy", PATH_FORM_CSP]] };
    this.scripts = deps.scripts;
    this.hits = new TokenBuckets(() => rt.clock.now(), CACHE_MAX_HANDLES);
  }

  // ---- dispatch ----

  /** Synchronous host/path check; a Promise only for responder hits (supplement §11.3). */
  dispatch(request: Request, server: Server<unknown> | null, probe?: HitProbe): Promise<Response> | undefined {
    const host = parseResponderHost(request.headers.get("host"), this.domainSuffix);
    if (host !== undefined) {
      const { path, rawQuery } = splitUrl(request.url);
      return this.serve(request, server, host.handle, host.prefix, path, rawQuery, false, probe);
    }
    const url = request.url;
    if (!url.includes(PATH_FORM_PREFIX)) return undefined;
    const { path, rawQuery } = splitUrl(url);
    const form = parsePathForm(path);
    if (form === undefined) return undefined;
    // Prefixed responders are reachable only by host: the path form is the "no prefix" space.
    return this.serve(request, server, form.handle, "", form.path, rawQuery, true, probe);
  }

  /** Resolves once no hit is being served (a hit in progress may still capture), or after `timeoutMs`; true if
   *  none is left. Shutdown waits here before the last capture flush. */
  settle(timeoutMs: number): Promise<boolean> {
    if (this.serving === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.serving === 0), timeoutMs);
      this.settled.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Hits being served right now. */
  get hitsInProgress(): number {
    return this.serving;
  }

  // ---- cache ----

  /** Drops every cached handle (another process, the CLI, changed the database). */
  invalidateAll(): void {
    this.generation++;
    this.cache.clear();
    this.handlesByUser.clear();
  }

  /** Drops the cached responders of a user (after any write to them, or user removal). */
  invalidateUser(userId: string): void {
    this.generation++;
    const handles = this.handlesByUser.get(userId);
    if (!handles) return;
    for (const h of handles) this.cache.delete(h);
    this.handlesByUser.delete(userId);
  }

  private entryFor(handle: string): Promise<HandleEntry | null> | HandleEntry | null {
    const slot = this.cache.get(handle);
    if (slot !== undefined && ("loading" in slot || slot.expiresAt > Date.now())) return "loading" in slot ? slot.loading : slot.value;
    if (this.cache.size >= CACHE_MAX_HANDLES) {
      this.cache.clear();
      this.handlesByUser.clear();
    }
    const gen = this.generation;
    const loading = this.load(handle);
    const pending: Slot = { loading };
    this.cache.set(handle, pending);
    loading.then(
      (value) => {
        if (this.cache.get(handle) !== pending) return;
        // A write invalidated while this load was reading: keep nothing that may be stale.
        if (gen !== this.generation) return void this.cache.delete(handle);
        this.cache.set(handle, { value, expiresAt: Date.now() + (value === null ? NEGATIVE_TTL_MS : CACHE_TTL_MS) });
        if (value !== null) {
          let set = this.handlesByUser.get(value.userId);
          if (!set) this.handlesByUser.set(value.userId, (set = new Set()));
          set.add(handle);
        }
      },
      () => {
        if (this.cache.get(handle) === pending) this.cache.delete(handle);
      },
    );
    return loading;
  }

  private async load(handle: string): Promise<HandleEntry | null> {
    const db = this.rt.db;
    const row = await this.deps.users.getRowByHandle(handle);
    if (!row) return null;
    const owner = { id: row.id };
    const limits = tierLimits(this.rt.config, this.deps.users.toAuthUser(row).tier);
    const byPrefix = new Map<string, CompiledResponder[]>();
    for (const r of await respondersStore.byUser(db, owner.id)) {
      const c = this.compile(r, limits);
      const list = byPrefix.get(c.prefix);
      if (list) list.push(c);
      else byPrefix.set(c.prefix, [c]);
    }
    for (const list of byPrefix.values()) list.sort(byPrecedence);
    return { userId: owner.id, limits, byPrefix };
  }

  compile(r: ResponderRow, limits: TierLimits): CompiledResponder {
    const headers: HeaderList = r.headers ? JSON.parse(r.headers) : [];
    const bodyText = r.body ?? "";
    const selector = selectorFromText(r.secrets);
    const templated = selector !== "none" && (bodyText.includes("${secrets.") || headers.some(([, v]) => v.includes("${secrets.")));
    return {
      id: r.id,
      userId: r.user_id,
      prefix: r.subdomain_prefix,
      method: r.method,
      pathType: r.path_type as PathType,
      pathLower: matchPath(r.path),
      enabled: r.enabled === 1,
      trackLimit: Math.min(r.requests_to_track, limits.max_requests_to_track),
      statusCode: r.status_code,
      headers,
      bodyText,
      body: utf8.encode(bodyText),
      script: r.script,
      selector,
      templated,
      staticOut: templated ? undefined : this.staticParts(headers),
    };
  }

  /** Prebuilt parts of stored headers; undefined if Bun refuses them (then each hit builds its own and a refusal
   *  fails that hit alone, never the load of the user's other responders). */
  private staticParts(headers: HeaderList): WireParts | undefined {
    try {
      return this.wireParts(headers, true);
    } catch {
      return undefined;
    }
  }

  /** Hop-by-hop headers, `content-length` and a `Set-Cookie` for the session cookie are never sent (§11.5 step 4);
   *  cookies lose their Domain attribute on responder hosts and are not sent at all on the path form (see top). */
  private wireParts(produced: HeaderList, reused = false): WireParts {
    const wire: HeaderList = [];
    const pathWire: HeaderList = [];
    const record: HeaderList = [];
    const pathRecord: HeaderList = [];
    let hasContentType = false;
    for (const [name, raw] of produced) {
      const lower = name.toLowerCase();
      if (HOP_BY_HOP.has(lower) || lower === "content-length") continue;
      if (lower === "set-cookie" && setsCookie(raw, this.sessionCookies)) continue;
      const value = lower === "set-cookie" ? hostOnlyCookie(raw) : raw;
      if (lower === "content-type") hasContentType = true;
      const pair: [string, string] = [name, wireValue(value)];
      wire.push(pair);
      record.push([lower, value]);
      if (PATH_FORM_DROPPED.has(lower)) continue;
      pathWire.push(pair);
      pathRecord.push([lower, value]);
    }
    pathWire.push(["content-security-policy", PATH_FORM_CSP]);
    if (!reused) return { wire, pathWire, hostInit: wire, pathInit: pathWire, record, pathRecord, hasContentType };
    return { wire, pathWire, hostInit: new Headers(wire), pathInit: new Headers(pathWire), record, pathRecord, hasContentType };
  }

  // ---- serving ----

  private notFound(pathForm: boolean): Response {
    return new Response(null, pathForm ? this.notFoundPath : this.notFoundApi);
  }

  private plain(status: number, text: string, pathForm: boolean, extra: HeaderList = []): Response {
    const headers: HeaderList = [["content-type", "text/plain; charset=utf-8"], ...extra];
    if (pathForm) headers.push(["content-security-policy", PATH_FORM_CSP]);
    return new Response(text, { status, headers });
  }

  /** A failure of Secbox itself (database, decryption…) on the hit path: plain 500, details in the log only. */
  private internalError(err: unknown, pathForm: boolean): Response {
    this.rt.log.error("responders: serving a hit failed", { error: String((err as Error)?.stack ?? err) });
    return this.plain(500, "Internal error", pathForm);
  }

  private async serve(
    request: Request,
    server: Server<unknown> | null,
    handle: string,
    prefix: string | null,
    path: string,
    rawQuery: string,
    pathForm: boolean,
    probe: HitProbe | undefined,
  ): Promise<Response> {
    this.serving++;
    try {
      const arrival = performance.now();
      const cached = this.entryFor(handle);
      let entry: HandleEntry | null;
      try {
        entry = cached instanceof Promise ? await cached : cached;
      } catch (err) {
        return this.internalError(err, pathForm);
      }
      if (entry === null || prefix === null) return this.notFound(pathForm);
      if (!this.hits.take(handle, 1, entry.limits.max_hits_per_second)) return await this.overRate(pathForm);
      const method = request.method;
      if (!isStandardMethod(method)) return this.notFound(pathForm);
      const list = entry.byPrefix.get(prefix);
      if (list === undefined) return this.notFound(pathForm);
      const winner = findWinner(list, method, matchPath(path));
      if (winner === undefined || !winner.enabled) return this.notFound(pathForm);
      if (probe) probe.responderId = winner.id;

      const inflight = this.inflight.get(winner.id) ?? 0;
      if (inflight >= entry.limits.max_concurrent_hits) return this.plain(429, "Too many concurrent requests", pathForm, [["retry-after", "1"]]);
      this.inflight.set(winner.id, inflight + 1);
      // the record's createdAt: the arrival (before the body is read and the script runs), only when tracked
      const arrivedAtMs = winner.trackLimit > 0 ? this.rt.clock.now() : 0;
      try {
        let body: Uint8Array = EMPTY;
        try {
          if (request.body !== null) body = await readBody(request, MAX_INBOUND_BODY_BYTES);
        } catch (err) {
          if (err instanceof TooLarge) return this.plain(413, "Request body too large", pathForm);
          return this.plain(400, "Could not read the request body", pathForm);
        }
        const tracking = winner.trackLimit > 0;
        // Bun empties a request's headers once it is answered: copy them now (cheaply), format them later.
        let rawHeaders = tracking || winner.script !== null ? (request.headers.toJSON() as RawHeaders) : undefined;
        // The path form is the API's origin: a visitor's browser sends its Secbox session cookie along, which
        // neither the responder's owner (history, HAR) nor the script may see (§3.2: responders never receive it).
        if (pathForm && rawHeaders?.cookie !== undefined) rawHeaders = withoutCookie(rawHeaders, this.sessionCookies);
        const clientAddress = rawHeaders ? clientAddressOf(request, server, rawHeaders) : undefined;

        let produced: ProducedResponse;
        let parts: WireParts;
        if (winner.script === null && winner.staticOut !== undefined) {
          produced = {
            statusCode: winner.statusCode,
            headers: winner.headers,
            body: winner.body,
            skipRequest: false,
            trackResponse: false,
            failed: false,
          };
          parts = winner.staticOut;
        } else {
          const secrets = winner.selector === "none" ? {} : await this.deps.secrets.valuesFor(winner.userId, winner.selector);
          const defaults: ResponseDefaults = winner.templated
            ? {
                statusCode: winner.statusCode,
                headers: winner.headers.map(([n, v]) => [n, substitute(v, secrets)]),
                body: utf8.encode(substitute(winner.bodyText, secrets)),
              }
            : { statusCode: winner.statusCode, headers: winner.headers, body: winner.body };
          if (winner.script === null) produced = { ...defaults, skipRequest: false, trackResponse: false, failed: false };
          else {
            const context = {
              ...(clientAddress !== undefined ? { clientAddress } : {}),
              method,
              headers: Object.fromEntries(headerPairs(rawHeaders!)),
              path,
              ...(rawQuery !== "" ? { rawQuery } : {}),
              query: parseQuery(rawQuery),
              body,
              secrets,
            };
            setIdleTimeout(server, request, 0);
            try {
              produced = await this.runScript(winner, entry.limits, defaults, context);
            } finally {
              setIdleTimeout(server, request, HTTP_IDLE_TIMEOUT_SEC);
            }
          }
          parts = produced.headers === winner.headers && winner.staticOut ? winner.staticOut : this.wireParts(produced.headers);
        }
        let response: Response;
        try {
          response = this.toResponse(produced, parts, method, pathForm);
        } catch (err) {
          // A header value Bun refuses (CR, LF or NUL: only a substituted secret can bring one in, stored values
          // and script headers are checked before): a recorded failure, never a 500 of Secbox itself.
          const bad = produced.headers.find(([, v]) => BAD_VALUE_RE.test(v));
          produced = failureResponse(
            500,
            bad
              ? `Response header ${bad[0]}: a substituted secret put a line break or NUL in its value`
              : `Response could not be sent: ${String((err as Error)?.message ?? err)}`,
          );
          parts = this.wireParts(produced.headers);
          response = this.toResponse(produced, parts, method, pathForm);
        }

        if (tracking && !produced.skipRequest) {
          const max = entry.limits.max_tracked_body_bytes;
          const storeResponse = produced.trackResponse || produced.failed;
          // Recorded as sent (§11.10): the status always (§27); HEAD, 204 and 304 answers carry no body, whatever the
          // script produced.
          const sent = sendsNoBody(method, produced.statusCode) ? EMPTY : produced.body;
          const record: PendingCapture = {
            responderId: winner.id,
            maxKeep: entry.limits.max_requests_to_track,
            createdAtMs: arrivedAtMs,
            durationMs: Math.round(performance.now() - arrival),
            clientAddress,
            method,
            path,
            rawQuery,
            headers: rawHeaders!,
            body: body.byteLength > max ? body.subarray(0, max) : body,
            bodySize: body.byteLength,
            statusCode: produced.statusCode,
            ...(storeResponse
              ? {
                  response: {
                    statusCode: produced.statusCode,
                    headers: pathForm ? parts.pathRecord : parts.record,
                    body: sent.byteLength > max ? sent.subarray(0, max) : sent,
                    bodySize: sent.byteLength,
                    truncated: sent.byteLength > max,
                  },
                }
              : {}),
          };
          if (probe) probe.capture = record;
          if (this.strictCapture) await this.deps.capture.pushDurable(record);
          else this.deps.capture.push(record);
        }
        return response;
      } catch (err) {
        return this.internalError(err, pathForm);
      } finally {
        const n = (this.inflight.get(winner.id) ?? 1) - 1;
        if (n <= 0) this.inflight.delete(winner.id);
        else this.inflight.set(winner.id, n);
      }
    } finally {
      if (--this.serving === 0 && this.settled.length > 0) for (const w of this.settled.splice(0)) w();
    }
  }

  /** The 429 of a hit over its handle's rate, after the hold (see top). */
  private async overRate(pathForm: boolean): Promise<Response> {
    if (this.rateHeld < RATE_MAX_HELD) {
      this.rateHeld++;
      try {
        await Bun.sleep(RATE_HOLD_MS);
      } finally {
        this.rateHeld--;
      }
    }
    return this.plain(429, "Too many requests", pathForm, [["retry-after", "1"]]);
  }

  private async runScript(
    r: CompiledResponder,
    limits: TierLimits,
    defaults: ResponseDefaults,
    context: Record<string, unknown>,
  ): Promise<ProducedResponse> {
    const runner = this.scripts;
    if (runner === undefined) return failureResponse(500, "Script failed: the script runtime is not available");
    try {
      const out = await runner.run({
        source: r.script!,
        context,
        limits: {
          // The pool adds the size of the byte arrays in `context` (the body) itself (§11.6).
          memoryMib: limits.script_memory_mib,
          timeoutMs: limits.script_timeout_sec * 1000,
          proxyTimeoutMs: limits.proxy_timeout_ms,
          maxProxyBodyBytes: MAX_INBOUND_BODY_BYTES,
        },
        kvOwner: r.id,
        owner: r.userId,
        kvLimits: {
          maxEntries: limits.kv_max_entries,
          maxBytes: limits.kv_max_bytes,
          maxTtlSec: limits.kv_max_ttl_sec,
          opsPerRun: limits.kv_ops_per_run,
          writeBytesPerSecond: limits.kv_write_bytes_per_second,
        },
      });
      return responseFromScript(out, defaults);
    } catch (err) {
      return failureFor({ kind: "internal", message: String((err as Error)?.message ?? err) });
    }
  }

  /**
   * The wire response: Bun adds `Content-Length` and `Date`; HEAD, 204 and 304 carry no body. A body sent
   * without a produced `Content-Type` goes out as a stream, because Bun labels byte bodies
   * `application/octet-stream` (oven-sh/bun#21193) and Secbox must add no type of its own.
   */
  private toResponse(p: ProducedResponse, parts: WireParts, method: string, pathForm: boolean): Response {
    const status = p.statusCode;
    if (method === "HEAD") {
      const h: HeaderList = [...(pathForm ? parts.pathWire : parts.wire)];
      if (status !== 204 && status !== 304) h.push(["content-length", String(p.body.byteLength)]);
      h.push(["date", new Date().toUTCString()]);
      return new Response(null, { status, headers: h });
    }
    const headers = pathForm ? parts.pathInit : parts.hostInit;
    if (status === 204 || status === 304 || p.body.byteLength === 0) return new Response(null, { status, headers });
    if (parts.hasContentType) return new Response(p.body, { status, headers });
    const bytes = p.body;
    return new Response(
      new ReadableStream({
        start(controller) {
          controller.enqueue(bytes);
          controller.close();
        },
      }),
      { status, headers },
    );
  }
}
