// Per-user storage cap (supplement §28, tier key `max_storage_bytes`) and the free-disk guard (disk.ts): the one
// service every feature that stores user data in bulk goes through. Counted kinds: Secbox.kv (sandbox/kv.ts),
// responder history (responders/capture.ts, transfer.ts), tracker revisions (trackers/runs.ts, transfer.ts) and
// interactions (a later feature: it calls tryAdd/add with kind "interactions" and adjusts on its deletes, and
// registers a counter for the recount, exactly as the others do).
//
// How the count stays exact and cheap:
// - storage_usage holds one row per user (bytes per kind). Every transaction that adds, trims or deletes counted rows
//   changes it in the same transaction: adds through tryAdd/add (an atomic `INSERT … ON CONFLICT DO UPDATE … WHERE
//   total + bytes <= cap`: nothing is written beyond the cap, also with several instances writing at once), frees
//   through storageUsage.adjust in the store that deletes the rows (DELETE … RETURNING size: exactly what went).
// - lock(tx, user) first: on PostgreSQL an advisory lock per user, held to the end of the transaction, so what a
//   writer computes from the user's rows (what a trim will free) stays true until it commits. Every counted writer
//   takes it before any other lock of those rows (KV takes its per-owner lock after it). SQLite has one writer.
// - A user's cap is read from the tier (cached 5 s: an operator's tier change applies within that).
// - Backstop: recount() sums the tables for a user (counters registered per kind) and corrects the row, logging
//   any drift; every instance runs it over all users once a day, one user per transaction.
import { insufficientStorage, limitReached } from "../core/errors";
import type { Db } from "../db/db";
import type { Logger } from "../log";
import { DiskGuard, type FreeSpaceReader } from "./disk";
import { STORAGE_KINDS, storageUsage, type StorageKind, type StorageUsage } from "./usage-store";

export { STORAGE_KINDS, storageUsage, type StorageKind, type StorageUsage } from "./usage-store";
export { DiskGuard, type FreeSpaceReader } from "./disk";

/** A user's cap and the tier it comes from (for messages). */
export interface StorageLimit {
  tier: string;
  maxBytes: number;
}

/** Sums one kind's stored bytes of a user from the tables (the recount). */
export type StorageCounter = (db: Db, userId: string) => Promise<number>;

const LIMIT_TTL_MS = 5000;
const RECOUNT_EVERY_MS = 24 * 3600 * 1000;
const KIND_TEXT: Record<StorageKind, string> = {
  kv: "Secbox.kv data",
  history: "responder history",
  revisions: "tracker revisions",
  interactions: "interactions",
};

export interface StorageQuotaOptions {
  db: Db;
  log: Logger;
  /** The user's cap: tier `max_storage_bytes`; undefined for an unknown user. Reads through `db` (inside a
   *  transaction: its own connection, never a second one from the pool). */
  limitOf: (userId: string, db: Db) => Promise<StorageLimit | undefined>;
  /** Data directory watched by the free-disk guard (null on PostgreSQL). */
  diskDir: string | null;
  minFreeDiskMib: number;
  /** Test seam: the free-space reading (default statfs). */
  readFree?: FreeSpaceReader;
}

