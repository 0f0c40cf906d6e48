// The tracker core every kind reuses (design: "trackers/ shared tracker core"): scheduling glue (platform/jobs),
// runs (kind-specific execute → compare → persist → notify, one log per run with phase timings), revisions and
// their diffs, execution logs, logs summary, and the change / failing / recovered emails. A kind (api/, page/)
// extends TrackerKindService (kind-service.ts), which registers its KindHandler with the fetching phases and calls
// the generic CRUD helpers here; its routes come from trackerRoutes (kind-routes.ts). Which process runs the schedule
// (the leader among instances sharing a database) and how jobs follow trackers written by other processes is
// scheduling.ts; every run first claims its tracker (store.claimRun), so it runs once at a time on any instance.
import type { TierLimits } from "../../config/schema";
import type { AuthUser } from "../../platform/auth/principal";
import type { Db } from "../../platform/db/db";
import { conflict, duplicateName, invalid, isUniqueViolation, limitReached, notFound } from "../../platform/http/errors";
import { newId } from "../../platform/http/ids";
import { parseListQuery } from "../../platform/http/list-query";
import { pathId } from "../../platform/http/validate";
import { JobLanes, QueueClosedError } from "../../platform/jobs/queue";
import { Scheduler, type RunInfo } from "../../platform/jobs/scheduler";
import { nowSec, tierLimits, type Runtime } from "../../platform/runtime";
import type { Notification, NotificationEmailService } from "../notification-email/service";
import { selectorFromText, selectorToText, withoutSecret, type SecretsSelector, type SecretsService } from "../secrets/service";
import type { TagRef, TagsService, TaggableType } from "../tags/service";
import type { UsersService } from "../users/service";
import { changeEmail, failingEmail, recoveredEmail } from "./notify";
import { checkBool, checkName, isPlainObject, present, type TrackerConfig } from "./params";
import { cutBytes, diffText, revisionData, sameBytes, unifiedDiff } from "./revisions";
import { TrackerScheduling } from "./scheduling";
import { trackersStore as store, type LogRow, type RevisionRow, type TrackerKind, type TrackerRow } from "./store";

export type { TrackerKind } from "./store";

/** Logs kept per tracker, and per tracker in the summary (supplement §17.2, §17.3, §22). */
export const MAX_LOGS = 50;
export const SUMMARY_LOGS = 10;
export const MAX_LOG_ERROR_CHARS = 2000;

export type PhaseStatus = "success" | "failure" | "skipped";

export interface PhaseRecord {
  phase: string;
  durationMs: number;
  status: PhaseStatus;
  error?: string;
}

/** A stored tracker with its JSON columns parsed. `target` is in its stored (echoed) form, kind-specific. */
export interface StoredTracker<Target = unknown> {
  id: string;
  userId: string;
  kind: TrackerKind;
  name: string;
  enabled: boolean;
  config: TrackerConfig;
  target: Target;
  notifications: boolean;
  secrets: SecretsSelector;
  createdAt: number;
  updatedAt: number;
  lastRanAt?: number;
}

export interface ExecuteInput<Target = unknown> {
  tracker: StoredTracker<Target>;
  /** The newest revision's `data` (supplement §15.3), absent when there is none. */
  previousContent?: unknown;
  /** Secret values the selector grants, by name. */
  secrets: Record<string, string>;
  /** The owner's effective tier limits. */
  limits: TierLimits;
}

/** What a kind's fetching produces: its own phases, and the value on success or the error on failure. */
export interface ExecuteOutput {
  phases: PhaseRecord[];
  value?: Uint8Array;
  error?: string;
}

export interface KindHandler<Target = unknown> {
  kind: TrackerKind;
  tagType: TaggableType;
  /** The kind's own phases in order (listed as failed/skipped when a run breaks before them). */
  phases: string[];
  /** Runs the fetching phases. Must not throw (failures are reported in the output). */
  execute(input: ExecuteInput<Target>): Promise<ExecuteOutput>;
}

export interface TrackerLog {
  id: string;
  trackerId: string;
  startedAt: number;
  finishedAt: number;
  durationMs: number;
  status: "success" | "failure";
  isManual: boolean;
  retryAttempt?: number;
  hasChanges?: boolean;
  revisionSize?: number;
  error?: string;
  phases: PhaseRecord[];
}

export interface Revision {
  id: string;
  trackerId: string;
  createdAt: number;
  size: number;
  data: unknown;
  diff?: string;
}

