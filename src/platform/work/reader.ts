// A work thread's own read-only connection to the SQLite database (pool.ts "Reads"): opened on a task's first
// `ctx.db()`, kept for the thread's life. WAL: each statement sees the last commit, never a transaction in progress.
// It implements the Db interface so stores' read functions take it as they are; anything that writes throws.
// Owns: the connection. Must never: write, or be handed to code that expects to write.
import { Database, type SQLQueryBindings } from "bun:sqlite";
import { randomUUID } from "node:crypto";
import type { Db, Param, Row } from "../db/db";

const readOnly = () => new Error("the work thread's database connection is read-only");

export class ReaderDb implements Db {
  readonly dialect = "sqlite" as const;
  readonly topology = "single-process" as const;
  readonly instanceId = randomUUID();
  private readonly conn: Database;

  constructor(path: string) {
    this.conn = new Database(path, { readonly: true });
    this.conn.exec("PRAGMA busy_timeout = 5000");
  }

  async all<T = Row>(sql: string, params: Param[] = []): Promise<T[]> {
    return this.conn.query(sql).all(...(params as SQLQueryBindings[])) as T[];
  }

  async get<T = Row>(sql: string, params: Param[] = []): Promise<T | undefined> {
    return (this.conn.query(sql).get(...(params as SQLQueryBindings[])) ?? undefined) as T | undefined;
  }

  async run(): Promise<{ changes: number }> {
    throw readOnly();
  }

  async exec(): Promise<void> {
    throw readOnly();
  }

  async tx<T>(): Promise<T> {
    throw readOnly();
  }

  afterCommit(fn: () => void): void {
    fn();
  }

  async lock(): Promise<void> {}

  async publish(): Promise<void> {}

  subscribe(): () => void {
    return () => {};
  }

  externalVersion(): number {
    return (this.conn.query("PRAGMA data_version").get() as { data_version: number }).data_version;
  }

  async elect(): Promise<() => Promise<void>> {
    throw readOnly();
  }

  async close(): Promise<void> {
    this.conn.close();
  }
}
