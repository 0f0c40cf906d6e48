// SQL for content security policies (supplement §13), and rows ↔ wire objects (contract.ts): directives are stored as
// JSON text, which only this file reads and writes.
import type { Db } from "../../platform/db/db";
import { listPage } from "../../platform/db/list";
import type { ListQuery } from "../../platform/http/list-query";
import type { TagRef, Untagged } from "../tags/contract";
import type { ContentSecurityPolicy, Directive } from "./contract";

interface PolicyRow {
  id: string;
  user_id: string;
  name: string;
  directives: string;
  created_at: number;
  updated_at: number;
}

/** A stored policy, its directives read. */
export type PolicyRecord = Omit<PolicyRow, "directives"> & { directives: Directive[] };

const toRecord = (r: PolicyRow): PolicyRecord => ({ ...r, directives: JSON.parse(r.directives) as Directive[] });

/** The wire policy, with its tags (TagsService.tagsFor; none for a share's viewer). */
export const toPolicy = (r: PolicyRecord, tags: TagRef[]): ContentSecurityPolicy => ({
  id: r.id,
  name: r.name,
  directives: r.directives,
  tags,
  tagIds: tags.map((t) => t.id),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const cspStore = {
  async get(db: Db, userId: string, id: string): Promise<PolicyRecord | undefined> {
    const row = await db.get<PolicyRow>("SELECT * FROM content_security_policies WHERE id = ? AND user_id = ?", [id, userId]);
    return row && toRecord(row);
  },

  async ownerOf(db: Db, id: string): Promise<string | undefined> {
    return (await db.get<{ user_id: string }>("SELECT user_id FROM content_security_policies WHERE id = ?", [id]))?.user_id;
  },

  insert: (db: Db, r: PolicyRecord) =>
    db.run("INSERT INTO content_security_policies (id, user_id, name, directives, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)", [
      r.id,
      r.user_id,
      r.name,
      JSON.stringify(r.directives),
      r.created_at,
      r.updated_at,
    ]),

  /** Name, directives and updated_at of the user's policy `r.id`. */
  update: (db: Db, r: Omit<PolicyRecord, "created_at">) =>
    db.run("UPDATE content_security_policies SET name = ?, directives = ?, updated_at = ? WHERE id = ? AND user_id = ?", [
      r.name,
      JSON.stringify(r.directives),
      r.updated_at,
      r.id,
      r.user_id,
    ]),

  delete: (db: Db, userId: string, id: string) => db.run("DELETE FROM content_security_policies WHERE id = ? AND user_id = ?", [id, userId]),

  async list(db: Db, userId: string, query: ListQuery): Promise<{ rows: PolicyRecord[]; total: number }> {
    const { rows, total } = await listPage<PolicyRow>(db, userId, query, { table: "content_security_policies", entityType: "contentSecurityPolicy" });
    return { rows: rows.map(toRecord), total };
  },

  // ---- user data (export, import, clone) ----

  /** Every policy of the user, name ascending, as the wire shows it without tags. */
  async allOfUser(db: Db, userId: string): Promise<Untagged<ContentSecurityPolicy>[]> {
    const rows = await db.all<PolicyRow>("SELECT * FROM content_security_policies WHERE user_id = ? ORDER BY name, id", [userId]);
    return rows.map((r) => {
      const { tags: _tags, tagIds: _tagIds, ...rest } = toPolicy(toRecord(r), []);
      return rest;
    });
  },
  refs: (db: Db, userId: string) =>
    db.all<{ id: string; name: string }>("SELECT id, name FROM content_security_policies WHERE user_id = ?", [userId]),
  /** The user's count, under a lock held until the transaction ends (limit checks). */
  count: async (db: Db, userId: string): Promise<number> => {
    await db.lock(`count:content_security_policies:${userId}`);
    return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM content_security_policies WHERE user_id = ?", [userId]))?.n ?? 0;
  },
};
