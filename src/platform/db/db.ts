// The small storage interface every store uses (design: "Scale path"). Two backends implement it: SQLite
// (sqlite.ts, the default) and PostgreSQL (postgres.ts, Bun's built-in client); open.ts opens the configured one.
// Two separate properties describe a backend:
// - `dialect` (dialect.ts): which SQL it speaks. SQL uses `?` placeholders and the subset both engines share; the
//   few differences are dialect seams in dialect.ts, chosen through `db.dialect`.
// - `topology` (topology.ts): one serving process, or several instances sharing the database.
//
// Beyond the four data methods the interface carries what several instances on one database need, with a
// single-process form:
// - publish/subscribe: cross-instance events (cache invalidation, KV watch). PostgreSQL: NOTIFY on one channel,
//   delivered on commit when published inside a transaction; an instance never receives its own events. SQLite:
//   there are no other instances; publish does nothing.
// - externalVersion: another *process* (the CLI next to a running server) committed a change. CLI processes announce
//   their commits (openDb's `announceCommits`): SQLite counts them in server_state, PostgreSQL publishes them on the
//   event channel.
// - lock (inside a transaction): an exclusive named lock until the transaction ends. PostgreSQL: an advisory
//   transaction lock; SQLite: nothing (writers are serialized anyway).
// - elect: leadership among the processes sharing the database (the scheduler leader). PostgreSQL: a session
//   advisory lock held on a dedicated connection; SQLite: the one serving process leads at once.
// This module does not re-export a backend: import SqliteDb/openDatabase from sqlite.ts, PgDb from postgres.ts.
import type { Dialect } from "./dialect";
import type { Topology } from "./topology";

export type { Dialect } from "./dialect";
export type { Topology } from "./topology";
export type Param = string | number | bigint | boolean | null | Uint8Array;
export type Row = Record<string, any>;

export interface Db {
  /** Which SQL this backend speaks. */
  readonly dialect: Dialect;
  /** Whether other instances may share the database (claims, leadership, shared rate limits, events). */
  readonly topology: Topology;
  /** Random id of this process's connection to the database (events and claims name it). */
  readonly instanceId: string;
  all<T = Row>(sql: string, params?: Param[]): Promise<T[]>;
  get<T = Row>(sql: string, params?: Param[]): Promise<T | undefined>;
  run(sql: string, params?: Param[]): Promise<{ changes: number }>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /** Runs `fn` in one transaction. Inside `fn` use only the `tx` handle given (the outer Db is another connection:
   *  it does not see the transaction's rows, and its writes may wait for the transaction's locks). Nested `tx.tx`
   *  joins the outer one. SQLite serializes writers; PostgreSQL runs transactions at READ COMMITTED, each on its own
   *  pooled connection: invariants over several rows take a `lock` first. */
  tx<T>(fn: (tx: Db) => Promise<T>): Promise<T>;
  /** Runs `fn` once the transaction commits (never after a rollback); outside a transaction, at once. */
  afterCommit(fn: () => void): void;
  /** Inside a transaction: waits for, then holds until the transaction ends, an exclusive lock named `key` (outside a
   *  transaction: nothing). */
  lock(key: string): Promise<void>;
  /** Tells the other instances about a change; inside a transaction only once (and if) it commits. */
  publish(topic: string, payload: string): Promise<void>;
  /** Events of `topic` published by other instances (never this one's own). Returns the unsubscribe function. */
  subscribe(topic: string, fn: (payload: string) => void): () => void;
  /** A number that changes when another process (the CLI next to a running server) commits a change; this
   *  process's own writes leave it as it is. Caches of stored data poll it to see such changes at once. */
  externalVersion(): number;
  /** Runs for leadership of `name` among the processes sharing the database. `onChange(true)` when this process
   *  becomes the leader, `onChange(false)` when it loses leadership (connection lost). Resolves after the first
   *  attempt (so a lone instance leads from its start); the returned function resigns (without an onChange). */
  elect(name: string, onChange: (leader: boolean) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** How often watchExternalCommits looks for another process's commits (the CLI next to a running server). */
const EXTERNAL_COMMIT_POLL_MS = 100;

/**
 * Calls `onCommit` (within ~100 ms) after another process commits to the database — operator commands work on
 * the data while a server runs and "the server sees the changes at once" (supplement §23.3). For caches of stored
 * data. Returns the function that stops watching.
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

/** `?, ?, ?` for an IN list. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => "?").join(", ");
}
