// SQL for secrets; rows become wire metadata (contract.ts SecretMeta) here. Values are stored sealed (value_enc);
// metadata queries never select that column.
import type { Db } from "../../platform/db/db";
import { listPage } from "../../platform/db/list";
import type { ListQuery } from "../../platform/http/list-query";
import type { SecretMeta } from "./contract";

export interface SecretMetaRow {
  id: string;
  user_id: string;
  name: string;
  created_at: number;
  updated_at: number;
}

export interface SecretValueRow {
  id: string;
  name: string;
  value_enc: Uint8Array;
}

const META = "e.id, e.user_id, e.name, e.created_at, e.updated_at";

export const toSecretMeta = (r: SecretMetaRow): SecretMeta => ({ id: r.id, name: r.name, createdAt: r.created_at, updatedAt: r.updated_at });

export const secretsStore = {
  async list(db: Db, userId: string, query: ListQuery): Promise<{ items: SecretMeta[]; total: number }> {
    const { rows, total } = await listPage<SecretMetaRow>(db, userId, query, { table: "secrets", entityType: "secret", columns: META });
    return { items: rows.map(toSecretMeta), total };
  },

  get: (db: Db, userId: string, id: string) => db.get<SecretMetaRow>(`SELECT ${META} FROM secrets e WHERE e.user_id = ? AND e.id = ?`, [userId, id]),

  /** The user's count, under a lock held until the transaction ends (creations racing on several instances cannot
   *  both pass a limit check). */
  async count(db: Db, userId: string): Promise<number> {
    await db.lock(`count:secrets:${userId}`);
    return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM secrets WHERE user_id = ?", [userId]))?.n ?? 0;
  },

  async existsByName(db: Db, userId: string, name: string): Promise<boolean> {
    return (await db.get("SELECT 1 AS x FROM secrets WHERE user_id = ? AND name = ?", [userId, name])) !== undefined;
  },

  insert: (db: Db, r: SecretMetaRow & { value_enc: Uint8Array }) =>
    db.run("INSERT INTO secrets (id, user_id, name, value_enc, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)", [
      r.id,
      r.user_id,
      r.name,
      r.value_enc,
      r.created_at,
      r.updated_at,
    ]),

  setValue: (db: Db, userId: string, id: string, valueEnc: Uint8Array, now: number) =>
    db.run("UPDATE secrets SET value_enc = ?, updated_at = ? WHERE user_id = ? AND id = ?", [valueEnc, now, userId, id]),

  touch: (db: Db, userId: string, id: string, now: number) =>
    db.run("UPDATE secrets SET updated_at = ? WHERE user_id = ? AND id = ?", [now, userId, id]),

  delete: (db: Db, userId: string, id: string) => db.run("DELETE FROM secrets WHERE user_id = ? AND id = ?", [userId, id]),

  /** Id and name of every secret of the user (bounded by max_secrets). */
  refs: (db: Db, userId: string) => db.all<{ id: string; name: string }>("SELECT id, name FROM secrets WHERE user_id = ?", [userId]),

  /** Sealed values of all the user's secrets, name ascending. */
  values: (db: Db, userId: string) => db.all<SecretValueRow>("SELECT id, name, value_enc FROM secrets WHERE user_id = ? ORDER BY name, id", [userId]),

  // ---- user data (export, import, clone) ----

  /** Every secret of the user with its sealed value, name ascending. */
  allWithValues: (db: Db, userId: string) =>
    db.all<SecretMetaRow & { value_enc: Uint8Array }>(`SELECT ${META}, e.value_enc FROM secrets e WHERE e.user_id = ? ORDER BY e.name, e.id`, [
      userId,
    ]),
};
