#!/usr/bin/env bun
// Export memory benchmark (issue 21 "Streams"): a user with 1,000 responders × 100 tracked records exports without
// holding the whole file in memory. A real `secbox serve` process on a temporary data directory; the records are
// written with plain SQL before it starts (the benchmark measures the export). The client reads the streamed file
// and only counts its bytes; the server's RSS (/proc/<pid>/status) is sampled every 10 ms.
//
//   bun scripts/bench/user-data/export-memory.ts [--responders 1000] [--records 100] [--body 1024]
//
// Reports the file size, the server's RSS before, its peak during the export, and peak growth ÷ file size (below 1
// means the server never held even one copy of the file).
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createServices } from "../../../src/app";
import { loadConfig } from "../../../src/config/load";
import { openRuntime } from "../../../src/platform/boot";
import type { SqliteDb } from "../../../src/platform/db/sqlite";
import { createLogger } from "../../../src/platform/log";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    responders: { type: "string", default: "1000" },
    records: { type: "string", default: "100" },
    body: { type: "string", default: "1024" },
  },
  strict: true,
});
const RESPONDERS = Number(values.responders);
const RECORDS = Number(values.records);
const BODY = Number(values.body);
const MAIN = resolve(import.meta.dir, "../../../src/main.ts");
const dataDir = mkdtempSync(join(tmpdir(), "secbox-export-bench-"));
const env = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SECBOX_"))),
  SECBOX_SERVER_DATA_DIR: dataDir,
  SECBOX_SERVER_LOG_LEVEL: "error",
  SECBOX_SCHEDULER_ENABLED: "false",
  SECBOX_SUBSCRIPTIONS_TIERS_ULTIMATE_MAX_RESPONDERS: String(RESPONDERS),
};

// ---- data, written before the server starts ----
const t0 = performance.now();
const rt = await openRuntime(loadConfig({ file: "", env }), { log: createLogger("error") });
const services = createServices(rt);
const user = await services.users.create({ email: "bench@example.com", tier: "ultimate" });
const session = await services.users.createSession(user.id);
const raw = (rt.db as SqliteDb).raw;
const now = Math.floor(Date.now() / 1000);
const body = new Uint8Array(BODY).fill(120);
const headers = JSON.stringify([
  ["content-type", "application/json"],
  ["host", "bench.localhost"],
  ["user-agent", "bench/1.0"],
]);
raw.transaction(() => {
  const r = raw.prepare(
    `INSERT INTO responders (id, user_id, name, path_type, path, path_lower, subdomain_prefix, method, enabled, requests_to_track, status_code, secrets, created_at, updated_at)
     VALUES (?, ?, ?, '=', ?, ?, '', 'POST', 1, ?, 200, '"none"', ?, ?)`,
  );
  const q = raw.prepare(
    `INSERT INTO responder_requests (id, responder_id, created_at, duration_ms, method, path, headers, body, body_size, response_status, response_headers, response_body, response_body_size, response_truncated)
     VALUES (?, ?, ?, 1, 'POST', ?, ?, ?, ?, 200, ?, ?, ?, 0)`,
  );
  for (let i = 0; i < RESPONDERS; i++) {
    const id = Bun.randomUUIDv7();
    r.run(id, user.id, `responder-${i}`, `/r${i}`, `/r${i}`, RECORDS, now, now);
    for (let k = 0; k < RECORDS; k++) q.run(Bun.randomUUIDv7(), id, now - k, `/r${i}/${k}`, headers, body, BODY, headers, body, BODY);
  }
})();
rt.close();
console.log(
  `data: ${RESPONDERS} responders × ${RECORDS} records (${BODY}-byte request and response bodies) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
);

// ---- the server ----
const port = await (async () => {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const p = s.port!;
  await s.stop(true);
  return p;
})();
const proc = Bun.spawn(["bun", "run", MAIN, "serve", "--port", String(port)], { env, stdout: "ignore", stderr: "inherit" });
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`http://127.0.0.1:${port}/api/status`)).ok) break;
  } catch {
    if (i > 400) throw new Error("server did not start");
  }
  await Bun.sleep(50);
}
const rssKiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"))?.[1] ?? 0);
await Bun.sleep(500);
const before = rssKiB();
let peak = before;
const sampler = setInterval(() => (peak = Math.max(peak, rssKiB())), 10);

const t1 = performance.now();
const res = await fetch(`http://127.0.0.1:${port}/api/user/data/_export`, {
  method: "POST",
  headers: { cookie: `secbox_session=${session}`, "content-type": "application/json" },
  body: JSON.stringify({ include: { responders: { type: "all", includeHistory: true } } }),
});
let bytes = 0;
for await (const chunk of res.body!) bytes += chunk.byteLength;
const seconds = (performance.now() - t1) / 1000;
clearInterval(sampler);
peak = Math.max(peak, rssKiB());
proc.kill();
await proc.exited;
rmSync(dataDir, { recursive: true, force: true });

const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;
console.log(
  `export: HTTP ${res.status}, ${(bytes / 1048576).toFixed(0)} MiB in ${seconds.toFixed(1)} s (${(bytes / 1048576 / seconds).toFixed(0)} MiB/s)`,
);
console.log(
  `server RSS: ${mib(before)} before, ${mib(peak)} peak; growth ${mib(peak - before)} = ${(((peak - before) * 1024) / bytes).toFixed(2)} × the file`,
);
