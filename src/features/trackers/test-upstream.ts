// A real HTTP upstream on 127.0.0.1 for tracker tests (not a mock of our code: the server under test reaches it
// through platform/net like any remote API). Paths:
//   /value          the current `state.value` (content-type from state.contentType)
//   /echo           JSON {method, path, headers, body} of the request
//   /status/<n>     an empty response with status n
//   /slow?ms=N      waits N ms, then "slow"
//   /big?bytes=N    N bytes of "a"
//   /gzip           state.value gzip-compressed with content-encoding gzip
//   /flaky          500 while state.fail, else state.value
//   /count          increments and returns a per-path counter
import { gzipSync } from "node:zlib";

export interface Upstream {
  url: string;
  state: { value: string; contentType: string; fail: boolean };
  /** Requests seen, by path. */
  hits: Map<string, number>;
  /** Highest number of requests in flight at once, and the current number. */
  concurrency: { now: number; peak: number };
  log: { path: string; at: number; headers: Record<string, string>; body: string }[];
  stop(): void;
}

export function startUpstream(): Upstream {
  const state = { value: '{"version":"1.0.0"}', contentType: "application/json", fail: false };
  const hits = new Map<string, number>();
  const concurrency = { now: 0, peak: 0 };
  const log: Upstream["log"] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const u = new URL(req.url);
      const path = u.pathname;
      hits.set(path, (hits.get(path) ?? 0) + 1);
      const body = await req.text();
      log.push({ path, at: Date.now(), headers: Object.fromEntries(req.headers), body });
      concurrency.now++;
      concurrency.peak = Math.max(concurrency.peak, concurrency.now);
      try {
        if (path === "/value") return new Response(state.value, { headers: { "content-type": state.contentType } });
        if (path === "/echo") {
          return Response.json({ method: req.method, path, headers: Object.fromEntries(req.headers), body });
        }
        if (path.startsWith("/status/")) return new Response(null, { status: Number(path.slice(8)) });
        if (path === "/slow") {
          await Bun.sleep(Number(u.searchParams.get("ms") ?? "100"));
          return new Response("slow");
        }
        if (path === "/big") return new Response("a".repeat(Number(u.searchParams.get("bytes") ?? "1000")));
        if (path === "/gzip") return new Response(gzipSync(state.value), { headers: { "content-encoding": "gzip", "content-type": "text/plain" } });
        if (path === "/flaky") return state.fail ? new Response("down", { status: 500 }) : new Response(state.value);
        if (path === "/count") return new Response(String(hits.get(path)));
        return new Response("not found", { status: 404 });
      } finally {
        concurrency.now--;
      }
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, state, hits, concurrency, log, stop: () => server.stop(true) };
}
