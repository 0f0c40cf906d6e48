// The PostgreSQL backend (`[database] url = "postgres://…"`): Bun's built-in SQL client, a pool of connections, so
// several Secbox instances can share one database (README "Running several instances").
//
// - The SQL text is SQLite's (`?` placeholders): dialect.ts turns it into `$n` once per distinct statement; Bun
//   prepares each statement per connection.
// - Values come back as the SQLite backend returns them, so stores and the wire format do not know the difference:
//   int8 and numeric (BIGINT columns, COUNT, SUM) as numbers (Bun gives strings; Secbox's integers are timestamps,
//   sizes and counts, far below 2^53), booleans as 1/0, bytea as a plain Uint8Array. Parameters: booleans go as
//   1/0 (SQLite's integers-as-booleans), undefined as NULL.
// - tx: `sql.begin` on its own pooled connection, READ COMMITTED. Nested transactions join the outer one.
// - Events: one LISTEN connection on the channel `secbox_events`; a payload is "<instance> <topic> <payload>", and
//   an instance ignores its own. NOTIFY inside a transaction is delivered when it commits, never after a rollback.
// - elect: `pg_try_advisory_lock` on a dedicated connection, tried every ELECT_POLL_MS by those not leading; the
//   leader checks its connection as often. A leader that dies (kill -9, lost host) closes its connection, the
//   server ends the session and frees the lock, and the next poll of another instance takes it over.
import { SQL, type ReservedSQL } from "bun";
import { randomUUID } from "node:crypto";
import { invalid } from "../core/errors";
import type { Db, Param, Row } from "./db";
import { toPostgres } from "./dialect";
import { APPLICATION_PREFIX } from "./instances";

export const EVENTS_CHANNEL = "secbox_events";
/** How often an instance that does not lead tries to take leadership over (and the leader checks its connection). */
export const ELECT_POLL_MS = 500;

const INT8 = 20;
const NUMERIC = 1700;
const BOOL = 16;
const BYTEA = 17;

export interface PgOptions {
  /** Pool size (connections for queries and transactions; LISTEN and leadership use their own). */
  max?: number;
  /** Publish a "commit" event after each committed write: CLI processes do, so servers see their changes
   *  (externalVersion). Servers publish targeted events instead. */
  announceCommits?: boolean;
}

type Conn = Pick<SQL, "unsafe">;

function toParams(params: Param[]): unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < params.length; i++) {
    const v = params[i];
    if (typeof v === "boolean" || v === undefined) {
      out ??= params.slice();
      out[i] = v === undefined ? null : v ? 1 : 0;
    }
  }
  return out ?? params;
}

/** Rows as the SQLite backend gives them (see the file comment). */
function convert<T>(result: any): T[] {
  const columns = result.columns as { name: string; type: number }[] | null | undefined;
  if (!columns || result.length === 0) return result as T[];
  const fix: { name: string; type: number }[] = [];
  for (const c of columns) if (c.type === INT8 || c.type === NUMERIC || c.type === BOOL || c.type === BYTEA) fix.push(c);
  if (fix.length === 0) return result as T[];
  for (const row of result as Row[]) {
    for (const { name, type } of fix) {
      const v = row[name];
      if (v === null || v === undefined) continue;
      if (type === BOOL) row[name] = v ? 1 : 0;
      else if (type === BYTEA)
        row[name] = v instanceof Uint8Array && v.constructor !== Uint8Array ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : v;
      else row[name] = typeof v === "number" ? v : Number(v);
    }
  }
  return result as T[];
}

/**
 * PostgreSQL text cannot hold U+0000 (SQLite's can): a parameter with one fails with 22021. That is bad input, not a
 * server fault: 400 INVALID_INPUT (supplement §2), whatever statement it reached.
 */
function mapError(err: unknown): unknown {
  const e = err as { errno?: string; message?: string };
  if (e?.errno === "22021" || /invalid byte sequence for encoding "UTF8": 0x00/.test(e?.message ?? "")) {
    return invalid("text must not contain the NUL character (U+0000)");
  }
  return err;
}

export class PgDb implements Db {
  readonly dialect = "postgres" as const;
  readonly topology = "multi-instance" as const;
  readonly instanceId = randomUUID();
  readonly sql: SQL;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private listening: Awaited<ReturnType<SQL["listen"]>> | undefined;
  private commits = 0;
  private readonly announce: boolean;
  private readonly elections = new Set<() => Promise<void>>();

  private constructor(url: string, opts: PgOptions) {
    this.sql = new SQL({
      url,
      max: opts.max ?? 10,
      idleTimeout: 60,
      // Liveness of this process for the other instances (instances.ts): its sessions carry its id.
      connection: { application_name: `${APPLICATION_PREFIX}${this.instanceId}` },
    });
    this.announce = opts.announceCommits ?? false;
  }

  /** Connects (fails fast when the server is unreachable) and starts listening for events. */
  static async connect(url: string, opts: PgOptions = {}): Promise<PgDb> {
    const db = new PgDb(url, opts);
    try {
      await db.sql.unsafe("SELECT 1");
      db.listening = await db.sql.listen(EVENTS_CHANNEL, (payload) => db.deliver(payload));
    } catch (err) {
      await db.sql.close().catch(() => {});
      throw err;
    }
    return db;
  }

