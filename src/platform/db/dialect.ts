// The SQL text both backends run is SQLite's: `?` placeholders and the subset SQLite and PostgreSQL share
// (design: "Scale path"). The few places where they must differ are here, in one file:
//
// - toPostgres(sql): `?` → `$1, $2, …` (outside quotes and comments). Cached: statements are mostly constant text.
// - migrationToPostgres(sql): the numbered migrations (migrations/*.sql, written for SQLite, never rewritten) as
//   PostgreSQL DDL. SQLite's INTEGER is 64-bit: it becomes BIGINT (timestamps, sizes, ms). BLOB → BYTEA. TEXT →
//   TEXT COLLATE "C": text compares, sorts and case-folds (lower(), ILIKE: ASCII letters only) by bytes, exactly as
//   SQLite's BINARY collation does, whatever locale the PostgreSQL database was created with — list order, name
//   uniqueness, KV key order (supplement §11.8) and the ASCII/Unicode split of list.ts and search.ts stay the same.
// - Seams used by stores and platform helpers through `db.dialect` (ciLike, containsText, JSON paths in search.ts;
//   the outbox's `FOR UPDATE SKIP LOCKED`).
export type Dialect = "sqlite" | "postgres";

const pgCache = new Map<string, string>();
const PG_CACHE_MAX = 5000;

/** `?` placeholders → `$n`, skipping '…' strings, "…" identifiers and -- / block comments. */
export function toPostgres(sql: string): string {
  const hit = pgCache.get(sql);
  if (hit !== undefined) return hit;
  let out = "";
  let n = 0;
  let i = 0;
  const len = sql.length;
  while (i < len) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = closing(sql, i, c);
      out += sql.slice(i, end);
      i = end;
    } else if (c === "-" && sql[i + 1] === "-") {
      const nl = sql.indexOf("\n", i);
      const end = nl === -1 ? len : nl;
      out += sql.slice(i, end);
      i = end;
    } else if (c === "/" && sql[i + 1] === "*") {
      const close = sql.indexOf("*/", i + 2);
      const end = close === -1 ? len : close + 2;
      out += sql.slice(i, end);
      i = end;
    } else if (c === "?") {
      out += `$${++n}`;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  if (pgCache.size >= PG_CACHE_MAX) pgCache.clear();
  pgCache.set(sql, out);
  return out;
}

/** Index just past the quote that closes the one at `start` (a doubled quote is an escaped one). */
function closing(sql: string, start: number, q: string): number {
  let i = start + 1;
  for (;;) {
    const j = sql.indexOf(q, i);
    if (j === -1) return sql.length;
    if (sql[j + 1] === q) {
      i = j + 2;
      continue;
    }
    return j + 1;
  }
}

/** Removes -- comments (outside quotes): migrations explain themselves in comments that may name SQLite types. */
function stripComments(sql: string): string {
  let out = "";
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = closing(sql, i, c);
      out += sql.slice(i, end);
      i = end;
    } else if (c === "-" && sql[i + 1] === "-") {
      const nl = sql.indexOf("\n", i);
      i = nl === -1 ? sql.length : nl;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** A SQLite migration as PostgreSQL DDL (see the file comment). Types are only rewritten outside quotes. */
export function migrationToPostgres(sql: string): string {
  const parts: string[] = [];
  const text = stripComments(sql);
  let i = 0;
  let plain = "";
  const flush = () => {
    parts.push(
      plain
        .replace(/\bINTEGER\b/g, "BIGINT")
        .replace(/\bBLOB\b/g, "BYTEA")
        .replace(/\bTEXT\b/g, 'TEXT COLLATE "C"'),
    );
    plain = "";
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === "'" || c === '"') {
      flush();
      const end = closing(text, i, c);
      parts.push(text.slice(i, end));
      i = end;
    } else {
      plain += c;
      i++;
    }
  }
  flush();
  return parts.join("");
}

/**
 * A case-insensitive LIKE of a text expression with one `?` (ESCAPE '\'), folding ASCII letters only on both
 * backends: SQLite's LIKE does that itself (case_sensitive_like is off, and no copy of the value is made), PostgreSQL
 * needs ILIKE (with the "C" collation of every text column it folds ASCII only, too).
 */
export const ciLike = (dialect: Dialect, expr: string) => (dialect === "postgres" ? `${expr} ILIKE ? ESCAPE '\\'` : `${expr} LIKE ? ESCAPE '\\'`);

/**
 * True when the text expression, its ASCII letters lower-cased, holds the one `?` (a lower-cased string): a plain
 * substring search (search.ts), never LIKE's backtracking. SQLite: instr(lower(…)). PostgreSQL: migration 0016's
 * secbox_search_has (a linear search in lower(… COLLATE "C"): ASCII folding, as SQLite's, for JSON paths too), whose
 * high declared cost makes the planner narrow through the search indexes before it runs.
 */
export const containsText = (dialect: Dialect, expr: string) =>
  dialect === "postgres" ? `secbox_search_has(${expr}, ?)` : `instr(lower(${expr}), ?) > 0`;

/** The text at a JSON path ('$.url') of a JSON text expression. */
export function jsonText(dialect: Dialect, expr: string, path: string): string {
  if (dialect === "sqlite") return `json_extract(${expr}, '${path}')`;
  return `(${expr})::json #>> '${pgPath(path)}'`;
}

/** A FROM item over the elements of the JSON array at `path` of a JSON text expression; each element is `alias.value`. */
export function jsonEach(dialect: Dialect, expr: string, path: string, alias: string): string {
  if (dialect === "sqlite") return `json_each(${expr}, '${path}') ${alias}`;
  return `json_array_elements((${expr})::json #> '${pgPath(path)}') ${alias}(value)`;
}

/** '$.a.b' → '{a,b}' (only the simple member paths Secbox uses). */
function pgPath(path: string): string {
  if (!/^\$(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(path)) throw new Error(`unsupported JSON path ${path}`);
  return `{${path.split(".").slice(1).join(",")}}`;
}

/** The text at a JSON path of a JSON value expression that is itself a json element (jsonEach's `alias.value`).
 *  (json, not jsonb: jsonb refuses a stored "\u0000" escape anywhere in the document, json only where it is read.) */
export function jsonTextOfElement(dialect: Dialect, expr: string, path: string): string {
  if (dialect === "sqlite") return `json_extract(${expr}, '${path}')`;
  return `(${expr} #>> '${pgPath(path)}')`;
}
