// Webhook responders (supplement §11, §18.2): management rules and validation, the hit engine (engine.ts),
// capture batching (capture.ts), history / stats / HAR, and the hit-summary job. At the end: `transfer` (transfer.ts:
// user data export, import and clone on these rules) and `search` (§20).
import type { Server } from "bun";
import type { TierLimits } from "../../config/schema";
import type { AuthUser } from "../../platform/auth/principal";
import { watchExternalCommits, type Db } from "../../platform/db/db";
import { conflict, duplicateName, invalid, isUniqueViolation, limitReached, notFound } from "../../platform/http/errors";
import { newId } from "../../platform/http/ids";
import { parseListQuery } from "../../platform/http/list-query";
import { normalizeName, pathId, utf8Length } from "../../platform/http/validate";
import { nowSec, tierLimits, type Runtime } from "../../platform/runtime";
import type { NotificationEmailService } from "../notification-email/service";
import { selectorFromText, selectorToText, withoutSecret, type ParsedSelector, type SecretsSelector, type SecretsService } from "../secrets/service";
import type { TagRef, TagsService } from "../tags/service";
import type { UsersService } from "../users/service";
import { CaptureQueue } from "./capture";
import { ResponderEngine } from "./engine";
import { buildHar, harContentDisposition, parseHistoryWindow, toTrackedRecord, type TrackedRecord } from "./har";
import { methodsOverlap, RESPONDER_METHODS, type PathType } from "./match";
import type { HeaderList, ScriptRunner } from "./script-result";
import { RESPONDER_SORT_KEYS, respondersStore, type ResponderRow } from "./store";
import { ResponderTransfer } from "./transfer";
import { checkTryInput, runTry, type TryInput, type TryResult } from "./try-request";
import type { SearchHit, SearchText } from "../../platform/db/search";

export type { ScriptRunner } from "./script-result";

export interface RespondersDeps {
  tags: TagsService;
  secrets: SecretsService;
  users: UsersService;
  notificationEmail: NotificationEmailService;
  /** The QuickJS sandbox pool (issue 4); without it a scripted responder answers 500 "Script failed". */
  scripts?: ScriptRunner;
  /** Deletes a responder's `Secbox.kv` data inside the responder's delete transaction (sandbox KV store). */
  deleteKv?: (tx: Db, ownerId: string) => Promise<void>;
}

export interface ResponderLocation {
  pathType: PathType;
  path: string;
  subdomainPrefix?: string;
}

export interface ResponderSettings {
  requestsToTrack: number;
  statusCode: number;
  headers?: HeaderList;
  body?: string;
  script?: string;
  secrets: SecretsSelector;
  notifications?: { enabled: boolean; throttleSeconds: number };
}

/** Stored responder (supplement §11.1). */
export interface Responder {
  id: string;
  name: string;
  url: string;
  location: ResponderLocation;
  method: string;
  enabled: boolean;
  settings: ResponderSettings;
  tags: TagRef[];
  tagIds: string[];
  createdAt: number;
  updatedAt: number;
}

export interface ResponderStats {
  responderId: string;
  requestCount: number;
  lastRequestedAt?: number;
}

export interface ResponderInfo {
  urlStyle: "subdomain" | "path";
  baseUrl: string;
  prefixedBaseUrl?: string;
  maxRequestsToTrack: number;
  notificationThrottles: number[];
}

export interface ResponderInput {
  name?: unknown;
  location?: unknown;
  method?: unknown;
  enabled?: unknown;
  settings?: unknown;
  tagIds?: unknown;
}

const NAME_MAX = 100;
const PATH_MAX = 255;
const PATH_RE = /^\/(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/]|%[0-9A-Fa-f]{2})*$/;
const PREFIX_RE = /^[a-z0-9]([a-z0-9-]{0,34}[a-z0-9])?$/;
const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_HEADER_VALUE_RE = /[\r\n\0]/;
const MAX_HEADERS = 100;
const MAX_HEADER_VALUE_BYTES = 8 * 1024;
const MAX_BODY_BYTES = 1024 * 1024;
const MAX_SCRIPT_BYTES = 51_200;
/** Shutdown: how long stop() waits for hits that the closing sandbox pool has just ended. */
const STOP_SETTLE_MS = 2000;
const DEFAULT_THROTTLE = 3600;
const SUMMARY_INTERVAL_MS = 60_000;
/** Cross-instance event (Db.publish): a user's responders changed; payload = user id. */
const INVALIDATE_TOPIC = "responders";

