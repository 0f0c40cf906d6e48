#!/usr/bin/env bun
// Runs the test lanes of scripts/test/lanes.ts (issue 31 §4), after checking that every test file is in exactly one.
//
//   bun scripts/test/run.ts [fast|timing|browser ...] [PATH-PART ...] [--backend sqlite|postgres|both] [--parallel N]
//                           [--browsers N] [--jobs N] [--logs DIR] [--check] [-- extra bun test arguments]
//
// Other words than lane names keep only the files whose path contains one of them (`bun run test:fast csp`).
// `bun run test` = every lane on SQLite; `bun run test:fast` = the fast lane. Lanes are bun test processes, at most
// --jobs N at a time (default 2; the longest expected first, from timings.json, so the browser lane starts at once): fast with --parallel N worker processes (default 2), browser with --browsers N (default 1, one
// Chromium each; on 2 cores, 3 jobs of 2 workers each drove the load average to 25-32 and argon2id, openssl and the
// CLI's start-ups past their 60 s), timing as one process; the workers of a lane keep one module registry (--no-isolate: what a plain
// `bun test` does for all files). `--backend postgres` runs, of the lanes asked for, the files that touch
// the database (lanes.ts DB_PATTERN; the browser lane stays on SQLite) with SECBOX_TEST_BACKEND=postgres and
// SECBOX_TEST_PG_URL from the environment; `both` runs the SQLite and the PostgreSQL jobs together. With one job its
// output streams as it comes; with several, each job writes its log (in --logs DIR, default a temporary folder) and
// the log is printed when the job ends. The closing lines give each job's counts (bun's own summary lines) and time,
// then `lanes: N pass, N fail`. `--check` only checks lane membership. Exit 0 when every job passed.
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DB_PATTERN, LANE_NAMES, LANES, laneProblems, type Lane } from "./lanes";

const { values, positionals } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    backend: { type: "string", default: "sqlite" },
    parallel: { type: "string", default: process.env.SECBOX_TEST_PARALLEL ?? "2" },
    browsers: { type: "string", default: process.env.SECBOX_TEST_BROWSERS ?? "1" },
    jobs: { type: "string", default: process.env.SECBOX_TEST_JOBS ?? "2" },
    logs: { type: "string" },
    check: { type: "boolean", default: false },
  },
  allowPositionals: true,
});

const dash = Bun.argv.indexOf("--");
const extra = dash >= 0 ? Bun.argv.slice(dash + 1) : [];
const words = dash >= 0 ? positionals.slice(0, positionals.length - extra.length) : positionals;
const asked = words.filter((w) => (LANE_NAMES as string[]).includes(w)) as Lane[];
const filters = words.filter((w) => !(LANE_NAMES as string[]).includes(w));

const problems = laneProblems();
if (problems.length > 0) {
  console.error(`test lanes: ${problems.length} problem(s)\n  ${problems.join("\n  ")}`);
  process.exit(1);
}
if (values.check) {
  console.log(`test lanes: ${LANE_NAMES.map((l) => `${l} ${LANES[l].length}`).join(", ")} files; every test file in exactly one lane`);
  process.exit(0);
}
const lanes = asked.length > 0 ? asked : [...LANE_NAMES];
const backends = values.backend === "both" ? ["sqlite", "postgres"] : [values.backend!];
for (const b of backends)
  if (b !== "sqlite" && b !== "postgres") {
    console.error(`--backend: sqlite, postgres or both, not "${b}"`);
    process.exit(2);
  }
if (backends.includes("postgres") && !process.env.SECBOX_TEST_PG_URL) {
  console.error("--backend postgres needs SECBOX_TEST_PG_URL (scripts/pg/cluster.sh start prints it)");
  process.exit(2);
}

const TIMINGS = join(import.meta.dir, "timings.json");
const touchesDb = (f: string) => f.startsWith("src/") && DB_PATTERN.test(readFileSync(f, "utf8"));

interface Job {
  name: string;
  files: string[];
  workers: number;
  env: Record<string, string>;
}
const jobs: Job[] = [];
if (filters.length > 0 && !lanes.some((l) => LANES[l].some((f) => filters.some((w) => f.includes(w))))) {
  console.error(`no test file of the lanes ${lanes.join(", ")} matches ${filters.join(" ")}`);
  process.exit(2);
}
for (const backend of backends) {
  for (const lane of lanes) {
    if (backend === "postgres" && lane === "browser") continue;
    const files = (backend === "postgres" ? LANES[lane].filter(touchesDb) : LANES[lane]).filter(
      (f) => filters.length === 0 || filters.some((w) => f.includes(w)),
    );
    if (files.length === 0) continue;
    const workers = lane === "fast" ? Number(values.parallel) : lane === "browser" ? Number(values.browsers) : 1;
    const env: Record<string, string> = backend === "postgres" ? { SECBOX_TEST_BACKEND: "postgres" } : { SECBOX_TEST_BACKEND: "sqlite" };
    jobs.push({ name: `${lane} on ${backend}`, files, workers, env });
  }
}

