// Tags (supplement §6) and the tagging every taggable entity shares (supplement §1 "Tags on entities").
import type { AuthUser } from "../../platform/auth/principal";
import type { Db } from "../../platform/db/db";
import { duplicateName, invalid, isUniqueViolation, limitReached, notFound } from "../../platform/core/errors";
import { isUuid, newId } from "../../platform/core/ids";
import { parseListQuery } from "../../platform/http/list-query";
import { charLength, checkNameChars, pathId } from "../../platform/core/validate";
import type { LooseInput } from "../../platform/http/contract";
import { nowSec, tierLimits, type Runtime } from "../../platform/runtime";
import { HEX_COLOR_RE, MAX_TAGS_PER_ENTITY, TAG_COLORS, TAG_NAME_MAX } from "./shared-rules";
import type { TagCreateParams, Tagged, TagRef, TagUpdateParams, UserTag } from "./contract";
import { tagsStore, toUserTag } from "./store";

/** Entity types as stored in entity_tags.entity_type. */
export type TaggableType =
  "secret" | "script" | "responder" | "privateKey" | "certificateTemplate" | "contentSecurityPolicy" | "pageTracker" | "apiTracker";

/** Tag name: trimmed, lower-cased, 1..50 characters, no control characters (supplement §6, platform normalizeName). */
export function normalizeTagName(raw: unknown, field = "name"): string {
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const name = raw.trim().toLowerCase();
  const len = charLength(name);
  if (len < 1 || len > TAG_NAME_MAX) throw invalid(`${field}: must be 1 to ${TAG_NAME_MAX} characters`);
  return checkNameChars(name, field);
}

/** Tag colour: a named colour or `#rgb` / `#rrggbb`, stored lower-case (supplement §6). */
export function normalizeTagColor(raw: unknown, field = "color"): string {
  if (typeof raw === "string") {
    if ((TAG_COLORS as readonly string[]).includes(raw)) return raw;
    if (HEX_COLOR_RE.test(raw)) return raw.toLowerCase();
  }
  throw invalid(`${field}: must be one of ${TAG_COLORS.join(", ")}, or a hex colour #rgb / #rrggbb`);
}

const present = (v: unknown) => v !== undefined && v !== null;

export class TagsService {
  constructor(private readonly rt: Runtime) {}

  private now() {
    return nowSec(this.rt.clock);
  }

  // ---- tag CRUD (supplement §6) ----

  list(userId: string, rawQuery: Record<string, unknown>): Promise<{ items: UserTag[]; total: number }> {
    return tagsStore.list(this.rt.db, userId, parseListQuery(rawQuery));
  }

  async get(userId: string, rawId: string | undefined): Promise<UserTag> {
    const row = await tagsStore.get(this.rt.db, userId, pathId(rawId, "Tag"));
    if (!row) throw notFound("Tag");
    return toUserTag(row);
  }

