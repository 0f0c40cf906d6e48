// SQL of storage_usage (migrations/0015_storage.sql): per user, the bytes stored per kind. Stores of the counted
// tables call `adjust` in the transaction that deletes or trims their rows (the bytes go back at once); writes that
// add bytes go through StorageQuota (quota.ts), which checks the user's cap. Only SQL both backends share.
import type { Db } from "../db/db";

export type StorageKind = "kv" | "history" | "revisions" | "interactions";
export const STORAGE_KINDS: readonly StorageKind[] = ["kv", "history", "revisions", "interactions"];

const COLUMN: Record<StorageKind, string> = {
  kv: "kv_bytes",
  history: "history_bytes",
  revisions: "revision_bytes",
  interactions: "interaction_bytes",
};
const TOTAL = "storage_usage.kv_bytes + storage_usage.history_bytes + storage_usage.revision_bytes + storage_usage.interaction_bytes";

export interface StorageUsage {
  kv: number;
  history: number;
  revisions: number;
  interactions: number;
  /** The sum of the four: what the cap applies to. */
  total: number;
}

interface UsageRow {
  kv_bytes: number;
  history_bytes: number;
  revision_bytes: number;
  interaction_bytes: number;
}

const toUsage = (r: UsageRow | undefined): StorageUsage => {
  const u = {
    kv: Number(r?.kv_bytes ?? 0),
    history: Number(r?.history_bytes ?? 0),
    revisions: Number(r?.revision_bytes ?? 0),
    interactions: Number(r?.interaction_bytes ?? 0),
  };
  return { ...u, total: u.kv + u.history + u.revisions + u.interactions };
};

export const storageUsage = {
  async get(db: Db, userId: string): Promise<StorageUsage> {
    return toUsage(
      await db.get<UsageRow>("SELECT kv_bytes, history_bytes, revision_bytes, interaction_bytes FROM storage_usage WHERE user_id = ?", [userId]),
    );
  },

  /**
   * Adds `bytes` (> 0) of `kind` when the user's total stays at most `limit`, in one statement (the row is created on
   * a user's first write): 1 change = added, 0 = refused (nothing changed). Atomic on both backends; under
   * PostgreSQL's READ COMMITTED a concurrent writer of the same row waits and then re-checks on the committed total.
   */
  async tryAdd(db: Db, userId: string, kind: StorageKind, bytes: number, limit: number): Promise<boolean> {
    if (bytes > limit) return false;
    const col = COLUMN[kind];
    const { changes } = await db.run(
      `INSERT INTO storage_usage (user_id, ${col}) VALUES (?, ?)
       ON CONFLICT (user_id) DO UPDATE SET ${col} = storage_usage.${col} + excluded.${col} WHERE ${TOTAL} + excluded.${col} <= ?`,
      [userId, bytes, limit],
    );
    return changes > 0;
  },

  /** An unconditional change (negative: bytes freed by a delete or trim). A user without a row is left alone (the
   *  recount corrects any drift). */
  adjust(db: Db, userId: string, kind: StorageKind, delta: number): Promise<{ changes: number }> {
    if (delta === 0) return Promise.resolve({ changes: 0 });
    const col = COLUMN[kind];
    return db.run(`UPDATE storage_usage SET ${col} = ${col} + ? WHERE user_id = ?`, [delta, userId]);
  },

  /** Adds without a cap (clones of an operator, corrections): creates the row when missing. */
  force: (db: Db, userId: string, kind: StorageKind, delta: number) =>
    db.run(
      `INSERT INTO storage_usage (user_id, ${COLUMN[kind]}) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET ${COLUMN[kind]} = storage_usage.${COLUMN[kind]} + excluded.${COLUMN[kind]}`,
      [userId, delta],
    ),

  /** Sets one counter (the recount). */
  set: (db: Db, userId: string, kind: StorageKind, bytes: number) =>
    db.run(
      `INSERT INTO storage_usage (user_id, ${COLUMN[kind]}) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET ${COLUMN[kind]} = excluded.${COLUMN[kind]}`,
      [userId, bytes],
    ),

  /** Every user with a counter row (each counted write creates it; the migration made one per user). */
  userIds: (db: Db) => db.all<{ user_id: string }>("SELECT user_id FROM storage_usage ORDER BY user_id"),
};
