#!/usr/bin/env bun
// Capture durability under a crash (supplement §11.10): `secbox serve` from source, one tracking responder, hits
// fired continuously by `--clients` concurrent clients, each to its own path (/hook/<n>); after `--seconds` the
// server is killed with SIGKILL while hits are still flowing. The records in the database are then compared with
// the hits that had been answered 200 before the kill:
//   lost = answered hits without a record (the crash window), shown as a count and as milliseconds of traffic.
// Runs `--runs` times for capture = "batched" (default) and once more per run for "strict" (expected: 0 lost).
//
//   bun scripts/bench/responders/crash.ts [--runs 3] [--seconds 3] [--clients 50]
import { Database } from "bun:sqlite";
import { spawn, type Subprocess } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { runs: { type: "string", default: "3" }, seconds: { type: "string", default: "3" }, clients: { type: "string", default: "50" } },
  strict: true,
});
const RUNS = Math.max(1, Number(values.runs) || 3);
const SECONDS = Math.max(1, Number(values.seconds) || 3);
const CLIENTS = Math.max(1, Number(values.clients) || 50);
const root = resolve(import.meta.dir, "../../..");

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

async function waitFor(url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(url)).status < 500) return;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${url}`);
    await Bun.sleep(100);
  }
}

interface RunResult {
  capture: string;
  answered: number;
  stored: number;
  lost: number;
  rate: number;
}

async function run(capture: "batched" | "strict"): Promise<RunResult> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "secbox-crash-bench-"));
  const proc: Subprocess = spawn(["bun", join(root, "src/main.ts"), "serve", "--data-dir", dataDir, "--port", String(port), "--host", "127.0.0.1"], {
    cwd: dataDir,
    env: {
      PATH: process.env.PATH!,
      HOME: process.env.HOME ?? "/root",
      SECBOX_SERVER_LOG_LEVEL: "error",
      SECBOX_SMTP_HOST: "",
      SECBOX_RESPONDERS_CAPTURE: capture,
      SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_CONCURRENT_HITS: "10000",
      SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_REQUESTS_TO_TRACK: "1000000",
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitFor(`${base}/api/status`);
    const signup = await fetch(`${base}/api/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "crash@example.com", password: "benchmark password" }),
    });
    const cookie = signup.headers.get("set-cookie")!.split(";")[0]!;
    const { handle } = (await signup.json()) as { handle: string };
    const created = await fetch(`${base}/api/webhooks/responders`, {
      method: "POST",
      headers: { "content-type": "application/json", cookie },
      body: JSON.stringify({ name: "hook", location: { pathType: "*", path: "/hook" }, settings: { requestsToTrack: 1_000_000, body: "ok" } }),
    });
    if (created.status !== 201) throw new Error(`creating the responder failed: ${created.status} ${await created.text()}`);

    const answered = new Set<number>();
    let next = 0;
    let killed = false;
    const host = `${handle}.localhost`;
    const clients = Array.from({ length: CLIENTS }, async () => {
      while (!killed) {
        const n = next++;
        try {
          const res = await fetch(`${base}/hook/${n}`, { headers: { host } });
          await res.arrayBuffer();
          if (res.status === 200 && !killed) answered.add(n);
        } catch {
          /* the kill */
        }
      }
    });
    const t0 = performance.now();
    await Bun.sleep(SECONDS * 1000);
    const elapsed = (performance.now() - t0) / 1000;
    killed = true; // responses arriving after this instant are not counted as answered
    proc.kill("SIGKILL");
    await proc.exited;
    await Promise.all(clients);

    const db = new Database(join(dataDir, "secbox.db"));
    const paths = new Set((db.query("SELECT path FROM responder_requests").all() as { path: string }[]).map((r) => Number(r.path.slice(6))));
    db.close();
    let lost = 0;
    for (const n of answered) if (!paths.has(n)) lost++;
    return { capture, answered: answered.size, stored: paths.size, lost, rate: answered.size / elapsed };
  } finally {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  }
}

console.log(`${CLIENTS} clients, ${SECONDS}s of hits, then SIGKILL; ${RUNS} run(s) per capture mode`);
console.log("");
console.log("| capture | answered | stored | answered but lost | hits/s | lost as ms of traffic |");
console.log("|---|---:|---:|---:|---:|---:|");
for (let i = 0; i < RUNS; i++) {
  for (const capture of ["batched", "strict"] as const) {
    const r = await run(capture);
    const ms = r.rate > 0 ? (r.lost / r.rate) * 1000 : 0;
    console.log(`| ${r.capture} | ${r.answered} | ${r.stored} | ${r.lost} | ${Math.round(r.rate)} | ${ms.toFixed(0)} |`);
  }
}
