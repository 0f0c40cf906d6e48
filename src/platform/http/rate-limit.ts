// Sliding-window counters behind an interface (design: in-memory state is swappable for a shared store): in memory
// here (one process: SQLite), in the database for several instances (platform/db/rate-events.ts: PostgreSQL).
export interface RateLimiter {
  /** Seconds until a new event would be allowed, or 0 when it is allowed now. */
  retryAfter(key: string, nowMs: number): Promise<number>;
  /** Records one event. */
  hit(key: string, nowMs: number): Promise<void>;
  reset(key: string): Promise<void>;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly events = new Map<string, number[]>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  private live(key: string, nowMs: number): number[] {
    const list = (this.events.get(key) ?? []).filter((t) => t > nowMs - this.windowMs);
    if (list.length === 0) this.events.delete(key);
    else this.events.set(key, list);
    return list;
  }

  async retryAfter(key: string, nowMs: number): Promise<number> {
    const list = this.live(key, nowMs);
    if (list.length < this.limit) return 0;
    return Math.max(1, Math.ceil((list[list.length - this.limit]! + this.windowMs - nowMs) / 1000));
  }

  async hit(key: string, nowMs: number): Promise<void> {
    const list = this.live(key, nowMs);
    list.push(nowMs);
    this.events.set(key, list);
    if (this.events.size > 100_000) this.sweep(nowMs);
  }

  async reset(key: string): Promise<void> {
    this.events.delete(key);
  }

  private sweep(nowMs: number) {
    for (const key of this.events.keys()) this.live(key, nowMs);
  }
}
