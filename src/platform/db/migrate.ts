// Applies pending migrations in order, in one transaction, recorded in schema_migrations. The same numbered files
// run on both backends (PostgreSQL gets them through dialect.ts's migrationToPostgres, or runs a migration's own
// `postgres` text as written: migrations/index.ts), then a migration's data step if it has one (TypeScript, same
// transaction). Two processes starting together cannot both apply a migration: SQLite's BEGIN IMMEDIATE takes the
// write lock first; on PostgreSQL the transaction takes an advisory lock (DDL is transactional there too, so a
// failed migration leaves nothing behind).
import type { Db } from "./db";
import { migrationToPostgres } from "./dialect";
import { MIGRATIONS, type Migration } from "./migrations";

export class DatabaseTooNewError extends Error {}

export interface MigrateResult {
  applied: number[];
  current: number;
}

const SCHEMA_TABLE = "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)";

export async function migrate(db: Db, migrations: Migration[] = MIGRATIONS, now = () => Math.floor(Date.now() / 1000)): Promise<MigrateResult> {
  const ddl = (sql: string) => (db.dialect === "postgres" ? migrationToPostgres(sql) : sql);
  const textOf = (m: Migration) => (db.dialect === "postgres" && m.postgres !== undefined ? m.postgres : ddl(m.sql));
  const latest = migrations.at(-1)?.version ?? 0;
  await db.tx(async (tx) => {
    await tx.lock("secbox:migrate");
    await tx.exec(ddl(SCHEMA_TABLE));
  });
  return db.tx(async (tx) => {
    await tx.lock("secbox:migrate");
    const row = await tx.get<{ v: number | null }>("SELECT MAX(version) AS v FROM schema_migrations");
    const current = row?.v ?? 0;
    if (current > latest) {
      throw new DatabaseTooNewError(
        `the database is at schema version ${current} but this secbox binary only knows up to ${latest}; run a newer secbox`,
      );
    }
    const applied: number[] = [];
    for (const m of migrations) {
      if (m.version <= current) continue;
      const text = textOf(m);
      if (text.trim() !== "") await tx.exec(text);
      if (m.data) await m.data(tx);
      await tx.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [m.version, m.name, now()]);
      applied.push(m.version);
    }
    return { applied, current: latest };
  });
}
