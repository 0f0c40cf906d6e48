// Browser recycling and shutdown: a browser is replaced after `maxRunsPerBrowser` runs (bounding slow leaks), the
// retired one exits and its user data directory is removed; close() leaves no process and no directory behind.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { createLogger } from "../../../platform/log";
import { ChromiumEngine } from "./engine";

const EXECUTABLE = process.env.SECBOX_CHROMIUM ?? "/usr/bin/chromium";
const T = 15_000;

let engine: ChromiumEngine;
let server: ReturnType<typeof Bun.serve>;
let base = "";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const profiles = () => new Set(readdirSync(tmpdir()).filter((n) => n.startsWith("secbox-chromium-")));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
let before = new Set<string>();

beforeAll(() => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: () => new Response(`<body><p id="p"></p><script>document.getElementById("p").textContent = "n" + 1;</script></body>`, { headers: { "content-type": "text/html" } }),
  });
  base = `http://127.0.0.1:${server.port}`;
  before = profiles();
  engine = new ChromiumEngine({ executable: EXECUTABLE, maxConcurrency: 1, log: createLogger("error"), maxRunsPerBrowser: 3 });
});

afterAll(async () => {
  await engine?.close();
  server?.stop(true);
});

describe.skipIf(!existsSync(EXECUTABLE))("page engine recycling", () => {
  test(
    "a new browser every maxRunsPerBrowser runs; retired ones exit and leave no profile; close() cleans up",
    async () => {
      const pids = new Set<number>();
      for (let i = 0; i < 7; i++) {
        const r = await engine.run({ url: `${base}/`, secrets: {}, timeoutMs: 10_000, allowPrivate: true });
        expect(r.error).toBeUndefined();
        expect(new TextDecoder().decode(r.value)).toBe("n1");
        const pid = engine.stats().browserPid;
        if (pid !== undefined) pids.add(pid);
      }
      expect(engine.stats().launches).toBe(3);
      expect(pids.size).toBe(3);
      const last = engine.stats().browserPid as number;
      for (let i = 0; i < 100 && [...pids].some((p) => p !== last && alive(p)); i++) await sleep(20);
      for (const p of pids) if (p !== last) expect(alive(p)).toBe(false);
      const mem = engine.stats();
      expect(mem.browserRss).toBeGreaterThan(0);
      expect(mem.browserProcesses).toBeGreaterThan(1);

      await engine.close();
      expect(alive(last)).toBe(false);
      const leftover = [...profiles()].filter((n) => !before.has(n));
      expect(leftover).toEqual([]);
      const refused = await engine.run({ url: `${base}/`, secrets: {}, timeoutMs: 10_000, allowPrivate: true });
      expect(refused.error).toBe("Page engine is shut down");
    },
    T,
  );
});