const logDir = values.logs ?? mkdtempSync(join(tmpdir(), "secbox-lanes-"));
mkdirSync(logDir, { recursive: true });
const streaming = jobs.length === 1;
const children: Bun.Subprocess[] = [];
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    for (const c of children) c.kill(sig);
    process.exit(130);
  });
}

/** The last " N <word>" line of bun's summary in `text`, or undefined. */
const countOf = (text: string, word: string) => {
  const all = [...text.replace(/\x1b\[[0-9;]*m/g, "").matchAll(new RegExp(`^ *(\\d+) ${word}$`, "gm"))];
  return all.length ? Number(all[all.length - 1]![1]) : undefined;
};

interface Result {
  job: Job;
  code: number;
  seconds: number;
  pass?: number;
  fail?: number;
  skip?: number;
}

async function run(job: Job): Promise<Result> {
  // 60 s per test (unless a test sets its own): a backstop for a hung test, not a speed bound; CPU-heavy tests (argon2,
  // openssl, the CLI's subprocesses) have taken over 30 s beside other lanes on a loaded 2-core machine.
  const args = ["bun", "test", "--timeout", "60000", "--no-orphans"];
  // timings.json: each file's duration in a full run (per-test times summed), so the workers start the slowest first
  // and no long file starts last (refresh: bun test --timings=scripts/test/timings.json --update-timings …).
  if (job.workers > 1 && job.files.length > 1) args.push(`--parallel=${job.workers}`, "--no-isolate", `--timings=${TIMINGS}`);
  args.push(...extra, ...job.files);
  const log = join(logDir, `${job.name.replace(/ /g, "-")}.log`);
  const fd = streaming ? undefined : openSync(log, "w");
  const started = performance.now();
  if (!streaming) console.log(`==> ${job.name}: ${job.files.length} files${job.workers > 1 ? `, ${job.workers} workers` : ""} (log ${log})`);
  const child = Bun.spawn(args, {
    env: { ...process.env, ...job.env },
    stdin: "ignore",
    stdout: fd ?? "pipe",
    stderr: fd ?? "pipe",
  });
  children.push(child);
  let text = "";
  if (streaming) {
    // Pass the output through as it comes, keeping a copy for the counts.
    const pump = async (stream: ReadableStream<Uint8Array>, out: NodeJS.WriteStream) => {
      const dec = new TextDecoder();
      for await (const chunk of stream) {
        text += dec.decode(chunk, { stream: true });
        out.write(chunk);
      }
    };
    await Promise.all([
      pump(child.stdout as ReadableStream<Uint8Array>, process.stdout),
      pump(child.stderr as ReadableStream<Uint8Array>, process.stderr),
    ]);
  }
  const code = await child.exited;
  const seconds = (performance.now() - started) / 1000;
  if (fd !== undefined) {
    closeSync(fd);
    text = readFileSync(log, "utf8");
    console.log(`\n==> ${job.name}: done in ${seconds.toFixed(0)} s, output:`);
    process.stdout.write(text);
  }
  return { job, code, seconds, pass: countOf(text, "pass"), fail: countOf(text, "fail"), skip: countOf(text, "skip") };
}

// The longest expected first (summed file timings over the job's workers; a file without a timing counts 5 s), at
// most --jobs at a time.
const known: Record<string, number> = (() => {
  try {
    return JSON.parse(readFileSync(TIMINGS, "utf8")).files ?? {};
  } catch {
    return {};
  }
})();
const expected = (j: Job) => j.files.reduce((ms, f) => ms + (known[f] ?? 5000), 0) / j.workers;
const queue = [...jobs].sort((a, b) => expected(b) - expected(a));
const results: Result[] = [];
await Promise.all(
  Array.from({ length: Math.max(1, Number(values.jobs)) }, async () => {
    for (let job = queue.shift(); job !== undefined; job = queue.shift()) results.push(await run(job));
  }),
);
results.sort((a, b) => jobs.indexOf(a.job) - jobs.indexOf(b.job));
let pass = 0,
  fail = 0,
  skip = 0,
  ok = true;
console.log("");
for (const r of results) {
  const summary =
    r.pass === undefined && r.fail === undefined ? "no summary" : `${r.pass ?? 0} pass, ${r.fail ?? 0} fail${r.skip ? `, ${r.skip} skip` : ""}`;
  console.log(`lane ${r.job.name}: ${summary}, exit ${r.code}, ${r.seconds.toFixed(0)} s (${r.job.files.length} files)`);
  pass += r.pass ?? 0;
  fail += r.fail ?? 0;
  skip += r.skip ?? 0;
  if (r.code !== 0 || (r.fail ?? 0) > 0 || r.pass === undefined) ok = false;
}
console.log(`lanes: ${pass} pass, ${fail} fail${skip ? `, ${skip} skip` : ""}`);
process.exit(ok ? 0 : 1);
