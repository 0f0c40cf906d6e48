// Webhook responders (supplement §11, §18.2): management (CRUD on the rules of rules.ts: validation, settings ↔ row,
// clashes), URLs, history / stats / HAR, "Try it", the hit engine (engine.ts), capture batching (capture.ts) and the
// hit-summary job (hit-summary.ts), started and stopped with the service. At the end: `transfer` (transfer.ts: user
// data export, import and clone on these rules). Search (§20) reads the table through search.ts's spec. The wire
// shapes are contract.ts's; rows become wire objects in store.ts.
// Owns: the service's lifecycle and the management API's flow (check → 404 → resolve → one transaction → invalidate
// the cached responders here and on the other instances). Must never: check a member itself (rules.ts does), or
// change a user's responders without invalidating them.
import type { Server } from "bun";
import type { Config } from "../../config/schema";
import type { AuthUser } from "../../platform/auth/principal";
import { watchExternalCommits, type Db } from "../../platform/db/db";
import { duplicateName, invalid, isUniqueViolation, limitReached, notFound } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import { parseListQuery } from "../../platform/http/list-query";
import { normalizeName, pathId } from "../../platform/core/validate";
import { nowSec, tierLimits, type Runtime } from "../../platform/runtime";
import type { StorageQuota } from "../../platform/storage/quota";
import type { NotificationEmailService } from "../notification-email/service";
import { selectorFromText, selectorToText, withoutSecret, type SecretsService } from "../secrets/service";
import type { TagsService } from "../tags/service";
import type { UsersService } from "../users/service";
import type { ScriptChecker } from "../../sandbox/syntax";
import type { ScriptRunner } from "../../sandbox/types";
import { CaptureQueue } from "./capture";
import type {
  Responder,
  ResponderInfo,
  ResponderInput,
  ResponderSaved,
  ResponderStats,
  ResponderTestResult,
  TrackedRequest,
  TryInput,
} from "./contract";
import { ResponderEngine } from "./engine";
import { harSource } from "./har-pages";
import { buildHar, harContentDisposition, parseHistoryWindow } from "./har";
import { HitSummaries } from "./hit-summary";
import { present, ResponderRules } from "./rules";
import { NAME_MAX } from "./shared-rules";
import { RESPONDER_SORT_KEYS, respondersStore, toResponder, toTrackedRequest, type ResponderRow } from "./store";
import { ResponderTransfer } from "./transfer";
import { checkTryInput, runTry } from "./try-request";

export type { CheckedSettings, NormalizedLocation, NormalizedSettings } from "./rules";

export interface RespondersDeps {
  tags: TagsService;
  secrets: SecretsService;
  users: UsersService;
  notificationEmail: NotificationEmailService;
  /** The QuickJS sandbox pool (issue 4); without it a scripted responder answers 500 "Script failed". */
  scripts?: ScriptRunner;
  /** Syntax warnings on save (§27: `settings.script` compiled in the pool, never run); absent: none. */
  checkScripts?: ScriptChecker;
  /** Deletes a responder's `Secbox.kv` data inside the responder's delete transaction (sandbox KV store), giving
   *  its bytes back to the user's storage counter. */
  deleteKv?: (tx: Db, ownerId: string, userId: string) => Promise<void>;
  /** Per-user storage cap and the free-disk guard (supplement §28): history records count against it. */
  storage: StorageQuota;
}

/**
 * A responder URL without its location path (supplement §11.3, §11.12): `<scheme>://[<prefix>-]<handle>.<domain>[:port]`
 * from the effective `server.public_url`, or `<public_url>/api/webhooks/<handle>` in path style. `serve` logs its form.
 */
export function responderBaseUrl(config: Pick<Config, "server" | "responders">, handle: string, prefix = ""): string {
  const { public_url } = config.server;
  if (config.responders.url_style === "path") return `${public_url}/api/webhooks/${handle}`;
  const u = new URL(public_url);
  return `${u.protocol}//${prefix ? `${prefix}-` : ""}${handle}.${config.responders.domain}${u.port ? `:${u.port}` : ""}`;
}

/** The responder, plus `warnings` when its script does not compile (omitted when none, §27). */
const withWarnings = (r: Responder, warnings: string[]): ResponderSaved => (warnings.length > 0 ? { ...r, warnings } : r);

/** Shutdown: how long stop() waits for hits that the closing sandbox pool has just ended. */
const STOP_SETTLE_MS = 2000;
/** Cross-instance event (Db.publish): a user's responders changed; payload = user id. */
const INVALIDATE_TOPIC = "responders";

export class RespondersService {
  private readonly capture: CaptureQueue;
  private readonly engine: ResponderEngine;
  private readonly rules: ResponderRules;
  private readonly summaries: HitSummaries;
  private stopWatching: (() => void) | undefined;

