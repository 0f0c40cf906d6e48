// Dispatch must always end (pool/offers.ts makeRoom()). Issue 29, the flood: a user whose trivial script had run
// longer than STUCK_MS on a loaded machine counted as a hog; when another user's offers filled every worker and
// only the hog's job waited, makeRoom() took those offers back for it, they ranked before it again, dispatch()
// offered them again and made room again, forever, on the main thread: the server stopped answering anyone and
// its memory grew until the kernel killed it. The second scenario is the cycle a rank-aware makeRoom() alone left
// (dispatch() took a better-ranked owner's offer back for the hog's job, the hog's offer then kept its worker from
// taking more, makeRoom() took it back, …): each offer is now taken back at most once per dispatch() call.
// Real QuickJS in real worker threads; each scenario runs in a child process because code that loops never returns
// (the test would otherwise hang the runner).
import { expect, test } from "bun:test";
import { resolve } from "node:path";

const pool = resolve(import.meta.dir, "pool.ts");
const logger = resolve(import.meta.dir, "../platform/log.ts");

/** One user's offers fill the only worker while only a hog's job waits. */
const FULL_WORKER = `
import { ScriptPool } from ${JSON.stringify(pool)};
import { createLogger } from ${JSON.stringify(logger)};
const limits = { memoryMib: 10, timeoutMs: 2000, proxyTimeoutMs: 30000, maxProxyBodyBytes: 1024 };
const pool = new ScriptPool({ workers: 1, queueLimit: 1000, allowPrivate: false, log: createLogger("error") });
await pool.ready();
const run = (owner, source) => pool.run({ source, owner, limits, context: {} });
// V becomes a hog (one job running longer than STUCK_MS, seen by the pool's check), and its worker is no longer
// stuck: the state dispatch() must handle. Retried while the machine's load makes the check miss it.
let ready = false;
for (let attempt = 0; attempt < 10 && !ready; attempt++) {
  await run("V", "const e = Date.now() + 300; while (Date.now() < e) {} 1");
  for (let i = 0; i < 200 && !ready; i++) {
    ready = [...pool.hogs].some((o) => o.key === "V") && !pool.slots[0].stuck;
    if (!ready) await Bun.sleep(5);
  }
}
console.log(ready ? "V hogs, worker free" : "precondition not reached");
// In one turn: 16 jobs of A fill the worker's offers (OFFER_DEPTH, none claimed yet), then V's job waits.
const a = Array.from({ length: 16 }, () => run("A", "1"));
const v = run("V", "2");
const rs = await Promise.all([...a, v]);
console.log("done " + rs.filter((r) => r.ok).length);
await pool.close();
process.exit(0);
`;

/** Two workers: one held by the hog's long job, the other with the first user's offers; both users' jobs wait. */
const HELD_WORKER = `
import { ScriptPool } from ${JSON.stringify(pool)};
import { createLogger } from ${JSON.stringify(logger)};
const limits = { memoryMib: 10, timeoutMs: 5000, proxyTimeoutMs: 30000, maxProxyBodyBytes: 1024 };
const pool = new ScriptPool({ workers: 2, queueLimit: 1000, allowPrivate: false, log: createLogger("error") });
await pool.ready();
const run = (owner, source) => pool.run({ source, owner, limits, context: {} });
const hog = () => [...pool.hogs].some((o) => o.key === "V");
let ready = false;
for (let attempt = 0; attempt < 10 && !ready; attempt++) {
  await run("V", "const e = Date.now() + 300; while (Date.now() < e) {} 1");
  for (let i = 0; i < 200 && !ready; i++) {
    ready = hog() && !pool.slots.some((s) => s.stuck);
    if (!ready) await Bun.sleep(5);
  }
}
const long = run("V", "const e = Date.now() + 2000; while (Date.now() < e) {} 1");
let held = false;
for (let i = 0; i < 400 && !held; i++) {
  held = hog() && pool.slots.filter((s) => s.stuck).length === 1;
  if (!held) await Bun.sleep(5);
}
console.log(ready && held ? "V hogs, one worker held by it" : "precondition not reached");
const rs = await Promise.all([...Array.from({ length: 4 }, () => run("A", "1")), ...Array.from({ length: 4 }, () => run("V", "2")), long]);
console.log("done " + rs.filter((r) => r.ok).length);
await pool.close();
process.exit(0);
`;

async function scenario(source: string): Promise<{ lines: string[]; err: string }> {
  const proc = Bun.spawn(["bun", "-e", source], { stdout: "pipe", stderr: "pipe" });
  const killer = setTimeout(() => proc.kill(9), 25_000); // looping code never returns (and its memory grows)
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  clearTimeout(killer);
  return { lines: out.trim().split("\n"), err };
}

test("a hog's job waiting while another user's offers fill every worker: dispatch ends, every job runs", async () => {
  const { lines, err } = await scenario(FULL_WORKER);
  expect(lines[0], err).toBe("V hogs, worker free");
  expect(lines.at(-1), err).toBe("done 17");
}, 40_000);

test("a hog's jobs and another user's wait while the hog's long job holds one of two workers: dispatch ends", async () => {
  const { lines, err } = await scenario(HELD_WORKER);
  expect(lines[0], err).toBe("V hogs, one worker held by it");
  expect(lines.at(-1), err).toBe("done 9");
}, 40_000);