  private deliver(message: string) {
    const a = message.indexOf(" ");
    const b = message.indexOf(" ", a + 1);
    if (a < 0 || b < 0) return;
    if (message.slice(0, a) === this.instanceId) return;
    const topic = message.slice(a + 1, b);
    if (topic === "commit") this.commits++;
    const set = this.handlers.get(topic);
    if (!set) return;
    const payload = message.slice(b + 1);
    for (const fn of set) {
      try {
        fn(payload);
      } catch {
        // a subscriber's failure is its own
      }
    }
  }

  externalVersion(): number {
    return this.commits;
  }

  private static async query<T>(conn: Conn, sql: string, params: Param[]): Promise<T[]> {
    try {
      return convert<T>(await conn.unsafe(toPostgres(sql), toParams(params) as any[]));
    } catch (err) {
      throw mapError(err);
    }
  }

  private static async write(conn: Conn, sql: string, params: Param[]): Promise<number> {
    try {
      return (await conn.unsafe(toPostgres(sql), toParams(params) as any[])).affectedRows ?? 0;
    } catch (err) {
      throw mapError(err);
    }
  }

  async all<T = Row>(sql: string, params: Param[] = []): Promise<T[]> {
    return PgDb.query<T>(this.sql, sql, params);
  }

  async get<T = Row>(sql: string, params: Param[] = []): Promise<T | undefined> {
    return (await PgDb.query<T>(this.sql, sql, params))[0];
  }

  async run(sql: string, params: Param[] = []): Promise<{ changes: number }> {
    const changes = await PgDb.write(this.sql, sql, params);
    if (this.announce && changes > 0) await this.publishOn(this.sql, "commit", "");
    return { changes };
  }

  async exec(sql: string): Promise<void> {
    await this.sql.unsafe(sql).simple();
  }

  async tx<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
    const committed: (() => void)[] = [];
    const out = (await this.sql.begin(async (t) => {
      const result = await fn(this.view(t, committed));
      if (this.announce) await this.publishOn(t, "commit", "");
      return [result];
    })) as unknown as [T];
    for (const f of committed) f();
    return out[0];
  }

  afterCommit(fn: () => void): void {
    fn();
  }

  /** The Db handed to a transaction body: its connection; nested tx joins. */
  private view(t: Conn, committed: (() => void)[]): Db {
    const view: Db = {
      dialect: this.dialect,
      topology: this.topology,
      instanceId: this.instanceId,
      all: <R = Row>(s: string, p: Param[] = []) => PgDb.query<R>(t, s, p),
      get: async <R = Row>(s: string, p: Param[] = []) => (await PgDb.query<R>(t, s, p))[0],
      run: async (s, p = []) => ({ changes: await PgDb.write(t, s, p) }),
      exec: async (s) => {
        await t.unsafe(s).simple();
      },
      tx: (inner) => inner(view),
      afterCommit: (fn) => void committed.push(fn),
      lock: async (key) => {
        await t.unsafe("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [key]);
      },
      publish: (topic, payload) => this.publishOn(t, topic, payload),
      subscribe: (topic, f) => this.subscribe(topic, f),
      externalVersion: () => this.externalVersion(),
      elect: (name, onChange) => this.elect(name, onChange),
      close: async () => {},
    };
    return view;
  }

  /** Outside a transaction there is nothing to hold a lock for (a statement of its own commits at once). */
  async lock(_key: string): Promise<void> {}

  private async publishOn(conn: Conn, topic: string, payload: string): Promise<void> {
    await conn.unsafe("SELECT pg_notify($1, $2)", [EVENTS_CHANNEL, `${this.instanceId} ${topic} ${payload}`]);
  }

  publish(topic: string, payload: string): Promise<void> {
    return this.publishOn(this.sql, topic, payload);
  }

  subscribe(topic: string, fn: (payload: string) => void): () => void {
    let set = this.handlers.get(topic);
    if (!set) this.handlers.set(topic, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
    };
  }

  async elect(name: string, onChange: (leader: boolean) => void): Promise<() => Promise<void>> {
    let conn: ReservedSQL | undefined;
    let leader = false;
    let stopped = false;
    const key = `secbox:leader:${name}`;
    const drop = () => {
      const c = conn;
      conn = undefined;
      if (c) void c.close().catch(() => {});
    };
    const attempt = async () => {
      try {
        conn ??= await this.sql.reserve();
        if (leader) {
          await conn.unsafe("SELECT 1");
          return;
        }
        const [row] = await conn.unsafe("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS ok", [key]);
        if (row?.ok === true && !stopped) {
          leader = true;
          onChange(true);
        }
      } catch {
        drop();
        if (leader) {
          leader = false;
          onChange(false);
        }
      }
    };
    await attempt();
    let running: Promise<void> | undefined;
    const timer = setInterval(() => {
      if (running || stopped) return;
      running = attempt().finally(() => (running = undefined));
    }, ELECT_POLL_MS);
    const resign = async () => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await running;
      // Closing the connection ends the session, which frees the lock.
      const c = conn;
      conn = undefined;
      leader = false; // resigning: onChange is for leadership lost, not given up
      if (c) await c.close().catch(() => {});
      this.elections.delete(resign);
    };
    this.elections.add(resign);
    return resign;
  }

  async close(): Promise<void> {
    for (const resign of [...this.elections]) await resign();
    await this.listening?.unlisten().catch(() => {});
    await this.sql.close({ timeout: 5 });
  }
}
