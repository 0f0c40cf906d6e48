// Which serving processes are alive (several instances on one PostgreSQL database). Claims — an outbox message being
// sent, a tracker being run — name the instance that holds them (`db.instanceId`); a claim of a dead instance is
// void, and only that instance's claims are.
//
// PostgreSQL: every connection of a process carries `application_name = secbox/<instanceId>` (postgres.ts), so an
// instance is alive exactly while the server has a session of it: a process that dies (kill -9, a lost host once TCP
// gives up) loses its sessions and its claims are void at once. Serving processes also register in `instances` and
// renew `heartbeat_at` every HEARTBEAT_MS: one whose heartbeat is older than LEASE_MS (wall-clock ms, never the
// injectable test clock) is dead too, even with sessions open (a process stuck without running its event loop). A
// clean stop deletes the row; rows dead for a day are removed. (Connect directly, not through a transaction-pooling
// proxy: sessions are also what LISTEN and the scheduler's advisory lock need.)
// SQLite: one serving process per file, so every claim but this process's own belongs to a dead one (how the
// outbox treated claims at start before there were instances); nothing is written.
import { hostname } from "node:os";
import type { Db, Param } from "./db";

export const HEARTBEAT_MS = 1000;
/** application_name of a process's PostgreSQL sessions: this prefix and its instance id. */
export const APPLICATION_PREFIX = "secbox/";
export const LEASE_MS = 5000;
const PRUNE_AFTER_MS = 24 * 3600 * 1000;

/** A condition over `column` (an instance id) that is true when that instance is dead, with its parameters. */
export function deadInstance(db: Db, column: string, nowMs = Date.now()): { sql: string; params: Param[] } {
  if (db.topology === "single-process") return { sql: `(${column} IS NULL OR ${column} <> ?)`, params: [db.instanceId] };
  return {
    sql: `(${column} IS NULL
      OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.application_name = '${APPLICATION_PREFIX}' || ${column})
      OR EXISTS (SELECT 1 FROM instances i WHERE i.id = ${column} AND i.heartbeat_at < ?))`,
    params: [nowMs - LEASE_MS],
  };
}

export class InstanceRegistry {
  private timer: ReturnType<typeof setInterval> | undefined;
  private beating: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Registers this process (PostgreSQL) and starts the heartbeat. */
  async start(): Promise<void> {
    if (this.db.topology !== "multi-instance" || this.timer) return;
    const now = Date.now();
    await this.db.run("INSERT INTO instances (id, host, pid, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?)", [
      this.db.instanceId,
      hostname(),
      process.pid,
      now,
      now,
    ]);
    await this.db.run("DELETE FROM instances WHERE heartbeat_at < ?", [now - PRUNE_AFTER_MS]);
    this.timer = setInterval(() => {
      if (this.beating) return;
      this.beating = this.beat()
        .catch(this.onError)
        .finally(() => (this.beating = undefined));
    }, HEARTBEAT_MS);
    (this.timer as { unref?: () => void }).unref?.();
  }

  private async beat(): Promise<void> {
    const now = Date.now();
    const { changes } = await this.db.run("UPDATE instances SET heartbeat_at = ? WHERE id = ?", [now, this.db.instanceId]);
    if (changes === 0) {
      // Removed meanwhile (pruned after a long stall): register again.
      await this.db.run("INSERT INTO instances (id, host, pid, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?)", [
        this.db.instanceId,
        hostname(),
        process.pid,
        now,
        now,
      ]);
    }
  }

  /** Stops the heartbeat and deregisters: this instance's claims are void from now on. */
  async stop(): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.beating;
    await this.db.run("DELETE FROM instances WHERE id = ?", [this.db.instanceId]).catch(this.onError);
  }

  /** The instances alive now (operators: `secbox status`-like views, tests). */
  live(): Promise<{ id: string; host: string; pid: number; started_at: number; heartbeat_at: number }[]> {
    return this.db.all("SELECT id, host, pid, started_at, heartbeat_at FROM instances WHERE heartbeat_at >= ? ORDER BY started_at, id", [
      Date.now() - LEASE_MS,
    ]);
  }
}
