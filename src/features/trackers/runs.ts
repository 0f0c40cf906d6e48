// One run of a tracker, for every kind (the tracker core's runs): the run claim, the kind's fetching phases, compare,
// persist and notify in one transaction with the run's log, and after a scheduled run the failure streak and its
// "failing" / "recovered" emails (supplement §17, §18.2). TrackerCore (core.ts) owns one, calls execute() from the
// scheduler and for manual runs, afterScheduled() when a scheduled run settles.
// Owns: what a run writes (revision, log, streak, change email). Must never: throw for a run's own failure (it is
// logged as the run's outcome), run a tracker without holding its claim (store.claimRun), or write a revision without
// its log in the same transaction.
// Storage (supplement §28): a new revision counts against the user's max_storage_bytes once the revisions it pushes
// out are given back; beyond the cap, or while the server's disk is low (`server.min_free_disk_mib`), nothing is
// stored and the run fails in its persist phase with a log error naming the limit.
import type { TierLimits } from "../../config/schema";
import { conflict, insufficientStorage, limitReached } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import { nowSec, type Runtime } from "../../platform/runtime";
import type { Notification, NotificationEmailService } from "../notification-email/service";
import type { CoreAccess } from "./core-access";
import { MAX_LOG_ERROR_CHARS, MAX_LOGS, type ExecuteOutput, type KindHandler, type PhaseRecord, type TrackersCoreDeps } from "./core-types";
import { changeEmail, failingEmail, recoveredEmail } from "./notify";
import type { TrackerConfig } from "./contract";
import { cutBytes, diffText, revisionData, sameBytes, unifiedDiff } from "./revisions";
import { trackersStore as store, toStoredTracker, type LogRow, type RevisionRow, type TrackerRow } from "./store";

export interface RunOutcome {
  ok: boolean;
  error?: string;
  /** The tracker no longer exists. */
  gone?: boolean;
  /** Not run: its claim was taken (another instance runs it, or already ran this due time). */
  skipped?: boolean;
}

export interface RunMode {
  manual: boolean;
  attempt: number;
  scheduledAt?: number;
}

/** A run claim lasts twice the tracker's timeout plus this (a live instance's stuck run; a dead one's lapses sooner). */
const CLAIM_MARGIN_MS = 60_000;
/** How often a manual run checks whether another instance's run of the tracker has ended. */
const CLAIM_POLL_MS = 250;

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);
const errorText = (err: unknown) => String((err as Error)?.message ?? err);

/** The unified diff between two consecutive revisions (change emails, `_history {diff: true}`). */
export function diffOf(older: RevisionRow, newer: RevisionRow): Promise<string> {
  return unifiedDiff({ text: diffText(older.data), createdAt: older.created_at }, { text: diffText(newer.data), createdAt: newer.created_at });
}

export class TrackerRuns {
  constructor(
    private readonly rt: Runtime,
    private readonly deps: TrackersCoreDeps,
    private readonly core: CoreAccess,
  ) {}

  private now() {
    return nowSec(this.rt.clock);
  }

  /**
   * One run: the run claim (store.claimRun: on any instance sharing the database, a tracker runs once at a time and a
   * scheduled due time runs once), then the kind's phases, compare, persist, notify; one log. Never throws for run
   * failures. A scheduled run whose claim is taken (another instance runs it, or ran that due time) is skipped; a
   * manual one waits for the claim.
   */
  async execute(id: string, mode: RunMode): Promise<RunOutcome> {
    await yieldToIo();
    const row = await store.byId(this.rt.db, id);
    if (!row) {
      this.core.scheduler.remove(id);
      return { ok: true, gone: true };
    }
    const handler = this.core.kinds.get(row.kind);
    const limits = await this.core.limitsFor(row.user_id);
    if (!handler || !limits) return { ok: true, gone: true };
    if (!mode.manual) this.core.scheduler.update(id, { minGapMs: limits.min_schedule_interval_sec * 1000 });
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
      await store
        .releaseRun(this.rt.db, id)
        .catch((err) => this.rt.log.error("trackers: releasing a run claim failed", { trackerId: id, error: errorText(err) }));
    }
  }

  private async runClaimed(row: TrackerRow, handler: KindHandler, limits: TierLimits, mode: RunMode): Promise<RunOutcome> {
    const id = row.id;
    const tracker = toStoredTracker(row);
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
          const diff = await diffOf(prev, revision);
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
        const storage = this.core.storage;
        // The user's storage lock comes before any row of theirs (tracker updates and deletes take it first, too).
        if (revision) await storage.lock(tx, row.user_id);
        if ((await store.recordRun(tx, id, startedSec, scheduledSec)).changes === 0) return undefined;
        let persist: PhaseRecord | undefined;
        let notify: PhaseRecord | undefined;
        if (revision) {
          let t = performance.now();
          if (storage.diskLow)
            throw insufficientStorage("the server is low on disk space (server.min_free_disk_mib); no revision is stored until space is freed");
          // The older revisions the new one pushes out go first (a refusal below rolls this transaction back).
          await store.trimRevisions(tx, row.user_id, id, keep - 1);
          if (!(await storage.tryAdd(tx, row.user_id, "revisions", revision.size)))
            throw limitReached(await storage.limitMessage(tx, row.user_id, "revisions", revision.size));
          await store.insertRevision(tx, revision);
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
  async afterScheduled(id: string, outcome: RunOutcome, retryAt: number | undefined): Promise<void> {
    if (outcome.ok || outcome.gone || outcome.skipped || retryAt !== undefined) return;
    const row = await store.byId(this.rt.db, id);
    if (!row) return;
    const streak = row.failure_streak + 1;
    const threshold = this.rt.config.scheduler.failure_alert_after;
    const alert = streak >= threshold && row.failing_notified !== 1 && row.notifications === 1;
    await store.setStreak(this.rt.db, id, streak, row.failing_notified === 1 || alert);
    if (alert) {
      await this.sendQuietly(
        row.user_id,
        failingEmail(toStoredTracker(row), streak, outcome.error ?? "Run failed", this.now(), this.rt.config.server.public_url),
      );
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
