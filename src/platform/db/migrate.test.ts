// Migrations and start-up checks (supplement §23.1): numbered migrations recorded in schema_migrations, a
// database newer than the binary refused, the master key created 0600 and checked against the database. On the
// test backend (SQLite, or PostgreSQL with SECBOX_TEST_BACKEND=postgres: tests/backend.ts).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../config/load";
import { openRuntime } from "../boot";
import { MasterKeyError } from "../crypto/master-key";
import { createLogger } from "../log";
import { PgDb } from "./postgres";
import { onPostgres, openTestDb, tableNames, testDatabaseEnv } from "../../tests/backend";
import { DatabaseTooNewError, migrate } from "./migrate";
import { MIGRATIONS } from "./migrations";

const root = mkdtempSync(join(tmpdir(), "secbox-migrate-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => join(root, `d${++n}`);

const emptyFile = join(root, "empty.toml");
writeFileSync(emptyFile, "");
/** The configuration of a server on `dataDir` (on PostgreSQL: with the database that belongs to it, backend.ts). */
const configFor = async (dataDir: string, env: Record<string, string> = {}) => {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const database = await testDatabaseEnv(dataDir, false);
  return loadConfig({ file: emptyFile, env: { SECBOX_SERVER_DATA_DIR: dataDir, ...database.env, ...env } });
};

const quiet = { log: createLogger("error") };

describe("migrations", () => {
  test("the migration list is numbered 1..n without gaps and every migration has SQL or a data step", () => {
    expect(MIGRATIONS.length).toBeGreaterThan(0);
    MIGRATIONS.forEach((m, i) => {
      expect(m.version).toBe(i + 1);
      expect(m.name.startsWith(String(m.version).padStart(4, "0"))).toBe(true);
      expect(m.sql.trim().length > 0 || m.data !== undefined).toBe(true);
    });
  });

  test("a fresh database gets every migration, recorded in schema_migrations; re-running applies nothing", async () => {
    const { db, drop } = await openTestDb(freshDir());
    try {
      const first = await migrate(db, MIGRATIONS, () => 1_767_225_600);
      expect(first.applied).toEqual(MIGRATIONS.map((m) => m.version));
      expect(first.current).toBe(MIGRATIONS.at(-1)!.version);
      const rows = await db.all("SELECT version, name, applied_at FROM schema_migrations ORDER BY version");
      expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied_at: 1_767_225_600 })));
      // The schema exists: the tables the platform relies on are there.
      const tables = await tableNames(db);
      for (const t of ["users", "sessions", "api_keys", "server_state", "outbox", "trackers"]) expect(tables).toContain(t);

      const again = await migrate(db);
      expect(again.applied).toEqual([]);
      expect(await db.get("SELECT COUNT(*) AS c FROM schema_migrations")).toEqual({ c: MIGRATIONS.length });
    } finally {
      await drop();
    }
  });

  test("only pending migrations run on a database at an older version", async () => {
    const { db, drop } = await openTestDb(freshDir());
    try {
      const older = [{ version: 1, name: "0001_a", sql: "CREATE TABLE a (x INTEGER)" }];
      expect((await migrate(db, older)).applied).toEqual([1]);
      const newer = [...older, { version: 2, name: "0002_b", sql: "CREATE TABLE b (y INTEGER); INSERT INTO a (x) VALUES (7);" }];
      expect((await migrate(db, newer)).applied).toEqual([2]);
      expect(await db.all("SELECT x FROM a")).toEqual([{ x: 7 }]);
    } finally {
      await drop();
    }
  });

  test("a failing migration is rolled back and not recorded", async () => {
    const { db, drop } = await openTestDb(freshDir());
    try {
      const bad = [
        { version: 1, name: "0001_ok", sql: "CREATE TABLE ok (x INTEGER)" },
        { version: 2, name: "0002_bad", sql: "CREATE TABLE half (x INTEGER); THIS IS NOT SQL;" },
      ];
      await expect(migrate(db, bad)).rejects.toThrow();
      expect(await db.get("SELECT COUNT(*) AS c FROM schema_migrations")).toEqual({ c: 0 });
      expect((await tableNames(db)).filter((t) => t === "ok" || t === "half")).toEqual([]);
    } finally {
      await drop();
    }
  });

  test("a migration with its own `postgres` text: PostgreSQL runs that text as written, SQLite the `sql`", async () => {
    const { db, drop } = await openTestDb(freshDir());
    try {
      // Untranslated: with dialect.ts's translation TEXT would become TEXT COLLATE "C" and the DO block would be torn.
      const both = [
        {
          version: 1,
          name: "0001_both",
          sql: "CREATE TABLE made_by_sqlite (x TEXT)",
          postgres: "DO $$ BEGIN CREATE TABLE made_by_pg (x TEXT); END $$;",
        },
      ];
      expect((await migrate(db, both)).applied).toEqual([1]);
      const tables = await tableNames(db);
      expect([tables.includes("made_by_sqlite"), tables.includes("made_by_pg")]).toEqual(onPostgres ? [false, true] : [true, false]);
      if (onPostgres)
        expect(await db.get("SELECT collation_name FROM information_schema.columns WHERE table_name = 'made_by_pg'")).toEqual({
          collation_name: null,
        });
    } finally {
      await drop();
    }
  });

  // The search index needs pg_trgm and btree_gin (trusted extensions: the database owner may create them). A user who
  // may create tables but not extensions gets the migration refused with what to do, and nothing applied.
  test.skipIf(!onPostgres)("PostgreSQL: migration 16 without the right to create pg_trgm fails naming the extension and the fix", async () => {
    const { url, drop } = await openTestDb(freshDir());
    const admin = await PgDb.connect(url!, { max: 1 });
    const role = `search_${Math.random().toString(16).slice(2, 10)}`;
    await admin.exec(
      `CREATE ROLE ${role} LOGIN; GRANT ALL ON SCHEMA public TO ${role}; REVOKE CREATE ON DATABASE ${new URL(url!).pathname.slice(1)} FROM PUBLIC`,
    );
    const asUser = new URL(url!);
    asUser.username = role;
    const db = await PgDb.connect(asUser.toString(), { max: 1 });
    try {
      const err = await migrate(db).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err?.message).toContain("needs the PostgreSQL extensions pg_trgm and btree_gin");
      expect(err?.message).toContain("permission denied");
      expect(err?.message).toContain("run CREATE EXTENSION pg_trgm; CREATE EXTENSION btree_gin;");
      expect(await db.get("SELECT COUNT(*) AS c FROM schema_migrations")).toEqual({ c: 0 });
      // With the extensions created by the owner, the same user migrates.
      await admin.exec("CREATE EXTENSION pg_trgm; CREATE EXTENSION btree_gin");
      expect((await migrate(db)).applied).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await db.close();
      await admin.exec(`DROP OWNED BY ${role}`);
      await admin.close();
      await drop();
      const cleanup = await PgDb.connect(process.env.SECBOX_TEST_PG_URL!, { max: 1 });
      await cleanup.exec(`DROP ROLE IF EXISTS ${role}`);
      await cleanup.close();
    }
  });

  // SQLite: BEGIN IMMEDIATE makes the second process wait (a second connection in this process would block it).
  test.skipIf(!onPostgres)("PostgreSQL: two instances starting together apply the migrations once", async () => {
    const { db, url, drop } = await openTestDb(freshDir());
    const other = await PgDb.connect(url!, { max: 2 });
    try {
      const [a, b] = await Promise.all([migrate(db), migrate(other)]);
      expect([...a.applied, ...b.applied].sort((x, y) => x - y)).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await db.get("SELECT COUNT(*) AS c FROM schema_migrations")).toEqual({ c: MIGRATIONS.length });
    } finally {
      await other.close();
      await drop();
    }
  });

  test("a database newer than the binary is refused with DatabaseTooNewError", async () => {
    const dir = freshDir();
    const config = await configFor(dir);
    const rt = await openRuntime(config, quiet);
    const future = MIGRATIONS.at(-1)!.version + 1;
    await rt.db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [future, "from_the_future", 0]);
    await expect(migrate(rt.db)).rejects.toBeInstanceOf(DatabaseTooNewError);
    await expect(migrate(rt.db)).rejects.toThrow(`schema version ${future}`);
    await rt.close();
    // openRuntime (serve, migrate and every operator command) refuses it as well.
    await expect(openRuntime(config, quiet)).rejects.toBeInstanceOf(DatabaseTooNewError);
  });
});

