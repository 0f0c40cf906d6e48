#!/usr/bin/env bun
// Hostile search benchmark (issue 29 "search stalls everyone"): one user fills the tier's own limits with content
// built to make substring matching slow, then searches with the longest query. Runs the SQL of main before the fix
// (legacy.ts: LIKE '%q%' scans) and today's (platform/db/search.ts runSearch: index, then instr/strpos) side by side
// on the same database, and measures another user's GET /api/status while one user's searches run back to back.
//
//   bun scripts/bench/search/hostile.ts [--runs 5] [--victim-searches 5]
//   SECBOX_TEST_BACKEND=postgres SECBOX_TEST_PG_URL=… bun scripts/bench/search/hostile.ts   # on PostgreSQL
//
// Data (written with plain SQL through the Db interface, so the index triggers run as for any write), per attacker:
// 100 scripts of 51,200 bytes, 100 page trackers with a 2,048-character URL, 100 API trackers with 10 requests of
// 2,048-character URLs, 100 responders with a 255-character path. Three attackers: `adversarial` content repeats
// "a"×198 + "b" (it holds every trigram of the query, so no index can rule a row out), `plain` is "a"×51,200, `tail`
// is "a"s ending with "b" + "a"×199 (every row matches "b"+"a"×199, found only at the end).
// Queries: "a"×199 + "b" (LIKE's worst case) and "b" + "a"×199 (the worst case of PostgreSQL's strpos).
import { parseArgs } from "node:util";
import { loadavg } from "node:os";
import type { Db } from "../../../src/platform/db/db";
import { runSearch } from "../../../src/platform/db/search";
import { SEARCH_TYPES, specsFor, type SearchType } from "../../../src/features/search/specs";
import { startTestServer } from "../../../src/tests/harness";
import { legacySearch } from "./legacy";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { runs: { type: "string", default: "5" }, "victim-searches": { type: "string", default: "5" } },
  strict: true,
});
const RUNS = Math.max(1, Number(values.runs));
const VICTIM_SEARCHES = Math.max(1, Number(values["victim-searches"]));

const srv = await startTestServer({ env: { SECBOX_SERVER_LOG_LEVEL: "error", SECBOX_SCHEDULER_ENABLED: "false" } });
const db: Db = srv.rt.db;
const now = Math.floor(Date.now() / 1000);

const fillTo = (unit: string, n: number) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);

/** `unit` repeated to each field's limit, ending with `tail`. */
async function attacker(email: string, unit: string, tail = ""): Promise<string> {
  const user = await srv.createUser(email);
  const fill = (u: string, n: number) => fillTo(u, n - tail.length) + tail;
  const url = (k: number) => `https://x.example/${k}/${fill(unit, 2048 - `https://x.example/${k}/`.length)}`;
  await db.tx(async (tx) => {
    for (let i = 0; i < 100; i++) {
      await tx.run("INSERT INTO scripts (id, user_id, name, script_type, content, created_at, updated_at) VALUES (?, ?, ?, 'universal', ?, ?, ?)", [
        Bun.randomUUIDv7(),
        user.id,
        `s${i}`,
        fill(unit, 51_200),
        now,
        now - i,
      ]);
      const path = `/${i}/${fill(unit, 253 - String(i).length)}`;
      await tx.run(
        `INSERT INTO responders (id, user_id, name, path_type, path, path_lower, subdomain_prefix, method, enabled, requests_to_track, status_code, secrets, created_at, updated_at)
         VALUES (?, ?, ?, '=', ?, ?, '', 'GET', 1, 0, 200, '"none"', ?, ?)`,
        [Bun.randomUUIDv7(), user.id, `r${i}`, path, path, now, now - i],
      );
      const tracker = `INSERT INTO trackers (id, user_id, kind, name, enabled, config, target, notifications, secrets, schedule_anchor, created_at, updated_at)
         VALUES (?, ?, ?, ?, 0, '{"revisions":3,"timeout":10000}', ?, 0, '"none"', ?, ?, ?)`;
      await tx.run(tracker, [
        Bun.randomUUIDv7(),
        user.id,
        "page",
        `p${i}`,
        JSON.stringify({ url: url(i), headers: {}, acceptInvalidCertificates: false, resources: false }),
        now,
        now,
        now - i,
      ]);
      const requests = Array.from({ length: 10 }, (_, k) => ({ url: url(i * 10 + k), method: "GET", headers: {}, acceptInvalidCertificates: false }));
      await tx.run(tracker, [Bun.randomUUIDv7(), user.id, "api", `a${i}`, JSON.stringify({ requests }), now, now, now - i]);
    }
  });
  return user.id;
}

