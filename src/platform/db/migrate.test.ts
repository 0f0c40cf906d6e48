// Migrations and start-up checks (supplement §23.1): numbered migrations recorded in schema_migrations, a
// database newer than the binary refused, the master key created 0600 and checked against the database.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../config/load";
import { openRuntime } from "../boot";
import { MasterKeyError } from "../crypto/master-key";
import { createLogger } from "../log";
import { openDatabase } from "./db";
import { DatabaseTooNewError, migrate } from "./migrate";
import { MIGRATIONS } from "./migrations";

const root = mkdtempSync(join(tmpdir(), "secbox-migrate-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => join(root, `d${++n}`);

const emptyFile = join(root, "empty.toml");
writeFileSync(emptyFile, "");
const configFor = (dataDir: string, env: Record<string, string> = {}) => loadConfig({ file: emptyFile, env: { SECBOX_SERVER_DATA_DIR: dataDir, ...env } });
const quiet = { log: createLogger("error") };

describe("migrations", () => {
  test("the migration list is numbered 1..n without gaps and every file has SQL", () => {
    expect(MIGRATIONS.length).toBeGreaterThan(0);
    MIGRATIONS.forEach((m, i) => {
      expect(m.version).toBe(i + 1);
      expect(m.name.startsWith(String(m.version).padStart(4, "0"))).toBe(true);
      expect(m.sql.trim().length).toBeGreaterThan(0);
    });
  });

  test("a fresh database gets every migration, recorded in schema_migrations; re-running applies nothing", () => {
    const db = openDatabase(freshDir());
    try {
      const first = migrate(db, MIGRATIONS, () => 1_767_225_600);
      expect(first.applied).toEqual(MIGRATIONS.map((m) => m.version));
      expect(first.current).toBe(MIGRATIONS.at(-1)!.version);
      const rows = db.raw.query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").all();
      expect(rows).toEqual(MIGRATIONS.map((m) => ({ version: m.version, name: m.name, applied_at: 1_767_225_600 })));
      // The schema exists: the tables the platform relies on are there.
      const tables = (db.raw.query("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
      for (const t of ["users", "sessions", "api_keys", "server_state"]) expect(tables).toContain(t);

      const again = migrate(db);
      expect(again.applied).toEqual([]);
      expect(db.raw.query("SELECT COUNT(*) AS c FROM schema_migrations").get()).toEqual({ c: MIGRATIONS.length });
    } finally {
      db.close();
    }
  });

  test("only pending migrations run on a database at an older version", () => {
    const db = openDatabase(freshDir());
    try {
      const older = [{ version: 1, name: "0001_a", sql: "CREATE TABLE a (x INTEGER)" }];
      expect(migrate(db, older).applied).toEqual([1]);
      const newer = [...older, { version: 2, name: "0002_b", sql: "CREATE TABLE b (y INTEGER); INSERT INTO a (x) VALUES (7);" }];
      expect(migrate(db, newer).applied).toEqual([2]);
      expect(db.raw.query("SELECT x FROM a").all()).toEqual([{ x: 7 }]);
    } finally {
      db.close();
    }
  });

  test("a failing migration is rolled back and not recorded", () => {
    const db = openDatabase(freshDir());
    try {
      const bad = [
        { version: 1, name: "0001_ok", sql: "CREATE TABLE ok (x INTEGER)" },
        { version: 2, name: "0002_bad", sql: "CREATE TABLE half (x INTEGER); THIS IS NOT SQL;" },
      ];
      expect(() => migrate(db, bad)).toThrow();
      expect(db.raw.query("SELECT COUNT(*) AS c FROM schema_migrations").get()).toEqual({ c: 0 });
      expect(db.raw.query("SELECT name FROM sqlite_master WHERE name IN ('ok', 'half')").all()).toEqual([]);
    } finally {
      db.close();
    }
  });

  test("a database newer than the binary is refused with DatabaseTooNewError", async () => {
    const dir = freshDir();
    const db = openDatabase(dir);
    migrate(db);
    const future = MIGRATIONS.at(-1)!.version + 1;
    db.raw.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(future, "from_the_future", 0);
    expect(() => migrate(db)).toThrow(DatabaseTooNewError);
    expect(() => migrate(db)).toThrow(`schema version ${future}`);
    db.close();
    // openRuntime (serve, migrate and every operator command) refuses it as well.
    await expect(openRuntime(configFor(dir), quiet)).rejects.toBeInstanceOf(DatabaseTooNewError);
  });
});

describe("master key", () => {
  test("created 0600 in the data directory on first start, then reused", async () => {
    const dir = freshDir();
    const rt = await openRuntime(configFor(dir), quiet);
    rt.close();
    const path = join(dir, "master.key");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const key = readFileSync(path, "utf8").trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);

    const sealed = rt.secretBox.seal("hello");
    const again = await openRuntime(configFor(dir), quiet);
    expect(readFileSync(path, "utf8").trim()).toBe(key);
    expect(again.secretBox.openString(sealed)).toBe("hello");
    again.close();
  });

  test("a configured security.master_key that does not match the database refuses to start", async () => {
    const dir = freshDir();
    (await openRuntime(configFor(dir), quiet)).close();
    const other = "ab".repeat(32);
    await expect(openRuntime(configFor(dir, { SECBOX_SECURITY_MASTER_KEY: other }), quiet)).rejects.toBeInstanceOf(MasterKeyError);
    // the key file's own value, given explicitly, is accepted
    const own = readFileSync(join(dir, "master.key"), "utf8").trim();
    (await openRuntime(configFor(dir, { SECBOX_SECURITY_MASTER_KEY: own }), quiet)).close();
  });

  test("a replaced master.key file refuses to start; a corrupt one names the file", async () => {
    const dir = freshDir();
    (await openRuntime(configFor(dir), quiet)).close();
    const path = join(dir, "master.key");
    writeFileSync(path, `${"cd".repeat(32)}\n`);
    await expect(openRuntime(configFor(dir), quiet)).rejects.toThrow("does not match");
    writeFileSync(path, "not a key\n");
    await expect(openRuntime(configFor(dir), quiet)).rejects.toThrow(path);
  });

  test("security.master_key set on a fresh data directory: no key file is written", async () => {
    const dir = freshDir();
    const rt = await openRuntime(configFor(dir, { SECBOX_SECURITY_MASTER_KEY: "ef".repeat(32) }), quiet);
    rt.close();
    expect(() => statSync(join(dir, "master.key"))).toThrow();
  });
});
