// SQL of the trackers feature: the trackers table (API and page trackers, told apart by `kind`), revisions and
// execution logs, and the mapping of their rows to stored trackers and wire objects (contract.ts). Only SQL shared by
// SQLite and PostgreSQL.
// Stored bytes (§28): a revision's `size` counts against its user's max_storage_bytes; every statement here that
// deletes revisions gives their bytes back to the user's counter (storage_usage) in the same transaction. Callers
// take the user's storage lock first (StorageQuota.lock) and add bytes through StorageQuota.
import { placeholders, type Db } from "../../platform/db/db";
import { storageUsage } from "../../platform/storage/quota";
import { deadInstance } from "../../platform/db/instances";
import { listPage } from "../../platform/db/list";
import type { ListQuery } from "../../platform/http/list-query";
import { selectorFromText } from "../secrets/service";
import type { TagRef } from "../tags/contract";
import type { PhaseRecord, Revision, TrackerConfig, TrackerLog, TrackerWire } from "./contract";
import type { StoredTracker, TrackerKind } from "./core-types";
import { revisionData } from "./revisions";

export interface TrackerRow {
  id: string;
  user_id: string;
  kind: TrackerKind;
  name: string;
  enabled: number;
  config: string;
  target: string;
  notifications: number;
  secrets: string;
  schedule_anchor: number;
  last_ran_at: number | null;
  /** Due time (not start) of the latest scheduled run, retries and manual runs excluded: the tier gap floor. */
  last_scheduled_at: number | null;
  failure_streak: number;
  failing_notified: number;
  created_at: number;
  updated_at: number;
}

export interface RevisionRow {
  id: string;
  tracker_id: string;
  created_at: number;
  size: number;
  data: Uint8Array;
}

export interface LogRow {
  id: string;
  tracker_id: string;
  started_at: number;
  finished_at: number;
  duration_ms: number;
  status: "success" | "failure";
  is_manual: number;
  retry_attempt: number | null;
  has_changes: number | null;
  revision_size: number | null;
  error: string | null;
  phases: string;
}

// ---- rows → stored trackers and wire objects ----

