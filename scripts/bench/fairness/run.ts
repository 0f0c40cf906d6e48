#!/usr/bin/env bun
// Tenant fairness benchmark (issues 17 and 29): a real `secbox serve` on loopback, a victim and an attacker
// account, and the victim's latency without and with each attack (attacks.ts), side by side on one server:
//   (a) search   100 scripts of 51,200 bytes (and 100 API trackers with long URLs), a 200-char search in a loop
//   (b) imports  a 9.5 MiB file of 160,000 tags; argon2id parameters of 256 MiB / t 10 / p 16 in a file (6 at
//                once, the victim signs in); a key encrypted with 8,000,000 PBKDF2 iterations, then `_export`
//   (c) crash    responder scripts that made a worker trap (TextDecoder, Sandbox.core.decode, atob of MiBs)
//   (d) flood    ~1,000 connections on 99 scripted responders, attacker on basic (hit rate 200/s) and on
//                ultimate (no hit rate: the per-source caps alone)
//   (e) storage  KV writes of 1 MiB values as fast as the attacker can
//   (f) loops    issue 17: 10 hits at once on a `while (true) {}` responder
// The victim (this process, Bun's fetch, keep-alive, from 127.0.0.1) sends one request at a time, at most one per
// --interval ms (5: ≤ 200/s, so its own hits stay under its handle's 200 hits/s of the basic tier), rotating over
// the attack's probes: its static responder, a trivial scripted one (also KV and timer ones where the attack
// aims at scripts), `GET /api/status`, sign-in for the argon2 attack. The attacker's load comes from attacker.ts
// in a process of its own at nice 10, from 127.0.0.2 (another client for the per-source caps).
// Targets (issue 29): under each attack the victim's responders p99 ≤ max(3 × quiet p99, 50 ms), `/api/status`
// p99 ≤ 50 ms, and zero failed or hung (no answer within --hang seconds) victim requests over all runs.
//
//   bun scripts/bench/fairness/run.ts [--attacks a,b,c,d,e,f | ids] [--runs 1] [--seconds 12] [--baseline 8]
//                                     [--flood 1000] [--hang 30] [--attacker-ip 127.0.0.2] [--interval 5]
//                                     [--root DIR: run the server from another checkout]
//                                     [--profile DIR: the server writes a CPU profile of its main thread there
//                                      (bun --cpu-prof-md), one per run: which requests hold the event loop]
//
// Each run of each attack gets a fresh server and data directory (what an attack leaves running would load the
// next one); everything runs on loopback and is stopped and deleted at the end.
import { spawn, spawnSync, type Subprocess } from "bun";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Conn } from "./client";
import { attacks as allAttacks, responder, type Account, type Attack, type Ctx, type Probe } from "./attacks";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    attacks: { type: "string", default: "a,b,c,d,e,f" },
    runs: { type: "string", default: "1" },
    seconds: { type: "string", default: "12" },
    baseline: { type: "string", default: "8" },
    flood: { type: "string", default: "1000" },
    hang: { type: "string", default: "30" },
    "attacker-ip": { type: "string", default: "127.0.0.2" },
    interval: { type: "string", default: "5" },
    root: { type: "string" },
    profile: { type: "string" },
  },
  strict: true,
});
const SECONDS = Math.max(2, Number(values.seconds) || 12);
const BASELINE = Math.max(2, Number(values.baseline) || 8);
const RUNS = Math.max(1, Math.floor(Number(values.runs) || 1));
const HANG_MS = Math.max(1, Number(values.hang) || 30) * 1000;
const FLOOD = Math.max(10, Number(values.flood) || 1000);
const ATTACKER_IP = values["attacker-ip"]!;
const INTERVAL_MS = Math.max(0, Number(values.interval) || 0);
const wanted = new Set(values.attacks!.split(",").map((x) => x.trim()));
const ATTACKS = allAttacks(FLOOD).filter((a) => wanted.has(a.group) || wanted.has(a.id));
/** The source tree the server runs from (--root: another checkout, e.g. the code before a change). */
const root = resolve(values.root ?? resolve(import.meta.dir, "../../.."));

const VICTIM_SCRIPTS: Record<string, string | null> = {
  static: null,
  plain: "({ statusCode: 200, body: 'ok' })",
  kv: "await Secbox.kv.get('k'); return { statusCode: 200, body: 'ok' }",
  timer: "await new Promise((r) => setTimeout(r, 5)); return { statusCode: 200, body: 'ok' }",
};
const PASSWORD = "benchmark password";

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

async function stop(proc: Subprocess) {
  proc.kill("SIGTERM");
  const exited = await Promise.race([proc.exited.then(() => true), Bun.sleep(10_000).then(() => false)]);
  if (!exited) proc.kill("SIGKILL");
}