  async create(user: AuthUser, body: LooseInput<typeof TagCreateParams>): Promise<UserTag> {
    if (!present(body.name)) throw invalid("name: is required");
    const name = normalizeTagName(body.name);
    const color = present(body.color) ? normalizeTagColor(body.color) : "default";
    const max = tierLimits(this.rt.config, user.tier).max_tags;
    const now = this.now();
    const row = { id: newId(), user_id: user.id, name, color, created_at: now, updated_at: now };
    try {
      await this.rt.db.tx(async (tx) => {
        if (await tagsStore.idByName(tx, user.id, name)) throw duplicateName("Tag", name);
        if ((await tagsStore.count(tx, user.id)) >= max) throw limitReached(`tags: at most ${max} tags allowed`);
        await tagsStore.insert(tx, row);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Tag", name);
      throw err;
    }
    return toUserTag(row);
  }

  async update(userId: string, rawId: string | undefined, body: LooseInput<typeof TagUpdateParams>): Promise<UserTag> {
    const hasName = present(body.name);
    const hasColor = present(body.color);
    if (!hasName && !hasColor) throw invalid("name, color: at least one is required");
    const name = hasName ? normalizeTagName(body.name) : undefined;
    const color = hasColor ? normalizeTagColor(body.color) : undefined;
    const id = pathId(rawId, "Tag");
    const now = this.now();
    try {
      const row = await this.rt.db.tx(async (tx) => {
        const current = await tagsStore.get(tx, userId, id);
        if (!current) throw notFound("Tag");
        const next = { name: name ?? current.name, color: color ?? current.color, updatedAt: now };
        if (next.name !== current.name && (await tagsStore.idByName(tx, userId, next.name, id))) throw duplicateName("Tag", next.name);
        await tagsStore.update(tx, userId, id, next);
        return { ...current, name: next.name, color: next.color, updated_at: now };
      });
      return toUserTag(row);
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Tag", name ?? "");
      throw err;
    }
  }

  /** Deletes the tag; it disappears from every entity (links cascade), entities' `updatedAt` untouched. */
  async delete(userId: string, rawId: string | undefined): Promise<void> {
    const id = pathId(rawId, "Tag");
    const { changes } = await tagsStore.delete(this.rt.db, userId, id);
    if (changes === 0) throw notFound("Tag");
  }

  // ---- tags on entities (supplement §1) ----

  /**
   * Validates a `tagIds` request value: array of UUIDs of the caller's own tags, repeats collapsed,
   * at most 10. Unknown or foreign ids → 400.
   */
  async resolveTagIds(userId: string, raw: unknown, field = "tagIds"): Promise<string[]> {
    if (!Array.isArray(raw)) throw invalid(`${field}: must be an array of tag ids`);
    const ids = [
      ...new Set(
        raw.map((v, i) => {
          if (!isUuid(v)) throw invalid(`${field}[${i}]: must be a UUID`);
          return v.toLowerCase();
        }),
      ),
    ];
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
  async decorate<T extends { id: string }>(type: TaggableType, items: T[]): Promise<(T & Tagged)[]> {
    const map = await this.tagsFor(
      type,
      items.map((i) => i.id),
    );
    return items.map((item) => {
      const tags = map.get(item.id) ?? [];
      return { ...item, tags, tagIds: tags.map((t) => t.id) };
    });
  }

  // ---- user data: export, import, clone (features/user-data). Writes take the import transaction's handle. ----

  /** Every tag of the user, name ascending. */
  async exportAll(userId: string): Promise<UserTag[]> {
    return (await tagsStore.allOfUser(this.rt.db, userId)).map(toUserTag);
  }

  /** Entity id → its tag ids (tag name ascending) for every entity of `type` the user owns. */
  tagIdsOfUser(userId: string, type: TaggableType, db: Db = this.rt.db): Promise<Map<string, string[]>> {
    return tagsStore.linksOfUser(db, userId, type);
  }

  async importRefs(db: Db, userId: string): Promise<{ id: string; name: string }[]> {
    return (await tagsStore.allOfUser(db, userId)).map((r) => ({ id: r.id, name: r.name }));
  }

  importCount = (db: Db, userId: string) => tagsStore.count(db, userId);

  /** Inserts a tag whose name and colour went through normalizeTagName / normalizeTagColor. */
  async importInsert(tx: Db, userId: string, t: { id: string; name: string; color: string; createdAt: number; updatedAt: number }): Promise<void> {
    await tagsStore.insert(tx, { id: t.id, user_id: userId, name: t.name, color: t.color, created_at: t.createdAt, updated_at: t.updatedAt });
  }

  async importUpdate(tx: Db, userId: string, id: string, t: { name: string; color: string }, now: number): Promise<void> {
    await tagsStore.update(tx, userId, id, { name: t.name, color: t.color, updatedAt: now });
  }

  /** Deletes the tag; it disappears from every entity (links cascade). */
  async importDelete(tx: Db, userId: string, id: string): Promise<void> {
    await tagsStore.delete(tx, userId, id);
  }
}
