#!/usr/bin/env bun
// Before and after, side by side in one run: each scenario of loop-delay.ts runs on the code of `--before` (a git
// revision, extracted to a temporary directory with this checkout's node_modules and this probe) and then on this
// checkout, one after the other, so both see the same machine load. Prints one table.
//
//   bun scripts/bench/work/compare.ts --before <rev> [--runs 3] [--only name,name]
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { SCENARIOS } from "./scenarios";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { before: { type: "string" }, runs: { type: "string", default: "3" }, only: { type: "string", default: "" } },
  strict: true,
});
if (!values.before) {
  console.error("usage: bun scripts/bench/work/compare.ts --before <git revision> [--runs 3] [--only a,b]");
  process.exit(2);
}
const root = resolve(import.meta.dir, "../../..");
const old = mkdtempSync(join(tmpdir(), "secbox-before-"));
const archive = Bun.spawnSync(["sh", "-c", `git -C '${root}' archive '${values.before}' | tar -x -C '${old}'`]);
if (archive.exitCode !== 0) throw new Error(`git archive ${values.before}: ${archive.stderr.toString()}`);
symlinkSync(join(root, "node_modules"), join(old, "node_modules"));
mkdirSync(join(old, "scripts/bench/work"), { recursive: true });
for (const f of ["loop-delay.ts", "scenarios.ts"]) cpSync(join(import.meta.dir, f), join(old, "scripts/bench/work", f));

const only = values.only === "" ? SCENARIOS : SCENARIOS.filter((s) => values.only!.split(",").includes(s));
type Row = { status: string; p50: string; p99: string; max: string; cpu: string; slowest: string; what: string };

function run(tree: string, name: string): { quiet: Row | undefined; row: Row | undefined } {
  const p = Bun.spawnSync(["bun", join(tree, "scripts/bench/work/loop-delay.ts"), "--only", name, "--runs", values.runs!], {
    stdout: "pipe",
    stderr: "inherit",
  });
  const lines = p.stdout.toString().split("\n");
  const parse = (line: string | undefined): Row | undefined => {
    if (!line) return undefined;
    const c = line.split("|").map((x) => x.trim());
    return { what: c[1]!, status: c[2]!, p50: c[3]!, p99: c[4]!, max: c[5]!, cpu: c[6]!, slowest: c[7]! };
  };
  return { quiet: parse(lines.find((l) => l.startsWith("| quiet"))), row: parse(lines.find((l) => l.startsWith(`| ${name}:`))) };
}

console.log(
  `Before: ${values.before}; after: this checkout. Loop lateness of a 1 ms timer while the request runs (worst of ${values.runs} runs), main-thread CPU of the request.`,
);
console.log("");
console.log("| request | before: status, p99 / max ms, main CPU ms | after: status, p99 / max ms, main CPU ms | quiet max ms (before / after) |");
console.log("|---|---|---|---|");
try {
  for (const name of only) {
    const before = run(old, name);
    const after = run(root, name);
    const cell = (r: Row | undefined) => (r ? `${r.status}, ${r.p99} / **${r.max}**, ${r.cpu}` : "(failed)");
    console.log(
      `| ${after.row?.what ?? before.row?.what ?? name} | ${cell(before.row)} | ${cell(after.row)} | ${before.quiet?.max ?? "?"} / ${after.quiet?.max ?? "?"} |`,
    );
  }
} finally {
  rmSync(old, { recursive: true, force: true });
}
