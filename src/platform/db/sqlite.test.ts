// The SQLite backend's transaction isolation (sqlite.ts): a transaction that awaits between its statements does not
// expose its uncommitted rows to reads made meanwhile outside it (they used to run on the same connection, inside
// it), a rolled-back row is never seen, and a write that returns rows (UPDATE … RETURNING through get/all) waits for
// the transaction instead of racing it.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, SqliteDb } from "./sqlite";

const dir = mkdtempSync(join(tmpdir(), "secbox-sqlite-"));
const db = openDatabase(dir);
afterAll(async () => {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
});

test("reads outside a transaction see only committed rows, never a rolled-back one", async () => {
  await db.exec("CREATE TABLE t (id TEXT PRIMARY KEY, n INTEGER NOT NULL)");
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let inserted!: () => void;
  const wrote = new Promise<void>((r) => (inserted = r));
  const tx = db.tx(async (t) => {
    await t.run("INSERT INTO t (id, n) VALUES ('a', 1)");
    expect(await t.get("SELECT n FROM t WHERE id = 'a'")).toEqual({ n: 1 }); // the transaction sees its own row
    inserted();
    await gate;
    throw new Error("roll back");
  });
  await wrote;
  expect(await db.get("SELECT n FROM t WHERE id = 'a'")).toBeUndefined();
  expect(await db.all("SELECT id FROM t")).toEqual([]);
  release();
  await expect(tx).rejects.toThrow("roll back");
  expect(await db.all("SELECT id FROM t")).toEqual([]);
  await db.tx(async (t) => void (await t.run("INSERT INTO t (id, n) VALUES ('b', 2)")));
  expect(await db.all("SELECT id, n FROM t")).toEqual([{ id: "b", n: 2 }]); // committed: seen at once
});

test("UPDATE … RETURNING through get waits for an open transaction and sees its commit", async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const tx = db.tx(async (t) => {
    await t.run("UPDATE t SET n = 10 WHERE id = 'b'");
    await gate;
  });
  const returning = db.get<{ n: number }>("UPDATE t SET n = n + 1 WHERE id = 'b' RETURNING n");
  await Bun.sleep(50);
  release();
  await tx;
  expect(await returning).toEqual({ n: 11 });
});

test("externalVersion counts the commits of announcing connections (CLI processes) only: not this process's other connections", async () => {
  await db.exec("CREATE TABLE IF NOT EXISTS server_state (key TEXT PRIMARY KEY, value TEXT NOT NULL); CREATE TABLE IF NOT EXISTS e (n INTEGER)");
  const v0 = db.externalVersion();
  // another connection of this process (as a work thread's), not announcing
  const own = new SqliteDb(join(dir, "secbox.db"));
  await own.run("INSERT INTO e (n) VALUES (1)");
  await own.tx(async (t) => void (await t.run("INSERT INTO e (n) VALUES (2)")));
  expect(db.externalVersion()).toBe(v0);
  // a CLI process's connection: each commit (a statement, a transaction) counts
  const cli = new SqliteDb(join(dir, "secbox.db"), { announceCommits: true });
  await cli.run("INSERT INTO e (n) VALUES (3)");
  const v1 = db.externalVersion();
  expect(v1).not.toBe(v0);
  await cli.tx(async (t) => void (await t.run("INSERT INTO e (n) VALUES (4)")));
  expect(db.externalVersion()).not.toBe(v1);
  // a rolled-back transaction announces nothing
  const v2 = db.externalVersion();
  await expect(
    cli.tx(async (t) => {
      await t.run("INSERT INTO e (n) VALUES (5)");
      throw new Error("roll back");
    }),
  ).rejects.toThrow("roll back");
  expect(db.externalVersion()).toBe(v2);
  await own.close();
  await cli.close();
});
