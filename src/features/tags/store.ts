// SQL for tags and the entity_tags links every taggable entity uses; rows become wire objects (contract.ts) here.
import { placeholders, type Db } from "../../platform/db/db";
import { listPage } from "../../platform/db/list";
import type { ListQuery } from "../../platform/http/list-query";
import type { TagRef, UserTag } from "./contract";

export interface TagRow {
  id: string;
  user_id: string;
  name: string;
  color: string;
  created_at: number;
  updated_at: number;
}

export const toUserTag = (r: TagRow): UserTag => ({ id: r.id, name: r.name, color: r.color, createdAt: r.created_at, updatedAt: r.updated_at });

export const tagsStore = {
  // ---- tag CRUD ----

  async list(db: Db, userId: string, query: ListQuery): Promise<{ items: UserTag[]; total: number }> {
    const { rows, total } = await listPage<TagRow>(db, userId, query, { table: "tags" });
    return { items: rows.map(toUserTag), total };
  },

  get: (db: Db, userId: string, id: string) => db.get<TagRow>("SELECT * FROM tags WHERE user_id = ? AND id = ?", [userId, id]),

  /** The user's count, under a lock held until the transaction ends (creations racing on several instances cannot
   *  both pass a limit check). */
  async count(db: Db, userId: string): Promise<number> {
    await db.lock(`count:tags:${userId}`);
    return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM tags WHERE user_id = ?", [userId]))?.n ?? 0;
  },

  /** Id of the user's tag with this exact name, other than `exceptId`. */
  async idByName(db: Db, userId: string, name: string, exceptId = ""): Promise<string | undefined> {
    return (await db.get<{ id: string }>("SELECT id FROM tags WHERE user_id = ? AND name = ? AND id <> ?", [userId, name, exceptId]))?.id;
  },

  insert: (db: Db, r: TagRow) =>
    db.run("INSERT INTO tags (id, user_id, name, color, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)", [
      r.id,
      r.user_id,
      r.name,
      r.color,
      r.created_at,
      r.updated_at,
    ]),

  update: (db: Db, userId: string, id: string, fields: { name: string; color: string; updatedAt: number }) =>
    db.run("UPDATE tags SET name = ?, color = ?, updated_at = ? WHERE user_id = ? AND id = ?", [
      fields.name,
      fields.color,
      fields.updatedAt,
      userId,
      id,
    ]),

  /** Deletes the tag; its entity_tags links go with it (ON DELETE CASCADE), entities' rows are untouched. */
  delete: (db: Db, userId: string, id: string) => db.run("DELETE FROM tags WHERE user_id = ? AND id = ?", [userId, id]),

  // ---- entity links ----

  /** Ids among `ids` that belong to the user. */
  async ownedIds(db: Db, userId: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await db.all<{ id: string }>(`SELECT id FROM tags WHERE user_id = ? AND id IN (${placeholders(ids.length)})`, [userId, ...ids]);
    return new Set(rows.map((r) => r.id));
  },

  async replaceLinks(db: Db, entityType: string, entityId: string, userId: string, tagIds: string[]) {
    await db.run("DELETE FROM entity_tags WHERE entity_type = ? AND entity_id = ?", [entityType, entityId]);
    for (const tagId of tagIds) {
      await db.run("INSERT INTO entity_tags (entity_type, entity_id, tag_id, user_id) VALUES (?, ?, ?, ?)", [entityType, entityId, tagId, userId]);
    }
  },

  removeLinks: (db: Db, entityType: string, entityId: string) =>
    db.run("DELETE FROM entity_tags WHERE entity_type = ? AND entity_id = ?", [entityType, entityId]),

  /** Tags of each entity, name ascending. */
  async linksFor(db: Db, entityType: string, entityIds: string[]): Promise<Map<string, TagRef[]>> {
    const out = new Map<string, TagRef[]>(entityIds.map((id) => [id, []]));
    if (entityIds.length === 0) return out;
    const rows = await db.all<TagRef & { entity_id: string }>(
      `SELECT et.entity_id, t.id, t.name, t.color FROM entity_tags et JOIN tags t ON t.id = et.tag_id
       WHERE et.entity_type = ? AND et.entity_id IN (${placeholders(entityIds.length)}) ORDER BY t.name, t.id`,
      [entityType, ...entityIds],
    );
    for (const r of rows) out.get(r.entity_id)?.push({ id: r.id, name: r.name, color: r.color });
    return out;
  },

  // ---- user data (export, import, clone) ----

  /** Every tag of the user, name ascending. */
  allOfUser: (db: Db, userId: string) => db.all<TagRow>("SELECT * FROM tags WHERE user_id = ? ORDER BY name, id", [userId]),

  /** Tag ids of every entity of a type the user owns: entity id → tag ids (tag name ascending). */
  async linksOfUser(db: Db, userId: string, entityType: string): Promise<Map<string, string[]>> {
    const rows = await db.all<{ entity_id: string; tag_id: string }>(
      `SELECT et.entity_id, et.tag_id FROM entity_tags et JOIN tags t ON t.id = et.tag_id
       WHERE et.user_id = ? AND et.entity_type = ? ORDER BY t.name, t.id`,
      [userId, entityType],
    );
    const out = new Map<string, string[]>();
    for (const r of rows) {
      const list = out.get(r.entity_id);
      if (list) list.push(r.tag_id);
      else out.set(r.entity_id, [r.tag_id]);
    }
    return out;
  },
};
