// Token buckets by key, one second's worth each, refilled continuously: the one rate mechanism of the features
// (responders' hits per handle, Secbox.kv's stored bytes per user). A bucket may go below zero: what was reserved
// ahead of time by callers that wait for it. Full buckets carry no state and are dropped when the map grows.
// Owns: the buckets. Must never: wait itself (callers decide what to do with a wait), or read a clock of its own
// choosing (the caller's, so tests may hold it still).

interface Bucket {
  tokens: number;
  /** When `tokens` was counted (ms of the clock). */
  at: number;
  perSecond: number;
}

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly now: () => number,
    /** Buckets kept before the full ones are swept. */
    private readonly max = 10_000,
  ) {}

  /** Takes `n` tokens of `key` at `perSecond` (≤ 0: unlimited) if that many are there; false (nothing taken) if not. */
  take(key: string, n: number, perSecond: number): boolean {
    if (perSecond <= 0) return true;
    const b = this.refilled(key, perSecond);
    if (b.tokens < n) return false;
    b.tokens -= n;
    return true;
  }

  /** How long (ms) `n` tokens of `key` would have to wait now; 0 when they are there. Takes nothing. */
  waitFor(key: string, n: number, perSecond: number): number {
    if (perSecond <= 0) return 0;
    const b = this.refilled(key, perSecond);
    return b.tokens >= n ? 0 : ((n - b.tokens) * 1000) / perSecond;
  }

  /** Takes `n` tokens of `key` now, into debt if need be (the caller waits waitFor's time first or after). */
  reserve(key: string, n: number, perSecond: number): void {
    if (perSecond <= 0) return;
    this.refilled(key, perSecond).tokens -= n;
  }

  /** Puts back `n` tokens reserved and not used. */
  giveBack(key: string, n: number): void {
    const b = this.buckets.get(key);
    if (b) b.tokens = Math.min(b.perSecond, b.tokens + n);
  }

  private refilled(key: string, perSecond: number): Bucket {
    const now = this.now();
    let b = this.buckets.get(key);
    if (b === undefined) {
      if (this.buckets.size >= this.max) this.sweep(now);
      this.buckets.set(key, (b = { tokens: perSecond, at: now, perSecond }));
      return b;
    }
    // (a changed rate, e.g. a new tier, applies from now on)
    b.perSecond = perSecond;
    b.tokens = Math.min(perSecond, b.tokens + (Math.max(0, now - b.at) * perSecond) / 1000);
    b.at = now;
    return b;
  }

  private sweep(now: number): void {
    for (const [key, b] of this.buckets) if (b.tokens + ((now - b.at) * b.perSecond) / 1000 >= b.perSecond) this.buckets.delete(key);
  }
}