const present = (v: unknown) => v !== undefined && v !== null;
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isInt = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v);

export interface NormalizedSettings {
  requestsToTrack: number;
  statusCode: number;
  headers: HeaderList;
  body: string;
  script: string | null;
  secrets: SecretsSelector;
  notifications: { enabled: boolean; throttleSeconds: number } | null;
}

export type CheckedSettings = Omit<NormalizedSettings, "secrets"> & { secrets: ParsedSelector };

export interface NormalizedLocation {
  pathType: PathType;
  path: string;
  prefix: string;
}

const isoUtc = (sec: number) => new Date(sec * 1000).toISOString().replace(".000Z", "Z");

export class RespondersService {
  private readonly capture: CaptureQueue;
  private readonly engine: ResponderEngine;
  private summaryTimer: ReturnType<typeof setInterval> | undefined;
  private stopWatching: (() => void) | undefined;
  private summaryRun: Promise<number> | undefined;

  constructor(
    private readonly rt: Runtime,
    private readonly deps: RespondersDeps,
  ) {
    this.capture = new CaptureQueue(rt.db, rt.log);
    this.engine = new ResponderEngine(rt, { secrets: deps.secrets, users: deps.users, capture: this.capture, scripts: deps.scripts });
    deps.secrets.onDelete(async (tx, { userId, secretId }) => {
      for (const r of await respondersStore.selectorsMentioning(tx, userId, secretId)) {
        const current = selectorFromText(r.secrets);
        const next = withoutSecret(current, secretId);
        if (selectorToText(next) !== selectorToText(current)) await respondersStore.setSelector(tx, r.id, selectorToText(next));
      }
      await this.invalidate(userId, tx);
    });
    // The user's responders go with the user (cascade); their KV data is keyed by responder id, not linked.
    deps.users.onUserRemoved(async (tx, userId) => {
      if (deps.deleteKv) for (const { id } of await respondersStore.idsOfUser(tx, userId)) await deps.deleteKv(tx, id);
      await this.invalidate(userId, tx);
    });
  }

  private now() {
    return nowSec(this.rt.clock);
  }

  /** Drops the user's cached responders, here and on the other instances sharing the database, once `db` commits
   *  (a transaction) or at once (README "Running several instances": within 1 s of a change). */
  private async invalidate(userId: string, db: Db = this.rt.db): Promise<void> {
    db.afterCommit(() => this.engine.invalidateUser(userId));
    await db.publish(INVALIDATE_TOPIC, userId).catch((err) => this.rt.log.error("responders: telling other instances failed", { error: String(err) }));
  }

  // ---- hits ----

  /** A responder hit when the request's host (or path form) belongs to the responder engine, else undefined. */
  dispatch(request: Request, server: Server<unknown> | null): Promise<Response> | undefined {
    return this.engine.dispatch(request, server);
  }

  /** Wires (or replaces) the sandbox pool used by scripted responders. */
  setScriptRunner(runner: ScriptRunner | undefined): void {
    this.engine.scripts = runner;
  }

  /** True when deleting a responder also deletes its KV data (deps.deleteKv wired). */
  get hasKvCleanup(): boolean {
    return this.deps.deleteKv !== undefined;
  }

  /** True when scripted responders have a sandbox pool to run on. */
  get hasScriptRunner(): boolean {
    return this.engine.scripts !== undefined;
  }

  /** Writes the pending capture batch now (also done by management reads and on stop). */
  flushCaptures(): Promise<void> {
    return this.capture.flush();
  }

  /** Records served but not yet written. */
  get pendingCaptures(): number {
    return this.capture.size;
  }

  // ---- background ----

