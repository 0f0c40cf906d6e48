#!/usr/bin/env bun
// Trackers benchmark: N API trackers (default 1,000: 10 users × 100, the per-user default limit) against a local
// HTTP upstream, all due at the same second of the same minute. Measures
//   - time from the due second until every tracker has run (target: within 60 s),
//   - scheduler lag (start of each run − its due time) at p50 / p99, and the dispatch lag of the tick,
//   - peak RSS of the server process,
//   - p50 / p99 / max of GET /api/status during the burst, polled from a separate process (target p99 < 50 ms),
//   - server CPU per run, and event-loop stalls > 10 ms during the burst and in the 2 s before it (a baseline: stalls
//     while idle mean the machine itself is busy, and the figures are not representative).
//
//   bun scripts/bench/trackers/run.ts [--trackers 1000] [--users 10] [--concurrency 8] [--bursts 2]
//
// Burst 1 stores every tracker's first revision; later bursts (one minute apart) compare, store and trim.
// The server runs in this process (real clock, real SQLite file in a temporary directory, scheduler on, default
// scheduler.max_concurrent_api unless --concurrency); the upstream and the status prober run as child processes.
// Everything stays on 127.0.0.1 and is stopped at the end.
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import type { RunEvent } from "../../../src/platform/jobs/scheduler";
import { ApiClient, startTestServer } from "../../../src/tests/harness";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    trackers: { type: "string", default: "1000" },
    users: { type: "string", default: "10" },
    concurrency: { type: "string" },
    bursts: { type: "string", default: "2" },
  },
  strict: true,
});
const TRACKERS = Math.max(1, Number(values.trackers));
const USERS = Math.max(1, Math.min(TRACKERS, Number(values.users)));
const PER_USER = Math.ceil(TRACKERS / USERS);
const BURSTS = Math.max(1, Math.min(10, Number(values.bursts)));
const here = import.meta.dir;
const BASE = "/api/web_scraping/api_trackers";

const q = (sorted: number[], p: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;
const hwmKiB = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0);

async function readLine(stream: ReadableStream<Uint8Array>, prefix: string): Promise<string> {
  const reader = stream.getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`child exited before printing ${prefix}`);
    buf += new TextDecoder().decode(value);
    const line = buf.split("\n").find((l) => l.startsWith(prefix));
    if (line) {
      reader.releaseLock();
      return line.slice(prefix.length).trim();
    }
  }
}

// ---- upstream and server ----

const upstream = Bun.spawn(["bun", resolve(here, "upstream.ts")], { stdout: "pipe", stderr: "inherit" });
const upstreamPort = Number(await readLine(upstream.stdout, "PORT"));
const upstreamUrl = `http://127.0.0.1:${upstreamPort}`;

const env: Record<string, string> = {
  SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true",
  SECBOX_SERVER_LOG_LEVEL: "warn",
};
if (values.concurrency) env.SECBOX_SCHEDULER_MAX_CONCURRENT_API = values.concurrency;
const srv = await startTestServer({ env });
const concurrency = srv.config.scheduler.max_concurrent_api;
console.log(`server ${srv.url}, upstream ${upstreamUrl}, ${TRACKERS} trackers over ${USERS} users, max_concurrent_api ${concurrency}`);

let rssPeak = process.memoryUsage.rss();
const rssTimer = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage.rss())), 100);
// Event-loop stalls of the server process (a 2 ms timer that fires late by more than 10 ms).
const stalls: { at: number; ms: number }[] = [];
let lastTick = performance.now();
const loopTimer = setInterval(() => {
  const now = performance.now();
  if (now - lastTick > 12) stalls.push({ at: Date.now(), ms: now - lastTick - 2 });
  lastTick = now;
}, 2);