/** Base wire object of every kind (target is the kind's). */
export interface TrackerWire<Target = unknown> {
  id: string;
  name: string;
  enabled: boolean;
  config: TrackerConfig;
  target: Target;
  notifications: boolean;
  secrets: SecretsSelector;
  tags: TagRef[];
  tagIds: string[];
  createdAt: number;
  updatedAt: number;
  scheduledAt?: number;
  lastRanAt?: number;
  /** (addition) Revisions stored now. */
  revisionCount: number;
  /** (addition) A run of this tracker (scheduled, retry or manual) is waiting for a slot or running. */
  running: boolean;
}

/** Validated common members of a create/update body (absent members are undefined). */
export interface CommonInput {
  name?: string;
  enabled?: boolean;
  notifications?: boolean;
  /** Raw selector / tag list, resolved against stored data after the 404 check. */
  secrets?: unknown;
  tagIds?: unknown;
}

export interface TrackerWrite<Target> {
  name: string;
  enabled: boolean;
  config: TrackerConfig;
  target: Target;
  notifications: boolean;
}

interface RunOutcome {
  ok: boolean;
  error?: string;
  /** The tracker no longer exists. */
  gone?: boolean;
  /** Not run: its claim was taken (another instance runs it, or already ran this due time). */
  skipped?: boolean;
}

interface RunMode {
  manual: boolean;
  attempt: number;
  scheduledAt?: number;
}

/** A run claim lasts twice the tracker's timeout plus this (a live instance's stuck run; a dead one's lapses sooner). */
const CLAIM_MARGIN_MS = 60_000;
/** How often a manual run checks whether another instance's run of the tracker has ended. */
const CLAIM_POLL_MS = 250;

export interface TrackersCoreDeps {
  tags: TagsService;
  secrets: SecretsService;
  users: UsersService;
  notificationEmail: NotificationEmailService;
}

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const errorText = (err: unknown) => String((err as Error)?.message ?? err);

export class TrackerCore {
  readonly lanes: JobLanes;
  readonly scheduler: Scheduler;
  private readonly kinds = new Map<TrackerKind, KindHandler<any>>();
  readonly scheduling: TrackerScheduling;

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

