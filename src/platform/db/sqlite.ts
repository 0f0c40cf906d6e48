// The SQLite backend (the default): `<data_dir>/secbox.db` in WAL mode, one serving process.
//
// Two connections: the writer runs every write and every transaction; a read-only reader runs the SELECTs made outside
// a transaction. A transaction awaits between its statements (other requests run meanwhile), so with a single
// connection those requests' reads would run inside it and see rows it has not committed — or that a rollback then
// removes. The reader only ever sees committed data (WAL: each read sees the last commit), as every read on
// PostgreSQL does. Writers are serialized by a mutex (SQLite has one writer anyway): `run` waits for a transaction
// in progress, and a transaction for the writes before it.
//
// Off the event loop (issue 29): a write whose cost grows with user input (a 1 MiB Secbox.kv value) can run on a work
// thread's own connection while the main thread holds the writer (`holdWriter`: the mutex, so the main connection
// never waits on SQLite's lock). And with `offloadCheckpoints` the main connection never checkpoints (copying the
// WAL into the database and syncing both can take 100 ms and more on a busy disk): a work thread does, passively,
// a moment after the main thread's commits.
//
// Commits of other processes (the CLI next to a running server, §23.3): a CLI process opens the database with
// `announceCommits` and each of its commits also counts up `server_state.external_commits`, which externalVersion
// reads. (SQLite's own PRAGMA data_version cannot tell a CLI commit from one of this process's work threads.)
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { randomUUID } from "node:crypto";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Db, Param, Row } from "./db";
import { Mutex } from "./mutex";

const PRAGMAS = ["PRAGMA busy_timeout = 5000", "PRAGMA journal_mode = WAL", "PRAGMA synchronous = NORMAL", "PRAGMA foreign_keys = ON"];

/** Counted up by each commit of an announcing connection (a CLI process). */
const ANNOUNCE =
  "INSERT INTO server_state (key, value) VALUES ('external_commits', '1') ON CONFLICT (key) DO UPDATE SET value = CAST(CAST(server_state.value AS INTEGER) + 1 AS TEXT)";
const ANNOUNCED = "SELECT value FROM server_state WHERE key = 'external_commits'";
/** How long after a commit of the main connection its WAL frames are checkpointed (offloadCheckpoints). */
const CHECKPOINT_DELAY_MS = 1000;

export interface SqliteOptions {
  /** A CLI process: every commit is announced to running servers (externalVersion). */
  announceCommits?: boolean;
}

/** A statement for the reader: a SELECT (an INSERT/UPDATE/DELETE … RETURNING read through all/get goes to the
 *  writer). */
const isRead = (sql: string) => /^\s*SELECT\b/i.test(sql);

export class SqliteDb implements Db {
  readonly dialect = "sqlite" as const;
  readonly topology = "single-process" as const;
  readonly instanceId = randomUUID();
  /** The writer connection (migrations, tests and benchmarks use it directly). */
  readonly raw: Database;
  private readonly reader: Database;
  private readonly writeLock = new Mutex();
  private readonly announce: boolean;
  private checkpointer: (() => Promise<unknown>) | undefined;
  private checkpointTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(path: string, opts: SqliteOptions = {}) {
    this.raw = new Database(path, { create: true });
    for (const p of PRAGMAS) this.raw.exec(p);
    // Read-only: a write sent to it by mistake fails at once instead of racing the writer.
    this.reader = new Database(path, { readonly: true });
    this.reader.exec("PRAGMA busy_timeout = 5000");
    this.announce = opts.announceCommits ?? false;
  }

  /** Counts the commits of CLI processes (announceCommits); this process's own writes, from any thread, leave it. */
  externalVersion(): number {
    try {
      return Number((this.reader.query(ANNOUNCED).get() as { value: string } | null)?.value ?? 0);
    } catch {
      return 0; // before the first migration
    }
  }

  /**
   * From now on the main connection never checkpoints: `checkpoint` (a work thread's passive checkpoint) runs a
   * moment after its commits instead. Its own connection's commits checkpoint as usual (on that thread).
   */
  offloadCheckpoints(checkpoint: () => Promise<unknown>): void {
    this.checkpointer = checkpoint;
    this.raw.exec("PRAGMA wal_autocheckpoint = 0");
  }

  /** Counts a commit for running servers (a CLI process); nothing before the schema exists (first migrations). */
  private announceCommit(): void {
    if (!this.announce) return;
    try {
      this.raw.query(ANNOUNCE).run();
    } catch {
      // no server_state yet: no server can be running on this database
    }
  }

  /** After a commit outside tx(): announced (CLI), and a checkpoint scheduled (offloadCheckpoints). */
  private committed(): void {
    this.announceCommit();
    this.scheduleCheckpoint();
  }

  private scheduleCheckpoint(): void {
    if (!this.checkpointer || this.checkpointTimer) return;
    this.checkpointTimer = setTimeout(() => {
      this.checkpointTimer = undefined;
      this.checkpointer?.().catch(() => {}); // a later commit schedules another
    }, CHECKPOINT_DELAY_MS);
    this.checkpointTimer.unref?.();
  }

  /** Takes the writer for a write made elsewhere (a work thread's connection): the main connection writes nothing
   *  until the returned function is called. */
  holdWriter(): Promise<() => void> {
    return this.writeLock.lock();
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
      const out = fn();
      this.committed();
      return out;
    } finally {
      release();
    }
  }

  async run(sql: string, params: Param[] = []): Promise<{ changes: number }> {
    const release = await this.writeLock.lock();
    try {
      const out = this.runNow(sql, params);
      this.committed();
      return out;
    } finally {
      release();
    }
  }

  private runNow(sql: string, params: Param[]) {
    const res = this.raw.query(sql).run(...(params as SQLQueryBindings[]));
    return { changes: res.changes };
  }

  /** Statements without parameters (migrations: not announced, the schema may not be there yet). */
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
        this.announceCommit();
        this.raw.exec("COMMIT");
      } catch (err) {
        this.raw.exec("ROLLBACK");
        throw err;
      }
      this.scheduleCheckpoint();
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
      topology: this.topology,
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
    clearTimeout(this.checkpointTimer);
    this.checkpointer = undefined;
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
export function openDatabase(dataDir: string, onTightened?: OnModeTightened, opts: SqliteOptions = {}): SqliteDb {
  ensureDataDir(dataDir);
  const path = join(dataDir, "secbox.db");
  if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) tightenToOwnerOnly(file, onTightened);
  return new SqliteDb(path, opts);
}