const q = (sorted: number[], p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

interface Samples {
  ms: number[];
  /** status or "error: …" / "hung" → count */
  outcomes: Record<string, number>;
  failed: number;
  hung: number;
  /** Failures with when they happened (seconds into the phase) and what. */
  failures: string[];
}
const newSamples = (): Samples => ({ ms: [], outcomes: {}, failed: 0, hung: 0, failures: [] });

interface Server {
  ctx: Ctx;
  proc: Subprocess;
  dataDir: string;
  stop(): Promise<void>;
}

/** `secbox serve` from source on a fresh data directory, with the victim's and the attacker's accounts. */
async function startSecbox(attack: Attack, notes: string[]): Promise<Server> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "secbox-bench-fair-"));
  const base = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    SECBOX_SERVER_LOG_LEVEL: "error",
    SECBOX_SERVER_PUBLIC_URL: `http://localhost:${port}`,
    SECBOX_SMTP_HOST: "",
    SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true",
    SECBOX_SCHEDULER_ENABLED: "false",
    // a shared instance (README "Sharing a server"): sign-ups get basic, as the issue's hostile user did; the
    // ultimate attack sets its attacker's tier after sign-up
    SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
  };
  const profile = values.profile
    ? ["--cpu-prof-md", `--cpu-prof-dir=${resolve(values.profile)}`, `--cpu-prof-name=${attack.id}-${Date.now()}.md`]
    : [];
  const proc = spawn(["bun", ...profile, join(root, "src/main.ts"), "serve", "--data-dir", dataDir, "--port", String(port), "--host", "127.0.0.1"], {
    env,
    stdout: "ignore",
    stderr: "ignore",
  });
  const stopAll = async () => {
    await stop(proc);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const r = await fetch(`${base}/api/status`);
        await r.arrayBuffer();
        if (r.status < 500) break;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) throw new Error("the server did not start");
      await Bun.sleep(100);
    }
    const api: Ctx["api"] = async (user, method, path, body) => {
      const r = await fetch(base + path, {
        method,
        headers: { cookie: user.cookie, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: r.status, json, text };
    };
    const signup = async (email: string): Promise<Account> => {
      const r = await fetch(`${base}/api/auth/signup`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: PASSWORD }),
      });
      if (r.status !== 200) throw new Error(`signup failed: ${r.status} ${await r.text()}`);
      const cookie = r.headers.get("set-cookie")!.split(";")[0]!;
      const { handle } = (await r.json()) as { handle: string };
      return { email, password: PASSWORD, cookie, handle, host: `${handle}.localhost:${port}` };
    };
    const victim = await signup("victim@example.com");
    const evil = await signup("attacker@example.com");
    if (attack.evilTier && attack.evilTier !== "basic") {
      // an operator command next to the running server (it sees the change at once)
      const r = spawnSync(
        ["bun", join(root, "src/main.ts"), "users", "set-tier", "--email", evil.email, "--tier", attack.evilTier, "--data-dir", dataDir],
        { env },
      );
      if (r.exitCode !== 0) throw new Error(`set-tier failed: ${r.stderr.toString()}`);
    }
    for (const [name, script] of Object.entries(VICTIM_SCRIPTS)) await responder({ api } as Ctx, victim, name, `/${name}`, script);
    const ctx: Ctx = { base, port, victim, evil, tmp: dataDir, api, note: (t) => notes.push(t) };
    await attack.setup(ctx);
    return { ctx, proc, dataDir, stop: stopAll };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

// ---- the victim's probes ----

async function probe(ctx: Ctx, kind: Probe, into: Samples, phaseStart: number): Promise<void> {
  const t = performance.now();
  let outcome: string;
  try {
    const signal = AbortSignal.timeout(HANG_MS);
    let r: Response | { status: number; arrayBuffer(): Promise<unknown> };
    if (kind === "fresh") {
      const c = new Conn("127.0.0.1", ctx.port, "127.0.0.1");
      try {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const res = await Promise.race([
          c.request({ path: "/static", headers: { host: ctx.victim.host, connection: "close" } }),
          new Promise<never>(
            (_, reject) => (timer = setTimeout(() => reject(Object.assign(new Error("no answer"), { name: "TimeoutError" })), HANG_MS)),
          ),
        ]).finally(() => clearTimeout(timer));
        r = { status: res.status, arrayBuffer: async () => undefined };
      } finally {
        c.close();
      }
    } else if (kind === "status") r = await fetch(`${ctx.base}/api/status`, { signal });
    else if (kind === "signin")
      r = await fetch(`${ctx.base}/api/auth/signin`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: ctx.victim.email, password: ctx.victim.password }),
        signal,
      });
    else r = await fetch(`${ctx.base}/${kind}`, { headers: { host: ctx.victim.host }, signal });
    await r.arrayBuffer();
    outcome = String(r.status);
  } catch (err) {
    const e = err as Error;
    outcome = e?.name === "TimeoutError" ? "hung" : `error: ${String(e?.message ?? e).slice(0, 80)}`;
  }
  const ms = performance.now() - t;
  into.ms.push(ms);
  into.outcomes[outcome] = (into.outcomes[outcome] ?? 0) + 1;
  if (outcome !== "200") {
    if (outcome === "hung") into.hung++;
    else into.failed++;
    if (into.failures.length < 10)
      into.failures.push(`${kind} ${outcome} after ${ms.toFixed(0)} ms, ${((t - phaseStart) / 1000).toFixed(1)} s into the phase`);
  }
}