  async start(): Promise<void> {
    if (this.summaryTimer !== undefined) return;
    this.summaryTimer = setInterval(() => {
      this.runHitSummaries().catch((err) => this.rt.log.error("responders: hit summary job failed", { error: String(err) }));
    }, SUMMARY_INTERVAL_MS);
    // Operator commands change the database next to a running server (supplement §23.3: the server sees the
    // changes at once): a commit by another connection drops the cached responders and tiers.
    const stopWatching = watchExternalCommits(
      this.rt.db,
      () => this.engine.invalidateAll(),
      (err) => this.rt.log.error("responders: reading the database version failed", { error: String(err) }),
    );
    // Another instance on the same database changed a user's responders.
    const unsubscribe = this.rt.db.subscribe(INVALIDATE_TOPIC, (userId) => this.engine.invalidateUser(userId));
    this.stopWatching = () => {
      stopWatching();
      unsubscribe();
    };
  }

  /** Shutdown, first step (the server has stopped accepting): waits up to `graceMs` for the hits in progress,
   *  scripted ones included, so their records are captured. Returns the hits still running. */
  async drain(graceMs: number): Promise<number> {
    await this.engine.settle(graceMs);
    return this.engine.hitsInProgress;
  }

  /** Stops the summary job and writes the last capture batch, after the hits in progress (a script still running
   *  at shutdown ends when the sandbox pool closes, before this). */
  async stop(): Promise<void> {
    clearInterval(this.summaryTimer);
    this.summaryTimer = undefined;
    this.stopWatching?.();
    this.stopWatching = undefined;
    await this.summaryRun?.catch(() => {});
    if (!(await this.engine.settle(STOP_SETTLE_MS))) {
      this.rt.log.warn("responders: hits still in progress at shutdown are not recorded", { hits: this.engine.hitsInProgress });
    }
    await this.capture.flush();
  }

  /**
   * One tick of the hit-summary job (supplement §18.2), at `rt.clock` time: every responder with
   * notifications on, tracked hits since its last summary and its throttle window elapsed gets one email.
   * Returns the number of summaries queued. Runs do not overlap.
   */
  runHitSummaries(): Promise<number> {
    if (this.summaryRun) return this.summaryRun;
    const run = this.summaryTick().finally(() => {
      this.summaryRun = undefined;
    });
    this.summaryRun = run;
    return run;
  }

  private async summaryTick(): Promise<number> {
    await this.capture.flush();
    const now = this.now();
    let sent = 0;
    for (const r of await respondersStore.dueSummaries(this.rt.db, now)) {
      const n = r.notify_count;
      const from = r.notify_from ?? r.created_at;
      const title = `Responder "${r.name}" received ${n} request(s)`;
      const email = {
        kind: "responder_summary" as const,
        subject: `[Secbox] ${title}`,
        content: {
          heading: title,
          paragraphs: [
            `${n} request(s) were tracked by your responder "${r.name}" since ${isoUtc(from)} (UTC).`,
            "Individual requests do not each cause an email; this summary is sent at most once per notification window.",
          ],
          link: { label: "Open the request history", url: `${this.rt.config.server.public_url}/responders/${r.id}` },
        },
      };
      try {
        // The email and the reset of the count commit together: a crash (or a failed write) between them can
        // neither lose the summary nor send it twice. The reset goes first and only while the window is still
        // open, so of several instances running this job at once only one queues the summary.
        const queued = await this.rt.db.tx(async (tx) => {
          if (!(await respondersStore.markNotified(tx, r.id, n, now))) return false;
          await this.deps.notificationEmail.notify(r.user_id, email, tx);
          return true;
        });
        if (queued) sent++;
      } catch (err) {
        this.rt.log.error("responders: queueing a hit summary failed", { responderId: r.id, error: String(err) });
      }
    }
    return sent;
  }

  // ---- URLs ----

  /** The responder URL without its location path (supplement §11.3, §11.12). */
  private baseUrl(handle: string, prefix: string): string {
    const { public_url } = this.rt.config.server;
    if (this.rt.config.responders.url_style === "path") return `${public_url}/api/webhooks/${handle}`;
    const u = new URL(public_url);
    return `${u.protocol}//${prefix ? `${prefix}-` : ""}${handle}.${this.rt.config.responders.domain}${u.port ? `:${u.port}` : ""}`;
  }

