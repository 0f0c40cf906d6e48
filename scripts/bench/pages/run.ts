#!/usr/bin/env bun
// Page-tracker engine benchmark (issue 9), against local JS-rendered pages served by Bun.serve on 127.0.0.1:
//   1. cold first check (browser launch included)
//   2. warm per-check latency p50/p99: back to back, and with an idle gap between checks (how a schedule runs)
//   3. throughput of N runs due at once with the configured concurrency, plus peak RSS of the browser tree
//   4. memory over M consecutive checks: browser-tree RSS sampled every 50 checks (no browser recycling, so a
//      leak would show), open contexts at the end
//   5. urlwatch (Debian package) checking the same pages statically: one job per process (per-check latency,
//      Python start included) and N jobs in one process (its fixed pool of 10 threads), peak RSS
// Targets: warm p50 < 300 ms per page; memory flat over the consecutive checks.
//
//   apt-get install -y chromium urlwatch
//   bun scripts/bench/pages/run.ts [--concurrency 2] [--warm 100] [--throughput 100] [--memory 500] [--executable /usr/bin/chromium]
import { spawn } from "bun";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ChromiumEngine } from "../../../src/features/trackers/page/engine";
import type { PageRunResult } from "../../../src/features/trackers/page/run-types";
import { createLogger } from "../../../src/platform/log";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    concurrency: { type: "string", default: "2" },
    warm: { type: "string", default: "100" },
    throughput: { type: "string", default: "100" },
    memory: { type: "string", default: "500" },
    gap: { type: "string", default: "250" },
    executable: { type: "string", default: "/usr/bin/chromium" },
  },
  strict: true,
});
const CONCURRENCY = Math.max(1, Number(values.concurrency) || 2);
const WARM = Math.max(10, Number(values.warm) || 100);
const THROUGHPUT = Math.max(1, Number(values.throughput) || 100);
const MEMORY = Math.max(50, Number(values.memory) || 500);
const GAP = Math.max(0, Number(values.gap) || 0);
const EXECUTABLE = values.executable as string;
if (!existsSync(EXECUTABLE)) {
  console.error(`chromium not found at ${EXECUTABLE} (apt-get install -y chromium)`);
  process.exit(1);
}

// ---- local pages ---------------------------------------------------------------------------------------------
// Each page: static HTML whose visible content is produced by an external script, plus a stylesheet — the
// text a static fetch sees ("Loading…") differs from what the browser renders.
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  fetch(req) {
    const u = new URL(req.url);
    const m = /^\/p\/([0-9]+)$/.exec(u.pathname);
    if (m) {
      return new Response(
        `<!doctype html><html><head><title>Item ${m[1]}</title><link rel="stylesheet" href="/style.css"></head>` +
          `<body><h1>Catalogue</h1><div id="app">Loading…</div><script src="/app.js"></script></body></html>`,
        { headers: { "content-type": "text/html; charset=utf-8" } },
      );
    }
    if (u.pathname === "/app.js") {
      return new Response(
        `const n = Number(location.pathname.split("/").pop());
         const rows = Array.from({length: 20}, (_, i) => "<li>Item " + n + "." + i + ": " + ((n * 31 + i * 7) % 97) + " EUR</li>").join("");
         document.getElementById("app").innerHTML = "<ul>" + rows + "</ul>";`,
        { headers: { "content-type": "text/javascript" } },
      );
    }
    if (u.pathname === "/style.css") return new Response("body{font-family:sans-serif} li{margin:2px}", { headers: { "content-type": "text/css" } });
    return new Response("not found", { status: 404 });
  },
});
const base = `http://127.0.0.1:${server.port}`;
const pageUrl = (i: number) => `${base}/p/${i % 100}`;

// ---- helpers -------------------------------------------------------------------------------------------------
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
};
const ms = (x: number) => `${x.toFixed(0)} ms`;
const mib = (b: number | null) => (b === null ? "n/a" : `${(b / 1048576).toFixed(0)} MiB`);
const check = (r: PageRunResult) => {
  if (!r.ok) throw new Error(`run failed: ${r.error}`);
  return r;
};

function newEngine(): ChromiumEngine {
  return new ChromiumEngine({
    executable: EXECUTABLE,
    maxConcurrency: CONCURRENCY,
    log: createLogger("warn"),
    maxRunsPerBrowser: 1_000_000, // no recycling during the benchmark: a leak must show in the memory figures
  });
}
const req = (i: number) => ({ url: pageUrl(i), secrets: {}, timeoutMs: 30_000, allowPrivate: true });

async function settle(e: ChromiumEngine): Promise<void> {
  for (let i = 0; i < 500 && e.stats().active > 0; i++) await sleep(10);
}

/** Runs a command without blocking the event loop (the page server lives in this process). */
async function exec(cmd: string[]): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const p = spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { stdout, stderr, exitCode: await p.exited };
}

