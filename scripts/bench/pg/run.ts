#!/usr/bin/env bun
// Responder throughput on PostgreSQL next to SQLite (issue 26), side by side in one run on loopback with wrk:
//   (a)  a bare Bun.serve returning a fixed body — the ceiling
//   (s)  Secbox on SQLite: a static responder with capture on (requestsToTrack 30), and a scripted one
//   (m)  the same on SQLite from another checkout (`--baseline DIR`, e.g. `git archive main | tar -x -C DIR`): the
//        regression check of the SQLite path against main
//   (p1) Secbox on PostgreSQL, one instance
//   (p2) two Secbox instances on one PostgreSQL database, wrk split over both (half the connections each, as an L4
//        balancer would spread them); req/s summed
// Every server runs from source (`bun src/main.ts serve`), batched capture (the default), the bench user's in-flight
// limit raised so wrk's 50 connections are not refused. Targets are measured in turn, `--rounds` times, each reporting
// its best round (a noisy neighbour on a shared machine penalises all alike).
//
//   apt-get install -y wrk postgresql
//   scripts/pg/cluster.sh start                      # prints the cluster URL (a throwaway cluster, fsync off)
//   bun scripts/bench/pg/run.ts --pg postgres://postgres@127.0.0.1:PORT/postgres [--baseline DIR]
//       [--duration 10] [--warmup 3] [--connections 50] [--rounds 2]
//
// The cluster runs with fsync off (scripts/pg/cluster.sh): commits cost what a server with a battery-backed cache
// or synchronous_commit = off would see; SQLite runs with its defaults (WAL, synchronous = NORMAL).
import { SQL, spawn, spawnSync, type Subprocess } from "bun";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    pg: { type: "string", default: process.env.SECBOX_TEST_PG_URL ?? "" },
    baseline: { type: "string" },
    duration: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    connections: { type: "string", default: "50" },
    rounds: { type: "string", default: "2" },
  },
  strict: true,
});
if (!values.pg) {
  console.error("--pg URL (an admin URL of a cluster: scripts/pg/cluster.sh start) is required");
  process.exit(2);
}
const DURATION = Math.max(1, Number(values.duration) || 10);
const WARMUP = Math.max(0, Number(values.warmup) || 0);
const CONNECTIONS = Math.max(2, Number(values.connections) || 50);
const ROUNDS = Math.max(1, Number(values.rounds) || 2);
const root = resolve(import.meta.dir, "../../..");
const BODY = '{"ok":true}';
const SCRIPT = `(() => ({
  statusCode: 200,
  headers: { "content-type": "application/json" },
  body: { ok: true, path: context.path, method: context.method, q: context.query },
}))()`;
const MASTER_KEY = randomBytes(32).toString("hex");

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

async function waitFor(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const r = await fetch(url);
      await r.arrayBuffer();
      if (r.status < 500) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${url}`);
    await Bun.sleep(100);
  }
}

const toMs = (v: string) => {
  const m = /^([\d.]+)(us|ms|s)$/.exec(v.trim());
  if (!m) return NaN;
  const n = Number(m[1]);
  return m[2] === "us" ? n / 1000 : m[2] === "s" ? n * 1000 : n;
};

interface Wrk {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

/** wrk against one or more URLs at once (connections split evenly); req/s summed, latencies of the worst. */
async function wrk(urls: string[], host: string | undefined, seconds: number): Promise<Wrk> {
  const per = Math.max(1, Math.floor(CONNECTIONS / urls.length));
  const runs = urls.map((url) => {
    const args = ["wrk", "-t", "1", "-c", String(per), "-d", `${seconds}s`, "--latency"];
    if (host) args.push("-H", `Host: ${host}`);
    args.push(url);
    return spawn(args, { stdout: "pipe", stderr: "pipe" });
  });
  const out: Wrk = { rps: 0, p50: 0, p99: 0, non2xx: 0 };
  for (const p of runs) {
    const text = await new Response(p.stdout).text();
    if ((await p.exited) !== 0) throw new Error(`wrk failed: ${await new Response(p.stderr).text()}`);
    out.rps += Number(/Requests\/sec:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
    out.p50 = Math.max(out.p50, toMs(/^\s+50%\s+(\S+)/m.exec(text)?.[1] ?? ""));
    out.p99 = Math.max(out.p99, toMs(/^\s+99%\s+(\S+)/m.exec(text)?.[1] ?? ""));
    out.non2xx += Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0);
  }
  return out;
}

async function stop(proc: Subprocess) {
  proc.kill("SIGTERM");
  const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
  if (!exited) proc.kill("SIGKILL");
}

interface Server {
  base: string;
  proc: Subprocess;
  dataDir: string;
}

async function serve(checkout: string, databaseUrl: string): Promise<Server> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "secbox-bench-pg-"));
  const proc = spawn(["bun", join(checkout, "src/main.ts"), "serve", "--data-dir", dataDir, "--port", String(port), "--host", "127.0.0.1"], {
    cwd: dataDir,
    env: {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? "/root",
      SECBOX_SERVER_LOG_LEVEL: "warn",
      SECBOX_SERVER_PUBLIC_URL: `http://localhost:${port}`,
      SECBOX_SECURITY_MASTER_KEY: MASTER_KEY,
      SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_CONCURRENT_HITS: "1000",
      ...(databaseUrl ? { SECBOX_DATABASE_URL: databaseUrl } : {}),
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const base = `http://127.0.0.1:${port}`;
  await waitFor(`${base}/api/status`);
  return { base, proc, dataDir };
}

