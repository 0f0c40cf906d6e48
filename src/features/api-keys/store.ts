// SQL for API keys, and a key row → the wire `UserApiKey` (contract.ts; never the token hash).
import type { Db } from "../../platform/db/db";
import type { UserApiKey } from "./contract";

export interface ApiKeyRow {
  id: string;
  user_id: string;
  name: string;
  token_hash: string;
  created_at: number;
  updated_at: number;
  expires_at: number | null;
  last_used_at: number | null;
}

export const toUserApiKey = (row: ApiKeyRow): UserApiKey => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  expiresAt: row.expires_at,
  lastUsedAt: row.last_used_at,
});

export const apiKeysStore = {
  byHash: (db: Db, hash: string) => db.get<ApiKeyRow>("SELECT * FROM api_keys WHERE token_hash = ?", [hash]),
  touch: (db: Db, id: string, now: number) => db.run("UPDATE api_keys SET last_used_at = ? WHERE id = ?", [now, id]),

  /** The user's keys, name ascending ignoring case, ties by id. */
  list: (db: Db, userId: string) => db.all<ApiKeyRow>("SELECT * FROM api_keys WHERE user_id = ? ORDER BY LOWER(name), name, id", [userId]),
  byId: (db: Db, userId: string, id: string) => db.get<ApiKeyRow>("SELECT * FROM api_keys WHERE id = ? AND user_id = ?", [id, userId]),
  byName: (db: Db, userId: string, name: string) => db.get<{ id: string }>("SELECT id FROM api_keys WHERE user_id = ? AND name = ?", [userId, name]),
  /** The user's count, under a lock held until the transaction ends (creations racing on several instances cannot
   *  both pass a limit check). */
  async count(db: Db, userId: string): Promise<number> {
    await db.lock(`count:api_keys:${userId}`);
    return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?", [userId]))?.n ?? 0;
  },
  insert: (db: Db, k: { id: string; userId: string; name: string; tokenHash: string; now: number; expiresAt: number | null }) =>
    db.run(
      "INSERT INTO api_keys (id, user_id, name, token_hash, created_at, updated_at, expires_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",
      [k.id, k.userId, k.name, k.tokenHash, k.now, k.now, k.expiresAt],
    ),
  rename: (db: Db, userId: string, id: string, name: string, now: number) =>
    db.run("UPDATE api_keys SET name = ?, updated_at = ? WHERE id = ? AND user_id = ?", [name, now, id, userId]),
  /** New token hash and expiry; `last_used_at` starts over. */
  regenerate: (db: Db, userId: string, id: string, tokenHash: string, expiresAt: number | null, now: number) =>
    db.run("UPDATE api_keys SET token_hash = ?, expires_at = ?, last_used_at = NULL, updated_at = ? WHERE id = ? AND user_id = ?", [
      tokenHash,
      expiresAt,
      now,
      id,
      userId,
    ]),
  remove: (db: Db, userId: string, id: string) => db.run("DELETE FROM api_keys WHERE id = ? AND user_id = ?", [id, userId]),
};