export class StorageQuota {
  readonly disk: DiskGuard;
  private readonly db: Db;
  private readonly log: Logger;
  private readonly limits = new Map<string, { limit: StorageLimit | undefined; at: number }>();
  private readonly counters = new Map<StorageKind, StorageCounter>();
  private recountTimer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly opts: StorageQuotaOptions) {
    this.db = opts.db;
    this.log = opts.log;
    this.disk = new DiskGuard({
      dir: opts.diskDir,
      minFreeMib: opts.minFreeDiskMib,
      log: opts.log,
      ...(opts.readFree ? { read: opts.readFree } : {}),
    });
  }

  async start(): Promise<void> {
    await this.disk.start();
    if (this.recountTimer) return;
    this.recountTimer = setInterval(
      () => void this.recountAll().catch((err) => this.log.error("storage: recount failed", { error: String(err) })),
      RECOUNT_EVERY_MS,
    );
    this.recountTimer.unref?.();
  }

  stop(): void {
    this.disk.stop();
    if (this.recountTimer) clearInterval(this.recountTimer);
    this.recountTimer = undefined;
  }

  // ---- the free-disk guard ----

  /** Writes that add data are refused now (free space below `server.min_free_disk_mib`). */
  get diskLow(): boolean {
    return this.disk.low;
  }

  /** 507 INSUFFICIENT_STORAGE while the disk is low (API writes that add data). */
  assertDisk(): void {
    if (this.disk.low) throw insufficientStorage();
  }

  // ---- the cap ----

  /** The user's cap (cached 5 s); read through `db` (pass the transaction when inside one). */
  async limit(userId: string, db: Db = this.db): Promise<StorageLimit | undefined> {
    const now = Date.now();
    const hit = this.limits.get(userId);
    if (hit && now - hit.at < LIMIT_TTL_MS) return hit.limit;
    const limit = await this.opts.limitOf(userId, db);
    if (this.limits.size > 10_000) this.limits.clear();
    this.limits.set(userId, { limit, at: now });
    return limit;
  }

  /** Serializes the user's counted writes to the end of `tx` (PostgreSQL; SQLite has one writer). Take it first. */
  lock(tx: Db, userId: string): Promise<void> {
    return tx.lock(`storage:${userId}`);
  }

  /** Adds `bytes` of `kind` to the user's usage in `tx` when the total stays within the cap: false (nothing
   *  changed) when it would not, or the user is unknown. `bytes` ≤ 0 gives bytes back and is never refused. */
  async tryAdd(tx: Db, userId: string, kind: StorageKind, bytes: number): Promise<boolean> {
    if (bytes <= 0) {
      await storageUsage.adjust(tx, userId, kind, bytes);
      return true;
    }
    const limit = await this.limit(userId, tx);
    if (!limit) return false;
    return storageUsage.tryAdd(tx, userId, kind, bytes, limit.maxBytes);
  }

  /** tryAdd for API writes: beyond the cap → 400 LIMIT_REACHED naming the limit. */
  async add(tx: Db, userId: string, kind: StorageKind, bytes: number): Promise<void> {
    if (await this.tryAdd(tx, userId, kind, bytes)) return;
    throw limitReached(await this.limitMessage(tx, userId, kind, bytes));
  }

  /** Adds without the cap (an operator's clone keeps everything of its source, like its other limits). */
  async force(tx: Db, userId: string, kind: StorageKind, bytes: number): Promise<void> {
    await storageUsage.force(tx, userId, kind, bytes);
  }

  /** The text of a refusal: which limit, how much is in use. */
  async limitMessage(db: Db, userId: string, kind: StorageKind, bytes: number): Promise<string> {
    const limit = await this.limit(userId, db);
    const used = (await storageUsage.get(db, userId)).total;
    return `storage: ${bytes} more bytes of ${KIND_TEXT[kind]} would exceed max_storage_bytes (${limit?.maxBytes ?? 0} bytes per user on the ${limit?.tier ?? "current"} tier; ${used} in use)`;
  }

  usage(userId: string, db: Db = this.db): Promise<StorageUsage> {
    return storageUsage.get(db, userId);
  }

  // ---- the recount (backstop) ----

  /** Registers how a kind's bytes of a user are summed from the tables. */
  counter(kind: StorageKind, fn: StorageCounter): void {
    this.counters.set(kind, fn);
  }

  /** Recounts one user under the user's lock and corrects the counters; returns the corrections made. */
  async recount(userId: string): Promise<{ kind: StorageKind; counted: number; recounted: number }[]> {
    return this.db.tx(async (tx) => {
      await this.lock(tx, userId);
      const current = await storageUsage.get(tx, userId);
      const fixes: { kind: StorageKind; counted: number; recounted: number }[] = [];
      for (const kind of STORAGE_KINDS) {
        const count = this.counters.get(kind);
        if (!count) continue;
        const recounted = Number(await count(tx, userId));
        if (recounted !== current[kind]) {
          await storageUsage.set(tx, userId, kind, recounted);
          fixes.push({ kind, counted: current[kind], recounted });
        }
      }
      return fixes;
    });
  }

  /** Recounts every user (one transaction each, yielding in between); returns the number of corrected counters. */
  async recountAll(): Promise<number> {
    let fixed = 0;
    for (const { user_id } of await storageUsage.userIds(this.db)) {
      const fixes = await this.recount(user_id);
      for (const f of fixes)
        this.log.warn("storage: usage counter corrected by the recount", {
          userId: user_id,
          kind: f.kind,
          counted: f.counted,
          recounted: f.recounted,
        });
      fixed += fixes.length;
      await new Promise<void>((r) => setImmediate(r));
    }
    return fixed;
  }
}