const t0 = performance.now();
const users = {
  adversarial: await attacker("adversarial@bench.example", `${"a".repeat(198)}b`),
  plain: await attacker("plain@bench.example", "a"),
  tail: await attacker("tail@bench.example", "a", `b${"a".repeat(199)}`),
};
const victim = await srv.createUser("victim@bench.example");
console.log(`backend ${db.dialect}; data written in ${((performance.now() - t0) / 1000).toFixed(1)} s; load average ${loadavg()[0]!.toFixed(2)}`);

type Search = (userId: string, text: string, types: readonly SearchType[]) => Promise<{ total: number }>;
const old: Search = (u, text, types) => legacySearch(db, u, text, types, 20);
const current: Search = (u, text, types) => runSearch(db, u, text, specsFor(types), 20);

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const f = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1)).padStart(7);

async function measure(search: Search, userId: string, text: string, types: readonly SearchType[], runs: number) {
  const wall: number[] = [];
  const cpu: number[] = [];
  let total = -1;
  for (let i = 0; i < runs; i++) {
    const c0 = process.cpuUsage();
    const t = performance.now();
    total = (await search(userId, text, types)).total;
    wall.push(performance.now() - t);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { total, wall: pct(wall, 50), max: Math.max(...wall), cpu: pct(cpu, 50) };
}

const A = "a".repeat(199) + "b";
const B = "b" + "a".repeat(199);
const cases: [string, keyof typeof users, string, readonly SearchType[]][] = [
  ['scripts, "a"×199+"b"', "adversarial", A, ["script"]],
  ['scripts, "a"×199+"b"', "plain", A, ["script"]],
  ['scripts, "b"+"a"×199', "plain", B, ["script"]],
  ['all types, "a"×199+"b"', "adversarial", A, SEARCH_TYPES],
  ['all types, "a"×199+"b"', "plain", A, SEARCH_TYPES],
  ['all types, "b"+"a"×199', "plain", B, SEARCH_TYPES],
  ['scripts, "b"+"a"×199', "tail", B, ["script"]],
  ['all types, "b"+"a"×199', "tail", B, SEARCH_TYPES],
  ['all types, "orders" (normal)', "adversarial", "orders", SEARCH_TYPES],
];

console.log(`\n${"case".padEnd(32)} ${"content".padEnd(11)} | main: wall p50    max  CPU p50 | now: wall p50    max  CPU p50 | wall ratio | totals`);
for (const [label, who, text, types] of cases) {
  const a = await measure(old, users[who], text, types, Math.min(RUNS, 3));
  const b = await measure(current, users[who], text, types, RUNS);
  const ratio = a.wall / b.wall;
  const r = ratio >= 10 ? ratio.toFixed(0) : ratio.toFixed(1);
  console.log(
    `${label.padEnd(32)} ${who.padEnd(11)} |       ${f(a.wall)} ${f(a.max)} ${f(a.cpu)} |      ${f(b.wall)} ${f(b.max)} ${f(b.cpu)} | ${r.padStart(9)}× | ${a.total} / ${b.total}`,
  );
  if (a.total !== b.total && text.length >= 3) console.log("  (totals differ)");
}

// Another user's GET /api/status while one user's searches run back to back in this process (as the server runs
// them: on its event loop on SQLite; on PostgreSQL the queries wait on the database instead).
async function victimDuring(search: Search): Promise<{ p50: number; p99: number; max: number; n: number }> {
  let running = true;
  const lat: number[] = [];
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      await victim.client.get("/api/status");
      lat.push(performance.now() - t);
    }
  })();
  await Bun.sleep(50);
  for (let i = 0; i < VICTIM_SEARCHES; i++) {
    await search(users.adversarial, A, SEARCH_TYPES);
    await new Promise((r) => setImmediate(r));
  }
  running = false;
  await loop;
  return { p50: pct(lat, 50), p99: pct(lat, 99), max: Math.max(...lat), n: lat.length };
}
const quiet: number[] = [];
for (let i = 0; i < 50; i++) {
  const t = performance.now();
  await victim.client.get("/api/status");
  quiet.push(performance.now() - t);
}
const vOld = await victimDuring(old);
const vNew = await victimDuring(current);
console.log(`\nvictim GET /api/status while ${VICTIM_SEARCHES} all-type searches for "a"×199+"b" run back to back (adversarial data):`);
const v = (x: { p50: number; p99: number; max: number; n: number }) =>
  `p50 ${x.p50.toFixed(1)} / p99 ${x.p99.toFixed(0)} / max ${x.max.toFixed(0)} ms (${x.n} requests)`;
console.log(`  quiet p50 ${pct(quiet, 50).toFixed(1)} ms | main ${v(vOld)} | now ${v(vNew)}`);
console.log(`load average ${loadavg()[0]!.toFixed(2)}`);
await srv.stop();
