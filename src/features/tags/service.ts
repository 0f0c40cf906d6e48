// Tags (supplement §6) and the tagging every taggable entity shares (supplement §1 "Tags on entities").
import type { Db } from "../../platform/db/db";
import { invalid } from "../../platform/http/errors";
import { isUuid } from "../../platform/http/ids";
import type { Runtime } from "../../platform/runtime";
import { tagsStore, type TagRef } from "./store";

export const MAX_TAGS_PER_ENTITY = 10;

/** Entity types as stored in entity_tags.entity_type. */
export type TaggableType =
  | "secret"
  | "script"
  | "responder"
  | "privateKey"
  | "certificateTemplate"
  | "contentSecurityPolicy"
  | "pageTracker"
  | "apiTracker";

export class TagsService {
  constructor(private readonly rt: Runtime) {}

  /**
   * Validates a `tagIds` request value: array of UUIDs of the caller's own tags, repeats collapsed,
   * at most 10. Unknown or foreign ids → 400.
   */
  async resolveTagIds(userId: string, raw: unknown, field = "tagIds"): Promise<string[]> {
    if (!Array.isArray(raw)) throw invalid(`${field}: must be an array of tag ids`);
    const ids = [...new Set(raw.map((v, i) => {
      if (!isUuid(v)) throw invalid(`${field}[${i}]: must be a UUID`);
      return v.toLowerCase();
    }))];
    if (ids.length > MAX_TAGS_PER_ENTITY) throw invalid(`${field}: at most ${MAX_TAGS_PER_ENTITY} tags per entity`);
    const owned = await tagsStore.ownedIds(this.rt.db, userId, ids);
    const unknown = ids.find((id) => !owned.has(id));
    if (unknown) throw invalid(`${field}: unknown tag ${unknown}`);
    return ids;
  }

  /** Replaces the entity's tags (call inside the entity's write transaction with its `tx`). */
  setEntityTags(db: Db, type: TaggableType, entityId: string, userId: string, tagIds: string[]) {
    return tagsStore.replaceLinks(db, type, entityId, userId, tagIds);
  }

  removeEntity(db: Db, type: TaggableType, entityId: string) {
    return tagsStore.removeLinks(db, type, entityId);
  }

  /** `tags` ({id,name,color}, name ascending) for each entity id. */
  tagsFor(type: TaggableType, entityIds: string[]): Promise<Map<string, TagRef[]>> {
    return tagsStore.linksFor(this.rt.db, type, entityIds);
  }

  /** Adds `tags` and `tagIds` (same order) to wire objects that have an `id`. */
  async decorate<T extends { id: string }>(type: TaggableType, items: T[]): Promise<(T & { tags: TagRef[]; tagIds: string[] })[]> {
    const map = await this.tagsFor(type, items.map((i) => i.id));
    return items.map((item) => {
      const tags = map.get(item.id) ?? [];
      return { ...item, tags, tagIds: tags.map((t) => t.id) };
    });
  }
}
