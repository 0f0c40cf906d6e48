// SQL for tags and the entity_tags links every taggable entity uses.
import { placeholders, type Db } from "../../platform/db/db";

export interface TagRow {
  id: string;
  user_id: string;
  name: string;
  color: string;
  created_at: number;
  updated_at: number;
}

export interface TagRef {
  id: string;
  name: string;
  color: string;
}

export const tagsStore = {
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
};
