// Which database the tests run on. `SECBOX_TEST_BACKEND=postgres` with `SECBOX_TEST_PG_URL` (a throwaway cluster:
// scripts/pg/cluster.sh, as .ci/run starts it) runs every test server on PostgreSQL; otherwise SQLite in the
// server's temporary data directory, as before.
//
// On PostgreSQL each test server gets its own database (`CREATE DATABASE t_<random>`), so test files and the servers
// within one stay isolated, as their data directories do. The database belongs to the data directory: its URL is
// kept in `<dataDir>/test-database-url`, so a server restarted on the same data directory (restart tests) finds its
// data again. A database whose data directory the harness created is dropped when that server stops; one under a
// data directory a test made itself is left to the throwaway cluster.
import { SQL } from "bun";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Db } from "../platform/db/db";
import { PgDb } from "../platform/db/postgres";
import { openDatabase } from "../platform/db/sqlite";

export type TestBackend = "sqlite" | "postgres";

export const TEST_BACKEND: TestBackend = process.env.SECBOX_TEST_BACKEND === "postgres" ? "postgres" : "sqlite";
export const onPostgres = TEST_BACKEND === "postgres";

let admin: SQL | undefined;

function adminSql(): SQL {
  const url = process.env.SECBOX_TEST_PG_URL;
  if (!url) throw new Error("SECBOX_TEST_BACKEND=postgres needs SECBOX_TEST_PG_URL (scripts/pg/cluster.sh start prints it)");
  admin ??= new SQL({ url, max: 2, idleTimeout: 5 });
  return admin;
}

/** A new, empty database on the test cluster; its URL. */
export async function createTestDatabase(prefix = "t"): Promise<string> {
  const name = `${prefix}_${randomBytes(8).toString("hex")}`;
  await adminSql().unsafe(`CREATE DATABASE ${name} TEMPLATE template0`);
  const url = new URL(process.env.SECBOX_TEST_PG_URL!);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops a database made by createTestDatabase (closing its remaining connections). */
export async function dropTestDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  if (!/^[a-z]+_[0-9a-f]{16}$/.test(name)) throw new Error(`not a test database: ${name}`);
  await adminSql().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/**
 * The SECBOX_* settings that put a test server on the test backend, for the server of `dataDir`; `drop` ends the
 * database when the harness owns the data directory (see the file comment).
 */
export async function testDatabaseEnv(dataDir: string, ownsDataDir: boolean): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  if (!onPostgres) return { env: {}, drop: async () => {} };
  const file = join(dataDir, "test-database-url");
  if (existsSync(file)) return { env: { SECBOX_DATABASE_URL: readFileSync(file, "utf8").trim() }, drop: async () => {} };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const url = await createTestDatabase();
  writeFileSync(file, `${url}\n`, { mode: 0o600 });
  return { env: { SECBOX_DATABASE_URL: url }, drop: ownsDataDir ? () => dropTestDatabase(url) : async () => {} };
}

/** The database URL of a data directory set up by testDatabaseEnv ("" on SQLite): for CLI processes a test spawns. */
export function databaseUrlOf(dataDir: string): string {
  const file = join(dataDir, "test-database-url");
  return onPostgres && existsSync(file) ? readFileSync(file, "utf8").trim() : "";
}

/** A fresh, unmigrated database on the test backend (SQLite: a file in `dir`); `drop` closes and removes it. */
export async function openTestDb(dir: string): Promise<{ db: Db; url?: string; drop: () => Promise<void> }> {
  if (!onPostgres) {
    const db = openDatabase(dir);
    return { db, drop: () => db.close() };
  }
  const url = await createTestDatabase();
  const db = await PgDb.connect(url, { max: 4 });
  return {
    db,
    url,
    drop: async () => {
      await db.close();
      await dropTestDatabase(url);
    },
  };
}

/** Names of the tables of a database on either backend. */
export async function tableNames(db: Db): Promise<string[]> {
  const rows =
    db.dialect === "sqlite"
      ? await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
      : await db.all<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'");
  return rows.map((r) => r.name);
}

/** The database of a test server's data directory on the test backend (made when missing), opened directly: for
 *  tests that prepare or inspect stored rows without a server. */
export async function openDataDirDb(dataDir: string): Promise<Db> {
  if (!onPostgres) return openDatabase(dataDir);
  const { env } = await testDatabaseEnv(dataDir, false);
  return PgDb.connect(env.SECBOX_DATABASE_URL!, { max: 2 });
}

/** A trigger that makes `event` ("INSERT", "UPDATE OF col") on `table` fail with `message` when `condition` (over
 *  NEW) holds — a stand-in for a crash between writes. Returns the function that removes it. */
export async function failingTrigger(
  db: Db,
  name: string,
  event: string,
  table: string,
  condition: string,
  message: string,
): Promise<() => Promise<void>> {
  if (db.dialect === "sqlite") {
    await db.exec(`CREATE TRIGGER ${name} BEFORE ${event} ON ${table} WHEN ${condition} BEGIN SELECT RAISE(ABORT, '${message}'); END`);
    return () => db.exec(`DROP TRIGGER ${name}`);
  }
  await db.exec(
    `CREATE FUNCTION ${name}() RETURNS trigger AS $fn$ BEGIN IF ${condition} THEN RAISE EXCEPTION '${message}'; END IF; RETURN NEW; END $fn$ LANGUAGE plpgsql;
     CREATE TRIGGER ${name} BEFORE ${event} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}();`,
  );
  return () => db.exec(`DROP TRIGGER ${name} ON ${table}; DROP FUNCTION ${name}();`);
}
