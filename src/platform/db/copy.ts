// Copies a whole Secbox database to another backend (`secbox data migrate --from sqlite:PATH --to postgres://…`, and
// back): every table, history included, then the row counts compared table by table.
//
// - Both sides are migrated to this binary's schema first (the same numbered migrations), so the tables and columns
//   are the same; the target must be empty (no row in any table but schema_migrations).
// - Tables are copied parents first (foreign keys: SQLite's PRAGMA foreign_key_list gives the order), in batches of
//   multi-row INSERTs, in ONE transaction on the target: a failure leaves it empty. The source is read inside one
//   read transaction, so the copy is one consistent snapshot (stop the servers anyway: what they write after it is
//   not copied).
// - `instances` (the live processes of a PostgreSQL deployment) is not copied, nor SQLite's search index
//   (`search_users`, `search_tables`, `search_docs`, the FTS5 table `search_fts` and its shadow tables: migration
//   0016): the target keeps its own index of the rows it receives (SQLite: triggers; PostgreSQL: GIN indexes). Everything else is, server_state
//   included (its master-key check: the target needs the same master key).
// - Values go as stored. PostgreSQL text cannot hold U+0000: such a value stops the copy with the table, column and
//   row named.
import type { Db, Param, Row } from "./db";
import { migrate } from "./migrate";

/** Tables that describe the running processes, not the data. */
const NOT_COPIED = new Set(["instances", "schema_migrations"]);
/** SQLite's search index: derived from the rows, rebuilt by the target (its own migration 0016 and triggers). */
const SEARCH_INDEX = new Set(["search_users", "search_tables", "search_docs", "search_fts"]);
const isSearchIndex = (t: string) => SEARCH_INDEX.has(t) || t.startsWith("search_fts_");
/** Rows read per page; an INSERT takes at most MAX_PARAMS parameters (PostgreSQL's limit is 65535) and about
 *  MAX_INSERT_BYTES of values (history bodies are up to 1 MiB each). */
const PAGE_ROWS = 500;
const MAX_PARAMS = 30_000;
const MAX_INSERT_BYTES = 8 * 1024 * 1024;

export interface CopyReport {
  tables: Record<string, number>;
  rows: number;
  verified: boolean;
}

export class CopyError extends Error {}

/** Table names of a database (either backend), excluding SQLite's own. */
export async function listTables(db: Db): Promise<string[]> {
  const rows =
    db.dialect === "sqlite"
      ? await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
      : await db.all<{ name: string }>(
          "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
        );
  return rows.map((r) => r.name);
}