/** Probes the kinds in turn, one request at a time, one every INTERVAL_MS at most (the victim's own hits stay under
 *  its handle's hit rate), for `seconds`. */
async function measure(ctx: Ctx, kinds: Probe[], seconds: number, into: Record<string, Samples>): Promise<void> {
  const start = performance.now();
  const end = start + seconds * 1000;
  let next = start;
  for (let i = 0; performance.now() < end; i++) {
    const wait = next - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    next = Math.max(next + INTERVAL_MS, performance.now());
    const k = kinds[i % kinds.length]!;
    await probe(ctx, k, (into[k] ??= newSamples()), start);
  }
}

// ---- the attacker's process ----

interface AttackerResult {
  groups: { statuses: Record<string, number>; errors: number; errorSamples: string[]; closed: number; p50ms: number | null; maxMs: number | null }[];
}
let attackerProc: Subprocess | null = null;
async function startAttacker(ctx: Ctx, attack: Attack, seconds: number) {
  const groups = await attack.load(ctx);
  const cfgFile = join(ctx.tmp, "attacker.json");
  writeFileSync(cfgFile, JSON.stringify({ host: "127.0.0.1", port: ctx.port, localAddress: ATTACKER_IP, seconds, groups }));
  const proc = spawn(["nice", "-n", "10", "bun", join(import.meta.dir, "attacker.ts"), cfgFile], { stdout: "pipe", stderr: "inherit" });
  attackerProc = proc;
  return {
    groups,
    async result(): Promise<AttackerResult | null> {
      const text = await new Response(proc.stdout).text();
      await proc.exited;
      attackerProc = null;
      const line = text.split("\n").find((l) => l.startsWith("RESULT "));
      return line ? JSON.parse(line.slice(7)) : null;
    },
  };
}

// ---- runs ----

interface AttackTotals {
  attack: Attack;
  quiet: Record<string, Samples>;
  under: Record<string, Samples>;
  /** per run: probe → p99 under attack */
  runP99: Record<string, number>[];
  attacker: { what: string; statuses: Record<string, number>; errors: number; errorSamples: string[]; closed: number }[];
  notes: string[];
  runsDone: number;
  setupFailures: string[];
}

const merge = (into: Record<string, Samples>, from: Record<string, Samples>) => {
  for (const [k, s] of Object.entries(from)) {
    const t = (into[k] ??= newSamples());
    t.ms.push(...s.ms);
    for (const [o, n] of Object.entries(s.outcomes)) t.outcomes[o] = (t.outcomes[o] ?? 0) + n;
    t.failed += s.failed;
    t.hung += s.hung;
    t.failures.push(...s.failures.slice(0, Math.max(0, 20 - t.failures.length)));
  }
};

