#!/usr/bin/env bun
// The attacker's load for scripts/bench/fairness/run.ts, in a process of its own so that its thousand connections
// do not share an event loop with the victim's timed requests. Reads one JSON argument:
//   {requests: [{url, method?, headers?, body?}], concurrency, seconds}
// runs `concurrency` loops, loop i sending requests[i % n] back to back until `seconds` have passed, then aborts
// what is still in flight (the server's scripts keep running to their time limit) and prints one line
// `RESULT {"statuses": {"504": 12, ...}, "errors": 0}`.
//
// Bun's fetch runs at most 256 requests at once unless BUN_CONFIG_MAX_HTTP_REQUESTS is raised (run.ts sets it).

interface Req {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
}

const cfg = JSON.parse(Bun.argv[2] ?? "{}") as { requests: Req[]; concurrency: number; seconds: number };
const statuses: Record<string, number> = {};
let errors = 0;
const end = Date.now() + cfg.seconds * 1000;
const abort = new AbortController();

async function loop(i: number): Promise<void> {
  const r = cfg.requests[i % cfg.requests.length]!;
  while (Date.now() < end) {
    try {
      const res = await fetch(r.url, { method: r.method ?? "GET", headers: r.headers, body: r.body, signal: abort.signal });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    } catch {
      if (abort.signal.aborted) return;
      errors++;
      await Bun.sleep(10);
    }
  }
}

const loops = Array.from({ length: cfg.concurrency }, (_, i) => loop(i));
setTimeout(() => abort.abort(), Math.max(0, end - Date.now()) + 50);
await Promise.allSettled(loops);
console.log(`RESULT ${JSON.stringify({ statuses, errors })}`);
process.exit(0);