async function columns(db: Db, table: string): Promise<string[]> {
  if (db.dialect === "sqlite")
    return (await db.all<{ name: string }>(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`)).map((r) => r.name);
  return (
    await db.all<{ name: string }>(
      "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position",
      [table],
    )
  ).map((r) => r.name);
}

/** Parents before children, from the SQLite side's foreign keys (the schema is the same on both sides). */
async function copyOrder(sqlite: Db, names: string[]): Promise<string[]> {
  const parents = new Map<string, Set<string>>();
  for (const t of names) {
    const fks = await sqlite.all<{ table: string }>(`SELECT "table" FROM pragma_foreign_key_list('${t}')`);
    parents.set(t, new Set(fks.map((f) => f.table).filter((p) => p !== t && names.includes(p))));
  }
  const out: string[] = [];
  const done = new Set<string>();
  while (out.length < names.length) {
    const next = names.filter((t) => !done.has(t) && [...parents.get(t)!].every((p) => done.has(p)));
    if (next.length === 0) throw new CopyError("cyclic foreign keys between tables");
    for (const t of next) {
      out.push(t);
      done.add(t);
    }
  }
  return out;
}

const count = async (db: Db, table: string) => Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))?.n ?? 0);

/**
 * Copies `source` into the empty `target` (see the file comment). `onTable` reports progress. Throws CopyError when
 * the target is not empty, a value cannot be stored, or the counts differ afterwards (then nothing stays written).
 */
export async function copyDatabase(source: Db, target: Db, onTable: (table: string, rows: number) => void = () => {}): Promise<CopyReport> {
  if (source.dialect === target.dialect) throw new CopyError("the source and the target must be different backends (sqlite and postgres)");
  await migrate(source);
  await migrate(target);
  const sqliteSide = source.dialect === "sqlite" ? source : target;
  const names = (await listTables(source)).filter((t) => !NOT_COPIED.has(t) && !isSearchIndex(t));
  const targetNames = new Set(await listTables(target));
  for (const t of names) if (!targetNames.has(t)) throw new CopyError(`table ${t} is missing on the target`);
  for (const t of names)
    if ((await count(target, t)) > 0) throw new CopyError(`the target is not empty (table ${t} has rows); migrate into an empty database`);
  const order = await copyOrder(sqliteSide, names);

  const report: CopyReport = { tables: {}, rows: 0, verified: false };
  await source.tx(async (src) => {
    // One snapshot of a PostgreSQL source (SQLite's write transaction is one already).
    if (src.dialect === "postgres") await src.exec("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
    await target.tx(async (dst) => {
      for (const table of order) {
        const cols = await columns(src, table);
        const targetCols = new Set(await columns(dst, table));
        for (const c of cols) if (!targetCols.has(c)) throw new CopyError(`column ${table}.${c} is missing on the target`);
        const list = cols.map((c) => `"${c}"`).join(", ");
        // Pages in physical order, keyset on SQLite's rowid or PostgreSQL's ctid (TID range scans: PostgreSQL 14+).
        const pos = src.dialect === "sqlite" ? "rowid" : "ctid";
        const after = src.dialect === "sqlite" ? "rowid > ?" : "ctid > ?::tid";
        let last: Param = src.dialect === "sqlite" ? -1 : "(0,0)";
        let copied = 0;
        for (;;) {
          const rows = await src.all<Row>(`SELECT ${pos} AS pos__, ${list} FROM ${table} WHERE ${after} ORDER BY ${pos} LIMIT ?`, [last, PAGE_ROWS]);
          if (rows.length === 0) break;
          last = rows[rows.length - 1]!.pos__ as Param;
          await insertRows(dst, table, cols, rows);
          copied += rows.length;
          if (rows.length < PAGE_ROWS) break;
        }
        report.tables[table] = copied;
        report.rows += copied;
        onTable(table, copied);
      }
      // Verify inside the transaction: a mismatch rolls everything back.
      for (const table of order) {
        const [a, b] = [await count(src, table), await count(dst, table)];
        if (a !== b) throw new CopyError(`row counts differ for ${table}: ${a} in the source, ${b} in the target`);
      }
      report.verified = true;
    });
  });
  return report;
}

/** Inserts rows in multi-row INSERTs within the parameter and size caps. */
async function insertRows(db: Db, table: string, cols: string[], rows: Row[]): Promise<void> {
  const list = cols.map((c) => `"${c}"`).join(", ");
  const one = `(${cols.map(() => "?").join(", ")})`;
  const maxRows = Math.max(1, Math.floor(MAX_PARAMS / cols.length));
  let params: Param[] = [];
  let n = 0;
  let bytes = 0;
  const flush = async () => {
    if (n === 0) return;
    await db.run(`INSERT INTO ${table} (${list}) VALUES ${Array.from({ length: n }, () => one).join(", ")}`, params);
    params = [];
    n = 0;
    bytes = 0;
  };
  for (const r of rows) {
    for (const c of cols) {
      const v = value(table, c, r);
      bytes += typeof v === "string" ? v.length : v instanceof Uint8Array ? v.byteLength : 8;
      params.push(v);
    }
    n++;
    if (n >= maxRows || bytes >= MAX_INSERT_BYTES) await flush();
  }
  await flush();
}

function value(table: string, column: string, row: Row): Param {
  const v = row[column];
  if (v === undefined) return null;
  if (typeof v === "string" && v.includes("\u0000")) {
    throw new CopyError(
      `${table}.${column} of row ${JSON.stringify(row.id ?? row.key ?? row.user_id ?? "?")} holds a NUL character, which PostgreSQL text cannot store`,
    );
  }
  return v as Param;
}
