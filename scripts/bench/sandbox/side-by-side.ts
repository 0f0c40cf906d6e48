#!/usr/bin/env bun
// The sandbox's own costs, this checkout against another one (an older build), measured side by side: the two run
// in alternating processes, round after round, so a load change on a shared machine hits both alike; medians and
// the ratio this/other are printed. Made for refactors that must not change speed (issue 25).
//
//   git worktree add --detach /tmp/old <commit> && (cd /tmp/old && bun install --frozen-lockfile)
//   bun scripts/bench/sandbox/side-by-side.ts /tmp/old [--rounds 6]
//
// Probes (each in a fresh process, importing the checkout's own src/sandbox):
// - engine: the worker-side Engine driven in-process, no threads: µs per execution of the trivial and the
//   responder-shaped script (scenarios.json) from the memory image, the median of 7 blocks and their minimum;
// - pool: a 2-worker ScriptPool, the trivial script 8 in flight: the main thread's CPU per job (from
//   /proc/thread-self/stat, 10 ms ticks over 10,000 jobs) and the wall time per job.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: { rounds: { type: "string", default: "6" }, probe: { type: "string" }, root: { type: "string" } },
  allowPositionals: true,
  strict: true,
});
const here = resolve(import.meta.dir, "../../..");

const med = (a: number[]) => {
  const s = a.slice().sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

if (values.probe) {
  const root = values.root!;
  const scenarios = (await import(`${root}/scripts/bench/sandbox/scenarios.json`)).default;
  const items = Array.from({ length: scenarios.items }, (_, i) => ({ id: i, name: `item-${i}`, value: i * 3 }));
  const body = new TextEncoder().encode(JSON.stringify(items));
  const out: Record<string, number> = {};
  if (values.probe === "engine") {
    const { Engine } = await import(`${root}/src/sandbox/engine.ts`);
    const { pack } = await import(`${root}/src/sandbox/wire.ts`);
    const engine = new Engine(() => {});
    await engine.init(512);
    let id = 0;
    const job = (source: string, context: unknown) => ({
      t: "run",
      id: ++id,
      cell: 0,
      token: 0,
      source,
      context: pack(context),
      memoryBytes: 10 << 20,
      timeoutMs: 10_000,
      stackBytes: 256 << 10,
      kv: false,
      proxy: true,
      owner: "",
    });
    const block = (n: number, source: string, ctx: () => unknown) => {
      const t = performance.now();
      for (let i = 0; i < n; i++) engine.run(job(source, ctx()) as never);
      return ((performance.now() - t) * 1000) / n;
    };
    block(5000, scenarios.trivial, () => ({}));
    block(2000, scenarios.responder, () => ({ body }));
    const trivial: number[] = [];
    const responder: number[] = [];
    for (let k = 0; k < 7; k++) {
      trivial.push(block(3000, scenarios.trivial, () => ({})));
      responder.push(block(1500, scenarios.responder, () => ({ body })));
    }
    Object.assign(out, {
      "engine trivial µs (median)": med(trivial),
      "engine trivial µs (min)": Math.min(...trivial),
      "engine responder µs (median)": med(responder),
      "engine responder µs (min)": Math.min(...responder),
    });
  } else {
    const { ScriptPool } = await import(`${root}/src/sandbox/pool.ts`);
    const { createLogger } = await import(`${root}/src/platform/log.ts`);
    const pool = new ScriptPool({ workers: 2, queueLimit: 100_000, allowPrivate: true, log: createLogger("warn") });
    await pool.ready();
    const limits = { memoryMib: 10, timeoutMs: 10_000, proxyTimeoutMs: 30_000, maxProxyBodyBytes: 10 << 20 };
    const ticks = () => {
      const f = readFileSync("/proc/thread-self/stat", "utf8").split(") ")[1]!.split(" ");
      return Number(f[11]) + Number(f[12]);
    };
    const block = async (n: number) => {
      let i = 0;
      const t0 = ticks();
      const w = performance.now();
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (i++ < n) if (!(await pool.run({ source: scenarios.trivial, context: {}, limits })).ok) throw new Error("script failed");
        }),
      );
      return { main: ((ticks() - t0) * 10_000) / n, wall: ((performance.now() - w) * 1000) / n };
    };
    await block(5000);
    const main: number[] = [];
    const wall: number[] = [];
    for (let k = 0; k < 5; k++) {
      const b = await block(10_000);
      main.push(b.main);
      wall.push(b.wall);
    }
    await pool.close();
    Object.assign(out, { "pool main-thread CPU µs/job, 8 in flight": med(main), "pool wall µs/job, 8 in flight": med(wall) });
  }
  console.log(JSON.stringify(out));
  process.exit(0);
}

const other = positionals[0] ? resolve(positionals[0]) : null;
if (!other) {
  console.error("usage: bun scripts/bench/sandbox/side-by-side.ts <other checkout> [--rounds N]");
  process.exit(2);
}
const rounds = Math.max(1, Number(values.rounds) || 6);
const results: Record<"this" | "other", Record<string, number[]>> = { this: {}, other: {} };
for (let r = 0; r < rounds; r++) {
  // alternate which one goes first
  const order: ("this" | "other")[] = r % 2 === 0 ? ["this", "other"] : ["other", "this"];
  for (const probe of ["engine", "pool"]) {
    for (const which of order) {
      const root = which === "this" ? here : other;
      const p = Bun.spawnSync(["bun", import.meta.path, "--probe", probe, "--root", root], { stdout: "pipe", stderr: "inherit" });
      if (p.exitCode !== 0) throw new Error(`probe ${probe} failed in ${root}`);
      for (const [k, v] of Object.entries(JSON.parse(p.stdout.toString().trim().split("\n").pop()!) as Record<string, number>))
        (results[which][k] ??= []).push(v);
    }
  }
  console.error(`round ${r + 1}/${rounds} done`);
}
console.log(`\nSandbox side by side: this checkout vs ${other}, ${rounds} alternating rounds (medians; lower is better)\n`);
console.log("| measure | this | other | this/other |");
console.log("|---|---:|---:|---:|");
for (const k of Object.keys(results.this)) {
  const a = med(results.this[k]!);
  const b = med(results.other[k]!);
  console.log(`| ${k} | ${a.toFixed(1)} | ${b.toFixed(1)} | ${(a / b).toFixed(2)} |`);
}