  private toWire(row: ResponderRow, handle: string, tags: TagRef[]): Responder {
    const headers: HeaderList = row.headers ? JSON.parse(row.headers) : [];
    const settings: ResponderSettings = {
      requestsToTrack: row.requests_to_track,
      statusCode: row.status_code,
      ...(headers.length > 0 ? { headers } : {}),
      ...(row.body ? { body: row.body } : {}),
      ...(row.script !== null ? { script: row.script } : {}),
      secrets: selectorFromText(row.secrets),
      ...(row.notify_enabled !== null ? { notifications: { enabled: row.notify_enabled === 1, throttleSeconds: row.notify_throttle ?? DEFAULT_THROTTLE } } : {}),
    };
    return {
      id: row.id,
      name: row.name,
      url: this.baseUrl(handle, row.subdomain_prefix) + row.path,
      location: { pathType: row.path_type as PathType, path: row.path, ...(row.subdomain_prefix ? { subdomainPrefix: row.subdomain_prefix } : {}) },
      method: row.method,
      enabled: row.enabled === 1,
      settings,
      tags,
      tagIds: tags.map((t) => t.id),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  private async wireMany(rows: ResponderRow[], handle: string): Promise<Responder[]> {
    const tagMap = await this.deps.tags.tagsFor("responder", rows.map((r) => r.id));
    return rows.map((r) => this.toWire(r, handle, tagMap.get(r.id) ?? []));
  }

  // ---- validation (supplement §11.2) ----

  private location(raw: unknown): NormalizedLocation {
    if (!isPlainObject(raw)) throw invalid("location: must be an object with pathType and path");
    const { pathType, path, subdomainPrefix } = raw;
    if (!present(pathType)) throw invalid("location.pathType: is required");
    if (pathType !== "=" && pathType !== "^" && pathType !== "*") throw invalid("location.pathType: must be one of =, ^, *");
    if (!present(path)) throw invalid("location.path: is required");
    if (typeof path !== "string") throw invalid("location.path: must be a string");
    if (path.length < 1 || path.length > PATH_MAX) throw invalid(`location.path: must be 1 to ${PATH_MAX} characters`);
    if (!path.startsWith("/")) throw invalid("location.path: must start with /");
    if (!PATH_RE.test(path)) throw invalid("location.path: may contain only RFC 3986 path characters (unreserved, %XX, sub-delims, :, @, /)");
    let end = path.length;
    while (end > 1 && path[end - 1] === "/") end--;
    let prefix = "";
    if (present(subdomainPrefix)) {
      if (typeof subdomainPrefix !== "string") throw invalid("location.subdomainPrefix: must be a string or null");
      if (!PREFIX_RE.test(subdomainPrefix))
        throw invalid("location.subdomainPrefix: must be 1 to 36 lower-case letters, digits or -, not starting or ending with -");
      if (this.rt.config.responders.url_style === "path") throw invalid("location.subdomainPrefix: not available with responders.url_style = \"path\"");
      prefix = subdomainPrefix;
    }
    return { pathType, path: path.slice(0, end), prefix };
  }

  private method(raw: unknown): string {
    if (!present(raw)) return "ANY";
    if (typeof raw !== "string" || !(RESPONDER_METHODS as readonly string[]).includes(raw))
      throw invalid(`method: must be one of ${RESPONDER_METHODS.join(", ")}`);
    return raw;
  }

  private enabled(raw: unknown): boolean {
    if (!present(raw)) return true;
    if (typeof raw !== "boolean") throw invalid("enabled: must be a boolean");
    return raw;
  }

  /** Every check of `settings` that needs no stored data; the secrets selector's entries are looked up by
   *  resolveSettings (after the 404 check of an update, supplement §1 check order). */
  private settings(user: Pick<AuthUser, "tier">, raw: unknown, limits: TierLimits = tierLimits(this.rt.config, user.tier)): CheckedSettings {
    if (present(raw) && !isPlainObject(raw)) throw invalid("settings: must be an object");
    const s = (raw ?? {}) as Record<string, unknown>;

    let requestsToTrack = 0;
    if (present(s.requestsToTrack)) {
      const max = limits.max_requests_to_track;
      if (!isInt(s.requestsToTrack) || s.requestsToTrack < 0 || s.requestsToTrack > max)
        throw invalid(`settings.requestsToTrack: must be an integer from 0 to ${max} (the ${user.tier} tier maximum)`);
      requestsToTrack = s.requestsToTrack;
    }

    let statusCode = 200;
    if (present(s.statusCode)) {
      if (!isInt(s.statusCode) || s.statusCode < 200 || s.statusCode > 599) throw invalid("settings.statusCode: must be an integer from 200 to 599");
      statusCode = s.statusCode;
    }

    let body = "";
    if (present(s.body)) {
      if (typeof s.body !== "string") throw invalid("settings.body: must be a string");
      if (utf8Length(s.body) > MAX_BODY_BYTES) throw invalid(`settings.body: must be at most ${MAX_BODY_BYTES} UTF-8 bytes`);
      body = s.body;
    }

    const headers: HeaderList = [];
    if (present(s.headers)) {
      if (!Array.isArray(s.headers)) throw invalid("settings.headers: must be an array of [name, value] pairs");
      if (s.headers.length > MAX_HEADERS) throw invalid(`settings.headers: at most ${MAX_HEADERS} headers`);
      s.headers.forEach((pair: unknown, i) => {
        const field = `settings.headers[${i}]`;
        if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string" || typeof pair[1] !== "string")
          throw invalid(`${field}: must be a [name, value] pair of strings`);
        const [name, value] = pair as [string, string];
        if (!TOKEN_RE.test(name)) throw invalid(`${field}: header name must be an RFC 9110 token`);
        if (BAD_HEADER_VALUE_RE.test(value)) throw invalid(`${field}: header value must not contain CR, LF or NUL`);
        if (utf8Length(value) > MAX_HEADER_VALUE_BYTES) throw invalid(`${field}: header value must be at most ${MAX_HEADER_VALUE_BYTES} bytes`);
        headers.push([name, value]);
      });
    }

    let script: string | null = null;
    if (present(s.script)) {
      if (typeof s.script !== "string") throw invalid("settings.script: must be a string or null");
      const bytes = utf8Length(s.script);
      if (bytes < 1 || bytes > MAX_SCRIPT_BYTES) throw invalid(`settings.script: must be 1 to ${MAX_SCRIPT_BYTES} UTF-8 bytes`);
      script = s.script;
    }

    let notifications: NormalizedSettings["notifications"] = null;
    if (present(s.notifications)) {
      const n = s.notifications;
      if (!isPlainObject(n)) throw invalid("settings.notifications: must be an object {enabled, throttleSeconds?}");
      if (typeof n.enabled !== "boolean") throw invalid("settings.notifications.enabled: must be a boolean");
      const allowed = limits.notification_throttles;
      let throttleSeconds = allowed.includes(DEFAULT_THROTTLE) || allowed.length === 0 ? DEFAULT_THROTTLE : allowed[0]!;
      if (present(n.throttleSeconds)) {
        if (!isInt(n.throttleSeconds) || !allowed.includes(n.throttleSeconds))
          throw invalid(`settings.notifications.throttleSeconds: must be one of ${allowed.join(", ")}`);
        throttleSeconds = n.throttleSeconds;
      }
      if (n.enabled && requestsToTrack === 0)
        throw invalid("settings.notifications.enabled: requires settings.requestsToTrack > 0 (summaries count tracked requests)");
      notifications = { enabled: n.enabled, throttleSeconds };
    }

    const secrets = this.deps.secrets.parseSelector(s.secrets, "settings.secrets");
    return { requestsToTrack, statusCode, headers, body, script, secrets, notifications };
  }

  private async resolveSettings(user: AuthUser, checked: CheckedSettings): Promise<NormalizedSettings> {
    return { ...checked, secrets: await this.deps.secrets.resolveSelector(user.id, checked.secrets) };
  }

  /** Writes `s` into `row`; true when the hit-summary count starts over (notifications turned on, or off). */
  private applySettings(row: ResponderRow, s: NormalizedSettings, now: number, previous: ResponderRow | undefined): boolean {
    row.requests_to_track = s.requestsToTrack;
    row.status_code = s.statusCode;
    row.headers = s.headers.length > 0 ? JSON.stringify(s.headers) : null;
    row.body = s.body === "" ? null : s.body;
    row.script = s.script;
    row.secrets = selectorToText(s.secrets);
    if (s.notifications === null) {
      // "omitted when never set": a settings object without notifications keeps none.
      row.notify_enabled = null;
      row.notify_throttle = null;
    } else {
      row.notify_enabled = s.notifications.enabled ? 1 : 0;
      row.notify_throttle = s.notifications.throttleSeconds;
    }
    const wasOn = previous?.notify_enabled === 1;
    if (row.notify_enabled === 1 && !wasOn) {
      // Counting starts when notifications are enabled.
      row.notify_count = 0;
      row.notify_from = now;
      return true;
    }
    if (row.notify_enabled !== 1) {
      row.notify_count = 0;
      row.notify_from = null;
      return true;
    }
    return false;
  }

  private async checkConflicts(tx: Db, row: ResponderRow, exceptId: string | null): Promise<void> {
    if (await respondersStore.nameTaken(tx, row.user_id, row.name, exceptId)) throw duplicateName("Responder", row.name);
    const clash = (await respondersStore.sameLocation(tx, row.user_id, row.subdomain_prefix, row.path_type, row.path_lower, exceptId)).find((o) =>
      methodsOverlap(o.method, row.method),
    );
    if (clash)
      throw conflict(`location: responder "${clash.name}" already serves ${row.path_type} ${row.path} for method ${clash.method}${row.subdomain_prefix ? ` on prefix ${row.subdomain_prefix}` : ""}`);
  }

  // ---- CRUD ----

  async list(user: AuthUser, rawQuery: Record<string, unknown>): Promise<{ items: Responder[]; total: number }> {
    const query = parseListQuery(rawQuery, RESPONDER_SORT_KEYS);
    if (query.sort === "lastRequestedAt") await this.capture.flush();
    const { rows, total } = await respondersStore.list(this.rt.db, user.id, query);
    return { items: await this.wireMany(rows, user.handle), total };
  }

  async get(user: AuthUser, rawId: string | undefined): Promise<Responder> {
    const row = await respondersStore.get(this.rt.db, user.id, pathId(rawId, "Responder"));
    if (!row) throw notFound("Responder");
    return (await this.wireMany([row], user.handle))[0]!;
  }

  async create(user: AuthUser, body: ResponderInput): Promise<Responder> {
    if (!present(body.name)) throw invalid("name: is required");
    const name = normalizeName(body.name, NAME_MAX);
    if (!present(body.location)) throw invalid("location: is required");
    const location = this.location(body.location);
    const method = this.method(body.method);
    const enabled = this.enabled(body.enabled);
    const settings = await this.resolveSettings(user, this.settings(user, body.settings));
    const tagIds = present(body.tagIds) ? await this.deps.tags.resolveTagIds(user.id, body.tagIds) : [];
    const now = this.now();
    const row: ResponderRow = {
      id: newId(),
      user_id: user.id,
      name,
      path_type: location.pathType,
      path: location.path,
      path_lower: location.path.toLowerCase(),
      subdomain_prefix: location.prefix,
      method,
      enabled: enabled ? 1 : 0,
      requests_to_track: 0,
      status_code: 200,
      headers: null,
      body: null,
      script: null,
      secrets: '"none"',
      notify_enabled: null,
      notify_throttle: null,
      notify_count: 0,
      notify_from: null,
      notified_at: null,
      created_at: now,
      updated_at: now,
    };
    this.applySettings(row, settings, now, undefined);
    const max = tierLimits(this.rt.config, user.tier).max_responders;
    try {
      await this.rt.db.tx(async (tx) => {
        await this.checkConflicts(tx, row, null);
        if ((await respondersStore.count(tx, user.id)) >= max) throw limitReached(`responders: at most ${max} responders allowed on the ${user.tier} tier`);
        await respondersStore.insert(tx, row);
        await this.deps.tags.setEntityTags(tx, "responder", row.id, user.id, tagIds);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Responder", name);
      throw err;
    } finally {
      await this.invalidate(user.id);
    }
    return (await this.wireMany([row], user.handle))[0]!;
  }

  async update(user: AuthUser, rawId: string | undefined, body: ResponderInput): Promise<Responder> {
    const has = (k: keyof ResponderInput) => present(body[k]);
    if (!has("name") && !has("location") && !has("method") && !has("enabled") && !has("settings") && !has("tagIds"))
      throw invalid("body: at least one of name, location, method, enabled, settings or tagIds is required");
    const name = has("name") ? normalizeName(body.name, NAME_MAX) : undefined;
    const location = has("location") ? this.location(body.location) : undefined;
    const method = has("method") ? this.method(body.method) : undefined;
    const enabled = has("enabled") ? this.enabled(body.enabled) : undefined;
    const checkedSettings = has("settings") ? this.settings(user, body.settings) : undefined;

    const id = pathId(rawId, "Responder");
    const current = await respondersStore.get(this.rt.db, user.id, id);
    if (!current) throw notFound("Responder");
    const settings = checkedSettings && (await this.resolveSettings(user, checkedSettings));
    const tagIds = has("tagIds") ? await this.deps.tags.resolveTagIds(user.id, body.tagIds) : undefined;

    const now = this.now();
    const next: ResponderRow = { ...current, updated_at: now };
    if (name !== undefined) next.name = name;
    if (location !== undefined) {
      next.path_type = location.pathType;
      next.path = location.path;
      next.path_lower = location.path.toLowerCase();
      next.subdomain_prefix = location.prefix;
    }
    if (method !== undefined) next.method = method;
    if (enabled !== undefined) next.enabled = enabled ? 1 : 0;
    const resetNotify = settings !== undefined && this.applySettings(next, settings, now, current);
    const keep = Math.min(next.requests_to_track, tierLimits(this.rt.config, user.tier).max_requests_to_track);

    // Records served before this update are written first, so the trim below sees them.
    await this.capture.flush();
    try {
      await this.rt.db.tx(async (tx) => {
        await this.checkConflicts(tx, next, id);
        if ((await respondersStore.update(tx, next, resetNotify)).changes === 0) throw notFound("Responder");
        if (tagIds !== undefined) await this.deps.tags.setEntityTags(tx, "responder", id, user.id, tagIds);
        await respondersStore.trim(tx, id, keep);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Responder", next.name);
      throw err;
    } finally {
      await this.invalidate(user.id);
    }
    return (await this.wireMany([next], user.handle))[0]!;
  }

  /** Deletes the responder, its history (cascade), its tag links and its KV data. */
  async delete(user: AuthUser, rawId: string | undefined): Promise<void> {
    const id = pathId(rawId, "Responder");
    try {
      await this.rt.db.tx(async (tx) => {
        if ((await respondersStore.delete(tx, user.id, id)).changes === 0) throw notFound("Responder");
        await this.deps.tags.removeEntity(tx, "responder", id);
        if (this.deps.deleteKv) await this.deps.deleteKv(tx, id);
      });
      // only once it is gone: a refused delete (another user's id) must not drop the owner's pending records
      this.capture.discard(id);
    } finally {
      await this.invalidate(user.id);
    }
  }

  // ---- history, stats, HAR ----

  private async owned(user: AuthUser, rawId: string | undefined): Promise<ResponderRow> {
    const row = await respondersStore.get(this.rt.db, user.id, pathId(rawId, "Responder"));
    if (!row) throw notFound("Responder");
    return row;
  }

  /** Tracked records, newest first (supplement §11.10); `after`, `before`, `limit` pick a window (har.ts). */
  async history(user: AuthUser, rawId: string | undefined, query: Record<string, unknown> = {}): Promise<TrackedRecord[]> {
    const w = parseHistoryWindow(query);
    const row = await this.owned(user, rawId);
    await this.capture.flush();
    const rows = w.after || w.before || w.limit ? await respondersStore.historyWindow(this.rt.db, row.id, w) : await respondersStore.history(this.rt.db, row.id);
    return rows.map(toTrackedRecord);
  }

  /** What the editor shows before a responder exists (addition): URL bases (`{prefix}` marks the prefix) and the
   *  caller's tier limits. */
  info(user: AuthUser): ResponderInfo {
    const { url_style } = this.rt.config.responders;
    const limits = tierLimits(this.rt.config, user.tier);
    return {
      urlStyle: url_style,
      baseUrl: this.baseUrl(user.handle, ""),
      ...(url_style === "subdomain" ? { prefixedBaseUrl: this.baseUrl(user.handle, "{prefix}") } : {}),
      maxRequestsToTrack: limits.max_requests_to_track,
      notificationThrottles: limits.notification_throttles,
    };
  }

  /** "Try it" (try-request.ts): a request to the caller's own responder, served in-process as a hit. */
  async tryRequest(user: AuthUser, rawId: string | undefined, body: TryInput): Promise<TryResult> {
    const input = checkTryInput(body);
    const row = await this.owned(user, rawId);
    return runTry({ engine: this.engine, capture: this.capture, db: this.rt.db }, input, row, this.baseUrl(user.handle, row.subdomain_prefix));
  }

  async clear(user: AuthUser, rawId: string | undefined): Promise<void> {
    const row = await this.owned(user, rawId);
    this.capture.discard(row.id);
    await this.capture.flush();
    await respondersStore.clear(this.rt.db, row.id);
  }

  async stats(user: AuthUser): Promise<ResponderStats[]> {
    await this.capture.flush();
    return (await respondersStore.stats(this.rt.db, user.id)).map((s) => ({
      responderId: s.id,
      requestCount: Number(s.n),
      ...(s.last !== null && s.last !== undefined ? { lastRequestedAt: Number(s.last) } : {}),
    }));
  }

  /** HAR 1.2 document and its Content-Disposition (supplement §11.12). */
  async har(user: AuthUser, rawId: string | undefined): Promise<{ har: unknown; contentDisposition: string }> {
    const row = await this.owned(user, rawId);
    await this.capture.flush();
    const rows = await respondersStore.historyOldestFirst(this.rt.db, row.id);
    return {
      har: buildHar(rows, { baseUrl: this.baseUrl(user.handle, row.subdomain_prefix), version: this.rt.version }),
      contentDisposition: harContentDisposition(row.name),
    };
  }

  // ---- user data: export, import, clone (features/user-data), in transfer.ts ----

  private transferPart: ResponderTransfer | undefined;

  /** Export, import and clone of responders (transfer.ts), on this service's rules and caches. */
  get transfer(): ResponderTransfer {
    this.transferPart ??= new ResponderTransfer(this.rt, {
      tags: this.deps.tags,
      deleteKv: this.deps.deleteKv,
      location: (raw) => this.location(raw),
      method: (raw) => this.method(raw),
      enabled: (raw) => this.enabled(raw),
      settings: (tier, raw, limits) => this.settings({ tier }, raw, limits),
      applySettings: (row, settings, now, previous) => this.applySettings(row, settings, now, previous),
      checkConflicts: (tx, row, exceptId) => this.checkConflicts(tx, row, exceptId),
      toWire: (row) => this.toWire(row, "", []),
      done: (userId, deletedIds) => {
        for (const id of deletedIds) this.capture.discard(id);
        void this.invalidate(userId);
      },
    });
    return this.transferPart;
  }

  /** Search (features/search, supplement §20): the user's matches, their count and the first `limit` in rank order. */
  search(userId: string, q: SearchText, limit: number): Promise<{ total: number; hits: SearchHit[] }> {
    return respondersStore.search(this.rt.db, userId, q, limit);
  }
}
