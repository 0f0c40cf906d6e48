#!/usr/bin/env bun
// Startup time of the single binary: from exec of `secbox serve` to the first 200 of GET /api/status.
//
//   bun run build && bun scripts/bench/startup.ts [--runs N] [--binary dist/secbox] [--source]
//
// Each "fresh" run starts on a new, empty data directory (creates the master key, the database and applies the
// migrations); the "existing" runs reuse one data directory that a first start already initialised. Prints the
// median, min, p90 and max of each series in milliseconds. `--source` also measures `bun src/main.ts serve`.
// Everything stays on 127.0.0.1; every server started is stopped before the next run.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    runs: { type: "string", default: "15" },
    binary: { type: "string", default: "dist/secbox" },
    source: { type: "boolean", default: false },
  },
  strict: true,
});
const runs = Math.max(1, Math.min(200, Number(values.runs) || 15));
const root = resolve(import.meta.dir, "../..");
const binary = resolve(root, values.binary!);
const TIMEOUT_MS = 15_000;

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}

/** Starts the server, returns ms from spawn to the first 200 of /api/status, then stops it. */
async function measure(cmd: string[], dataDir: string): Promise<number> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/api/status`;
  const env = { ...process.env, SECBOX_SERVER_LOG_LEVEL: "warn", SECBOX_SERVER_HOST: "127.0.0.1" };
  const t0 = performance.now();
  const proc = Bun.spawn([...cmd, "serve", "--data-dir", dataDir, "--port", String(port)], {
    cwd: dataDir,
    env,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  try {
    for (;;) {
      try {
        const res = await fetch(url);
        await res.arrayBuffer();
        if (res.status === 200) return performance.now() - t0;
      } catch {
        // not listening yet
      }
      if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
      if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`no 200 from ${url} within ${TIMEOUT_MS} ms`);
      await Bun.sleep(1);
    }
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  const median = s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  return { median, min: s[0]!, p90: at(0.9), max: s[s.length - 1]! };
}

const fmt = (label: string, xs: number[]) => {
  const { median, min, p90, max } = stats(xs);
  return `${label.padEnd(34)} median ${median.toFixed(1).padStart(6)} ms   min ${min.toFixed(1).padStart(6)}   p90 ${p90.toFixed(1).padStart(6)}   max ${max.toFixed(1).padStart(6)}   (n=${xs.length})`;
};

async function series(label: string, cmd: string[]) {
  const fresh: number[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(join(tmpdir(), "secbox-bench-"));
    try {
      fresh.push(await measure(cmd, dir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const dir = mkdtempSync(join(tmpdir(), "secbox-bench-"));
  const existing: number[] = [];
  try {
    await measure(cmd, dir); // initialise: master key, database, migrations
    for (let i = 0; i < runs; i++) existing.push(await measure(cmd, dir));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(fmt(`${label}, fresh data dir`, fresh));
  console.log(fmt(`${label}, existing data dir`, existing));
}

if (!(await Bun.file(binary).exists())) {
  console.error(`${binary} not found: run 'bun run build' first`);
  process.exit(1);
}
console.log(`startup to first 200 of GET /api/status, ${runs} runs each (${navigator.hardwareConcurrency} CPUs)`);
await series("dist/secbox", [binary]);
if (values.source) await series("bun src/main.ts", [process.execPath, resolve(root, "src/main.ts")]);
