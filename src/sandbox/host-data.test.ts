// Data the host hands into a script (engine/marshal.ts "Host data into the instance"): strings and byte arrays made
// by host functions (TextDecoder, Sandbox.core.decode/encode, atob/btoa, TextEncoder) and host-operation results
// (op_proxy_request bodies, Secbox.kv values) are bounded by the run's memory limit, and an allocation the worker's
// memory cannot hold is refused instead of being written at address 0 of the instance (issue 29: these scripts
// trapped the worker, and other users' scripts on it failed). Real QuickJS in real worker threads, a real HTTP
// server on loopback, Secbox.kv on a real SQLite file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type SqliteDb } from "../platform/db/sqlite";
import { migrate } from "../platform/db/migrate";
import { createLogger } from "../platform/log";
import { CRASH_SCRIPTS } from "./crash-scripts";
import { ScriptPool, type ScriptPoolOptions } from "./pool";
import type { ScriptLimits, ScriptRunResult } from "./types";

const log = createLogger("error");
const LIMITS: ScriptLimits = { memoryMib: 10, timeoutMs: 5000, proxyTimeoutMs: 30_000, maxProxyBodyBytes: 10 * 1024 * 1024 };

const dir = mkdtempSync(join(tmpdir(), "secbox-hostdata-"));
let db: SqliteDb;
let server: ReturnType<typeof Bun.serve>;
let base: string;