  constructor(
    private readonly rt: Runtime,
    private readonly deps: RespondersDeps,
  ) {
    this.capture = new CaptureQueue(rt.db, rt.log, deps.storage);
    deps.storage.counter("history", (db, userId) => respondersStore.historyBytesOfUser(db, userId));
    this.engine = new ResponderEngine(rt, { secrets: deps.secrets, users: deps.users, capture: this.capture, scripts: deps.scripts });
    this.rules = new ResponderRules(rt, deps);
    this.summaries = new HitSummaries(rt, this.capture, deps);
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
      if (deps.deleteKv) for (const { id } of await respondersStore.idsOfUser(tx, userId)) await deps.deleteKv(tx, id, userId);
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
    await db
      .publish(INVALIDATE_TOPIC, userId)
      .catch((err) => this.rt.log.error("responders: telling other instances failed", { error: String(err) }));
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

  private readonly owners = new Map<string, string>();

  /** The user a responder belongs to (Secbox.kv accounting); undefined when there is no such responder. A responder
   *  never changes owner, so known answers are kept. */
  async ownerOf(responderId: string): Promise<string | undefined> {
    const known = this.owners.get(responderId);
    if (known !== undefined) return known;
    const userId = await respondersStore.ownerOf(this.rt.db, responderId);
    if (userId === undefined) return undefined;
    if (this.owners.size >= 100_000) this.owners.clear();
    this.owners.set(responderId, userId);
    return userId;
  }

  /** The responder ids of a user (Secbox.kv recount). */
  async idsOfUser(db: Db, userId: string): Promise<string[]> {
    return (await respondersStore.idsOfUser(db, userId)).map((r) => r.id);
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

  /** Hits answered but not captured since the start: beyond their user's max_storage_bytes, or on a low disk (§28). */
  get notCaptured(): number {
    return this.capture.notCaptured;
  }

  // ---- background ----

  async start(): Promise<void> {
    if (this.stopWatching !== undefined) return;
    this.summaries.start();
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
    this.stopWatching?.();
    this.stopWatching = undefined;
    await this.summaries.stop();
    if (!(await this.engine.settle(STOP_SETTLE_MS))) {
      this.rt.log.warn("responders: hits still in progress at shutdown are not recorded", { hits: this.engine.hitsInProgress });
    }
    await this.capture.flush();
  }

  /**
   * One tick of the hit-summary job (hit-summary.ts, supplement §18.2), at `rt.clock` time: returns the number of
   * summaries queued. Runs do not overlap.
   */
  runHitSummaries(): Promise<number> {
    return this.summaries.run();
  }

  // ---- URLs ----

  /** The responder URL without its location path (supplement §11.3, §11.12). */
  private baseUrl(handle: string, prefix: string): string {
    return responderBaseUrl(this.rt.config, handle, prefix);
  }

  /** The rows as wire objects (store.ts toResponder) with their URLs and tags. */
  private async wireMany(rows: ResponderRow[], handle: string): Promise<Responder[]> {
    const tagMap = await this.deps.tags.tagsFor(
      "responder",
      rows.map((r) => r.id),
    );
    return rows.map((r) => toResponder(r, this.baseUrl(handle, r.subdomain_prefix), tagMap.get(r.id) ?? []));
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

  /** §27: the warnings of a save's `settings.script` (none without a script or a checker). */
  private async scriptWarnings(user: AuthUser, script: string | null | undefined): Promise<string[]> {
    if (typeof script !== "string" || !this.deps.checkScripts) return [];
    return this.deps.checkScripts([{ field: "settings.script", source: script, runtime: "quickjs" }], user.id);
  }

  async create(user: AuthUser, body: ResponderInput): Promise<ResponderSaved> {
    if (!present(body.name)) throw invalid("name: is required");
    const name = normalizeName(body.name, NAME_MAX);
    if (!present(body.location)) throw invalid("location: is required");
    const location = this.rules.location(body.location);
    const method = this.rules.method(body.method);
    const enabled = this.rules.enabled(body.enabled);
    const settings = await this.rules.resolveSettings(user, this.rules.settings(user, body.settings));
    const tagIds = present(body.tagIds) ? await this.deps.tags.resolveTagIds(user.id, body.tagIds) : [];
    const warnings = await this.scriptWarnings(user, settings.script);
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
    this.rules.applySettings(row, settings, now, undefined);
    const max = tierLimits(this.rt.config, user.tier).max_responders;
    try {
      await this.rt.db.tx(async (tx) => {
        await this.rules.checkConflicts(tx, row, null);
        if ((await respondersStore.count(tx, user.id)) >= max)
          throw limitReached(`responders: at most ${max} responders allowed on the ${user.tier} tier`);
        await respondersStore.insert(tx, row);
        await this.deps.tags.setEntityTags(tx, "responder", row.id, user.id, tagIds);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Responder", name);
      throw err;
    } finally {
      await this.invalidate(user.id);
    }
    return withWarnings((await this.wireMany([row], user.handle))[0]!, warnings);
  }

  async update(user: AuthUser, rawId: string | undefined, body: ResponderInput): Promise<ResponderSaved> {
    const has = (k: keyof ResponderInput) => present(body[k]);
    if (!has("name") && !has("location") && !has("method") && !has("enabled") && !has("settings") && !has("tagIds"))
      throw invalid("body: at least one of name, location, method, enabled, settings or tagIds is required");
    const name = has("name") ? normalizeName(body.name, NAME_MAX) : undefined;
    const location = has("location") ? this.rules.location(body.location) : undefined;
    const method = has("method") ? this.rules.method(body.method) : undefined;
    const enabled = has("enabled") ? this.rules.enabled(body.enabled) : undefined;
    const checkedSettings = has("settings") ? this.rules.settings(user, body.settings) : undefined;

    const id = pathId(rawId, "Responder");
    const current = await respondersStore.get(this.rt.db, user.id, id);
    if (!current) throw notFound("Responder");
    const settings = checkedSettings && (await this.rules.resolveSettings(user, checkedSettings));
    const tagIds = has("tagIds") ? await this.deps.tags.resolveTagIds(user.id, body.tagIds) : undefined;
    const warnings = await this.scriptWarnings(user, settings?.script);

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
    const resetNotify = settings !== undefined && this.rules.applySettings(next, settings, now, current);
    const keep = Math.min(next.requests_to_track, tierLimits(this.rt.config, user.tier).max_requests_to_track);

    // Records served before this update are written first, so the trim below sees them.
    await this.capture.flush();
    try {
      await this.rt.db.tx(async (tx) => {
        await this.deps.storage.lock(tx, user.id);
        await this.rules.checkConflicts(tx, next, id);
        if ((await respondersStore.update(tx, next, resetNotify)).changes === 0) throw notFound("Responder");
        if (tagIds !== undefined) await this.deps.tags.setEntityTags(tx, "responder", id, user.id, tagIds);
        await respondersStore.trim(tx, user.id, id, keep);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Responder", next.name);
      throw err;
    } finally {
      await this.invalidate(user.id);
    }
    return withWarnings((await this.wireMany([next], user.handle))[0]!, warnings);
  }

  /** Deletes the responder, its history (cascade), its tag links and its KV data. */
  async delete(user: AuthUser, rawId: string | undefined): Promise<void> {
    const id = pathId(rawId, "Responder");
    try {
      await this.rt.db.tx(async (tx) => {
        await this.deps.storage.lock(tx, user.id);
        if ((await respondersStore.delete(tx, user.id, id)).changes === 0) throw notFound("Responder");
        await this.deps.tags.removeEntity(tx, "responder", id);
        if (this.deps.deleteKv) await this.deps.deleteKv(tx, id, user.id);
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
  async history(user: AuthUser, rawId: string | undefined, query: Record<string, unknown> = {}): Promise<TrackedRequest[]> {
    const w = parseHistoryWindow(query);
    const row = await this.owned(user, rawId);
    await this.capture.flush();
    const rows =
      w.after || w.before || w.limit ? await respondersStore.historyWindow(this.rt.db, row.id, w) : await respondersStore.history(this.rt.db, row.id);
    return rows.map(toTrackedRequest);
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
  async tryRequest(user: AuthUser, rawId: string | undefined, body: TryInput): Promise<ResponderTestResult> {
    const input = checkTryInput(body);
    const row = await this.owned(user, rawId);
    return runTry({ engine: this.engine, capture: this.capture, db: this.rt.db }, input, row, this.baseUrl(user.handle, row.subdomain_prefix));
  }

  async clear(user: AuthUser, rawId: string | undefined): Promise<void> {
    const row = await this.owned(user, rawId);
    this.capture.discard(row.id);
    await this.capture.flush();
    await this.rt.db.tx(async (tx) => {
      await this.deps.storage.lock(tx, user.id);
      await respondersStore.clear(tx, user.id, row.id);
    });
  }

  async stats(user: AuthUser): Promise<ResponderStats[]> {
    await this.capture.flush();
    return respondersStore.stats(this.rt.db, user.id);
  }

  /** HAR 1.2 document and its Content-Disposition (supplement §11.12). */
  async har(user: AuthUser, rawId: string | undefined): Promise<{ har: unknown; contentDisposition: string }> {
    const row = await this.owned(user, rawId);
    await this.capture.flush();
    const opts = { baseUrl: this.baseUrl(user.handle, row.subdomain_prefix), version: this.rt.version };
    return {
      har: buildHar(harSource(this.rt.db, row.id, opts, this.rt.db.dialect === "sqlite"), opts),
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
      storage: this.deps.storage,
      location: (raw) => this.rules.location(raw),
      method: (raw) => this.rules.method(raw),
      enabled: (raw) => this.rules.enabled(raw),
      settings: (tier, raw, limits) => this.rules.settings({ tier }, raw, limits),
      applySettings: (row, settings, now, previous) => this.rules.applySettings(row, settings, now, previous),
      checkConflicts: (tx, row, exceptId) => this.rules.checkConflicts(tx, row, exceptId),
      toWire: (row) => toResponder(row, "", []),
      done: (userId, deletedIds) => {
        for (const id of deletedIds) this.capture.discard(id);
        void this.invalidate(userId);
      },
    });
    return this.transferPart;
  }
}
