// The SQLite backend (the default): `<data_dir>/secbox.db` in WAL mode, one serving process.
//
// Two connections: the writer runs every write and every transaction; a read-only reader runs the SELECTs made outside
// a transaction. A transaction awaits between its statements (other requests run meanwhile), so with a single
// connection those requests' reads would run inside it and see rows it has not committed — or that a rollback then
// removes. The reader only ever sees committed data (WAL: each read sees the last commit), as every read on
// PostgreSQL does. Writers are serialized by a mutex (SQLite has one writer anyway): `run` waits for a transaction
// in progress, and a transaction for the writes before it.
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { randomUUID } from "node:crypto";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Db, Param, Row } from "./db";
import { Mutex } from "./mutex";

const PRAGMAS = ["PRAGMA busy_timeout = 5000", "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON"];

/** A statement for the reader: a SELECT (an INSERT/UPDATE/DELETE … RETURNING read through all/get goes to the
 *  writer). */
const isRead = (sql: string) => /^\s*SELECT\b/i.test(sql);

export class SqliteDb implements Db {
  readonly dialect = "sqlite" as const;
  readonly instanceId = randomUUID();
  /** The writer connection (migrations, tests and benchmarks use it directly). */
  readonly raw: Database;
  private readonly reader: Database;
  private readonly writeLock = new Mutex();

  constructor(path: string) {
    this.raw = new Database(path, { create: true });
    for (const p of PRAGMAS) this.raw.exec(p);
    // Read-only: a write sent to it by mistake fails at once instead of racing the writer.
    this.reader = new Database(path, { readonly: true });
    this.reader.exec("PRAGMA busy_timeout = 5000");
  }

  externalVersion(): number {
    return (this.raw.query("PRAGMA data_version").get() as { data_version: number }).data_version;
  }

  async all<T = Row>(sql: string, params: Param[] = []): Promise<T[]> {
    if (!isRead(sql)) return this.writing(() => this.raw.query(sql).all(...(params as SQLQueryBindings[])) as T[]);
    return this.reader.query(sql).all(...(params as SQLQueryBindings[])) as T[];
  }

  async get<T = Row>(sql: string, params: Param[] = []): Promise<T | undefined> {
    if (!isRead(sql)) return this.writing(() => (this.raw.query(sql).get(...(params as SQLQueryBindings[])) ?? undefined) as T | undefined);
    return (this.reader.query(sql).get(...(params as SQLQueryBindings[])) ?? undefined) as T | undefined;
  }

  /** A write that returns rows (UPDATE … RETURNING): on the writer, after the writes before it. */
  private async writing<T>(fn: () => T): Promise<T> {
    const release = await this.writeLock.lock();
    try {
      return fn();
    } finally {
      release();
    }
  }

  async run(sql: string, params: Param[] = []): Promise<{ changes: number }> {
    const release = await this.writeLock.lock();
    try {
      return this.runNow(sql, params);
    } finally {
      release();
    }
  }

  private runNow(sql: string, params: Param[]) {
    const res = this.raw.query(sql).run(...(params as SQLQueryBindings[]));
    return { changes: res.changes };
  }

  async exec(sql: string): Promise<void> {
    const release = await this.writeLock.lock();
    try {
      this.raw.exec(sql);
    } finally {
      release();
    }
  }

  async tx<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
    const release = await this.writeLock.lock();
    const committed: (() => void)[] = [];
    const view = this.txView(committed);
    let out: T;
    try {
      this.raw.exec("BEGIN IMMEDIATE");
      try {
        out = await fn(view);
        this.raw.exec("COMMIT");
      } catch (err) {
        this.raw.exec("ROLLBACK");
        throw err;
      }
    } finally {
      release();
    }
    for (const f of committed) f();
    return out;
  }

  afterCommit(fn: () => void): void {
    fn();
  }

  /** The Db handed to a transaction body: the writer connection, no locking, nested tx joins. */
  private txView(committed: (() => void)[]): Db {
    const view: Db = {
      dialect: this.dialect,
      instanceId: this.instanceId,
      all: async <T = Row>(s: string, p: Param[] = []) => this.raw.query(s).all(...(p as SQLQueryBindings[])) as T[],
      get: async <T = Row>(s: string, p: Param[] = []) => (this.raw.query(s).get(...(p as SQLQueryBindings[])) ?? undefined) as T | undefined,
      run: async (s, p = []) => this.runNow(s, p),
      exec: async (s) => {
        this.raw.exec(s);
      },
      tx: (fn) => fn(view),
      afterCommit: (fn) => void committed.push(fn),
      lock: async () => {},
      publish: async () => {},
      subscribe: (topic, fn) => this.subscribe(topic, fn),
      externalVersion: () => this.externalVersion(),
      elect: (name, onChange) => this.elect(name, onChange),
      close: async () => {},
    };
    return view;
  }

  /** Writers are serialized already. */
  async lock(_key: string): Promise<void> {}

  /** One serving process per SQLite file: nobody to tell. */
  async publish(_topic: string, _payload: string): Promise<void> {}

  subscribe(_topic: string, _fn: (payload: string) => void): () => void {
    return () => {};
  }

  /** The one serving process leads. */
  async elect(_name: string, onChange: (leader: boolean) => void): Promise<() => Promise<void>> {
    onChange(true);
    return async () => {};
  }

  async close(): Promise<void> {
    this.reader.close();
    this.raw.close();
  }
}

/** Told about a file whose mode was looser than 0600 and has been tightened (the caller logs it). */
export type OnModeTightened = (path: string, previousMode: number) => void;

/**
 * Makes an existing file owner-only (0600) when group or others have any access; reports the old mode. Files
 * of the data directory hold secrets (hashed tokens, encrypted secrets, the master key).
 */
export function tightenToOwnerOnly(path: string, onTightened?: OnModeTightened): void {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return; // absent
  }
  if ((mode & 0o077) === 0) return;
  chmodSync(path, 0o600);
  onTightened?.(path, mode);
}

/** Creates the data directory (0700) when missing. */
export function ensureDataDir(dataDir: string): void {
  if (!existsSync(dataDir)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    chmodSync(dataDir, 0o700);
  }
}

/**
 * Opens `<dataDir>/secbox.db`, creating the directory (0700) when missing. The database is created 0600 before
 * SQLite opens it (SQLite gives `-wal` and `-shm` the mode of the database file), and an existing database,
 * `-wal` or `-shm` readable by group or others is tightened to 0600 (reported through `onTightened`).
 */
export function openDatabase(dataDir: string, onTightened?: OnModeTightened): SqliteDb {
  ensureDataDir(dataDir);
  const path = join(dataDir, "secbox.db");
  if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) tightenToOwnerOnly(file, onTightened);
  return new SqliteDb(path);
}
