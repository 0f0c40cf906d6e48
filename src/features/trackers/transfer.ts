// Trackers in user data export, import and clone (supplement §19; features/user-data drives them): the export
// shape, revisions paged out newest first, and the writes of an import, all inside the import's transaction.
// Scheduling follows the commit (done()), since the scheduler is in-memory state of this process.
import type { Db } from "../../platform/db/db";
import { invalid, notFound } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import { nowSec, type Runtime } from "../../platform/runtime";
import type { SecretsSelector } from "../secrets/contract";
import { selectorToText, type ParsedSelector } from "../secrets/service";
import type { TagsService } from "../tags/service";
import type { TrackerCore, TrackerWire } from "./core";
import type { TrackerConfig } from "./contract";
import { MAX_REVISION_BYTES } from "./revisions";
import type { TrackerKind } from "./core-types";
import { trackersStore as store, toStoredTracker } from "./store";

/** A tracker in an export file (§19.2): the API shape without tags, scheduledAt, lastRanAt and the run state. */
export type TrackerExport<Target = unknown> = Omit<
  TrackerWire<Target>,
  "tags" | "tagIds" | "scheduledAt" | "lastRanAt" | "revisionCount" | "running"
>;

/** An imported tracker after the create rules; `secrets` still names the file's secrets. */
export interface TrackerDraft<Target = unknown> {
  name: string;
  enabled: boolean;
  config: TrackerConfig;
  target: Target;
  notifications: boolean;
  secrets: ParsedSelector;
}

/** A revision to restore: its original creation time and stored bytes. */
export interface RevisionInput {
  createdAt: number;
  data: Uint8Array;
}

const tagTypeOf = (kind: TrackerKind) => (kind === "api" ? "apiTracker" : "pageTracker");

export class TrackerTransfer {
  constructor(
    private readonly rt: Runtime,
    private readonly core: TrackerCore,
    private readonly tags: TagsService,
  ) {}

  /** Every tracker of a kind the user owns, name ascending. */
  async exportAll(userId: string, kind: TrackerKind): Promise<TrackerExport[]> {
    return (await store.allOfUser(this.rt.db, userId, kind)).map((row) => {
      const { userId: _user, kind: _kind, lastRanAt: _lastRanAt, ...exported } = toStoredTracker(row);
      return exported;
    });
  }

  /** Up to `limit` revisions of a tracker, newest first, older than `before` (keyset paging). */
  async revisionsPage(trackerId: string, before: { createdAt: number; id: string } | undefined, limit: number) {
    return store.revisionsPage(this.rt.db, trackerId, before, limit);
  }

  /** Every revision of a tracker, newest first (clone). */
  async revisionRows(db: Db, trackerId: string): Promise<RevisionInput[]> {
    return (await store.revisions(db, trackerId)).map((r) => ({ createdAt: r.created_at, data: r.data }));
  }

  /** A revision of a file: `{createdAt, body}` with body the base64 of at most 1,048,576 bytes (decoded by the caller). */
  checkRevision(createdAt: unknown, data: Uint8Array | undefined, field: string): RevisionInput {
    if (typeof createdAt !== "number" || !Number.isInteger(createdAt) || createdAt < 0 || createdAt > 253_402_300_799)
      throw invalid(`${field}.createdAt: must be a unix timestamp`);
    if (!data) throw invalid(`${field}.body: must be standard base64`);
    if (data.byteLength > MAX_REVISION_BYTES) throw invalid(`${field}.body: must be at most ${MAX_REVISION_BYTES} bytes`);
    return { createdAt, data };
  }

  refs = (db: Db, userId: string, kind: TrackerKind) => store.refs(db, userId, kind);
  count = (db: Db, userId: string, kind: TrackerKind) => store.count(db, userId, kind);

  /** Inserts a checked tracker with `selector` (stored form). Its schedule starts at the next done(). */
  async insert(
    tx: Db,
    userId: string,
    kind: TrackerKind,
    id: string,
    d: TrackerDraft,
    selector: SecretsSelector,
    createdAt: number,
    updatedAt: number,
  ): Promise<void> {
    await store.insert(tx, {
      id,
      userId,
      kind,
      now: nowSec(this.rt.clock),
      name: d.name,
      enabled: d.enabled,
      config: JSON.stringify(d.config),
      target: JSON.stringify(d.target),
      notifications: d.notifications,
      secrets: selectorToText(selector),
    });
    if (createdAt !== updatedAt || createdAt !== nowSec(this.rt.clock)) await store.setTimes(tx, id, createdAt, updatedAt);
  }

  /** Replaces tracker `id` in place (id, creation time, logs and, unless the caller restores others, revisions kept;
   *  revisions beyond `keep` trimmed). Its schedule restarts at the next done(). */
  async replace(tx: Db, userId: string, kind: TrackerKind, id: string, d: TrackerDraft, selector: SecretsSelector, keep: number): Promise<void> {
    await this.core.storage.lock(tx, userId);
    const now = nowSec(this.rt.clock);
    const { changes } = await store.update(tx, userId, id, {
      name: d.name,
      enabled: d.enabled,
      config: JSON.stringify(d.config),
      target: JSON.stringify(d.target),
      notifications: d.notifications,
      secrets: selectorToText(selector),
      scheduleAnchor: now,
      now,
    });
    if (changes === 0 || !(await store.get(tx, userId, kind, id))) throw notFound("Tracker");
    await store.trimRevisions(tx, userId, id, keep);
  }

  /** Replaces the tracker's revisions with `revisions` (oldest first). Their bytes count against the user's
   *  max_storage_bytes (`capped`: beyond it 400 LIMIT_REACHED, and the import rolls back), or are only counted (an
   *  operator's clone). */
  async restoreRevisions(tx: Db, userId: string, trackerId: string, revisions: RevisionInput[], capped: boolean): Promise<void> {
    await this.core.storage.lock(tx, userId);
    await store.clearRevisions(tx, userId, trackerId);
    const bytes = revisions.reduce((n, r) => n + r.data.byteLength, 0);
    if (capped) await this.core.storage.add(tx, userId, "revisions", bytes);
    else await this.core.storage.force(tx, userId, "revisions", bytes);
    for (const r of revisions)
      await store.insertRevision(tx, { id: newId(), tracker_id: trackerId, created_at: r.createdAt, size: r.data.byteLength, data: r.data });
  }

  /** Deletes the tracker with its revisions and logs (cascade) and its tag links; unscheduled at done(). */
  async delete(tx: Db, userId: string, kind: TrackerKind, id: string): Promise<void> {
    await this.core.storage.lock(tx, userId);
    if ((await store.delete(tx, userId, kind, id)).changes === 0) return;
    await this.tags.removeEntity(tx, tagTypeOf(kind), id);
  }

  /** After the import committed: written trackers (re)scheduled from now, deleted ones unscheduled. */
  async done(userId: string, writtenIds: string[], deletedIds: string[]): Promise<void> {
    for (const id of deletedIds) this.core.scheduler.remove(id);
    this.core.scheduling.announce([...writtenIds, ...deletedIds]);
    if (writtenIds.length === 0) return;
    const limits = await this.core.limitsFor(userId);
    if (!limits) return;
    for (const id of writtenIds) {
      const row = await store.byId(this.rt.db, id);
      if (row) this.core.schedule(row, limits);
    }
  }
}
