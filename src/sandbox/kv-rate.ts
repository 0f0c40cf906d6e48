// How fast one user may write stored bytes through Secbox.kv (tier `kv_write_bytes_per_second`, issue 29: six
// responders writing 1 MiB values as fast as they could kept both cores busy and another user's scripts waited for
// one). A token bucket per user (per responder without storage accounting) holds one second's worth; a set takes
// its bytes (key + value) and, when the bucket runs short, waits until they have been earned: the waiting holds no
// worker (the script is parked on its await). A set that could not be earned within its run's remaining time waits
// out that time and then fails with the script's KV error, writing nothing (failing at once would let a writer as
// fast as it can start its next hit at once: the rate would bound nothing). Counted per instance, in real time (not the injectable
// clock of TTLs). A refusal is an outcome (its message), which kv.ts throws as the script's KV error.
// Owns: how a set waits for its bytes (the buckets are platform/core/token-buckets.ts). Must never: delay another
// user's sets, or let one set wait past its run's end.
import { setTimeout as wait } from "node:timers/promises";
import { TokenBuckets } from "../platform/core/token-buckets";

/** Time a set's wait leaves its run for whatever follows the set (the run's result, a last call). */
const MARGIN_MS = 250;
export class KvWriteRate {
  private readonly buckets: TokenBuckets;

  constructor(now: () => number = () => performance.now()) {
    this.buckets = new TokenBuckets(now);
  }

  /**
   * Takes `bytes` from `who`'s bucket at `perSecond` (0: unlimited): null at once, or after the wait that earns
   * them; the refusal's message when that wait would not end `MARGIN_MS` before `remainingMs` (after waiting out
   * the run's time), or when `signal` aborts (the run ended) during the wait (the bytes then go back).
   */
  take(who: string, bytes: number, perSecond: number, remainingMs: number, signal?: AbortSignal): Promise<string | null> {
    // Earlier sets still waiting have taken their bytes already (the bucket below zero): this one waits behind them.
    const waitMs = this.buckets.waitFor(who, bytes, perSecond);
    if (waitMs > 0 && waitMs > remainingMs - MARGIN_MS) {
      // Refused, but only when the run's time is nearly spent: refused at once, a writer as fast as it can would only
      // come back sooner (a new hit, a new 1 MiB value built and copied), and the rate would bound nothing.
      const refusal = `KV write rate limit reached (${perSecond} bytes per second): this set would wait ${Math.ceil(waitMs)} ms`;
      return sleep(Math.max(0, remainingMs - MARGIN_MS), signal, refusal, "KV: the run ended");
    }
    this.buckets.reserve(who, bytes, perSecond);
    if (waitMs === 0) return Promise.resolve(null);
    return sleep(waitMs, signal, null, "KV: the run ended", () => this.buckets.giveBack(who, bytes)); // not written: not spent
  }
}

/** `done` after `ms`, or `ended` (after `undo`) as soon as `signal` aborts. */
async function sleep(ms: number, signal: AbortSignal | undefined, done: string | null, ended: string, undo?: () => void): Promise<string | null> {
  try {
    await wait(ms, undefined, { signal });
    return done;
  } catch {
    undo?.();
    return ended;
  }
}
