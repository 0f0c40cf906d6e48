// `POST /api/search` matching (supplement §20, §28) in SQL: runSearch(db, userId, text, specs, limit). Each entity
// type is described by a SearchSpec, plain data its feature exports (features/search/specs.ts gathers them): the
// table, an optional filter, and where its content is. This module imports platform/db code only and needs nothing
// but a Db that can read, so it can run on any connection (a read-only one included). A hit is a case-insensitive
// substring of the name, an id equal to the query, or a substring of the content (script source, responder path,
// tracker URLs); ranked name, then id, then content; within each updatedAt descending, then id descending. Only the
// user's rows are ever read.
//
// Names (measured in scripts/bench/search: 10,000 items for one user among 51 users):
// - Compared with a case-insensitive LIKE of the lower-cased query (ciLike). That folds ASCII letters only, so, as in
//   list.ts, rows whose name is not ASCII (octet_length <> length; a partial index of migration 0012 finds them
//   without a scan) are matched on their name in JS with Unicode case folding. For the ASCII-named rows, the name
//   matches are counted, and their first page read walking the (user_id, updated_at, id, name) index of migration
//   0012 newest first, stopping after `limit` matches. The id match is a primary-key lookup.
//
// Content (issue 29: a scan with LIKE '%q%' over 100 scripts of 51,200 bytes held the event loop 1.5 s per search):
// - Only for queries of 3 characters or more (MIN_CONTENT_CHARS); shorter ones match names and ids only.
// - An index narrows the candidates, then each candidate is verified on its real text with a plain substring test
//   of the ASCII-lower-cased text (instr on SQLite, strpos on PostgreSQL), never with LIKE '%q%' (backtracking:
//   O(text × query)) nor an FTS phrase match (3.3 s over hostile content). ASCII letters fold, other characters
//   compare as they are: the same matches as the LIKE of before. Responder paths are stored lower-cased already.
//   - SQLite: the FTS5 trigram index `search_fts` of migration 0016 (contentless, detail=none), kept by triggers;
//     queried with the AND of up to MAX_TRIGRAMS distinct trigrams of the query, over the rowid range of the user's
//     own documents of the table (so what other users, or the user's other tables, hold never adds to its cost).
//   - PostgreSQL: GIN indexes on (user_id, lower(<column>) gin_trgm_ops) (0016_search_index.pg.sql), used through
//     one LIKE of the query cut into 3-character chunks ('%abc%def%…%': the index needs every chunk's trigram; its
//     recheck finds the literal chunks left to right, about one pass over the text). For trackers the index covers
//     the whole target JSON, so the chunks are those of the query as JSON text; the verification reads the URLs. The
//     verification is the migration's secbox_search_has: strpos where its Boyer-Moore-Horspool search is linear for
//     the needle (else on the reversed texts, else a literal regular expression), with a high declared cost so the
//     planner takes the index first.
//   The content matches are read once per table (id, name, updatedAt) and split from the name matches in JS, so
//   totals and order stay exact. Measured in scripts/bench/search (hostile.ts): see its README.
import type { Db, Param } from "./db";
import { ciLike, containsText, jsonEach, jsonText, jsonTextOfElement, type Dialect } from "./dialect";
import { escapeLike } from "./list";
import { MIN_CONTENT_CHARS } from "./shared-rules";

export type Matched = "name" | "id" | "content";

export interface SearchHit {
  id: string;
  name: string;
  updatedAt: number;
  matched: Matched;
}

export interface SearchItem extends SearchHit {
  type: string;
}

/** Queries shorter than this (in characters) match names and ids only (supplement §28); shared with the web. */
export { MIN_CONTENT_CHARS };
/** SQLite: at most this many of the query's distinct trigrams are asked of the FTS index. */
export const MAX_TRIGRAMS = 16;

/** Where an entity's searchable content is (a column of alias `e`), and its shape. */
export type ContentSpec =
  /** The column's text. */
  | { kind: "text"; column: string }
  /** The text at `path` ('$.url') of a JSON text column. */
  | { kind: "jsonText"; column: string; path: string }
  /** The text at `path` of any element of the JSON array at `arrayPath` of a JSON text column. */
  | { kind: "jsonArrayAny"; column: string; arrayPath: string; path: string };

