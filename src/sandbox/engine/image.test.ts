// Memory images (image.ts) and what executions get from them: here, Math.random's seed. QuickJS seeds it from the
// millisecond clock when a context is created, so two runtimes created in the same millisecond would give the same
// sequence; every execution gets a seed from the CSPRNG instead, also one that creates its own runtime because the
// pristine one is in use.
import { afterAll, expect, test } from "bun:test";
import { createLogger } from "../../platform/log";
import { ScriptPool } from "../pool";
import type { ScriptLimits } from "../types";

const LIMITS: ScriptLimits = { memoryMib: 10, timeoutMs: 10_000, proxyTimeoutMs: 30_000, maxProxyBodyBytes: 1 << 20 };
const pool = new ScriptPool({ workers: 1, queueLimit: 200, allowPrivate: false, log: createLogger("error") });
afterAll(() => pool.close());

test("Math.random is seeded from the CSPRNG in every execution, also in runtimes created while the pristine one is busy", async () => {
  await pool.ready();
  // holds the pristine runtime: the next executions on the only worker create their own runtimes, back to back
  const parked = pool.run({ source: "await new Promise((r) => setTimeout(r, 1000)); return 'parked'", context: {}, limits: LIMITS });
  await Bun.sleep(50);
  for (let round = 0; round < 3; round++) {
    const runs = await Promise.all(
      Array.from({ length: 40 }, () => pool.run({ source: "[Math.random(), Math.random()]", context: {}, limits: LIMITS })),
    );
    const values = runs.map((r) => (r.ok ? JSON.stringify(r.value) : r.error.message));
    expect(values.every((v) => v.startsWith("[0."))).toBe(true);
    expect(new Set(values).size).toBe(values.length);
  }
  const p = await parked;
  expect(p.ok ? p.value : p.error).toBe("parked");
});
