// SQL for content security policies (supplement §13). Directives are stored as JSON text.
import type { Db } from "../../platform/db/db";
import { listPage } from "../../platform/db/list";
import type { ListQuery } from "../../platform/http/list-query";

export interface PolicyRow {
  id: string;
  user_id: string;
  name: string;
  directives: string;
  created_at: number;
  updated_at: number;
}

export const cspStore = {
  get: (db: Db, userId: string, id: string) => db.get<PolicyRow>("SELECT * FROM content_security_policies WHERE id = ? AND user_id = ?", [id, userId]),

  async ownerOf(db: Db, id: string): Promise<string | undefined> {
    return (await db.get<{ user_id: string }>("SELECT user_id FROM content_security_policies WHERE id = ?", [id]))?.user_id;
  },

  insert: (db: Db, r: PolicyRow) =>
    db.run("INSERT INTO content_security_policies (id, user_id, name, directives, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)", [
      r.id,
      r.user_id,
      r.name,
      r.directives,
      r.created_at,
      r.updated_at,
    ]),

  update: (db: Db, r: PolicyRow) =>
    db.run("UPDATE content_security_policies SET name = ?, directives = ?, updated_at = ? WHERE id = ? AND user_id = ?", [
      r.name,
      r.directives,
      r.updated_at,
      r.id,
      r.user_id,
    ]),

  delete: (db: Db, userId: string, id: string) => db.run("DELETE FROM content_security_policies WHERE id = ? AND user_id = ?", [id, userId]),

  list: (db: Db, userId: string, query: ListQuery) =>
    listPage<PolicyRow>(db, userId, query, { table: "content_security_policies", entityType: "contentSecurityPolicy" }),

  // ---- user data (export, import, clone) ----

  allOfUser: (db: Db, userId: string) => db.all<PolicyRow>("SELECT * FROM content_security_policies WHERE user_id = ? ORDER BY name, id", [userId]),
  refs: (db: Db, userId: string) => db.all<{ id: string; name: string }>("SELECT id, name FROM content_security_policies WHERE user_id = ?", [userId]),
  /** The user's count, under a lock held until the transaction ends (limit checks). */
  count: async (db: Db, userId: string): Promise<number> => {
    await db.lock(`count:content_security_policies:${userId}`);
    return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM content_security_policies WHERE user_id = ?", [userId]))?.n ?? 0;
  },

};
