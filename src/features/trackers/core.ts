// The tracker core every kind reuses (design: "trackers/ shared tracker core"): scheduling glue (platform/jobs),
// reading and writing trackers, revisions and their diffs, execution logs and the logs summary. A kind (api/, page/)
// extends TrackerKindService (kind-service.ts), which registers its KindHandler with the fetching phases and calls
// the generic CRUD helpers here; its routes come from trackerRoutes (kind-routes.ts). Around it:
// - contract.ts: the wire shapes (schemas and their types); store.ts maps rows to them;
// - core-types.ts: the shapes kinds and core share (re-exported here, so kinds import from "./core");
// - runs.ts: one run (kind-specific execute → compare → persist → notify, one log per run with phase timings) and
//   the change / failing / recovered emails; every run first claims its tracker (store.claimRun), so it runs once at
//   a time on any instance;
// - scheduling.ts: which process runs the schedule (the leader among instances sharing a database) and how jobs
//   follow trackers written by other processes;
// - core-access.ts: what runs.ts and scheduling.ts use of the core (this class passes itself as that record).
// Owns: tracker CRUD, the schedule's jobs, revisions and logs as the API reads (and clears) them. Must never: run a
// tracker itself or add a revision or log (runs.ts does, inside the run's claim).
import type { StorageQuota } from "../../platform/storage/quota";
import type { TierLimits } from "../../config/schema";
import type { AuthUser } from "../../platform/auth/principal";
import type { Db } from "../../platform/db/db";
import { duplicateName, invalid, isUniqueViolation, limitReached, notFound } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import { parseListQuery } from "../../platform/http/list-query";
import { pathId } from "../../platform/core/validate";
import { JobLanes, QueueClosedError } from "../../platform/jobs/queue";
import { Scheduler, type RunInfo } from "../../platform/jobs/scheduler";
import { nowSec, tierLimits, type Runtime } from "../../platform/runtime";
import { selectorFromText, selectorToText, withoutSecret } from "../secrets/service";
import type { Revision, TrackerConfig, TrackerLog, TrackerWire } from "./contract";
import {
  SUMMARY_LOGS,
  MAX_LOGS,
  type CommonInput,
  type KindHandler,
  type StoredTracker,
  type TrackerKind,
  type TrackersCoreDeps,
  type TrackerWrite,
} from "./core-types";
import { checkBool, checkName, isPlainObject, present } from "./params";
import { diffOf, TrackerRuns, type RunOutcome } from "./runs";
import { TrackerScheduling } from "./scheduling";
import { trackersStore as store, toRevision, toStoredTracker, toTrackerLog, toTrackerWire, type TrackerRow } from "./store";

export * from "./core-types";

export class TrackerCore {
  readonly lanes: JobLanes;
  readonly scheduler: Scheduler;
  /** The registered kinds' handlers (runs.ts reads them). */
  readonly kinds = new Map<TrackerKind, KindHandler<any>>();
  readonly scheduling: TrackerScheduling;
  private readonly runs: TrackerRuns;

  constructor(
    private readonly rt: Runtime,
    private readonly deps: TrackersCoreDeps,
  ) {
    this.lanes = new JobLanes({ api: rt.config.scheduler.max_concurrent_api, page: rt.config.chromium.max_concurrency });
    this.scheduler = new Scheduler({
      clock: rt.clock,
      lanes: this.lanes,
      onError: (message, fields) => rt.log.error(message, fields),
    });
    this.scheduling = new TrackerScheduling(rt, this);
    this.runs = new TrackerRuns(rt, deps, this);
    deps.storage.counter("revisions", (db, userId) => store.revisionBytesOfUser(db, userId));
    // A removed user's trackers (rows cascade with the user) leave the schedule, here and on the other instances.
    deps.users.onUserRemoved(async (tx, userId) => {
      for (const { id } of await store.idsOfUser(tx, userId)) this.scheduler.remove(id);
      tx.afterCommit(() => this.scheduling.announce("*"));
    });
    // A deleted secret leaves every selector; an emptied selection becomes "none" (supplement §7).
    deps.secrets.onDelete(async (tx, { userId, secretId }) => {
      for (const row of await store.withSecret(tx, userId, secretId)) {
        const before = selectorFromText(row.secrets);
        const after = withoutSecret(before, secretId);
        if (selectorToText(after) !== selectorToText(before)) await store.setSecrets(tx, row.id, selectorToText(after));
      }
    });
  }