const report: string[] = [];
const line = (s: string) => {
  console.log(s);
  report.push(s);
};
const progress = (s: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${s}`);

// ---- 1. cold ---------------------------------------------------------------------------------------------------
line(
  `# page engine benchmark — ${(await exec([EXECUTABLE, "--version"])).stdout.trim()}, concurrency ${CONCURRENCY}, ` +
    `${navigator.hardwareConcurrency} CPUs, load average at start ${(
      await Bun.file("/proc/loadavg")
        .text()
        .catch(() => "n/a")
    )
      .split(" ")
      .slice(0, 3)
      .join(" ")}`,
);
let engine = newEngine();
{
  const t = performance.now();
  const r = check(await engine.run(req(0)));
  const total = performance.now() - t;
  line(`cold first check: ${ms(total)} (phases ${r.phases.map((p) => `${p.phase} ${p.durationMs}`).join(", ")})`);
  const text = new TextDecoder().decode(r.value);
  line(`  rendered text sample: ${JSON.stringify(text.slice(0, 60))}…`);
}

progress("cold done");
// ---- 2. warm ---------------------------------------------------------------------------------------------------
async function warm(label: string, n: number, gap: number): Promise<void> {
  const totals: number[] = [];
  const phases: Record<string, number[]> = { browser: [], navigate: [], extract: [] };
  for (let i = 0; i < n; i++) {
    if (gap > 0) {
      await settle(engine);
      await sleep(gap);
    }
    const t = performance.now();
    const r = check(await engine.run(req(i + 1)));
    totals.push(performance.now() - t);
    for (const p of r.phases) phases[p.phase]?.push(p.durationMs);
  }
  line(
    `warm ${label} (${n} checks): p50 ${ms(pct(totals, 50))}, p99 ${ms(pct(totals, 99))}, max ${ms(Math.max(...totals))}` +
      ` | median phases browser ${pct(phases.browser as number[], 50)}, navigate ${pct(phases.navigate as number[], 50)}, extract ${pct(phases.extract as number[], 50)} ms`,
  );
}
await warm("back to back", WARM, 0);
await warm(`with ${GAP} ms idle between checks`, Math.min(WARM, 50), GAP);
{
  // Same, with an extractor and the resources inventory.
  const totals: number[] = [];
  for (let i = 0; i < 30; i++) {
    await settle(engine);
    await sleep(GAP);
    const t = performance.now();
    check(await engine.run({ ...req(i), extractor: `[...document.querySelectorAll("li")].map((li) => li.textContent)`, resources: true }));
    totals.push(performance.now() - t);
  }
  line(`warm with extractor + resources (30 checks, ${GAP} ms idle): p50 ${ms(pct(totals, 50))}, p99 ${ms(pct(totals, 99))}`);
}

progress("warm done");
// ---- 3. throughput + peak RSS ----------------------------------------------------------------------------------
{
  await settle(engine);
  let peakRss = 0;
  let peakAnon = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const st = engine.stats();
      if (st.browserRss !== null) peakRss = Math.max(peakRss, st.browserRss);
      if (st.browserAnon !== null) peakAnon = Math.max(peakAnon, st.browserAnon);
      await sleep(50);
    }
  })();
  const idle = engine.stats();
  const t = performance.now();
  const results = await Promise.all(Array.from({ length: THROUGHPUT }, (_, i) => engine.run(req(i))));
  const wall = performance.now() - t;
  sampling = false;
  await sampler;
  const failed = results.filter((r) => !r.ok).length;
  const elapsed = results.map((r) => r.elapsedMs);
  line(
    `throughput: ${THROUGHPUT} checks due at once, concurrency ${CONCURRENCY}: ${(wall / 1000).toFixed(2)} s wall, ` +
      `${((THROUGHPUT * 1000) / wall).toFixed(1)} checks/s, per-check (in slot) p50 ${ms(pct(elapsed, 50))} p99 ${ms(pct(elapsed, 99))}, failures ${failed}`,
  );
  line(
    `browser tree (${idle.browserProcesses} processes idle): sum RSS idle ${mib(idle.browserRss)} / peak ${mib(peakRss)}; ` +
      `sum RssAnon idle ${mib(idle.browserAnon)} / peak ${mib(peakAnon)}${idle.browserPss !== null ? `; PSS idle ${mib(idle.browserPss)}` : " (PSS unreadable here)"}`,
  );
}

