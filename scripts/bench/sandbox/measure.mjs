// Timing shared by both sides of the sandbox benchmark (ours under Bun, the peer under Node), so both are
// measured the same way: warm-up in the scenario's shape, then `n` calls at `concurrency`, sampling RSS.

/** p50/p90/p99 latency (ms), throughput and RSS growth (MB) of one scenario. */
export function stats(samples, elapsedMs, rssBase, rssPeak) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: q(0.5), p90: q(0.9), p99: q(0.99), opsPerSec: (samples.length / elapsedMs) * 1000, rssGrowthMb: (rssPeak - rssBase) / 1048576 };
}

/** Runs `fn` `warm` times then `n` times with `concurrency` in flight; `gc` is the runtime's collector, if any. */
export async function measure(n, warm, fn, concurrency = 1, gc = () => {}) {
  let w = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (w < warm) await fn(-1 - w++);
  }));
  gc();
  const rssBase = process.memoryUsage().rss;
  let rssPeak = rssBase;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 5);
  const samples = [];
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const t = performance.now();
        await fn(i);
        samples.push(performance.now() - t);
      }
    }),
  );
  const elapsed = performance.now() - started;
  clearInterval(sampler);
  rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  return stats(samples, elapsed, rssBase, rssPeak);
}
