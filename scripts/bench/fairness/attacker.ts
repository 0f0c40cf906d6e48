#!/usr/bin/env bun
// The attacker's load for scripts/bench/fairness/run.ts, in a process of its own (run.ts starts it at nice 10: it
// stands in for a remote client, whose CPU would not be the server's) and from a loopback address of its own
// (127.0.0.2 by default: the server's per-source caps see another client than the victim's 127.0.0.1).
// Reads one argument, the path of a JSON file:
//   {host, port, localAddress, seconds, groups: [{requests: [{method?, path, headers?, body? | bodyFile?}], concurrency, newConnections?}]}
// For each group runs `concurrency` loops, loop i sending requests[i % n] back to back on its own keep-alive
// connection (with `newConnections`: a new connection per request, `Connection: close`, as `ab` does) until
// `seconds` have passed (a refused or failed request is followed by the next at once; a connection the server
// closed is reopened), then closes everything (the server's scripts keep running to their
// time limit) and prints one line `RESULT {"groups": [{"statuses": {"200": 12, "503": 40}, "errors": 0, ...}]}`.
import { readFileSync } from "node:fs";
import { Conn, type Req } from "./client";

interface FileReq extends Req {
  bodyFile?: string;
}
interface Group {
  requests: FileReq[];
  concurrency: number;
  newConnections?: boolean;
}
interface Cfg {
  host: string;
  port: number;
  localAddress: string;
  seconds: number;
  groups: Group[];
}

const cfg = JSON.parse(readFileSync(Bun.argv[2]!, "utf8")) as Cfg;
const bodies = new Map<string, Uint8Array>();
for (const g of cfg.groups)
  for (const r of g.requests)
    if (r.bodyFile !== undefined) {
      if (!bodies.has(r.bodyFile)) bodies.set(r.bodyFile, new Uint8Array(readFileSync(r.bodyFile)));
      r.body = bodies.get(r.bodyFile)!;
      delete r.bodyFile;
    }

interface Tally {
  statuses: Record<string, number>;
  errors: number;
  /** First few error messages (what kind of failure). */
  errorSamples: string[];
  /** Answers that closed their connection (Connection: close). */
  closed: number;
  /** Own requests' latency, ms: median and max of the answered ones. */
  ms: number[];
}

const end = Date.now() + cfg.seconds * 1000;
const conns = new Set<Conn>();
let stopping = false;

async function loop(g: Group, i: number, t: Tally): Promise<void> {
  const base = g.requests[i % g.requests.length]!;
  const req = g.newConnections ? { ...base, headers: { ...base.headers, connection: "close" } } : base;
  let conn = new Conn(cfg.host, cfg.port, cfg.localAddress);
  conns.add(conn);
  while (Date.now() < end && !stopping) {
    const t0 = performance.now();
    try {
      const res = await conn.request(req);
      t.statuses[res.status] = (t.statuses[res.status] ?? 0) + 1;
      if (res.headers.connection?.toLowerCase() === "close" && !g.newConnections) t.closed++;
      if (g.newConnections) {
        conn.close();
        conns.delete(conn);
        conn = new Conn(cfg.host, cfg.port, cfg.localAddress);
        conns.add(conn);
      }
      if (t.ms.length < 200_000) t.ms.push(performance.now() - t0);
    } catch (err) {
      if (stopping) return;
      t.errors++;
      if (t.errorSamples.length < 3)
        t.errorSamples.push(`${String((err as Error)?.message ?? err)} (after ${Math.round(performance.now() - t0)} ms)`);
      conn.close();
      conns.delete(conn);
      conn = new Conn(cfg.host, cfg.port, cfg.localAddress);
      conns.add(conn);
      await Bun.sleep(10);
    }
  }
}

const tallies: Tally[] = cfg.groups.map(() => ({ statuses: {}, errors: 0, errorSamples: [], closed: 0, ms: [] }));
const loops = cfg.groups.flatMap((g, gi) => Array.from({ length: g.concurrency }, (_, i) => loop(g, i, tallies[gi]!)));
const timer = setTimeout(
  () => {
    stopping = true;
    for (const c of conns) c.close();
  },
  Math.max(0, end - Date.now()) + 50,
);
await Promise.race([Promise.allSettled(loops), Bun.sleep(cfg.seconds * 1000 + 2000)]);
clearTimeout(timer);
stopping = true;
for (const c of conns) c.close();
const q = (xs: number[], p: number) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]! * 10) / 10;
};
console.log(
  `RESULT ${JSON.stringify({ groups: tallies.map((t) => ({ statuses: t.statuses, errors: t.errors, errorSamples: t.errorSamples, closed: t.closed, p50ms: q(t.ms, 50), maxMs: q(t.ms, 100) })) })}`,
);
process.exit(0);
