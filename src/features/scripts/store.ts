// SQL for user scripts (supplement §8). `octet_length` (SQLite ≥ 3.43 and PostgreSQL) gives the size in bytes.
import { placeholders, type Db } from "../../platform/db/db";
import { listPage } from "../../platform/db/list";
import type { ListQuery } from "../../platform/http/list-query";

export interface ScriptRow {
  id: string;
  user_id: string;
  name: string;
  script_type: string;
  content: string;
  created_at: number;
  updated_at: number;
}

export type ScriptSummaryRow = Omit<ScriptRow, "content" | "user_id"> & { size: number };

export const scriptsStore = {
  get: (db: Db, userId: string, id: string) => db.get<ScriptRow>("SELECT * FROM scripts WHERE id = ? AND user_id = ?", [id, userId]),

  /** The user's count, under a lock held until the transaction ends (creations racing on several instances cannot
   *  both pass a limit check). */
  async count(db: Db, userId: string): Promise<number> {
    await db.lock(`count:scripts:${userId}`);
    return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM scripts WHERE user_id = ?", [userId]))?.n ?? 0;
  },

  insert: (db: Db, r: ScriptRow) =>
    db.run("INSERT INTO scripts (id, user_id, name, script_type, content, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)", [
      r.id,
      r.user_id,
      r.name,
      r.script_type,
      r.content,
      r.created_at,
      r.updated_at,
    ]),

  update: (db: Db, r: ScriptRow) =>
    db.run("UPDATE scripts SET name = ?, content = ?, updated_at = ? WHERE id = ? AND user_id = ?", [r.name, r.content, r.updated_at, r.id, r.user_id]),

  delete: (db: Db, userId: string, id: string) => db.run("DELETE FROM scripts WHERE id = ? AND user_id = ?", [id, userId]),

  /** One page of summaries (no content), optionally restricted to some script types. */
  list(db: Db, userId: string, query: ListQuery, types?: readonly string[]) {
    return listPage<ScriptSummaryRow>(db, userId, query, {
      table: "scripts",
      entityType: "script",
      columns: "e.id, e.name, e.script_type, e.created_at, e.updated_at, octet_length(e.content) AS size",
      extraSorts: { scriptType: "e.script_type" },
      filter: types ? { sql: `e.script_type IN (${placeholders(types.length)})`, params: [...types] } : undefined,
    });
  },

  // ---- user data (export, import, clone) ----

  allOfUser: (db: Db, userId: string) => db.all<ScriptRow>("SELECT * FROM scripts WHERE user_id = ? ORDER BY name, id", [userId]),
  refs: (db: Db, userId: string) => db.all<{ id: string; name: string }>("SELECT id, name FROM scripts WHERE user_id = ?", [userId]),

  /** Overwrite by an import: every member replaced, the type included. */
  replace: (db: Db, r: ScriptRow) =>
    db.run("UPDATE scripts SET name = ?, script_type = ?, content = ?, updated_at = ? WHERE id = ? AND user_id = ?", [
      r.name,
      r.script_type,
      r.content,
      r.updated_at,
      r.id,
      r.user_id,
    ]),

};
