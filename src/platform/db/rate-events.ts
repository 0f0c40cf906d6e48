// Rate limits shared by the instances on one PostgreSQL database (sign-in failures, recovery emails): the same
// sliding window as MemoryRateLimiter (platform/http/rate-limit.ts), kept in `rate_events` (migration 0013). Keys
// are stored as SHA-256 hashes (they hold emails and client addresses). On SQLite (one process) the in-memory
// limiter is used: rateLimiter() picks.
import { createHash } from "node:crypto";
import { MemoryRateLimiter, type RateLimiter } from "../http/rate-limit";
import type { Db } from "./db";

/** One hit in this many also deletes every expired event of the limiter (keys never seen again). */
const PRUNE_EVERY = 100;

const hashKey = (key: string) => createHash("sha256").update(key).digest("base64url");

export class DbRateLimiter implements RateLimiter {
  constructor(
    private readonly db: Db,
    readonly name: string,
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  async retryAfter(key: string, nowMs: number): Promise<number> {
    const rows = await this.db.all<{ at: number }>("SELECT at FROM rate_events WHERE name = ? AND key = ? AND at > ? ORDER BY at DESC LIMIT ?", [
      this.name,
      hashKey(key),
      nowMs - this.windowMs,
      this.limit,
    ]);
    if (rows.length < this.limit) return 0;
    return Math.max(1, Math.ceil((rows[rows.length - 1]!.at + this.windowMs - nowMs) / 1000));
  }

  async hit(key: string, nowMs: number): Promise<void> {
    const k = hashKey(key);
    await this.db.tx(async (tx) => {
      await tx.run("DELETE FROM rate_events WHERE name = ? AND key = ? AND at <= ?", [this.name, k, nowMs - this.windowMs]);
      await tx.run("INSERT INTO rate_events (name, key, at) VALUES (?, ?, ?)", [this.name, k, nowMs]);
    });
    if (Math.random() * PRUNE_EVERY < 1) await this.db.run("DELETE FROM rate_events WHERE name = ? AND at <= ?", [this.name, nowMs - this.windowMs]);
  }

  async reset(key: string): Promise<void> {
    await this.db.run("DELETE FROM rate_events WHERE name = ? AND key = ?", [this.name, hashKey(key)]);
  }
}

/** The limiter for this database: in memory with one serving process (SQLite), shared by several instances
 *  (PostgreSQL). */
export function rateLimiter(db: Db, name: string, limit: number, windowMs: number): RateLimiter {
  return db.topology === "multi-instance" ? new DbRateLimiter(db, name, limit, windowMs) : new MemoryRateLimiter(limit, windowMs);
}