  private now() {
    return nowSec(this.rt.clock);
  }

  /** Per-user storage cap (§28): revisions count against it (runs.ts, transfer.ts). */
  get storage(): StorageQuota {
    return this.deps.storage;
  }

  registerKind<Target>(handler: KindHandler<Target>): void {
    this.kinds.set(handler.kind, handler);
    this.scheduler.setHandler(handler.kind, {
      run: (id: string, info: RunInfo) =>
        this.runs.execute(id, { manual: false, attempt: info.attempt, ...(info.attempt === 0 ? { scheduledAt: info.dueAt } : {}) }),
      settled: (id: string, _info: RunInfo, outcome: RunOutcome, retryAt: number | undefined) => this.runs.afterScheduled(id, outcome, retryAt),
    });
  }

  // ---- lifecycle ----

  /** Loads the schedule, arms the timer and runs for scheduler leadership (scheduling.ts). */
  start(): Promise<void> {
    return this.scheduling.start();
  }

  /** After another process committed: jobs follow the stored trackers (scheduling.ts). */
  resync(): Promise<void> {
    return this.scheduling.resync();
  }

  /** Stops firing, drops queued work and waits (bounded) for running jobs. */
  stop(): Promise<void> {
    return this.scheduling.stop();
  }

  hasKind(kind: TrackerKind): boolean {
    return this.kinds.has(kind);
  }

  async limitsFor(userId: string): Promise<TierLimits | undefined> {
    const row = await this.deps.users.getRow(userId);
    return row ? tierLimits(this.rt.config, this.deps.users.effectiveTier(row)) : undefined;
  }

  // ---- scheduling glue ----

  /** Adds, replaces or removes the tracker's job after a change (or at start, with `recover`). */
  schedule(row: TrackerRow, limits: TierLimits, recover = false): void {
    const config = JSON.parse(row.config) as TrackerConfig;
    if (!this.rt.config.scheduler.enabled || row.enabled !== 1 || !config.job) {
      this.scheduler.remove(row.id);
      return;
    }
    const rs = config.job.retryStrategy;
    this.scheduler.add(
      {
        id: row.id,
        kind: row.kind,
        schedule: config.job.schedule,
        minGapMs: limits.min_schedule_interval_sec * 1000,
        owner: row.user_id,
        ...(rs ? { retry: { intervalMs: rs.interval, maxAttempts: rs.maxAttempts } } : {}),
      },
      {
        anchorAt: row.schedule_anchor * 1000,
        // Catch-up reference: the latest run of any kind. Tier gap floor: the latest scheduled run's due time only
        // (a manual run or a late start must not push the next occurrence out).
        ...(row.last_ran_at !== null ? { lastRunAt: row.last_ran_at * 1000 } : {}),
        ...(row.last_scheduled_at !== null ? { lastFireAt: row.last_scheduled_at * 1000 } : {}),
        recover,
      },
    );
  }

  /** Next planned run (unix s) while scheduled. */
  scheduledAt(id: string): number | undefined {
    const at = this.scheduler.dueAt(id);
    return at === undefined ? undefined : Math.floor(at / 1000);
  }

  // ---- reading and writing trackers (used by the kinds) ----

  /** The rows as wire objects (store.ts toTrackerWire) with their tags, revision counts and run state. */
  async toWire<Target>(kind: TrackerKind, rows: TrackerRow[]): Promise<TrackerWire<Target>[]> {
    const handler = this.kind(kind);
    const ids = rows.map((r) => r.id);
    const tags = await this.deps.tags.tagsFor(handler.tagType, ids);
    const counts = new Map((await store.revisionCounts(this.rt.db, ids)).map((c) => [c.tracker_id, Number(c.n)]));
    return rows.map((row) =>
      toTrackerWire<Target>(row, {
        tags: tags.get(row.id) ?? [],
        revisionCount: counts.get(row.id) ?? 0,
        scheduledAt: this.scheduledAt(row.id),
        running: this.lanes.isBusy(row.id),
      }),
    );
  }

  private kind(kind: TrackerKind): KindHandler {
    const h = this.kinds.get(kind);
    if (!h) throw new Error(`tracker kind ${kind} is not registered`);
    return h;
  }

  /** The caller's tracker of that kind, or 404 (malformed id included). */
  async getOwned(userId: string, kind: TrackerKind, rawId: string | undefined, db: Db = this.rt.db): Promise<TrackerRow> {
    const row = await store.get(db, userId, kind, pathId(rawId, "Tracker"));
    if (!row) throw notFound("Tracker");
    return row;
  }

