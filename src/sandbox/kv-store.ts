// SQL of Secbox.kv (supplement §11.8); tables in migrations/0006_kv.sql. Only through the async Db interface.
// Live = expires_at IS NULL OR expires_at > now.
import { placeholders, type Db } from "../platform/db/db";

export interface KvRow {
  key: string;
  value: string;
  size: number;
  created_at: number;
  expires_at: number | null;
}

export interface KvUsage {
  entries: number;
  bytes: number;
}

const LIVE = "(expires_at IS NULL OR expires_at > ?)";

export const kvStore = {
  /** The stored row, live or not. */
  row: (db: Db, owner: string, key: string) =>
    db.get<KvRow>("SELECT key, value, size, created_at, expires_at FROM kv_entries WHERE owner_id = ? AND key = ?", [owner, key]),

  liveRow: (db: Db, owner: string, key: string, now: number) =>
    db.get<KvRow>(`SELECT key, value, size, created_at, expires_at FROM kv_entries WHERE owner_id = ? AND key = ? AND ${LIVE}`, [owner, key, now]),

  async usage(db: Db, owner: string): Promise<KvUsage> {
    const r = await db.get<KvUsage>("SELECT entries, bytes FROM kv_usage WHERE owner_id = ?", [owner]);
    return r ?? { entries: 0, bytes: 0 };
  },

  adjustUsage: (db: Db, owner: string, dEntries: number, dBytes: number) =>
    db.run(
      "INSERT INTO kv_usage (owner_id, entries, bytes) VALUES (?, ?, ?) ON CONFLICT (owner_id) DO UPDATE SET entries = kv_usage.entries + excluded.entries, bytes = kv_usage.bytes + excluded.bytes",
      [owner, dEntries, dBytes],
    ),

  insert: (db: Db, owner: string, key: string, value: string, size: number, createdAt: number, expiresAt: number | null) =>
    db.run("INSERT INTO kv_entries (owner_id, key, value, size, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)", [
      owner,
      key,
      value,
      size,
      createdAt,
      expiresAt,
    ]),

  update: (db: Db, owner: string, key: string, value: string, size: number, createdAt: number, expiresAt: number | null) =>
    db.run("UPDATE kv_entries SET value = ?, size = ?, created_at = ?, expires_at = ? WHERE owner_id = ? AND key = ?", [
      value,
      size,
      createdAt,
      expiresAt,
      owner,
      key,
    ]),

  remove: (db: Db, owner: string, key: string) => db.run("DELETE FROM kv_entries WHERE owner_id = ? AND key = ?", [owner, key]),

  /** Live entries with `lower <= key < upper` (bounds optional) and `key > after`, by key, at most `limit`. */
  list(db: Db, owner: string, q: { lower?: string; upper?: string; after?: string; limit: number; now: number }) {
    const where = ["owner_id = ?", LIVE];
    const params: (string | number)[] = [owner, q.now];
    if (q.lower !== undefined && q.lower !== "") {
      where.push("key >= ?");
      params.push(q.lower);
    }
    if (q.upper !== undefined) {
      where.push("key < ?");
      params.push(q.upper);
    }
    if (q.after !== undefined) {
      where.push("key > ?");
      params.push(q.after);
    }
    params.push(q.limit);
    return db.all<KvRow>(`SELECT key, value, size, created_at, expires_at FROM kv_entries WHERE ${where.join(" AND ")} ORDER BY key LIMIT ?`, params);
  },

  /** Totals of one owner's expired rows. */
  expiredTotals: (db: Db, owner: string, now: number) =>
    db.get<{ n: number; bytes: number | null }>(
      "SELECT COUNT(*) AS n, SUM(size) AS bytes FROM kv_entries WHERE owner_id = ? AND expires_at IS NOT NULL AND expires_at <= ?",
      [owner, now],
    ),

  removeExpired: (db: Db, owner: string, now: number) =>
    db.run("DELETE FROM kv_entries WHERE owner_id = ? AND expires_at IS NOT NULL AND expires_at <= ?", [owner, now]),

  /** Per-owner totals of every expired row (the 5-minute sweep). */
  expiredByOwner: (db: Db, now: number) =>
    db.all<{ owner_id: string; n: number; bytes: number }>(
      "SELECT owner_id, COUNT(*) AS n, SUM(size) AS bytes FROM kv_entries WHERE expires_at IS NOT NULL AND expires_at <= ? GROUP BY owner_id",
      [now],
    ),

  /** Deletes an owner's entries; returns the bytes they held. */
  async removeOwner(db: Db, owner: string): Promise<number> {
    const rows = await db.all<{ size: number }>("DELETE FROM kv_entries WHERE owner_id = ? RETURNING size", [owner]);
    await db.run("DELETE FROM kv_usage WHERE owner_id = ?", [owner]);
    return rows.reduce((n, r) => n + Number(r.size), 0);
  },

  /** Bytes stored by the given owners (a user's responders: the storage recount). */
  bytesOfOwners: async (db: Db, owners: string[]): Promise<number> => {
    let n = 0;
    for (let i = 0; i < owners.length; i += 500) {
      const part = owners.slice(i, i + 500);
      const r = await db.get<{ n: number | null }>(`SELECT SUM(size) AS n FROM kv_entries WHERE owner_id IN (${placeholders(part.length)})`, part);
      n += Number(r?.n ?? 0);
    }
    return n;
  },
};