const totals: AttackTotals[] = [];
let current: Server | null = null;
try {
  console.log(
    `${ATTACKS.length} attacks × ${RUNS} run(s); per run a fresh server: ${BASELINE} s quiet, then ${SECONDS} s under attack from ${ATTACKER_IP}; victim from 127.0.0.1, hung = no answer in ${HANG_MS / 1000} s`,
  );
  for (const attack of ATTACKS) {
    const tot: AttackTotals = { attack, quiet: {}, under: {}, runP99: [], attacker: [], notes: [], runsDone: 0, setupFailures: [] };
    totals.push(tot);
    for (let run = 1; run <= RUNS; run++) {
      const notes: string[] = [];
      let s: Server;
      try {
        s = current = await startSecbox(attack, notes);
      } catch (err) {
        tot.setupFailures.push(String((err as Error)?.message ?? err).slice(0, 300));
        console.log(`  ${attack.id} run ${run}: setup failed: ${tot.setupFailures.at(-1)}`);
        continue;
      }
      for (const n of notes) if (!tot.notes.includes(n)) tot.notes.push(n);
      const warm: Record<string, Samples> = {};
      await measure(s.ctx, attack.probes, 2, warm); // every worker compiles the victim's scripts
      const quiet: Record<string, Samples> = {};
      await measure(s.ctx, attack.probes, BASELINE, quiet);
      const a = await startAttacker(s.ctx, attack, SECONDS);
      await Bun.sleep(500);
      const under: Record<string, Samples> = {};
      await measure(s.ctx, attack.probes, SECONDS - 1, under);
      const result = await a.result();
      current = null;
      await s.stop();
      merge(tot.quiet, quiet);
      merge(tot.under, under);
      tot.runP99.push(Object.fromEntries(Object.entries(under).map(([k, x]) => [k, q(sorted(x.ms), 99)])));
      a.groups.forEach((g, i) => {
        const r = result?.groups[i];
        const t = (tot.attacker[i] ??= { what: g.what, statuses: {}, errors: 0, errorSamples: [], closed: 0 });
        if (!r) return void (t.errors = -1);
        for (const [st, n] of Object.entries(r.statuses)) t.statuses[st] = (t.statuses[st] ?? 0) + n;
        t.errors += r.errors;
        t.closed += r.closed;
        for (const e of r.errorSamples) if (t.errorSamples.length < 3 && !t.errorSamples.includes(e)) t.errorSamples.push(e);
      });
      tot.runsDone++;
      const bad = Object.entries(under).map(
        ([k, x]) => `${k} p99 ${q(sorted(x.ms), 99).toFixed(1)} ms${x.failed + x.hung ? ` ${x.failed} failed ${x.hung} hung` : ""}`,
      );
      console.log(`  ${attack.id} run ${run}: ${bad.join(", ")}`);
    }
  }

  // ---- report ----
  const f = (n: number) => (Number.isFinite(n) ? (n >= 100 ? n.toFixed(0) : n.toFixed(1)) : "—");
  const outcomeText = (o: Record<string, number>) =>
    Object.entries(o)
      .sort()
      .map(([k, v]) => `${k}×${v}`)
      .join(", ");
  console.log("");
  console.log(
    "| attack | victim request | n | p50 ms quiet → attack | p99 ms quiet → attack | worst run p99 | max ms | failed / hung | target | met |",
  );
  console.log("|---|---|---:|---|---|---:|---:|---|---|---|");
  let allMet = true;
  for (const t of totals) {
    if (t.runsDone === 0) {
      allMet = false;
      console.log(`| ${t.attack.label} | — | 0 | | | | | | setup failed: ${t.setupFailures[0] ?? "?"} | **no** |`);
      continue;
    }
    for (const kind of t.attack.probes) {
      const b = sorted(t.quiet[kind]?.ms ?? []);
      const u = t.under[kind] ?? newSamples();
      const us = sorted(u.ms);
      const worst = Math.max(...t.runP99.map((r) => r[kind] ?? NaN).filter(Number.isFinite));
      const limit = kind === "status" ? 50 : Math.max(3 * q(b, 99), 50);
      const met = q(us, 99) <= limit && u.failed === 0 && u.hung === 0;
      allMet &&= met;
      const target = kind === "status" ? "p99 ≤ 50 ms, none failed" : `p99 ≤ ${f(limit)} ms (max(3× quiet, 50)), none failed`;
      console.log(
        `| ${t.attack.label} | ${kind} | ${us.length} | ${f(q(b, 50))} → ${f(q(us, 50))} | ${f(q(b, 99))} → ${f(q(us, 99))} | ${f(worst)} | ${f(us.at(-1)!)} | ${u.failed} / ${u.hung} | ${target} | ${met ? "yes" : "**no**"} |`,
      );
    }
  }
  console.log("");
  console.log("| attack | attacker's requests | answers (all runs) | connection closed by the server | errors |");
  console.log("|---|---|---|---:|---|");
  for (const t of totals)
    for (const g of t.attacker)
      console.log(
        `| ${t.attack.id} | ${g.what} | ${outcomeText(g.statuses) || "none finished"} | ${g.closed} | ${g.errors === -1 ? "no result" : g.errors}${g.errorSamples.length ? ` (${g.errorSamples.join("; ")})` : ""} |`,
      );
  console.log("");
  for (const t of totals) {
    const fails = Object.entries(t.under).flatMap(([, s]) => s.failures);
    const quietFails = Object.entries(t.quiet).flatMap(([, s]) => s.failures);
    if (t.notes.length) console.log(`${t.attack.id}: ${t.notes.join("; ")}`);
    if (fails.length) console.log(`${t.attack.id}: victim failures under attack: ${fails.join("; ")}`);
    if (quietFails.length) console.log(`${t.attack.id}: victim failures without the attack: ${quietFails.join("; ")}`);
    if (t.setupFailures.length) console.log(`${t.attack.id}: setup failures: ${t.setupFailures.join("; ")}`);
  }
  console.log(allMet ? "all targets met" : "some targets MISSED");
} finally {
  if (attackerProc) (attackerProc as Subprocess).kill("SIGKILL");
  if (current) await (current as Server).stop();
}