describe("master key", () => {
  test("created 0600 in the data directory on first start, then reused", async () => {
    const dir = freshDir();
    const rt = await openRuntime(await configFor(dir), quiet);
    await rt.close();
    const path = join(dir, "master.key");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const key = readFileSync(path, "utf8").trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);

    const sealed = rt.secretBox.seal("hello");
    const again = await openRuntime(await configFor(dir), quiet);
    expect(readFileSync(path, "utf8").trim()).toBe(key);
    expect(again.secretBox.openString(sealed)).toBe("hello");
    await again.close();
  });

  test("a configured security.master_key that does not match the database refuses to start", async () => {
    const dir = freshDir();
    await (await openRuntime(await configFor(dir), quiet)).close();
    const other = "ab".repeat(32);
    await expect(openRuntime(await configFor(dir, { SECBOX_SECURITY_MASTER_KEY: other }), quiet)).rejects.toBeInstanceOf(MasterKeyError);
    // the key file's own value, given explicitly, is accepted
    const own = readFileSync(join(dir, "master.key"), "utf8").trim();
    await (await openRuntime(await configFor(dir, { SECBOX_SECURITY_MASTER_KEY: own }), quiet)).close();
  });

  test("a replaced master.key file refuses to start; a corrupt one names the file", async () => {
    const dir = freshDir();
    await (await openRuntime(await configFor(dir), quiet)).close();
    const path = join(dir, "master.key");
    writeFileSync(path, `${"cd".repeat(32)}\n`);
    await expect(openRuntime(await configFor(dir), quiet)).rejects.toThrow("does not match");
    writeFileSync(path, "not a key\n");
    await expect(openRuntime(await configFor(dir), quiet)).rejects.toThrow(path);
  });

  test("security.master_key set on a fresh data directory: no key file is written", async () => {
    const dir = freshDir();
    const rt = await openRuntime(await configFor(dir, { SECBOX_SECURITY_MASTER_KEY: "ef".repeat(32) }), quiet);
    await rt.close();
    expect(() => statSync(join(dir, "master.key"))).toThrow();
  });
});
