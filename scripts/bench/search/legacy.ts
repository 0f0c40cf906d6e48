// The search SQL as it was before issue 29 (main at 17e4648, platform/db/search.ts), kept only so the benchmarks can
// run it side by side with today's on the same database: LIKE '%q%' over names and content, count and page apart,
// content matched for every query length, no index. Not used by the server.
import { isUuid } from "../../../src/platform/core/ids";
import type { Db, Param } from "../../../src/platform/db/db";
import { ciLike, jsonEach, jsonText, jsonTextOfElement, type Dialect } from "../../../src/platform/db/dialect";
import { escapeLike } from "../../../src/platform/db/list";

export type Matched = "name" | "id" | "content";

export interface SearchHit {
  id: string;
  name: string;
  updatedAt: number;
  matched: Matched;
}

/** A trimmed, non-empty search text, prepared once per request. */
export interface SearchText {
  text: string;
  /** Unicode lower case: what names are compared with. */
  lower: string;
  /** LIKE pattern of `lower` (ESCAPE '\'). */
  like: string;
  /** LIKE pattern of `lower` as it appears inside a JSON string (quotes, backslashes and controls escaped). */
  jsonLike: string;
  /** Lower-cased id when the text is a UUID. */
  id?: string;
}

export function searchText(text: string): SearchText {
  const lower = text.toLowerCase();
  const jsonLower = JSON.stringify(lower).slice(1, -1);
  return { text, lower, like: `%${escapeLike(lower)}%`, jsonLike: `%${escapeLike(jsonLower)}%`, ...(isUuid(text) ? { id: text.toLowerCase() } : {}) };
}

export interface SearchSpec {
  /** Table with `id`, `user_id`, `name`, `updated_at`; alias `e`. */
  table: string;
  /** Extra condition over `e` (e.g. a tracker kind) and its parameters. */
  filter?: { sql: string; params: Param[] };
  /** A condition over `e` that is true when the content matches, and the values of its `?`s. */
  content?: ContentMatch;
}

export interface ContentMatch {
  /** The condition in the database's dialect. */
  sql: (dialect: Dialect) => string;
  params: (q: SearchText) => Param[];
}

/** Content that is a text expression. */
export const likeContent = (expr: string): ContentMatch => ({ sql: (d) => ciLike(d, expr), params: (q) => [q.like] });

/** Content that is the text at `path` ('$.url') of a JSON text column. The whole JSON text is tested first (a cheap
 *  superset: the query appears in it JSON-escaped), so only rows that can match are parsed (2.5x faster when few
 *  match, measured on SQLite). */
export const jsonTextAt = (column: string, path: string): ContentMatch => ({
  sql: (d) => `(${ciLike(d, column)} AND ${ciLike(d, jsonText(d, column, path))})`,
  params: (q) => [q.jsonLike, q.like],
});

/** Content that is the text at `path` of any element of the JSON array at `arrayPath`; the JSON text is tested first
 *  as above (the array is only walked for rows that can match: 3x faster when few do, measured on SQLite). */
export const jsonArrayAny = (column: string, arrayPath: string, path: string): ContentMatch => ({
  sql: (d) =>
    `(${ciLike(d, column)} AND EXISTS (SELECT 1 FROM ${jsonEach(d, column, arrayPath, "je")} WHERE ${ciLike(d, jsonTextOfElement(d, "je.value", path))}))`,
  params: (q) => [q.jsonLike, q.like],
});

const WIDE = "octet_length(e.name) <> length(e.name)";
const rankOf: Record<Matched, number> = { name: 0, id: 1, content: 2 };