/**
 * One searchable type, as plain data. The table has `id`, `user_id`, `name`, `updated_at` (alias `e`). A `content`
 * needs its index (migration 0016): on SQLite the table's rows are documents of `search_fts`, kept by triggers and
 * numbered in the table's `search_tables` range; on PostgreSQL a GIN index on (user_id, …, lower(<column>)
 * gin_trgm_ops).
 */
export interface SearchSpec {
  /** The type name results carry. */
  type: string;
  table: string;
  /** Extra condition over `e` (e.g. a tracker kind) and its parameters. */
  filter?: { sql: string; params: Param[] };
  content?: ContentSpec;
}

/** A trimmed, non-empty search text, prepared once per request. */
export interface SearchText {
  text: string;
  /** Unicode lower case: what names and content are compared with. */
  lower: string;
  /** LIKE pattern of `lower` (ESCAPE '\'), for names. */
  like: string;
  /** Lower-cased id when the text is a UUID. */
  id?: string;
  /** Content is matched (the text has MIN_CONTENT_CHARS characters or more). */
  content: boolean;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function searchText(text: string): SearchText {
  const lower = text.toLowerCase();
  return {
    text,
    lower,
    like: `%${escapeLike(lower)}%`,
    ...(UUID_RE.test(text) ? { id: lower } : {}),
    content: [...text].length >= MIN_CONTENT_CHARS,
  };
}

/** The distinct trigrams (of code points) of `s`, at most `max`, spread evenly over it (the first and last kept). */
export function trigrams(s: string, max = MAX_TRIGRAMS): string[] {
  const cp = [...s];
  const all: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i + 3 <= cp.length; i++) {
    const t = cp[i]! + cp[i + 1]! + cp[i + 2]!;
    if (!seen.has(t)) {
      seen.add(t);
      all.push(t);
    }
  }
  if (all.length <= max) return all;
  return Array.from({ length: max }, (_, k) => all[Math.round((k * (all.length - 1)) / (max - 1))]!);
}

/** `'%abc%def%…%'`: `s` cut into consecutive 3-code-point chunks (the last one takes the rest), LIKE-escaped. Any
 *  text holding `s` matches it, and so does the pg_trgm index for it. */
export function chunkPattern(s: string): string {
  const cp = [...s];
  const chunks: string[] = [];
  for (let i = 0; i < cp.length;) {
    const end = cp.length - i < 6 ? cp.length : i + 3;
    chunks.push(cp.slice(i, end).join(""));
    i = end;
  }
  return `%${chunks.map(escapeLike).join("%")}%`;
}

/** The FTS5 query: every given trigram, each a quoted string. */
const ftsQuery = (ts: string[]) => ts.map((t) => `"${t.replaceAll('"', '""')}"`).join(" AND ");

const WIDE = "octet_length(e.name) <> length(e.name)";
const rankOf: Record<Matched, number> = { name: 0, id: 1, content: 2 };

