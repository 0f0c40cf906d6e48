// Dispatch must always end (pool/offers.ts makeRoom()). Issue 29, the flood: a user whose trivial script had run
// longer than STUCK_MS on a loaded machine counted as a hog; when another user's offers filled every worker and
// only the hog's job waited, makeRoom() took those offers back for it, they ranked before it again, dispatch()
// offered them again and made room again, forever, on the main thread: the server stopped answering anyone and
// its memory grew until the kernel killed it. Real QuickJS in a real worker thread; the scenario runs in a child
// process because on the old code it never returns (the test would otherwise hang the runner).
import { expect, test } from "bun:test";
import { resolve } from "node:path";

const pool = resolve(import.meta.dir, "pool.ts");
const logger = resolve(import.meta.dir, "../platform/log.ts");

const SCENARIO = `
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

test("a hog's job waiting while another user's offers fill every worker: dispatch ends, every job runs", async () => {
  const proc = Bun.spawn(["bun", "-e", SCENARIO], { stdout: "pipe", stderr: "pipe" });
  const killer = setTimeout(() => proc.kill(9), 25_000); // the old code never returns (and its memory grows)
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  clearTimeout(killer);
  const lines = out.trim().split("\n");
  expect(lines[0], err).toBe("V hogs, worker free");
  expect(lines.at(-1), err).toBe("done 17");
}, 40_000);