  async list<Target>(userId: string, kind: TrackerKind, rawQuery: Record<string, unknown>): Promise<{ items: TrackerWire<Target>[]; total: number }> {
    const { rows, total } = await store.list(this.rt.db, userId, kind, parseListQuery(rawQuery));
    return { items: await this.toWire<Target>(kind, rows), total };
  }

  async get<Target>(userId: string, kind: TrackerKind, rawId: string | undefined): Promise<TrackerWire<Target>> {
    return (await this.toWire<Target>(kind, [await this.getOwned(userId, kind, rawId)]))[0]!;
  }

  /** Common members of a create or update body (pure checks; selector and tags come later). */
  parseCommon(body: Record<string, unknown>, create: boolean): CommonInput {
    const out: CommonInput = {};
    if (present(body.name)) out.name = checkName(body.name);
    else if (create) throw invalid("name: is required");
    if (present(body.enabled)) out.enabled = checkBool(body.enabled, "enabled");
    if (present(body.notifications)) out.notifications = checkBool(body.notifications, "notifications");
    if (present(body.secrets)) out.secrets = body.secrets;
    if (present(body.tagIds)) out.tagIds = body.tagIds;
    return out;
  }

  async create<Target>(
    user: AuthUser,
    kind: TrackerKind,
    w: TrackerWrite<Target>,
    common: CommonInput,
    maxCount: number,
  ): Promise<TrackerWire<Target>> {
    const handler = this.kind(kind);
    const secrets = await this.deps.secrets.normalizeSelector(user.id, common.secrets, "secrets");
    const tagIds = common.tagIds !== undefined ? await this.deps.tags.resolveTagIds(user.id, common.tagIds) : [];
    const id = newId();
    const now = this.now();
    try {
      await this.rt.db.tx(async (tx) => {
        if (await store.nameTaken(tx, user.id, kind, w.name)) throw duplicateName("Tracker", w.name);
        if ((await store.count(tx, user.id, kind)) >= maxCount) throw limitReached(`trackers: at most ${maxCount} ${kind} trackers allowed`);
        await store.insert(tx, {
          id,
          userId: user.id,
          kind,
          now,
          name: w.name,
          enabled: w.enabled,
          config: JSON.stringify(w.config),
          target: JSON.stringify(w.target),
          notifications: w.notifications,
          secrets: selectorToText(secrets),
        });
        await this.deps.tags.setEntityTags(tx, handler.tagType, id, user.id, tagIds);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Tracker", w.name);
      throw err;
    }
    const row = (await store.byId(this.rt.db, id))!;
    this.schedule(row, tierLimits(this.rt.config, user.tier));
    this.scheduling.announce([id]);
    return (await this.toWire<Target>(kind, [row]))[0]!;
  }

  /**
   * Replaces the present members. `build` gets the current tracker and returns the new write (kind members merged).
   * The schedule restarts from now when the job or the enabled flag changed; lowering `config.revisions` trims at once.
   */
  async update<Target>(
    user: AuthUser,
    kind: TrackerKind,
    rawId: string | undefined,
    common: CommonInput,
    build: (current: StoredTracker<Target>) => TrackerWrite<Target>,
  ): Promise<void> {
    const handler = this.kind(kind);
    const current = await this.getOwned(user.id, kind, rawId);
    const parsed = toStoredTracker<Target>(current);
    const next = build(parsed);
    const secrets = common.secrets !== undefined ? await this.deps.secrets.normalizeSelector(user.id, common.secrets, "secrets") : parsed.secrets;
    const tagIds = common.tagIds !== undefined ? await this.deps.tags.resolveTagIds(user.id, common.tagIds) : undefined;
    const limits = tierLimits(this.rt.config, user.tier);
    const now = this.now();
    const scheduleChanged = JSON.stringify(next.config.job ?? null) !== JSON.stringify(parsed.config.job ?? null) || next.enabled !== parsed.enabled;
    const keep = Math.min(next.config.revisions, limits.max_revisions);
    try {
      await this.rt.db.tx(async (tx) => {
        await this.deps.storage.lock(tx, user.id);
        if (next.name !== parsed.name && (await store.nameTaken(tx, user.id, kind, next.name, current.id))) throw duplicateName("Tracker", next.name);
        const { changes } = await store.update(tx, user.id, current.id, {
          name: next.name,
          enabled: next.enabled,
          config: JSON.stringify(next.config),
          target: JSON.stringify(next.target),
          notifications: next.notifications,
          secrets: selectorToText(secrets),
          scheduleAnchor: scheduleChanged ? now : current.schedule_anchor,
          now,
        });
        if (changes === 0) throw notFound("Tracker");
        if (tagIds !== undefined) await this.deps.tags.setEntityTags(tx, handler.tagType, current.id, user.id, tagIds);
        if (next.config.revisions < parsed.config.revisions) await store.trimRevisions(tx, user.id, current.id, keep);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Tracker", next.name);
      throw err;
    }
    if (scheduleChanged) {
      const row = await store.byId(this.rt.db, current.id);
      if (row) this.schedule(row, limits);
      this.scheduling.announce([current.id]);
    }
  }

  /** Deletes the tracker with its revisions and logs, and unschedules it. */
  async delete(userId: string, kind: TrackerKind, rawId: string | undefined): Promise<void> {
    const handler = this.kind(kind);
    const id = pathId(rawId, "Tracker");
    await this.rt.db.tx(async (tx) => {
      await this.deps.storage.lock(tx, userId);
      const { changes } = await store.delete(tx, userId, kind, id);
      if (changes === 0) throw notFound("Tracker");
      await this.deps.tags.removeEntity(tx, handler.tagType, id);
    });
    this.scheduler.remove(id);
    this.scheduling.announce([id]);
  }

  // ---- revisions and logs (supplement §17) ----

  async history(userId: string, kind: TrackerKind, rawId: string | undefined, body: unknown): Promise<Revision[]> {
    const b = isPlainObject(body) ? body : {};
    if (!isPlainObject(body) && present(body)) throw invalid("body: must be an object {refresh?, diff?}");
    const refresh = present(b.refresh) ? checkBool(b.refresh, "refresh") : false;
    const withDiff = present(b.diff) ? checkBool(b.diff, "diff") : false;
    const row = await this.getOwned(userId, kind, rawId);
    if (refresh) await this.runManual(row);
    const rows = await store.revisions(this.rt.db, row.id);
    const out: Revision[] = [];
    for (const [i, r] of rows.entries()) {
      const rev = toRevision(r);
      const older = rows[i + 1];
      if (withDiff && older) rev.diff = await diffOf(older, r);
      out.push(rev);
    }
    return out;
  }

  async clear(userId: string, kind: TrackerKind, rawId: string | undefined): Promise<void> {
    const row = await this.getOwned(userId, kind, rawId);
    await this.rt.db.tx(async (tx) => {
      await this.deps.storage.lock(tx, userId);
      await store.clearRevisions(tx, userId, row.id);
    });
  }

  async logs(userId: string, kind: TrackerKind, rawId: string | undefined): Promise<TrackerLog[]> {
    const row = await this.getOwned(userId, kind, rawId);
    return (await store.logs(this.rt.db, row.id, MAX_LOGS)).map(toTrackerLog);
  }

  async clearLogs(userId: string, kind: TrackerKind, rawId: string | undefined): Promise<void> {
    const row = await this.getOwned(userId, kind, rawId);
    await store.clearLogs(this.rt.db, row.id);
  }

  async logsSummary(userId: string, kind: TrackerKind): Promise<Record<string, TrackerLog[]>> {
    const out: Record<string, TrackerLog[]> = {};
    for (const { id } of await store.idsOfUser(this.rt.db, userId, kind)) out[id] = [];
    for (const row of await store.logsSummary(this.rt.db, userId, kind, SUMMARY_LOGS)) out[row.tracker_id]?.push(toTrackerLog(row));
    return out;
  }

  // ---- runs ----

  /** A manual run (`_history {refresh: true}`): waits for the tracker's previous run and for a slot. */
  async runManual(row: TrackerRow): Promise<void> {
    try {
      await this.lanes.run(row.kind, row.id, () => this.runs.execute(row.id, { manual: true, attempt: 0 }), row.user_id);
    } catch (err) {
      if (!(err instanceof QueueClosedError)) throw err;
    }
  }

  /** Runs `fn` in the kind's lane without a tracker key (`_debug` shares the slots of real runs), as `owner`'s. */
  inSlot<T>(kind: TrackerKind, fn: () => Promise<T>, owner: string): Promise<T> {
    return this.lanes.run(kind, undefined, fn, owner);
  }
}
