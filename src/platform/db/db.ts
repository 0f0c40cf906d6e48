// The small storage interface every store uses (design: "Scale path"). Promises even over bun:sqlite, so a
// PostgreSQL backend can implement the same four methods. SQL uses `?` placeholders and the subset both
// engines share.
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { join } from "node:path";

export type Param = string | number | bigint | boolean | null | Uint8Array;
export type Row = Record<string, any>;

export interface Db {
  all<T = Row>(sql: string, params?: Param[]): Promise<T[]>;
  get<T = Row>(sql: string, params?: Param[]): Promise<T | undefined>;
  run(sql: string, params?: Param[]): Promise<{ changes: number }>;
  /** Runs `fn` in one transaction; writers are serialized. Inside `fn` use only the `tx` handle given
   *  (calls on the outer Db would wait for the transaction to end). Nested `tx.tx` joins the outer one. */
  tx<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /** A number that changes when another connection (the CLI next to a running server) commits a change; this
   *  connection's own writes leave it as it is. Caches of stored data poll it to see such changes at once. */
  externalVersion(): number;
  close(): void;
}

/** How often watchExternalCommits looks for another process's commits (the CLI next to a running server). */
const EXTERNAL_COMMIT_POLL_MS = 100;

/**
 * Calls `onCommit` (within ~100 ms) after another connection commits to the database — operator commands work on
 * the data directory while a server runs and "the server sees the changes at once" (supplement §23.3). For
 * caches of stored data. Returns the function that stops watching.
 */
export function watchExternalCommits(db: Db, onCommit: () => void, onError: (err: unknown) => void): () => void {
  let version = db.externalVersion();
  const timer = setInterval(() => {
    try {
      const now = db.externalVersion();
      if (now === version) return;
      version = now;
      onCommit();
    } catch (err) {
      onError(err);
    }
  }, EXTERNAL_COMMIT_POLL_MS);
  return () => clearInterval(timer);
}

/** Serializes async critical sections (SQLite has a single writer anyway). */
class Mutex {
  private tail: Promise<void> = Promise.resolve();
  async lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const prev = this.tail;
    this.tail = prev.then(() => next);
    await prev;
    return release;
  }
}

export class SqliteDb implements Db {
  readonly raw: Database;
  private readonly writeLock = new Mutex();

  constructor(path: string) {
    this.raw = new Database(path, { create: true });
    this.raw.exec("PRAGMA busy_timeout = 5000");
    this.raw.exec("PRAGMA journal_mode = WAL");
    this.raw.exec("PRAGMA synchronous = NORMAL");
    this.raw.exec("PRAGMA foreign_keys = ON");
  }

  externalVersion(): number {
    return (this.raw.query("PRAGMA data_version").get() as { data_version: number }).data_version;
  }

  private stmt(sql: string) {
    return this.raw.query(sql);
  }

  async all<T = Row>(sql: string, params: Param[] = []): Promise<T[]> {
    return this.stmt(sql).all(...(params as SQLQueryBindings[])) as T[];
  }

  async get<T = Row>(sql: string, params: Param[] = []): Promise<T | undefined> {
    return (this.stmt(sql).get(...(params as SQLQueryBindings[])) ?? undefined) as T | undefined;
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
    const res = this.stmt(sql).run(...(params as SQLQueryBindings[]));
    return { changes: res.changes };
  }

  async tx<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
    const release = await this.writeLock.lock();
    const view = this.txView();
    try {
      this.raw.exec("BEGIN IMMEDIATE");
      try {
        const out = await fn(view);
        this.raw.exec("COMMIT");
        return out;
      } catch (err) {
        this.raw.exec("ROLLBACK");
        throw err;
      }
    } finally {
      release();
    }
  }

  /** The Db handed to a transaction body: same connection, no locking, nested tx joins. */
  private txView(): Db {
    return {
      all: (s, p) => this.all(s, p),
      get: (s, p) => this.get(s, p),
      run: async (s, p = []) => this.runNow(s, p),
      tx: (fn) => fn(this.txView()),
      externalVersion: () => this.externalVersion(),
      close: () => {},
    };
  }

  close() {
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

/**
 * Opens `<dataDir>/secbox.db`, creating the directory (0700) when missing. The database is created 0600 before
 * SQLite opens it (SQLite gives `-wal` and `-shm` the mode of the database file), and an existing database,
 * `-wal` or `-shm` readable by group or others is tightened to 0600 (reported through `onTightened`).
 */
export function openDatabase(dataDir: string, onTightened?: OnModeTightened): SqliteDb {
  if (!existsSync(dataDir)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    chmodSync(dataDir, 0o700);
  }
  const path = join(dataDir, "secbox.db");
  if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) tightenToOwnerOnly(file, onTightened);
  return new SqliteDb(path);
}

/** `?, ?, ?` for an IN list. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => "?").join(", ");
}
