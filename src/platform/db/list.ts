// One implementation of the common list query in SQL, used by every store's list method. Only SQL shared
// by SQLite and PostgreSQL: lower(), length(), octet_length(), LIKE ... ESCAPE, EXISTS, CASE, LIMIT/OFFSET.
//
// `q` and the name sort ignore case (supplement §1). SQLite's lower() and LIKE fold ASCII only, so they are exact
// only while every name involved is ASCII. The count query therefore also reports whether any candidate row has a
// non-ASCII name (octet_length <> length); only then — and only when `q` or the name sort is in play — the
// filtering, counting, sorting and paging of that user's rows happen in JS with Unicode case folding, over ids and
// sort keys only (a user's rows of one entity type are bounded by the tier limits, §22). Totals and paging stay exact.
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
  /** Selected columns, default `e.*`; must include `e.id`. */
  columns?: string;
}

const BASE_SORTS: Record<string, string> = { name: "lower(e.name)", createdAt: "e.created_at", updatedAt: "e.updated_at" };

export const escapeLike = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Case-insensitive name match or exact id, as the SQL condition below computes it for ASCII names. */
const Q_SQL = "(lower(e.name) LIKE ? ESCAPE '\\' OR e.id = ?)";
const NON_ASCII_NAME_SQL = "octet_length(e.name) <> length(e.name)";

export async function listPage<T = Row>(db: Db, userId: string, query: ListQuery, spec: ListSpec): Promise<{ rows: T[]; total: number }> {
  // Conditions other than `q`: user, tags, globalTags, the store's filter.
  const where: string[] = ["e.user_id = ?"];
  const params: Param[] = [userId];
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
  const baseWhere = where.join(" AND ");
  const qParams: Param[] = query.q === "" ? [] : [`%${escapeLike(query.q.toLowerCase())}%`, query.q];
  const matchSql = query.q === "" ? "1 = 1" : Q_SQL;
  const sorts = { ...BASE_SORTS, ...spec.extraSorts };
  const sortKey = Object.hasOwn(sorts, query.sort) ? query.sort : "name";
  const sortExpr = sorts[sortKey]!;
  const dir = query.order === "desc" ? "DESC" : "ASC";

  // One pass gives the total and whether any candidate name is non-ASCII.
  const head = await db.get<{ n: number | string | null; wide: number | string | null }>(
    `SELECT SUM(CASE WHEN ${matchSql} THEN 1 ELSE 0 END) AS n, MAX(CASE WHEN ${NON_ASCII_NAME_SQL} THEN 1 ELSE 0 END) AS wide
       FROM ${spec.table} e WHERE ${baseWhere}`,
    [...qParams, ...params],
  );
  const usesName = query.q !== "" || sortKey === "name";
  if (usesName && Number(head?.wide ?? 0) === 1)
    return listInJs<T>(db, query, spec, { baseWhere, params, sortExpr, byName: sortKey === "name", desc: dir === "DESC" });

  const total = Number(head?.n ?? 0);
  if (query.pageSize === 0 || total === 0) return { rows: [], total };
  const rows = await db.all<T>(
    `SELECT ${spec.columns ?? "e.*"} FROM ${spec.table} e WHERE ${baseWhere} AND ${matchSql} ORDER BY ${sortExpr} ${dir}, e.id ${dir} LIMIT ? OFFSET ?`,
    [...params, ...qParams, query.pageSize, query.page * query.pageSize],
  );
  return { rows, total };
}

type SortValue = string | number | bigint | null;

/** SQL's order for one column: NULL first, then numbers, then text by code point (SQLite BINARY on UTF-8). */
function compareValues(a: SortValue, b: SortValue): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return -1;
  if (b === null || b === undefined) return 1;
  const an = typeof a !== "string";
  const bn = typeof b !== "string";
  if (an && bn) return a < b ? -1 : a > b ? 1 : 0;
  if (an !== bn) return an ? -1 : 1;
  return Buffer.compare(Buffer.from(a as string, "utf8"), Buffer.from(b as string, "utf8"));
}

/** The Unicode-aware path: ids and sort keys of the candidates in, the page's rows out (see the file comment). */
async function listInJs<T>(
  db: Db,
  query: ListQuery,
  spec: ListSpec,
  o: { baseWhere: string; params: Param[]; sortExpr: string; byName: boolean; desc: boolean },
): Promise<{ rows: T[]; total: number }> {
  const candidates = await db.all<{ id: string; name: string; sort_key: SortValue }>(
    `SELECT e.id AS id, e.name AS name${o.byName ? "" : `, ${o.sortExpr} AS sort_key`} FROM ${spec.table} e WHERE ${o.baseWhere}`,
    o.params,
  );
  const q = query.q.toLowerCase();
  const matched = candidates
    .filter((c) => query.q === "" || c.id === query.q || c.name.toLowerCase().includes(q))
    .map((c) => ({ id: c.id, key: o.byName ? c.name.toLowerCase() : c.sort_key }));
  const sign = o.desc ? -1 : 1;
  matched.sort((a, b) => sign * (compareValues(a.key, b.key) || compareValues(a.id, b.id)));
  const total = matched.length;
  const start = query.page * query.pageSize;
  const pageIds = query.pageSize === 0 || start >= total ? [] : matched.slice(start, start + query.pageSize).map((m) => m.id);
  if (pageIds.length === 0) return { rows: [], total };
  const rows = await db.all<T & { id: string }>(
    `SELECT ${spec.columns ?? "e.*"} FROM ${spec.table} e WHERE ${o.baseWhere} AND e.id IN (${placeholders(pageIds.length)})`,
    [...o.params, ...pageIds],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { rows: pageIds.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : [])), total };
}
