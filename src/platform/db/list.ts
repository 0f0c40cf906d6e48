// One implementation of the common list query in SQL, used by every store's list method. Only SQL shared
// by SQLite and PostgreSQL: lower(), LIKE ... ESCAPE, EXISTS, LIMIT/OFFSET.
import type { ListQuery } from "../http/list-query";
import { placeholders, type Db, type Param, type Row } from "./db";

export interface ListSpec {
  /** Table holding the entity, with `id`, `user_id`, `name`, `created_at`, `updated_at` columns. */
  table: string;
  /** `entity_tags.entity_type` for taggable entities; enables `tags` / `globalTags`. */
  entityType?: string;
  /** Extra sort keys beyond name/createdAt/updatedAt: API key → SQL expression over alias `e`. */
  extraSorts?: Record<string, string>;
  /** Extra filter (SQL over alias `e`) and its parameters. */
  filter?: { sql: string; params: Param[] };
  /** Selected columns, default `e.*`. */
  columns?: string;
}

const BASE_SORTS: Record<string, string> = { name: "lower(e.name)", createdAt: "e.created_at", updatedAt: "e.updated_at" };

export const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

export async function listPage<T = Row>(db: Db, userId: string, query: ListQuery, spec: ListSpec): Promise<{ rows: T[]; total: number }> {
  const where: string[] = ["e.user_id = ?"];
  const params: Param[] = [userId];
  if (query.q !== "") {
    where.push("(lower(e.name) LIKE ? ESCAPE '\\' OR e.id = ?)");
    params.push(`%${escapeLike(query.q.toLowerCase())}%`, query.q);
  }
  if (spec.entityType && query.tags.length > 0) {
    where.push(
      `EXISTS (SELECT 1 FROM entity_tags et WHERE et.entity_type = ? AND et.entity_id = e.id AND et.tag_id IN (${placeholders(query.tags.length)}))`,
    );
    params.push(spec.entityType, ...query.tags);
  }
  if (spec.entityType && query.globalTags.length > 0) {
    where.push(
      `(SELECT COUNT(*) FROM entity_tags et WHERE et.entity_type = ? AND et.entity_id = e.id AND et.tag_id IN (${placeholders(query.globalTags.length)})) = ?`,
    );
    params.push(spec.entityType, ...query.globalTags, query.globalTags.length);
  }
  if (spec.filter) {
    where.push(`(${spec.filter.sql})`);
    params.push(...spec.filter.params);
  }
  const whereSql = where.join(" AND ");
  const total = (await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${spec.table} e WHERE ${whereSql}`, params))?.n ?? 0;
  if (query.pageSize === 0) return { rows: [], total };
  const sortExpr = { ...BASE_SORTS, ...spec.extraSorts }[query.sort] ?? BASE_SORTS.name!;
  const dir = query.order === "desc" ? "DESC" : "ASC";
  const rows = await db.all<T>(
    `SELECT ${spec.columns ?? "e.*"} FROM ${spec.table} e WHERE ${whereSql} ORDER BY ${sortExpr} ${dir}, e.id ${dir} LIMIT ? OFFSET ?`,
    [...params, query.pageSize, query.page * query.pageSize],
  );
  return { rows, total };
}