progress("throughput done");
// ---- 4. memory over consecutive checks -------------------------------------------------------------------------
{
  await engine.close();
  engine = newEngine();
  const samples: { after: number; rss: number; anon: number; bun: number }[] = [];
  for (let i = 0; i < MEMORY; i++) {
    check(await engine.run(req(i)));
    if ((i + 1) % 50 === 0) {
      await settle(engine);
      Bun.gc(true);
      const st = engine.stats();
      samples.push({ after: i + 1, rss: st.browserRss ?? 0, anon: st.browserAnon ?? 0, bun: process.memoryUsage().rss });
      progress(`memory ${i + 1}/${MEMORY}`);
    }
  }
  const fmt = (xs: number[]) => xs.map((x) => (x / 1048576).toFixed(0)).join(", ");
  line(`memory over ${MEMORY} consecutive checks (one browser, no recycling), every 50 checks:`);
  line(`  browser sum RSS     [${fmt(samples.map((s) => s.rss))}] MiB`);
  line(`  browser sum RssAnon [${fmt(samples.map((s) => s.anon))}] MiB`);
  line(`  server process RSS  [${fmt(samples.map((s) => s.bun))}] MiB`);
  const anon = samples.map((s) => s.anon);
  const firstHalf = anon.slice(1, Math.ceil(anon.length / 2));
  const secondHalf = anon.slice(Math.ceil(anon.length / 2));
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  if (firstHalf.length > 0 && secondHalf.length > 0) {
    line(
      `  RssAnon second-half vs first-half mean: ${(((avg(secondHalf) - avg(firstHalf)) / avg(firstHalf)) * 100).toFixed(1)}%; open contexts at the end: ${engine.contextCount()}`,
    );
  }
  await engine.close();
}

progress("memory done");
// ---- 5. urlwatch -----------------------------------------------------------------------------------------------
const urlwatch = (await exec(["which", "urlwatch"])).stdout.trim();
if (!urlwatch) {
  line("urlwatch: not installed (apt-get install -y urlwatch) — comparison skipped");
} else {
  const dir = mkdtempSync(join(tmpdir(), "secbox-urlwatch-"));
  const jobs = (n: number) =>
    Array.from({ length: n }, (_, i) => `name: "p${i}"\nurl: "${pageUrl(i)}"\nfilter:\n  - html2text:\n      method: re\n`).join("---\n");
  writeFileSync(join(dir, "config.yaml"), "report:\n  text:\n    details: false\n  stdout:\n    enabled: true\n    color: false\n");
  const runUrlwatch = async (urls: string, cache: string) => {
    const t = performance.now();
    const r = await exec([
      "/usr/bin/time",
      "-f",
      "%M",
      urlwatch,
      "--urls",
      urls,
      "--config",
      join(dir, "config.yaml"),
      "--cache",
      cache,
      "--hooks",
      join(dir, "hooks.py"),
    ]);
    const wall = performance.now() - t;
    const maxKb = Number(r.stderr.trim().split("\n").at(-1));
    return { wall, rssKb: maxKb, out: r.stdout, ok: r.exitCode === 0 };
  };
  writeFileSync(join(dir, "one.yaml"), jobs(1));
  writeFileSync(join(dir, "many.yaml"), jobs(THROUGHPUT));
  const single: number[] = [];
  let singleRss = 0;
  for (let i = 0; i < 10; i++) {
    const r = await runUrlwatch(join(dir, "one.yaml"), join(dir, "one.db"));
    if (!r.ok) throw new Error(`urlwatch failed: ${r.out}`);
    single.push(r.wall);
    singleRss = Math.max(singleRss, r.rssKb);
  }
  const first = await runUrlwatch(join(dir, "many.yaml"), join(dir, "many.db"));
  const again = await runUrlwatch(join(dir, "many.yaml"), join(dir, "many.db"));
  const filtered = await exec([
    urlwatch,
    "--urls",
    join(dir, "one.yaml"),
    "--config",
    join(dir, "config.yaml"),
    "--cache",
    join(dir, "one.db"),
    "--hooks",
    join(dir, "hooks.py"),
    "--test-filter",
    "1",
  ]);
  const version = (await exec([urlwatch, "--version"])).stdout.trim();
  line(
    `${version} (static fetch + html2text:re): one job per process p50 ${ms(pct(single, 50))} (Python start included), ` +
      `peak RSS ${(singleRss / 1024).toFixed(0)} MiB; ${THROUGHPUT} jobs in one process (10 threads): ${(again.wall / 1000).toFixed(2)} s ` +
      `(${((THROUGHPUT * 1000) / again.wall).toFixed(1)} checks/s; first run ${(first.wall / 1000).toFixed(2)} s), peak RSS ${(Math.max(first.rssKb, again.rssKb) / 1024).toFixed(0)} MiB`,
  );
  line(
    `  urlwatch's text of page 0: ${JSON.stringify(filtered.stdout.trim().replace(/\s+/g, " ").slice(0, 60))} (the static placeholder; Chromium sees the rendered list)`,
  );
  rmSync(dir, { recursive: true, force: true });
}

server.stop(true);
console.log("\n" + report.join("\n"));