  registerKind<Target>(handler: KindHandler<Target>): void {
    this.kinds.set(handler.kind, handler);
    this.scheduler.setHandler(handler.kind, {
      run: (id: string, info: RunInfo) =>
        this.execute(id, { manual: false, attempt: info.attempt, ...(info.attempt === 0 ? { scheduledAt: info.dueAt } : {}) }),
      settled: (id: string, _info: RunInfo, outcome: RunOutcome, retryAt: number | undefined) => this.afterScheduled(id, outcome, retryAt),
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

  parse<Target>(row: TrackerRow): StoredTracker<Target> {
    return {
      id: row.id,
      userId: row.user_id,
      kind: row.kind,
      name: row.name,
      enabled: row.enabled === 1,
      config: JSON.parse(row.config) as TrackerConfig,
      target: JSON.parse(row.target) as Target,
      notifications: row.notifications === 1,
      secrets: selectorFromText(row.secrets),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      ...(row.last_ran_at !== null ? { lastRanAt: row.last_ran_at } : {}),
    };
  }

  async toWire<Target>(kind: TrackerKind, rows: TrackerRow[]): Promise<TrackerWire<Target>[]> {
    const handler = this.kind(kind);
    const ids = rows.map((r) => r.id);
    const tags = await this.deps.tags.tagsFor(handler.tagType, ids);
    const counts = new Map((await store.revisionCounts(this.rt.db, ids)).map((c) => [c.tracker_id, Number(c.n)]));
    return rows.map((row) => {
      const t = this.parse<Target>(row);
      const tagRefs = tags.get(row.id) ?? [];
      const scheduledAt = this.scheduledAt(row.id);
      return {
        id: t.id,
        name: t.name,
        enabled: t.enabled,
        config: t.config,
        target: t.target,
        notifications: t.notifications,
        secrets: t.secrets,
        tags: tagRefs,
        tagIds: tagRefs.map((r) => r.id),
        createdAt: t.createdAt,
        updatedAt: t.updatedAt,
        ...(scheduledAt !== undefined ? { scheduledAt } : {}),
        ...(t.lastRanAt !== undefined ? { lastRanAt: t.lastRanAt } : {}),
        revisionCount: counts.get(row.id) ?? 0,
        running: this.lanes.isBusy(row.id),
      };
    });
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

  async create<Target>(user: AuthUser, kind: TrackerKind, w: TrackerWrite<Target>, common: CommonInput, maxCount: number): Promise<TrackerWire<Target>> {
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
    const parsed = this.parse<Target>(current);
    const next = build(parsed);
    const secrets = common.secrets !== undefined ? await this.deps.secrets.normalizeSelector(user.id, common.secrets, "secrets") : parsed.secrets;
    const tagIds = common.tagIds !== undefined ? await this.deps.tags.resolveTagIds(user.id, common.tagIds) : undefined;
    const limits = tierLimits(this.rt.config, user.tier);
    const now = this.now();
    const scheduleChanged = JSON.stringify(next.config.job ?? null) !== JSON.stringify(parsed.config.job ?? null) || next.enabled !== parsed.enabled;
    const keep = Math.min(next.config.revisions, limits.max_revisions);
    try {
      await this.rt.db.tx(async (tx) => {
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
        if (next.config.revisions < parsed.config.revisions) await store.trimRevisions(tx, current.id, keep);
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
      const rev: Revision = { id: r.id, trackerId: r.tracker_id, createdAt: r.created_at, size: r.size, data: revisionData(r.data) };
      const older = rows[i + 1];
      if (withDiff && older) rev.diff = await this.diffOf(older, r);
      out.push(rev);
    }
    return out;
  }

  private diffOf(older: RevisionRow, newer: RevisionRow): Promise<string> {
    return unifiedDiff({ text: diffText(older.data), createdAt: older.created_at }, { text: diffText(newer.data), createdAt: newer.created_at });
  }

  async clear(userId: string, kind: TrackerKind, rawId: string | undefined): Promise<void> {
    const row = await this.getOwned(userId, kind, rawId);
    await store.clearRevisions(this.rt.db, row.id);
  }

  async logs(userId: string, kind: TrackerKind, rawId: string | undefined): Promise<TrackerLog[]> {
    const row = await this.getOwned(userId, kind, rawId);
    return (await store.logs(this.rt.db, row.id, MAX_LOGS)).map(toLog);
  }

  async clearLogs(userId: string, kind: TrackerKind, rawId: string | undefined): Promise<void> {
    const row = await this.getOwned(userId, kind, rawId);
    await store.clearLogs(this.rt.db, row.id);
  }

  async logsSummary(userId: string, kind: TrackerKind): Promise<Record<string, TrackerLog[]>> {
    const out: Record<string, TrackerLog[]> = {};
    for (const { id } of await store.idsOfUser(this.rt.db, userId, kind)) out[id] = [];
    for (const row of await store.logsSummary(this.rt.db, userId, kind, SUMMARY_LOGS)) out[row.tracker_id]?.push(toLog(row));
    return out;
  }

  // ---- runs ----

  /** A manual run (`_history {refresh: true}`): waits for the tracker's previous run and for a slot. */
  async runManual(row: TrackerRow): Promise<void> {
    try {
      await this.lanes.run(row.kind, row.id, () => this.execute(row.id, { manual: true, attempt: 0 }), row.user_id);
    } catch (err) {
      if (!(err instanceof QueueClosedError)) throw err;
    }
  }

  /** Runs `fn` in the kind's lane without a tracker key (`_debug` shares the slots of real runs), as `owner`'s. */
  inSlot<T>(kind: TrackerKind, fn: () => Promise<T>, owner: string): Promise<T> {
    return this.lanes.run(kind, undefined, fn, owner);
  }

  /**
   * One run: the run claim (store.claimRun: on any instance sharing the database, a tracker runs once at a time and a
   * scheduled due time runs once), then the kind's phases, compare, persist, notify; one log. Never throws for run
   * failures. A scheduled run whose claim is taken (another instance runs it, or ran that due time) is skipped; a
   * manual one waits for the claim.
   */
  private async execute(id: string, mode: RunMode): Promise<RunOutcome> {
    await yieldToIo();
    const row = await store.byId(this.rt.db, id);
    if (!row) {
      this.scheduler.remove(id);
      return { ok: true, gone: true };
    }
    const handler = this.kinds.get(row.kind);
    const limits = await this.limitsFor(row.user_id);
    if (!handler || !limits) return { ok: true, gone: true };
    if (!mode.manual) this.scheduler.update(id, { minGapMs: limits.min_schedule_interval_sec * 1000 });
    const config = JSON.parse(row.config) as TrackerConfig;
    const claimMs = 2 * config.timeout + CLAIM_MARGIN_MS;
    const scheduledSec = mode.scheduledAt !== undefined ? Math.ceil(mode.scheduledAt / 1000) : undefined;
    const deadline = Date.now() + claimMs;
    while (!(await store.claimRun(this.rt.db, id, Date.now() + claimMs, scheduledSec))) {
      if (!mode.manual) return { ok: true, skipped: true };
      if (Date.now() > deadline) throw conflict("Tracker: a run on another instance is still in progress; try again later");
      await Bun.sleep(CLAIM_POLL_MS);
    }
    try {
      return await this.runClaimed(row, handler, limits, mode);
    } finally {
      await store.releaseRun(this.rt.db, id).catch((err) => this.rt.log.error("trackers: releasing a run claim failed", { trackerId: id, error: errorText(err) }));
    }
  }

  private async runClaimed(row: TrackerRow, handler: KindHandler, limits: TierLimits, mode: RunMode): Promise<RunOutcome> {
    const id = row.id;
    const tracker = this.parse(row);
    const startedMs = this.rt.clock.now();
    const t0 = performance.now();
    const prev = await store.newestRevision(this.rt.db, id);

    let out: ExecuteOutput;
    try {
      const secrets = await this.deps.secrets.valuesFor(row.user_id, tracker.secrets);
      out = await handler.execute({ tracker, ...(prev ? { previousContent: revisionData(prev.data) } : {}), secrets, limits });
    } catch (err) {
      this.rt.log.error("tracker run failed unexpectedly", { trackerId: id, error: errorText(err) });
      out = { phases: [{ phase: handler.phases[0]!, durationMs: 0, status: "failure", error: "Internal error" }], error: "Internal error" };
    }
    const phases = [...out.phases];
    for (const name of handler.phases) if (!phases.some((p) => p.phase === name)) phases.push({ phase: name, durationMs: 0, status: "skipped" });

    let error = out.value === undefined ? (out.error ?? "Run failed") : undefined;
    let hasChanges: boolean | undefined;
    let revisionSize: number | undefined;
    /** A revision to write together with the log (one transaction), and the change email that goes with it. */
    let pending: RevisionRow | undefined;
    let changeNotice: Notification | undefined;
    const keep = Math.min(tracker.config.revisions, limits.max_revisions);
    const startedSec = Math.floor(startedMs / 1000);
    // Rounded up: occurrences fall on whole seconds and gaps are whole seconds, so the floor stays exact for a
    // catch-up run due at a fractional time.
    const scheduledSec = mode.scheduledAt !== undefined ? Math.ceil(mode.scheduledAt / 1000) : undefined;
    if (out.value !== undefined) {
      // compare
      const t = performance.now();
      const value = cutBytes(out.value);
      hasChanges = !prev || !sameBytes(prev.data, value);
      revisionSize = value.byteLength;
      phases.push({ phase: "compare", durationMs: ms(t), status: "success" });
      const revision: RevisionRow | undefined = hasChanges
        ? { id: newId(), tracker_id: id, created_at: nowSec(this.rt.clock), size: value.byteLength, data: value }
        : undefined;
      if (!revision) {
        phases.push({ phase: "persist", durationMs: 0, status: "skipped" }, { phase: "notify", durationMs: 0, status: "skipped" });
      } else {
        // Persisted with the log below, in one transaction with the change email (when one is due): a crash leaves
        // the run either wholly written or not at all, never a revision without its email or log.
        pending = revision;
        if (prev && tracker.notifications) {
          const diff = await this.diffOf(prev, revision);
          changeNotice = changeEmail(tracker, revision.created_at, diff, this.rt.config.server.public_url);
        }
      }
    } else {
      for (const phase of ["compare", "persist", "notify"]) phases.push({ phase, durationMs: 0, status: "skipped" });
    }

    const logRow = (persist?: PhaseRecord, notify?: PhaseRecord): LogRow => {
      const all = persist ? [...phases, persist, notify ?? { phase: "notify", durationMs: 0, status: "skipped" as const }] : phases;
      const ok = error === undefined;
      return {
        id: newId(),
        tracker_id: id,
        started_at: startedSec,
        finished_at: Math.floor(this.rt.clock.now() / 1000),
        duration_ms: ms(t0),
        status: ok ? "success" : "failure",
        is_manual: mode.manual ? 1 : 0,
        retry_attempt: mode.attempt > 0 ? mode.attempt : null,
        has_changes: ok ? (hasChanges ? 1 : 0) : null,
        revision_size: ok ? (revisionSize ?? null) : null,
        error: ok ? null : truncate(error!, MAX_LOG_ERROR_CHARS),
        phases: JSON.stringify(all.map((p) => (p.error !== undefined ? { ...p, error: truncate(p.error, MAX_LOG_ERROR_CHARS) } : p))),
      };
    };
    const writeLog = (revision: RevisionRow | undefined) =>
      this.rt.db.tx(async (tx) => {
        if ((await store.recordRun(tx, id, startedSec, scheduledSec)).changes === 0) return undefined;
        let persist: PhaseRecord | undefined;
        let notify: PhaseRecord | undefined;
        if (revision) {
          let t = performance.now();
          await store.insertRevision(tx, revision);
          await store.trimRevisions(tx, id, keep);
          persist = { phase: "persist", durationMs: ms(t), status: "success" };
          if (changeNotice) {
            t = performance.now();
            try {
              await this.deps.notificationEmail.notify(row.user_id, changeNotice, tx);
              notify = { phase: "notify", durationMs: ms(t), status: "success" };
            } catch (err) {
              notify = { phase: "notify", durationMs: ms(t), status: "failure", error: `Notification failed: ${errorText(err)}` };
            }
          }
        }
        const log = logRow(persist, notify);
        await store.insertLog(tx, log);
        await store.trimLogs(tx, id, MAX_LOGS);
        if (log.status === "success" && (row.failure_streak > 0 || row.failing_notified === 1)) await store.setStreak(tx, id, 0, false);
        return log;
      });
    let log: LogRow | undefined;
    await yieldToIo();
    try {
      log = await writeLog(pending);
    } catch (err) {
      if (!pending) throw err;
      // The revision could not be written: log the run as a persist failure.
      error = `Saving the revision failed: ${errorText(err)}`;
      phases.push({ phase: "persist", durationMs: 0, status: "failure", error }, { phase: "notify", durationMs: 0, status: "skipped" });
      log = await writeLog(undefined);
    }
    const gone = log === undefined;
    const ok = error === undefined;
    if (gone) return { ok: true, gone: true };
    if (ok && row.failing_notified === 1 && tracker.notifications) {
      await this.sendQuietly(row.user_id, recoveredEmail(tracker, log!.finished_at, this.rt.config.server.public_url));
    }
    return ok ? { ok } : { ok, error: log!.error! };
  }

  /** After a scheduled run: a final failure (no retry planned) extends the streak and may send the "failing" email. */
  private async afterScheduled(id: string, outcome: RunOutcome, retryAt: number | undefined): Promise<void> {
    if (outcome.ok || outcome.gone || outcome.skipped || retryAt !== undefined) return;
    const row = await store.byId(this.rt.db, id);
    if (!row) return;
    const streak = row.failure_streak + 1;
    const threshold = this.rt.config.scheduler.failure_alert_after;
    const alert = streak >= threshold && row.failing_notified !== 1 && row.notifications === 1;
    await store.setStreak(this.rt.db, id, streak, row.failing_notified === 1 || alert);
    if (alert) {
      await this.sendQuietly(row.user_id, failingEmail(this.parse(row), streak, outcome.error ?? "Run failed", this.now(), this.rt.config.server.public_url));
    }
  }

  private async sendQuietly(userId: string, n: Parameters<NotificationEmailService["notify"]>[1]): Promise<void> {
    try {
      await this.deps.notificationEmail.notify(userId, n);
    } catch (err) {
      this.rt.log.error("tracker notification failed", { kind: n.kind, error: errorText(err) });
    }
  }
}

const ms = (since: number) => Math.max(0, Math.round(performance.now() - since));
/** Lets pending I/O (API requests) in between the synchronous database steps of a run. */
const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

function toLog(r: LogRow): TrackerLog {
  return {
    id: r.id,
    trackerId: r.tracker_id,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    durationMs: r.duration_ms,
    status: r.status,
    isManual: r.is_manual === 1,
    ...(r.retry_attempt !== null ? { retryAttempt: r.retry_attempt } : {}),
    ...(r.has_changes !== null ? { hasChanges: r.has_changes === 1 } : {}),
    ...(r.revision_size !== null ? { revisionSize: r.revision_size } : {}),
    ...(r.error !== null ? { error: r.error } : {}),
    phases: JSON.parse(r.phases) as PhaseRecord[],
  };
}
