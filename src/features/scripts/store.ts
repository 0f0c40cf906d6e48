// SQL for user scripts (supplement §8), and rows → wire objects (contract.ts; their tags come from the tags
// service). `octet_length` (SQLite ≥ 3.43 and PostgreSQL) gives the size in bytes.
import { placeholders, type Db } from "../../platform/db/db";
import { listPage } from "../../platform/db/list";
import type { ListQuery } from "../../platform/http/list-query";
import type { TagRef, Untagged } from "../tags/contract";
import type { ScriptType, UserScript, UserScriptSummary } from "./contract";

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

const tagIdsOf = (tags: TagRef[]) => tags.map((t) => t.id);

/** A row as the wire shows it, with its tags (TagsService.tagsFor). */
export const toScript = (r: ScriptRow, tags: TagRef[]): UserScript => ({
  id: r.id,
  name: r.name,
  scriptType: r.script_type as ScriptType,
  content: r.content,
  tags,
  tagIds: tagIdsOf(tags),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** A list row as the wire shows it (size instead of content), with its tags. */
export const toSummary = (r: ScriptSummaryRow, tags: TagRef[]): UserScriptSummary => ({
  id: r.id,
  name: r.name,
  scriptType: r.script_type as ScriptType,
  size: Number(r.size),
  tags,
  tagIds: tagIdsOf(tags),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

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
    db.run("UPDATE scripts SET name = ?, content = ?, updated_at = ? WHERE id = ? AND user_id = ?", [
      r.name,
      r.content,
      r.updated_at,
      r.id,
      r.user_id,
    ]),

  delete: (db: Db, userId: string, id: string) => db.run("DELETE FROM scripts WHERE id = ? AND user_id = ?", [id, userId]),

  /** One page of summary rows (no content), optionally restricted to some script types. */
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

  /** Every script of the user with its content, name ascending, as the wire shows it without tags. */
  async allOfUser(db: Db, userId: string): Promise<Untagged<UserScript>[]> {
    const rows = await db.all<ScriptRow>("SELECT * FROM scripts WHERE user_id = ? ORDER BY name, id", [userId]);
    return rows.map((r) => {
      const { tags: _tags, tagIds: _tagIds, ...rest } = toScript(r, []);
      return rest;
    });
  },
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
