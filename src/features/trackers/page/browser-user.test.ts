// Chromium keeps its sandbox when Secbox runs as root (browser.ts, `[chromium] user`): the real /usr/bin/chromium is
// started as the configured user through setpriv, and the test reads /proc to see who its processes run as and
// whether the renderers are sandboxed (seccomp filter, own user namespace). Needs root (this CI machine is) to test
// the switch for real; as another user only the "not root" behaviour is checked.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync, readlinkSync } from "node:fs";
import { createLogger } from "../../../platform/log";
import { startTestServer, type TestServer } from "../../../tests/harness";
import { BrowserHandle, chromiumRunAs } from "./browser";

const EXECUTABLE = "/usr/bin/chromium";
const isRoot = process.getuid?.() === 0;
const log = createLogger("error");

/** The pid and its descendants (from /proc). */
function tree(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const e of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(e)) continue;
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "latin1");
      parent.set(Number(e), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      /* gone */
    }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) for (const [p, pp] of parent) if (pp === out[i]) out.push(p);
  return out;
}

const status = (pid: number) => readFileSync(`/proc/${pid}/status`, "latin1");
const uids = (pid: number) => /^Uid:\s+(.*)$/m.exec(status(pid))![1]!.trim().split(/\s+/).map(Number);
const gids = (pid: number) => /^Gid:\s+(.*)$/m.exec(status(pid))![1]!.trim().split(/\s+/).map(Number);
/** Command-line words (Chromium's child processes rewrite theirs into one space-separated string). */
const cmdline = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "latin1").split(/[\0 ]/);
const seccomp = (pid: number) => Number(/^Seccomp:\s+(\d)/m.exec(status(pid))?.[1]);
const userNs = (pid: number) => readlinkSync(`/proc/${pid}/ns/user`);
const nobody = () => {
  const run = chromiumRunAs("nobody", true)!;
  return { uid: run.uid, gid: run.gid };
};

/** Opens a page so that a renderer process exists, then returns the renderer pids of the tree. */
async function renderers(h: BrowserHandle): Promise<number[]> {
  const page = await h.browser.newPage();
  await page.goto("data:text/html,<p>hello</p>");
  expect(await page.evaluate("document.body.textContent")).toBe("hello");
  return tree(h.pid!).filter((p) => cmdline(p).includes("--type=renderer"));
}

describe.skipIf(!isRoot)("Secbox as root", () => {
  test("user = nobody: every Chromium process runs as nobody, without --no-sandbox; renderers are sandboxed (seccomp, own user namespace)", async () => {
    const { uid, gid } = nobody();
    const h = await BrowserHandle.launch({ executable: EXECUTABLE, log, launchTimeoutMs: 60_000, user: "nobody" });
    try {
      expect(h.pid).toBeNumber();
      const pids = tree(h.pid!);
      expect(pids.length).toBeGreaterThan(1);
      for (const p of pids) {
        expect(uids(p)).toEqual([uid, uid, uid, uid]);
        expect(gids(p)).toEqual([gid, gid, gid, gid]);
      }
      expect(cmdline(h.pid!)[0]).toContain("chromium"); // setpriv exec'd Chromium in place (same pid)
      expect(cmdline(h.pid!)).not.toContain("--no-sandbox");
      // nothing of our environment reaches Chromium (it may hold SECBOX_* secrets)
      const environ = readFileSync(`/proc/${h.pid}/environ`, "latin1");
      expect(environ).not.toContain("SECBOX_");
      const rs = await renderers(h);
      expect(rs.length).toBeGreaterThan(0);
      for (const r of rs) {
        expect(uids(r)[0]).toBe(uid);
        expect(seccomp(r)).toBe(2); // seccomp-bpf filter
        expect(userNs(r)).not.toBe(userNs(h.pid!)); // the namespace sandbox
      }
    } finally {
      await h.close();
    }
    expect(existsSync(`/proc/${h.pid}`)).toBe(false);
  }, 90_000);

  test('user = "": as before, root with --no-sandbox (renderers without seccomp)', async () => {
    const h = await BrowserHandle.launch({ executable: EXECUTABLE, log, launchTimeoutMs: 60_000, user: "" });
    try {
      expect(uids(h.pid!)[0]).toBe(0);
      expect(cmdline(h.pid!)).toContain("--no-sandbox");
      for (const r of await renderers(h)) expect(seccomp(r)).toBe(0);
    } finally {
      await h.close();
    }
  }, 90_000);

  test("an unknown user refuses to start (no silent fallback to an unsandboxed root)", async () => {
    const user = `no-such-user-${process.pid}`;
    await expect(BrowserHandle.launch({ executable: EXECUTABLE, log, launchTimeoutMs: 60_000, user })).rejects.toThrow(
      `[chromium] user "${user}" does not exist`,
    );
  });

  describe("page trackers with the default configuration", () => {
    let srv: TestServer;
    let pages: ReturnType<typeof Bun.serve>;
    beforeAll(async () => {
      pages = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch: () => new Response("<!doctype html><p>sandboxed page</p>", { headers: { "content-type": "text/html" } }),
      });
      srv = await startTestServer({ env: { SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true" } });
    });
    afterAll(async () => {
      await srv.stop();
      pages.stop(true);
    });

    test("a page tracker run works and its browser runs as nobody", async () => {
      expect(srv.config.chromium.user).toBe("nobody");
      const u = await srv.createUser();
      const t = await u.client.post("/api/web_scraping/page_trackers", { name: "p", target: { url: `http://127.0.0.1:${pages.port}/` } });
      expect(t.status).toBe(201);
      const revs = await u.client.post(`/api/web_scraping/page_trackers/${t.json.id}/_history`, { refresh: true });
      expect(revs.status).toBe(200);
      expect(revs.json.map((r: any) => r.data)).toEqual(["sandboxed page"]);
      const pid = srv.services.trackers.page.engineStats()!.browserPid!;
      expect(uids(pid)[0]).toBe(nobody().uid);
    }, 90_000);
  });
});

describe.skipIf(isRoot)("Secbox not root", () => {
  test("Chromium runs as Secbox's own user, sandboxed; [chromium] user is not used", async () => {
    expect(chromiumRunAs("nobody")).toBeNull();
    const h = await BrowserHandle.launch({ executable: EXECUTABLE, log, launchTimeoutMs: 60_000, user: "nobody" });
    try {
      expect(uids(h.pid!)[0]).toBe(process.getuid!());
      expect(cmdline(h.pid!)).not.toContain("--no-sandbox");
    } finally {
      await h.close();
    }
  }, 90_000);
});