beforeAll(() => {
  db = openDatabase(dir);
  migrate(db);
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const n = Number(new URL(req.url).searchParams.get("mib") ?? "1");
      return new Response(new Uint8Array(n * 1024 * 1024).fill(0x41));
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => {
  server.stop(true);
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function withPool(opts: Partial<ScriptPoolOptions>, fn: (pool: ScriptPool) => Promise<void>): Promise<void> {
  const pool = new ScriptPool({ workers: 1, queueLimit: 1000, allowPrivate: true, log, db, ...opts });
  try {
    await pool.ready();
    await fn(pool);
  } finally {
    await pool.close();
  }
}

const outcome = (r: ScriptRunResult) => (r.ok ? r.value : r.error.kind);

describe("host data into a script is bounded by its memory limit", () => {
  test("each crash script ends as its own memory error, caught or not; the worker stays and serves the next script", async () => {
    await withPool({}, async (pool) => {
      for (let round = 0; round < 2; round++) {
        for (const source of CRASH_SCRIPTS) {
          const r = await pool.run({ source, context: {}, owner: "attacker", limits: LIMITS });
          expect({ source, outcome: r.ok ? r.value : r.error }).toEqual({
            source,
            outcome: { kind: "memory", message: "Script exceeded its memory limit" },
          });
          // catching the error does not get past the limit either
          const caught = await pool.run({
            source: `try { return ${source} } catch (e) { return 'caught ' + e.message }`,
            context: {},
            owner: "attacker",
            limits: LIMITS,
          });
          expect({ source, outcome: outcome(caught) }).toEqual({ source, outcome: "memory" });
        }
      }
      expect(pool.stats().replaced).toBe(0);
      const after = await pool.run({ source: "[1, 2, 3].map((x) => x * 2)", context: {}, limits: LIMITS });
      expect(outcome(after)).toEqual([2, 4, 6]);
    });
  }, 60_000);

  test("within the limit the same host functions still work", async () => {
    await withPool({}, async (pool) => {
      const ok = async (source: string) => outcome(await pool.run({ source, context: {}, limits: LIMITS }));
      expect(await ok("new TextDecoder().decode(new ArrayBuffer(1024 * 1024)).length")).toBe(1024 * 1024);
      expect(await ok("const s = Sandbox.core.decode(new Uint8Array(1024 * 1024)); return [s.length, s.charCodeAt(5)]")).toEqual([1024 * 1024, 0]);
      expect(await ok("atob('QUJD'.repeat(512 * 1024)).length")).toBe(1536 * 1024);
      expect(await ok("new TextDecoder().decode(new Uint8Array(2 * 1024 * 1024).fill(65)).length")).toBe(2 * 1024 * 1024);
      expect(await ok("Sandbox.core.encode('x'.repeat(2 * 1024 * 1024)).length")).toBe(2 * 1024 * 1024);
      expect(await ok("btoa('x'.repeat(1024 * 1024)).length")).toBe(4 * Math.ceil((1024 * 1024) / 3));
      // long strings holding NULs go in as code units: Latin-1 (narrow) and wider ones come out exact
      expect(
        await ok(
          "const s = atob(btoa('\\0\\xe9'.repeat(3000))); return [s.length, s.charCodeAt(0), s.charCodeAt(1), s.charCodeAt(5999), s === '\\0\\xe9'.repeat(3000)]",
        ),
      ).toEqual([6000, 0, 0xe9, 0xe9, true]);
      expect(
        await ok(
          "const s = Sandbox.core.decode(Sandbox.core.encode('\\0\\u20ac\\ud83d\\ude00'.repeat(2000))); return [s.length, s === '\\0\\u20ac\\ud83d\\ude00'.repeat(2000)]",
        ),
      ).toEqual([8000, true]);
      // a larger limit admits what a smaller one refuses
      const big = await pool.run({ source: CRASH_SCRIPTS[0]!, context: {}, limits: { ...LIMITS, memoryMib: 64 } });
      expect(outcome(big)).toBe(6 * 1024 * 1024);
      expect(pool.stats().replaced).toBe(0);
    });
  }, 60_000);

  test("a proxy response body or KV value larger than the script's memory is its memory error, at the await", async () => {
    await withPool({}, async (pool) => {
      const fetchBig = `const r = await Sandbox.core.ops.op_proxy_request({ url: '${base}/?mib=8' }); return r.body.length`;
      const r = await pool.run({ source: fetchBig, context: {}, owner: "attacker", limits: { ...LIMITS, memoryMib: 4 } });
      expect(r.ok ? r.value : r.error).toEqual({ kind: "memory", message: "Script exceeded its memory limit" });
      const caught = await pool.run({
        source: `try { ${fetchBig} } catch (e) { return 'caught ' + e.message }`,
        context: {},
        owner: "attacker",
        limits: { ...LIMITS, memoryMib: 4 },
      });
      expect(outcome(caught)).toBe("memory");
      // the same body fits a larger limit
      const fits = await pool.run({ source: fetchBig, context: {}, owner: "attacker", limits: { ...LIMITS, memoryMib: 32 } });
      expect(outcome(fits)).toBe(8 * 1024 * 1024);
      // a 1 MiB KV value (the largest allowed) read by a script limited to 1 MiB
      const put = await pool.run({
        source: "await Secbox.kv.set('big', 'k'.repeat(1024 * 1024 - 64)); return 1",
        context: {},
        kvOwner: "r1",
        limits: { ...LIMITS, memoryMib: 16 },
      });
      expect(outcome(put)).toBe(1);
      const get = await pool.run({
        source: "const v = await Secbox.kv.get('big'); return typeof v",
        context: {},
        kvOwner: "r1",
        limits: { ...LIMITS, memoryMib: 1 },
      });
      expect(outcome(get)).toBe("memory");
      const small = await pool.run({
        source: "const v = await Secbox.kv.get('big'); return v.length",
        context: {},
        kvOwner: "r1",
        limits: { ...LIMITS, memoryMib: 16 },
      });
      expect(outcome(small)).toBe(1024 * 1024 - 64);
      expect(pool.stats().replaced).toBe(0);
    });
  }, 60_000);

  test("another user's scripts parked on the same worker finish with their own results while the crash scripts run", async () => {
    await withPool({}, async (pool) => {
      const victim = (i: number) =>
        pool.run({
          source:
            "const keep = { list: [1, 2, 3], text: 'v'.repeat(1000) + context.i }; await new Promise((r) => setTimeout(r, 150)); await Secbox.kv.set('k' + context.i, keep.text); return [keep.list.length, (await Secbox.kv.get('k' + context.i)).length]",
          context: { i },
          owner: "victim",
          kvOwner: "victim-responder",
          limits: LIMITS,
        });
      const parked: Promise<ScriptRunResult>[] = [];
      const crashes: Promise<ScriptRunResult>[] = [];
      for (let i = 0; i < CRASH_SCRIPTS.length; i++) {
        parked.push(victim(i));
        await Bun.sleep(20); // parked on its timer when the crash script runs
        crashes.push(pool.run({ source: CRASH_SCRIPTS[i]!, context: {}, owner: "attacker", limits: LIMITS }));
      }
      expect((await Promise.all(crashes)).map(outcome)).toEqual(CRASH_SCRIPTS.map(() => "memory"));
      const results = await Promise.all(parked);
      expect(results.map(outcome)).toEqual(CRASH_SCRIPTS.map((_, i) => [3, 1000 + String(i).length]));
      expect(pool.stats().replaced).toBe(0);
    });
  }, 60_000);
});