try {
  // ---- create the trackers (disabled), then enable them all early in a minute ----
  const clients: ApiClient[] = [];
  for (let i = 0; i < USERS; i++) {
    const row = await srv.services.users.create({ email: `bench${i}-${Date.now()}@example.com`, tier: "professional" });
    clients.push(new ApiClient(srv.url, { session: await srv.services.users.createSession(row.id) }));
  }
  const ids: { client: ApiClient; id: string }[] = [];
  const tCreate = performance.now();
  for (let i = 0; i < TRACKERS; i++) {
    const client = clients[Math.floor(i / PER_USER)]!;
    const res = await client.post(BASE, {
      name: `bench-${i}`,
      enabled: false,
      target: { url: `${upstreamUrl}/api/v1/releases/${i}`, headers: { accept: "application/json" } },
      config: { revisions: 3, job: { schedule: "0 * * * * *" } },
    });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
    ids.push({ client, id: res.json.id });
  }
  console.log(`created ${TRACKERS} trackers in ${fmt(performance.now() - tCreate)}`);

  // Enable in the first 40 s of a minute so that every tracker's next occurrence is the same minute boundary.
  while (new Date().getUTCSeconds() > 40) await Bun.sleep(250);
  const tEnable = performance.now();
  for (const { client, id } of ids) {
    const res = await client.put(`${BASE}/${id}`, { enabled: true });
    if (res.status !== 204) throw new Error(`enable failed: ${res.status} ${res.text}`);
  }
  const dueAt = Math.ceil(Date.now() / 60_000) * 60_000;
  console.log(`enabled in ${fmt(performance.now() - tEnable)}; all due at ${new Date(dueAt).toISOString()}`);
  const check = (await ids[0]!.client.get(`${BASE}/${ids[0]!.id}`)).json.scheduledAt;
  if (check * 1000 !== dueAt) throw new Error(`unexpected scheduledAt ${check}`);

  // ---- the bursts: the first stores every tracker's first revision, later ones compare, persist and trim ----
  const events: RunEvent[] = [];
  let current = { dueAt, resolve: () => {} };
  srv.services.trackers.scheduler.observe((e) => {
    if (e.dueAt !== current.dueAt) return;
    events.push(e);
    if (events.length === TRACKERS) current.resolve();
  });
  let pass = true;
  for (let b = 0; b < BURSTS; b++) {
    const due = dueAt + b * 60_000;
    events.length = 0;
    const allDone = new Promise<void>((r) => (current = { dueAt: due, resolve: r }));
    // Status prober (5 ms between requests) from 2 s before the due time until the burst is over.
    await Bun.sleep(Math.max(0, due - Date.now() - 2000));
    const prober = Bun.spawn(["bun", resolve(here, "probe.ts"), `${srv.url}/api/status`, "5"], { stdout: "pipe", stderr: "inherit" });
    const rssBefore = process.memoryUsage.rss();
    await Bun.sleep(Math.max(0, due - Date.now()));
    const cpuBefore = process.cpuUsage();
    const timeout = setTimeout(() => current.resolve(), 120_000);
    await allDone;
    clearTimeout(timeout);
    const cpu = process.cpuUsage(cpuBefore);
    await Bun.sleep(300);
    prober.kill("SIGTERM");
    const samples = JSON.parse((await new Response(prober.stdout).text()).trim()) as [number, number, boolean][];

    // ---- results ----
    const lastFinish = Math.max(...events.map((e) => e.finishedAt));
    const inBurst = samples.filter(([at]) => at >= due && at <= lastFinish);
    const statusLat = inBurst.map(([, ms]) => ms).sort((x, y) => x - y);
    const idleLat = samples
      .filter(([at]) => at < due)
      .map(([, ms]) => ms)
      .sort((x, y) => x - y);
    const startLag = events.map((e) => e.startedAt - e.dueAt).sort((x, y) => x - y);
    const dispatchLag = events.map((e) => e.dispatchedAt - e.dueAt).sort((x, y) => x - y);
    const runMs = events.map((e) => e.finishedAt - e.startedAt).sort((x, y) => x - y);
    const revisions = (await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM tracker_revisions"))!.n;
    const logs = (await srv.rt.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM tracker_logs"))!.n;
    const r2 = (x: number | undefined) => +(x ?? 0).toFixed(2);
    const result = {
      burst: b + 1,
      dueAt: new Date(due).toISOString(),
      trackers: TRACKERS,
      ran: events.length,
      succeeded: events.filter((e) => e.ok).length,
      revisionsStored: revisions,
      logsStored: logs,
      maxConcurrentApi: concurrency,
      allDoneAfterMs: lastFinish - due,
      schedulerDispatchLagMs: { p50: q(dispatchLag, 50), p99: q(dispatchLag, 99), max: dispatchLag.at(-1) },
      schedulerStartLagMs: { p50: q(startLag, 50), p99: q(startLag, 99), max: startLag.at(-1) },
      serverCpuMsPerRun: +((cpu.user + cpu.system) / 1000 / TRACKERS).toFixed(3),
      runDurationMs: { p50: q(runMs, 50), p99: q(runMs, 99), max: runMs.at(-1) },
      rssMiB: {
        beforeBurst: +(rssBefore / 2 ** 20).toFixed(1),
        peakSampled: +(rssPeak / 2 ** 20).toFixed(1),
        peakVmHWM: +(hwmKiB() / 1024).toFixed(1),
      },
      statusDuringBurstMs: {
        requests: statusLat.length,
        errors: inBurst.filter(([, , ok]) => !ok).length,
        p50: r2(q(statusLat, 50)),
        p99: r2(q(statusLat, 99)),
        max: r2(statusLat.at(-1)),
      },
      loadAverage1m: +loadavg()[0]!.toFixed(2),
      statusIdleBeforeMs: { requests: idleLat.length, p50: r2(q(idleLat, 50)), p99: r2(q(idleLat, 99)) },
      eventLoopStallsOver10Ms: stalls.filter((x) => x.at >= due && x.at <= lastFinish + 100).map((x) => Math.round(x.ms)),
      eventLoopStallsOver10MsIdle2sBefore: stalls.filter((x) => x.at >= due - 2000 && x.at < due).map((x) => Math.round(x.ms)),
    };
    console.log(JSON.stringify(result, null, 2));
    pass &&=
      events.length === TRACKERS && result.allDoneAfterMs <= 60_000 && result.statusDuringBurstMs.p99 < 50 && result.statusDuringBurstMs.errors === 0;
  }
  console.log(pass ? "PASS: every burst ran all trackers within 60 s with GET /api/status p99 < 50 ms" : "FAIL: targets not met");
  process.exitCode = pass ? 0 : 1;
} finally {
  clearInterval(rssTimer);
  clearInterval(loopTimer);
  await srv.stop();
  upstream.kill("SIGTERM");
}