export function compareHits(a: SearchHit, b: SearchHit): number {
  return rankOf[a.matched] - rankOf[b.matched] || b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** The user's matches over `specs` (in that order for equal ranks): their count and the first `limit` by rank.
 *  `text` is the query as validated by the search service (at most 200 characters, no U+0000). */
export async function runSearch(
  db: Db,
  userId: string,
  text: string,
  specs: readonly SearchSpec[],
  limit: number,
): Promise<{ items: SearchItem[]; total: number }> {
  const trimmed = text.trim();
  if (trimmed === "") return { items: [], total: 0 };
  const q = searchText(trimmed);
  let total = 0;
  const items: SearchItem[] = [];
  for (const spec of specs) {
    const found = await searchTable(db, userId, spec, q, limit);
    total += found.total;
    for (const h of found.hits) items.push({ type: spec.type, id: h.id, name: h.name, matched: h.matched, updatedAt: h.updatedAt });
  }
  items.sort(compareHits);
  return { items: items.slice(0, limit), total };
}

/** The verified content condition over `e` and its parameters (see the file comment). */
function contentCondition(d: Dialect, userId: string, spec: SearchSpec & { content: ContentSpec }, q: SearchText): { sql: string; params: Param[] } {
  const c = spec.content;
  const column = `e.${c.column}`;
  const verify =
    c.kind === "text"
      ? containsText(d, column)
      : c.kind === "jsonText"
        ? containsText(d, jsonText(d, column, c.path))
        : `EXISTS (SELECT 1 FROM ${jsonEach(d, column, c.arrayPath, "je")} WHERE ${containsText(d, jsonTextOfElement(d, "je.value", c.path))})`;
  if (d === "sqlite") {
    // The user's documents of this table only: their rowid range (migration 0016), so nothing else is read.
    return {
      sql: `e.id IN (SELECT sd.entity_id FROM search_fts f JOIN search_docs sd ON sd.id = f.rowid WHERE f.search_fts MATCH ?
        AND f.rowid >= (SELECT lo FROM search_ranges WHERE user_id = ? AND tbl = ?) AND f.rowid < (SELECT hi FROM search_ranges WHERE user_id = ? AND tbl = ?)
        AND sd.tbl = ?) AND ${verify}`,
      params: [ftsQuery(trigrams(q.lower)), userId, spec.table, userId, spec.table, spec.table, q.lower],
    };
  }
  // The index is on lower(column) exactly; JSON columns hold the URLs JSON-escaped.
  const indexed = c.kind === "text" ? q.lower : JSON.stringify(q.lower).slice(1, -1);
  return { sql: `lower(${column}) LIKE ? ESCAPE '\\' AND ${verify}`, params: [chunkPattern(indexed), q.lower] };
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
  const nameMatches = (name: string) => name.toLowerCase().includes(q.lower);
  type Row = { id: string; name: string; updated_at: number };
  const hit = (r: Row, matched: Matched): SearchHit => ({ id: r.id, name: r.name, updatedAt: Number(r.updated_at), matched });

  // ASCII names in SQL: counted, and the first page read newest first.
  const ascii = `${where} AND octet_length(e.name) = length(e.name)`;
  const nameLike = ciLike(db.dialect, "e.name");
  const byName: Param[] = [...whereParams, q.like];
  const nameCount = Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${spec.table} e WHERE ${ascii} AND ${nameLike}`, byName))?.n ?? 0);
  let total = nameCount;
  const hits: SearchHit[] = [];
  if (nameCount > 0) {
    const page = await db.all<Row>(
      `SELECT e.id, e.name, e.updated_at FROM ${spec.table} e WHERE ${ascii} AND ${nameLike} ORDER BY e.updated_at DESC, e.id DESC LIMIT ?`,
      [...byName, limit],
    );
    for (const r of page) hits.push(hit(r, "name"));
  }

  // Non-ASCII names (few; a partial index finds them): matched in JS.
  for (const r of await db.all<Row>(`SELECT e.id, e.name, e.updated_at FROM ${spec.table} e WHERE ${where} AND ${WIDE}`, whereParams)) {
    if (!nameMatches(r.name)) continue;
    total++;
    hits.push(hit(r, "name"));
  }

  // Content: the verified candidates whose name does not match (those are counted above already).
  const byContent = new Set<string>();
  if (q.content && spec.content) {
    const cond = contentCondition(db.dialect, userId, spec as SearchSpec & { content: ContentSpec }, q);
    const rows = await db.all<Row>(`SELECT e.id, e.name, e.updated_at FROM ${spec.table} e WHERE ${where} AND ${cond.sql}`, [
      ...whereParams,
      ...cond.params,
    ]);
    const content: SearchHit[] = [];
    for (const r of rows) {
      if (nameMatches(r.name)) continue;
      byContent.add(r.id);
      content.push(hit(r, "content"));
    }
    total += content.length;
    content.sort(compareHits);
    hits.push(...content.slice(0, limit));
  }

  // The id: ranked above content, below name.
  if (q.id !== undefined) {
    const row = await db.get<Row>(`SELECT e.id, e.name, e.updated_at FROM ${spec.table} e WHERE e.id = ? AND ${where}`, [q.id, ...whereParams]);
    if (row && !nameMatches(row.name)) {
      const i = hits.findIndex((h) => h.id === row.id);
      if (i >= 0) hits.splice(i, 1);
      if (!byContent.has(row.id)) total++; // not counted as a content match before
      hits.push(hit(row, "id"));
    }
  }
  hits.sort(compareHits);
  return { total, hits: hits.slice(0, limit) };
}
