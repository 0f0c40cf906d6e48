// The engine's reach into quickjs-emscripten internals (quickjs-internals.ts): pinned to the installed versions and
// self-checked, so that an upgrade of the library that moves any of them fails here by name; and the slow safe path
// a worker takes when they do not match: every script still runs, a native stack overflow still ends only its run
// (by replacing the worker), and the pool says so once.
import { afterAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../platform/log";
import { Engine } from "../engine";
import { ScriptPool } from "../pool";
import type { ScriptLimits, ScriptRunResult } from "../types";
import { OutOfMemory } from "./exec";
import { checkFast, checkGlue, guardAllocations, INSTALLED, installGuard, MAX_HOST_ALLOC, PINNED, versionMismatch } from "./quickjs-internals";

const LIMITS: ScriptLimits = { memoryMib: 10, timeoutMs: 5000, proxyTimeoutMs: 30_000, maxProxyBodyBytes: 1 << 20 };

describe("quickjs-emscripten internals", () => {
  test("the installed packages are the pinned versions, and every internal the engine uses behaves as verified", async () => {
    // An upgrade fails here first: re-verify the internals (quickjs-internals.ts header), then move PINNED.
    expect(INSTALLED).toEqual({ ...PINNED });
    expect(versionMismatch()).toBeNull();
    const engine = new Engine(() => {});
    await engine.init(512);
    expect(checkGlue(engine.mod!)).toBeNull();
    expect(checkFast(engine.mod!, engine.instance, engine.memory!)).toBeNull();
    expect({
      fast: engine.fast,
      fallback: engine.fallback,
      image: engine.snapshotting,
      stackTop: engine.stackTop !== null,
      interruptCounter: engine.counterOffset !== null,
    }).toEqual({
      fast: true,
      fallback: null,
      image: true,
      stackTop: true,
      interruptCounter: true,
    });
  });

  test("a module whose host-callback glue is not as verified is refused: the guard has no slow path", () => {
    expect(() =>
      installGuard(
        {} as never,
        (fn) => fn,
        (inner) =>
          (_a, ...a) =>
            inner(...a),
      ),
    ).toThrow("unexpected quickjs-emscripten internals");
    expect(() => guardAllocations({} as never, () => new Error("refused"))).toThrow("unexpected quickjs-emscripten internals");
  });

  test("a host-side allocation the instance cannot make throws before anything is written, instead of returning address 0", async () => {
    // quickjs-emscripten writes host strings and buffers into the block _malloc returns, unchecked (issue 29)
    const engine = new Engine(() => {});
    await engine.init(512);
    const malloc = (engine.mod as unknown as { module: { _malloc(n: number): number } }).module._malloc;
    expect(() => malloc(600 * 1024 * 1024)).toThrow(OutOfMemory); // beyond the worker's 512 MiB cap
    expect(() => malloc(2 ** 32 + 16)).toThrow(OutOfMemory); // would wrap to a 16-byte block in 32 bits
    expect(() => malloc(MAX_HOST_ALLOC + 1)).toThrow(OutOfMemory);
    const rt = engine.mod!.newRuntime();
    const ctx = rt.newContext();
    try {
      expect(() => ctx.newArrayBuffer(new ArrayBuffer(600 * 1024 * 1024))).toThrow(OutOfMemory);
      const h = ctx.newString("still fine");
      expect(ctx.getString(h)).toBe("still fine");
      h.dispose();
    } finally {
      ctx.dispose();
      rt.dispose();
    }
  });
});

describe("the slow safe path (versions other than the pinned ones)", () => {
  const warnings: string[] = [];
  const log = {
    ...createLogger("error"),
    warn: (msg: string, fields?: Record<string, unknown>) => void warnings.push(`${msg} ${JSON.stringify(fields ?? {})}`),
  };
  const pool = new ScriptPool({ workers: 2, queueLimit: 100, allowPrivate: false, log, quickjsVersions: { core: "0.31.0", variant: "0.31.0" } });
  const fast = new ScriptPool({ workers: 1, queueLimit: 100, allowPrivate: false, log: createLogger("error") });
  afterAll(async () => {
    await pool.close();
    await fast.close();
  });
  const outcome = (r: ScriptRunResult) => (r.ok ? { value: r.value, logs: r.logs } : { error: { kind: r.error.kind, message: r.error.message } });

  test("every worker runs without the memory image and the pool warns once, naming the versions", async () => {
    await pool.ready();
    const stats = pool.stats();
    expect({ ready: stats.ready, snapshotWorkers: stats.snapshotWorkers }).toEqual({ ready: 2, snapshotWorkers: 0 });
    const fallbacks = warnings.filter((w) => w.includes("verified fast internals"));
    expect(fallbacks).toHaveLength(1);
    expect(fallbacks[0]).toContain(`quickjs-emscripten-core ${INSTALLED.core}`);
    expect(fallbacks[0]).toContain("verified for 0.31.0 / 0.31.0");
  });

  test("scripts give the same results as on the fast path", async () => {
    const cases: [string, unknown][] = [
      ["1 + 1", {}],
      ["return context.n * 2", { n: 21 }],
      [
        "await new Promise((r) => setTimeout(r, 5)); return Sandbox.core.decode(context.body).toUpperCase()",
        { body: new TextEncoder().encode("bytes in") },
      ],
      ["console.log('hi', 1); ({ bytes: new Uint8Array([1, 2, 3]), text: new TextDecoder().decode(new TextEncoder().encode('é')) })", {}],
      ["globalThis.leak = (globalThis.leak ?? 0) + 1; delete globalThis.Sandbox; return [leak, typeof Secbox.crypto.sha256]", {}],
      ["throw new TypeError('nope')", {}],
      ["while (true) {}", {}],
      ["function f() { return f() } f()", {}],
      ["({ f: () => 1 })", {}],
      // host data beyond the memory limit (issue 29), and a long string holding NULs (code units, not JSON)
      ["atob('A'.repeat(8 * 1024 * 1024)).length", {}],
      [
        "const s = Sandbox.core.decode(new Uint8Array(5000).map((_, i) => i % 3 === 0 ? 0 : 0xe9)); return [s.length, s.charCodeAt(0), s.charCodeAt(1)]",
        {},
      ],
      ["const s = atob(btoa('\\0\\xe9'.repeat(3000))); return [s.length, s.charCodeAt(0), s.charCodeAt(1), s.charCodeAt(5999)]", {}],
    ];
    for (let round = 0; round < 3; round++) {
      for (const [source, context] of cases) {
        const limits = source.startsWith("while") ? { ...LIMITS, timeoutMs: 100 } : LIMITS;
        const [slow, quick] = await Promise.all([pool.run({ source, context, limits }), fast.run({ source, context, limits })]);
        expect({ source, ...outcome(slow) }).toEqual({ source, ...outcome(quick) });
      }
    }
    // the same source ran many times: never from an image
    expect(pool.stats().imageRuns).toBe(0);
    expect(fast.stats().imageRuns).toBeGreaterThan(0);
  });

  test("a native stack overflow still ends only its own run (its worker is replaced instead of contained)", async () => {
    const before = pool.stats().replaced;
    const r = await pool.run({ source: "eval('('.repeat(100000) + '1' + ')'.repeat(100000))", context: {}, limits: LIMITS });
    expect(r.ok ? r.value : { kind: r.error.kind, message: r.error.message }).toEqual({ kind: "error", message: "InternalError: stack overflow" });
    expect(pool.stats().replaced).toBe(before + 1);
    const next = await pool.run({ source: "[1, 2].map((x) => x * 3)", context: {}, limits: LIMITS });
    expect(next.ok && next.value).toEqual([3, 6]);
    await pool.ready();
    expect(pool.stats().snapshotWorkers).toBe(0);
    expect(warnings.filter((w) => w.includes("verified fast internals"))).toHaveLength(1);
  });
});
