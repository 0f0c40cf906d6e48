// Applies pending migrations in order, each in its own transaction, recorded in schema_migrations.
import type { SqliteDb } from "./db";
import { MIGRATIONS, type Migration } from "./migrations";

export class DatabaseTooNewError extends Error {}

export interface MigrateResult {
  applied: number[];
  current: number;
}

export function migrate(db: SqliteDb, migrations: Migration[] = MIGRATIONS, now = () => Math.floor(Date.now() / 1000)): MigrateResult {
  const raw = db.raw;
  raw.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
  const latest = migrations.at(-1)?.version ?? 0;
  const applied: number[] = [];
  // BEGIN IMMEDIATE takes the write lock first, so two processes starting together cannot both apply a migration.
  raw.exec("BEGIN IMMEDIATE");
  try {
    const row = raw.query("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number | null };
    const current = row.v ?? 0;
    if (current > latest) {
      throw new DatabaseTooNewError(
        `the database is at schema version ${current} but this secbox binary only knows up to ${latest}; run a newer secbox`,
      );
    }
    for (const m of migrations) {
      if (m.version <= current) continue;
      raw.exec(m.sql);
      raw.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(m.version, m.name, now());
      applied.push(m.version);
    }
    raw.exec("COMMIT");
  } catch (err) {
    raw.exec("ROLLBACK");
    throw err;
  }
  return { applied, current: latest };
}