export function compareHits(a: SearchHit, b: SearchHit): number {
  return rankOf[a.matched] - rankOf[b.matched] || b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** The user's matching rows of one table: their count and the first `limit` in rank order. */
export async function searchTable(
  db: Db,
  userId: string,
  spec: SearchSpec,
  q: SearchText,
  limit: number,
): Promise<{ total: number; hits: SearchHit[] }> {
  const where = `e.user_id = ?${spec.filter ? ` AND (${spec.filter.sql})` : ""}`;
  const whereParams: Param[] = [userId, ...(spec.filter?.params ?? [])];
  const contentSql = spec.content?.sql(db.dialect) ?? "0 = 1";
  const contentParams: Param[] = spec.content?.params(q) ?? [];

  // ASCII names: everything in SQL. Name matches and content-only matches are counted and paged apart, so the
  // content (the costly part) is read once per row, and its page only when names leave room in the first `limit`.
  const ascii = `${where} AND octet_length(e.name) = length(e.name)`;
  const nameLike = ciLike(db.dialect, "e.name");
  const byName: Param[] = [...whereParams, q.like];
  const byContent: Param[] = [...whereParams, q.like, ...contentParams];
  const count = async (cond: string, params: Param[]) =>
    Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${spec.table} e WHERE ${ascii} AND ${cond}`, params))?.n ?? 0);
  const page = (cond: string, params: Param[], n: number) =>
    db.all<{ id: string; name: string; updated_at: number }>(
      `SELECT e.id, e.name, e.updated_at FROM ${spec.table} e WHERE ${ascii} AND ${cond} ORDER BY e.updated_at DESC, e.id DESC LIMIT ?`,
      [...params, n],
    );
  const nameCount = await count(nameLike, byName);
  const contentCond = `NOT (${nameLike}) AND ${contentSql}`;
  const contentCount = spec.content ? await count(contentCond, byContent) : 0;
  let total = nameCount + contentCount;
  const hits: SearchHit[] = [];
  if (nameCount > 0)
    for (const r of await page(nameLike, byName, limit)) hits.push({ id: r.id, name: r.name, updatedAt: Number(r.updated_at), matched: "name" });
  if (contentCount > 0 && hits.length < limit)
    for (const r of await page(contentCond, byContent, limit))
      hits.push({ id: r.id, name: r.name, updatedAt: Number(r.updated_at), matched: "content" });

  // Non-ASCII names (few; a partial index finds them): the name is matched in JS.
  const wide = await db.all<{ id: string; name: string; updated_at: number; content_hit: number }>(
    `SELECT e.id, e.name, e.updated_at, CASE WHEN ${contentSql} THEN 1 ELSE 0 END AS content_hit FROM ${spec.table} e WHERE ${where} AND ${WIDE}`,
    [...contentParams, ...whereParams],
  );
  for (const r of wide) {
    const matched: Matched | undefined = r.name.toLowerCase().includes(q.lower) ? "name" : Number(r.content_hit) === 1 ? "content" : undefined;
    if (!matched) continue;
    total++;
    hits.push({ id: r.id, name: r.name, updatedAt: Number(r.updated_at), matched });
  }

  // The id: ranked above content, below name.
  if (q.id !== undefined) {
    const row = await db.get<{ id: string; name: string; updated_at: number; content_hit: number }>(
      `SELECT e.id, e.name, e.updated_at, CASE WHEN ${contentSql} THEN 1 ELSE 0 END AS content_hit FROM ${spec.table} e WHERE e.id = ? AND ${where}`,
      [...contentParams, q.id, ...whereParams],
    );
    if (row && !row.name.toLowerCase().includes(q.lower)) {
      const i = hits.findIndex((h) => h.id === row.id);
      if (i >= 0) hits.splice(i, 1);
      if (Number(row.content_hit) !== 1) total++; // not counted as a content match before
      hits.push({ id: row.id, name: row.name, updatedAt: Number(row.updated_at), matched: "id" });
    }
  }
  hits.sort(compareHits);
  return { total, hits: hits.slice(0, limit) };
}

const LEGACY_SPECS: Record<string, SearchSpec> = {
  tag: { table: "tags" },
  secret: { table: "secrets" },
  script: { table: "scripts", content: likeContent("e.content") },
  responder: { table: "responders", content: likeContent("e.path_lower") },
  certificateTemplate: { table: "certificate_templates" },
  privateKey: { table: "private_keys" },
  contentSecurityPolicy: { table: "content_security_policies" },
  pageTracker: { table: "trackers", filter: { sql: "e.kind = ?", params: ["page"] }, content: jsonTextAt("e.target", "$.url") },
  apiTracker: { table: "trackers", filter: { sql: "e.kind = ?", params: ["api"] }, content: jsonArrayAny("e.target", "$.requests", "$.url") },
};

/** The old service's loop: every type in order, merged and cut to `limit`. */
export async function legacySearch(
  db: Db,
  userId: string,
  text: string,
  types: readonly string[],
  limit: number,
): Promise<{ items: (SearchHit & { type: string })[]; total: number }> {
  const q = searchText(text.trim());
  let total = 0;
  const items: (SearchHit & { type: string })[] = [];
  for (const type of types) {
    const found = await searchTable(db, userId, LEGACY_SPECS[type]!, q, limit);
    total += found.total;
    for (const h of found.hits) items.push({ type, ...h });
  }
  items.sort(compareHits);
  return { items: items.slice(0, limit), total };
}