/** A tracker row with its JSON columns parsed. `target` is in its stored (echoed) form, the kind's. */
export function toStoredTracker<Target>(row: TrackerRow): StoredTracker<Target> {
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

/** What the API shows of a tracker besides its row: tags, stored revisions, and the scheduler's and run lanes' state. */
export interface TrackerLive {
  tags: TagRef[];
  revisionCount: number;
  /** Next planned run (unix s) while scheduled. */
  scheduledAt?: number;
  running: boolean;
}

/** The API's tracker (§15.1, §16.1). */
export function toTrackerWire<Target>(row: TrackerRow, live: TrackerLive): TrackerWire<Target> {
  const t = toStoredTracker<Target>(row);
  return {
    id: t.id,
    name: t.name,
    enabled: t.enabled,
    config: t.config,
    target: t.target,
    notifications: t.notifications,
    secrets: t.secrets,
    tags: live.tags,
    tagIds: live.tags.map((r) => r.id),
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    ...(live.scheduledAt !== undefined ? { scheduledAt: live.scheduledAt } : {}),
    ...(t.lastRanAt !== undefined ? { lastRanAt: t.lastRanAt } : {}),
    revisionCount: live.revisionCount,
    running: live.running,
  };
}

/** The API's execution log (§17.2). */
export function toTrackerLog(r: LogRow): TrackerLog {
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

/** The API's revision (§17.1), without its diff (the core adds it from the next older revision). */
export const toRevision = (r: RevisionRow): Revision => ({
  id: r.id,
  trackerId: r.tracker_id,
  createdAt: r.created_at,
  size: r.size,
  data: revisionData(r.data),
});

const COLUMNS =
  "e.id, e.user_id, e.kind, e.name, e.enabled, e.config, e.target, e.notifications, e.secrets, e.schedule_anchor, e.last_ran_at, e.last_scheduled_at, e.failure_streak, e.failing_notified, e.created_at, e.updated_at";

/** Releases the run claim when this instance (the first two parameters) holds it. */
const RELEASE =
  "claimed_until = CASE WHEN claimed_by = ? THEN NULL ELSE claimed_until END, claimed_by = CASE WHEN claimed_by = ? THEN NULL ELSE claimed_by END";

const LOG_COLUMNS =
  "id, tracker_id, started_at, finished_at, duration_ms, status, is_manual, retry_attempt, has_changes, revision_size, error, phases";

/** Fields a create or update writes. */
export interface TrackerWrite {
  name: string;
  enabled: boolean;
  config: string;
  target: string;
  notifications: boolean;
  secrets: string;
}

export const trackersStore = {
  list: (db: Db, userId: string, kind: TrackerKind, query: ListQuery) =>
    listPage<TrackerRow>(db, userId, query, {
      table: "trackers",
      entityType: kind === "api" ? "apiTracker" : "pageTracker",
      filter: { sql: "e.kind = ?", params: [kind] },
      columns: COLUMNS,
    }),

  get: (db: Db, userId: string, kind: TrackerKind, id: string) =>
    db.get<TrackerRow>(`SELECT ${COLUMNS} FROM trackers e WHERE e.user_id = ? AND e.kind = ? AND e.id = ?`, [userId, kind, id]),

  byId: (db: Db, id: string) => db.get<TrackerRow>(`SELECT ${COLUMNS} FROM trackers e WHERE e.id = ?`, [id]),

  /** Every tracker of a kind the user owns, name order (logs summary). */
  idsOfUser: (db: Db, userId: string, kind?: TrackerKind) =>
    kind === undefined
      ? db.all<{ id: string }>("SELECT id FROM trackers WHERE user_id = ?", [userId])
      : db.all<{ id: string }>("SELECT id FROM trackers WHERE user_id = ? AND kind = ? ORDER BY lower(name), id", [userId, kind]),

  /** The user's count of a kind, under a lock held until the transaction ends (limit checks: see api-keys). */
  async count(db: Db, userId: string, kind: TrackerKind): Promise<number> {
    await db.lock(`count:trackers:${kind}:${userId}`);
    return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM trackers WHERE user_id = ? AND kind = ?", [userId, kind]))?.n ?? 0;
  },

  async nameTaken(db: Db, userId: string, kind: TrackerKind, name: string, exceptId?: string): Promise<boolean> {
    const row = await db.get("SELECT id FROM trackers WHERE user_id = ? AND kind = ? AND name = ? AND id <> ?", [userId, kind, name, exceptId ?? ""]);
    return row !== undefined;
  },

  insert: (db: Db, r: { id: string; userId: string; kind: TrackerKind; now: number } & TrackerWrite) =>
    db.run(
      `INSERT INTO trackers (id, user_id, kind, name, enabled, config, target, notifications, secrets, schedule_anchor, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [r.id, r.userId, r.kind, r.name, r.enabled ? 1 : 0, r.config, r.target, r.notifications ? 1 : 0, r.secrets, r.now, r.now, r.now],
    ),

  update: (db: Db, userId: string, id: string, w: TrackerWrite & { scheduleAnchor: number; now: number }) =>
    db.run(
      `UPDATE trackers SET name = ?, enabled = ?, config = ?, target = ?, notifications = ?, secrets = ?, schedule_anchor = ?, updated_at = ?
       WHERE user_id = ? AND id = ?`,
      [w.name, w.enabled ? 1 : 0, w.config, w.target, w.notifications ? 1 : 0, w.secrets, w.scheduleAnchor, w.now, userId, id],
    ),

  /** Deletes the tracker; its revisions go with it (cascade) and their bytes back to the user's counter. */
  async delete(db: Db, userId: string, kind: TrackerKind, id: string): Promise<{ changes: number }> {
    const held = await db.get<{ n: number | null }>(
      "SELECT SUM(v.size) AS n FROM tracker_revisions v JOIN trackers t ON t.id = v.tracker_id WHERE t.id = ? AND t.user_id = ? AND t.kind = ?",
      [id, userId, kind],
    );
    const res = await db.run("DELETE FROM trackers WHERE user_id = ? AND kind = ? AND id = ?", [userId, kind, id]);
    if (res.changes > 0) await storageUsage.adjust(db, userId, "revisions", -Number(held?.n ?? 0));
    return res;
  },

  /** Bytes of the user's stored revisions (the storage recount). */
  revisionBytesOfUser: async (db: Db, userId: string) =>
    Number(
      (
        await db.get<{ n: number | null }>(
          "SELECT SUM(v.size) AS n FROM tracker_revisions v JOIN trackers t ON t.id = v.tracker_id WHERE t.user_id = ?",
          [userId],
        )
      )?.n ?? 0,
    ),

  /** Enabled trackers (scheduler start); the caller keeps those with a job. */
  enabled: (db: Db) => db.all<TrackerRow>(`SELECT ${COLUMNS} FROM trackers e WHERE e.enabled = 1`),

  /** Trackers of the user whose selector may name the secret (the caller re-checks the parsed selector). */
  withSecret: (db: Db, userId: string, secretId: string) =>
    db.all<{ id: string; secrets: string }>("SELECT id, secrets FROM trackers WHERE user_id = ? AND secrets LIKE ?", [userId, `%${secretId}%`]),

  setSecrets: (db: Db, id: string, secrets: string) => db.run("UPDATE trackers SET secrets = ? WHERE id = ?", [secrets, id]),

  /**
   * Claims the tracker for one run by this instance until `untilMs` (wall clock): false while another live instance
   * holds an unexpired claim, or — for a scheduled run (`scheduledAt`, its due time) — when that due time or a later
   * one has already run. One tracker never runs twice at once on any instance, and a due time runs once.
   */
  async claimRun(db: Db, id: string, untilMs: number, scheduledAt?: number, nowMs = Date.now()): Promise<boolean> {
    const dead = deadInstance(db, "claimed_by", nowMs);
    const due = scheduledAt === undefined ? "" : " AND (last_scheduled_at IS NULL OR last_scheduled_at < ?)";
    const { changes } = await db.run(
      `UPDATE trackers SET claimed_by = ?, claimed_until = ?
       WHERE id = ? AND (claimed_by IS NULL OR claimed_until < ? OR ${dead.sql})${due}`,
      [db.instanceId, untilMs, id, nowMs, ...dead.params, ...(scheduledAt === undefined ? [] : [scheduledAt])],
    );
    return changes === 1;
  },

  /** Gives up this instance's claim (a run that ended before recordRun). */
  releaseRun: (db: Db, id: string) =>
    db.run("UPDATE trackers SET claimed_by = NULL, claimed_until = NULL WHERE id = ? AND claimed_by = ?", [id, db.instanceId]),

  /** End of a run: its start, for a scheduled run (not a retry) its due time, and the run claim released. 0 changes =
   *  the tracker is gone. */
  recordRun: (db: Db, id: string, lastRanAt: number, scheduledAt?: number) =>
    db.run(`UPDATE trackers SET last_ran_at = ?${scheduledAt === undefined ? "" : ", last_scheduled_at = ?"}, ${RELEASE} WHERE id = ?`, [
      lastRanAt,
      ...(scheduledAt === undefined ? [] : [scheduledAt]),
      db.instanceId,
      db.instanceId,
      id,
    ]),

  setStreak: (db: Db, id: string, streak: number, notified: boolean) =>
    db.run("UPDATE trackers SET failure_streak = ?, failing_notified = ? WHERE id = ?", [streak, notified ? 1 : 0, id]),

  // ---- revisions ----

  revisions: (db: Db, trackerId: string) =>
    db.all<RevisionRow>(
      "SELECT id, tracker_id, created_at, size, data FROM tracker_revisions WHERE tracker_id = ? ORDER BY created_at DESC, id DESC",
      [trackerId],
    ),

  newestRevision: (db: Db, trackerId: string) =>
    db.get<RevisionRow>(
      "SELECT id, tracker_id, created_at, size, data FROM tracker_revisions WHERE tracker_id = ? ORDER BY created_at DESC, id DESC LIMIT 1",
      [trackerId],
    ),

  /** Inserts a revision; its bytes are the caller's to count (StorageQuota, before). */
  insertRevision: (db: Db, r: RevisionRow) =>
    db.run("INSERT INTO tracker_revisions (id, tracker_id, created_at, size, data) VALUES (?, ?, ?, ?, ?)", [
      r.id,
      r.tracker_id,
      r.created_at,
      r.size,
      r.data,
    ]),

  /** Keeps the `keep` newest revisions of a tracker of `userId`; returns the bytes freed (given back to the user). */
  async trimRevisions(db: Db, userId: string, trackerId: string, keep: number): Promise<number> {
    const rows = await db.all<{ size: number }>(
      `DELETE FROM tracker_revisions WHERE tracker_id = ? AND id NOT IN
         (SELECT id FROM tracker_revisions WHERE tracker_id = ? ORDER BY created_at DESC, id DESC LIMIT ?) RETURNING size`,
      [trackerId, trackerId, Math.max(0, keep)],
    );
    const bytes = rows.reduce((n, r) => n + Number(r.size), 0);
    await storageUsage.adjust(db, userId, "revisions", -bytes);
    return bytes;
  },

  /** Deletes every revision of a tracker of `userId`; returns the bytes freed (given back to the user). */
  async clearRevisions(db: Db, userId: string, trackerId: string): Promise<number> {
    const rows = await db.all<{ size: number }>("DELETE FROM tracker_revisions WHERE tracker_id = ? RETURNING size", [trackerId]);
    const bytes = rows.reduce((n, r) => n + Number(r.size), 0);
    await storageUsage.adjust(db, userId, "revisions", -bytes);
    return bytes;
  },

  /** Revisions stored per tracker (trackers without any are absent). */
  revisionCounts: (db: Db, trackerIds: string[]) =>
    trackerIds.length === 0
      ? Promise.resolve([])
      : db.all<{ tracker_id: string; n: number }>(
          `SELECT tracker_id, COUNT(*) AS n FROM tracker_revisions WHERE tracker_id IN (${placeholders(trackerIds.length)}) GROUP BY tracker_id`,
          trackerIds,
        ),

  // ---- logs ----

  logs: (db: Db, trackerId: string, limit: number) =>
    db.all<LogRow>(`SELECT ${LOG_COLUMNS} FROM tracker_logs WHERE tracker_id = ? ORDER BY started_at DESC, id DESC LIMIT ?`, [trackerId, limit]),

  insertLog: (db: Db, r: LogRow) =>
    db.run(`INSERT INTO tracker_logs (${LOG_COLUMNS}) VALUES (${placeholders(12)})`, [
      r.id,
      r.tracker_id,
      r.started_at,
      r.finished_at,
      r.duration_ms,
      r.status,
      r.is_manual,
      r.retry_attempt,
      r.has_changes,
      r.revision_size,
      r.error,
      r.phases,
    ]),

  trimLogs: (db: Db, trackerId: string, keep: number) =>
    db.run(
      `DELETE FROM tracker_logs WHERE tracker_id = ? AND id NOT IN
         (SELECT id FROM tracker_logs WHERE tracker_id = ? ORDER BY started_at DESC, id DESC LIMIT ?)`,
      [trackerId, trackerId, keep],
    ),

  clearLogs: (db: Db, trackerId: string) => db.run("DELETE FROM tracker_logs WHERE tracker_id = ?", [trackerId]),

  /** The `perTracker` newest logs of every tracker of a kind the user owns. */
  logsSummary: (db: Db, userId: string, kind: TrackerKind, perTracker: number) =>
    db.all<LogRow>(
      `SELECT ${LOG_COLUMNS} FROM (
         SELECT l.*, ROW_NUMBER() OVER (PARTITION BY l.tracker_id ORDER BY l.started_at DESC, l.id DESC) AS rn
         FROM tracker_logs l JOIN trackers t ON t.id = l.tracker_id
         WHERE t.user_id = ? AND t.kind = ?
       ) ranked WHERE rn <= ? ORDER BY tracker_id, started_at DESC, id DESC`,
      [userId, kind, perTracker],
    ),

  // ---- user data (export, import, clone) ----

  allOfUser: (db: Db, userId: string, kind: TrackerKind) =>
    db.all<TrackerRow>(`SELECT ${COLUMNS} FROM trackers e WHERE e.user_id = ? AND e.kind = ? ORDER BY e.name, e.id`, [userId, kind]),

  refs: (db: Db, userId: string, kind: TrackerKind) =>
    db.all<{ id: string; name: string }>("SELECT id, name FROM trackers WHERE user_id = ? AND kind = ?", [userId, kind]),

  /** Up to `limit` revisions, newest first, older than `before` when given (keyset paging of an export). */
  revisionsPage: (db: Db, trackerId: string, before: { createdAt: number; id: string } | undefined, limit: number) =>
    before === undefined
      ? db.all<RevisionRow>(
          "SELECT id, tracker_id, created_at, size, data FROM tracker_revisions WHERE tracker_id = ? ORDER BY created_at DESC, id DESC LIMIT ?",
          [trackerId, limit],
        )
      : db.all<RevisionRow>(
          `SELECT id, tracker_id, created_at, size, data FROM tracker_revisions
           WHERE tracker_id = ? AND (created_at < ? OR (created_at = ? AND id < ?)) ORDER BY created_at DESC, id DESC LIMIT ?`,
          [trackerId, before.createdAt, before.createdAt, before.id, limit],
        ),

  /** An imported tracker keeps the creation and update times of its file. */
  setTimes: (db: Db, id: string, createdAt: number, updatedAt: number) =>
    db.run("UPDATE trackers SET created_at = ?, updated_at = ? WHERE id = ?", [createdAt, updatedAt, id]),
};