/** The bench user and its two responders, created through `s`; the Host header of its responders. */
async function setup(s: Server): Promise<string> {
  const signup = await fetch(`${s.base}/api/auth/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: `bench-${Date.now()}@example.com`, password: "benchmark password" }),
  });
  if (signup.status !== 200) throw new Error(`signup failed: ${signup.status} ${await signup.text()}`);
  const cookie = signup.headers.get("set-cookie")!.split(";")[0]!;
  const { handle } = (await signup.json()) as { handle: string };
  const common = { requestsToTrack: 30, headers: [["content-type", "application/json"]], body: BODY };
  for (const [name, path, settings] of [
    ["static", "/orders", common],
    ["scripted", "/scripted", { ...common, script: SCRIPT }],
  ] as const) {
    const r = await fetch(`${s.base}/api/webhooks/responders`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie },
      body: JSON.stringify({ name, location: { pathType: "=", path }, method: "GET", settings }),
    });
    if (r.status !== 201) throw new Error(`creating ${name} failed: ${r.status} ${await r.text()}`);
  }
  return `${handle}.localhost`;
}

const admin = new SQL({ url: values.pg, max: 1 });
const databases: string[] = [];
async function database(): Promise<string> {
  const name = `bench_${randomBytes(6).toString("hex")}`;
  await admin.unsafe(`CREATE DATABASE ${name} TEMPLATE template0`);
  databases.push(name);
  const u = new URL(values.pg!);
  u.pathname = `/${name}`;
  return u.toString();
}

interface Target {
  label: string;
  urls: string[];
  host?: string;
}

const servers: Server[] = [];
const targets: Target[] = [];
const results = new Map<string, Wrk>();
let raw: ReturnType<typeof Bun.serve> | undefined;
try {
  raw = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(BODY, { headers: { "content-type": "application/json" } }) });
  targets.push({ label: "(a) raw Bun.serve", urls: [`http://127.0.0.1:${raw.port}/orders`] });

  const add = async (tag: string, checkout: string, url: string) => {
    const s = await serve(checkout, url);
    servers.push(s);
    const host = await setup(s);
    targets.push(
      { label: `(${tag}) static`, urls: [`${s.base}/orders`], host },
      { label: `(${tag}) scripted`, urls: [`${s.base}/scripted?x=1`], host },
    );
  };
  await add("s", root, "");
  if (values.baseline) await add("m", resolve(values.baseline), "");
  await add("p1", root, await database());
  // Two instances on one database: the responders are created through the first, served by both.
  const shared = await database();
  const one = await serve(root, shared);
  const two = await serve(root, shared);
  servers.push(one, two);
  const host = await setup(one);
  targets.push(
    { label: "(p2) static, 2 instances", urls: [`${one.base}/orders`, `${two.base}/orders`], host },
    { label: "(p2) scripted, 2 instances", urls: [`${one.base}/scripted?x=1`, `${two.base}/scripted?x=1`], host },
  );

  console.log(`wrk: ${CONNECTIONS} connections in all, ${WARMUP}s warm-up + ${DURATION}s per target, best of ${ROUNDS} round(s), loopback`);
  for (const t of targets) if (WARMUP > 0) await wrk(t.urls, t.host, WARMUP);
  for (let round = 0; round < ROUNDS; round++) {
    for (const t of targets) {
      const r = await wrk(t.urls, t.host, DURATION);
      const best = results.get(t.label);
      if (!best || !(best.rps >= r.rps)) results.set(t.label, r);
    }
  }
} finally {
  for (const s of servers) {
    await stop(s.proc);
    rmSync(s.dataDir, { recursive: true, force: true });
  }
  raw?.stop(true);
  for (const name of databases) await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  await admin.close();
}

const fmt = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "—";
const a = results.get("(a) raw Bun.serve")!;
console.log("");
console.log("| target | req/s | p50 ms | p99 ms | non-2xx | ÷ raw |");
console.log("|---|---:|---:|---:|---:|---:|");
for (const t of targets) {
  const r = results.get(t.label)!;
  console.log(`| ${t.label} | ${fmt(r.rps)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${r.non2xx} | ${fmt(r.rps / a.rps, 2)} |`);
}
const ratio = (x: string, y: string) => fmt(results.get(x)!.rps / results.get(y)!.rps, 2);
console.log("");
console.log(`PostgreSQL ÷ SQLite, one instance: static ${ratio("(p1) static", "(s) static")}, scripted ${ratio("(p1) scripted", "(s) scripted")}`);
console.log(
  `two instances ÷ one (PostgreSQL): static ${ratio("(p2) static, 2 instances", "(p1) static")}, scripted ${ratio("(p2) scripted, 2 instances", "(p1) scripted")}`,
);
if (values.baseline)
  console.log(`SQLite, this checkout ÷ baseline: static ${ratio("(s) static", "(m) static")}, scripted ${ratio("(s) scripted", "(m) scripted")}`);
