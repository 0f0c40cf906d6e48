// The domain requirement (supplement §28): `serve` refuses, on plain http, a UI host that shares its site with
// responders.domain (exit 2, `config error:` naming server.public_url and responders.domain) and warns on https.
// Run as the real CLI (`bun run src/main.ts serve`) in a scratch directory, on SQLite whatever the test backend (the
// check runs before any database is opened).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { sharedSite } from "./site";

const MAIN = resolve(import.meta.dir, "../main.ts");
const root = mkdtempSync(join(tmpdir(), "secbox-site-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SECBOX_")));

async function freePort(): Promise<number> {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = s.port!;
  await s.stop(true);
  return port;
}

/** `secbox serve` with these settings: its exit code and stderr if it exits, or its stderr once it answers (then stopped). */
async function serve(env: Record<string, string>): Promise<{ code: number | "serving"; stderr: string }> {
  const dataDir = join(root, `data${++n}`);
  const port = await freePort();
  const proc = Bun.spawn(["bun", "run", MAIN, "serve", "--data-dir", dataDir, "--host", "127.0.0.1", "--port", String(port)], {
    cwd: root,
    env: { ...baseEnv, SECBOX_SERVER_LOG_LEVEL: "warn", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = new Response(proc.stderr).text();
  const deadline = Date.now() + 60_000; // four starts at once on a shared, loaded machine
  for (;;) {
    if (proc.exitCode !== null) return { code: proc.exitCode, stderr: await stderr };
    try {
      if ((await fetch(`http://127.0.0.1:${port}/api/status`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error("serve neither exited nor came up");
    }
    await Bun.sleep(50);
  }
  proc.kill("SIGTERM");
  await proc.exited;
  return { code: "serving", stderr: await stderr };
}

describe("same site of the UI and the responders", () => {
  test("decided with the public suffix list; an unknown TLD is a suffix; localhost stays allowed", () => {
    // The README's old LAN recipe, and its new one.
    expect(sharedSite("secbox.lan", "secbox.lan")).toBe("secbox.lan");
    expect(sharedSite("secbox.lan", "secbox-hooks.lan")).toBeUndefined();
    expect(sharedSite("secbox.test", "hooks.secbox.test")).toBe("secbox.test");
    expect(sharedSite("secbox.example.com", "hooks.example.com")).toBe("example.com");
    expect(sharedSite("secbox.example.com", "example-hooks.com")).toBeUndefined();
    expect(sharedSite("ui.example.co.uk", "hooks.example.co.uk")).toBe("example.co.uk");
    expect(sharedSite("a.example.co.uk", "b.co.uk")).toBeUndefined();
    // A private suffix (github.io) separates sites as browsers do.
    expect(sharedSite("me.github.io", "hooks.github.io")).toBeUndefined();
    // A UI host that a responder handle could name (`<handle>.<domain>`).
    expect(sharedSite("secbox.lan", "lan")).toBe("secbox.lan");
    expect(sharedSite("ui.localhost", "localhost")).toBe("ui.localhost");
    // The defaults, IP addresses.
    expect(sharedSite("localhost", "localhost")).toBeUndefined();
    expect(sharedSite("127.0.0.1", "localhost")).toBeUndefined();
    expect(sharedSite("192.168.1.10", "secbox.lan")).toBeUndefined();
  });

  test("serve refuses same site on http (exit 2, both keys named), warns on https, starts on sibling domains and localhost", async () => {
    const [http, https, sibling, local] = await Promise.all([
      serve({ SECBOX_SERVER_PUBLIC_URL: "http://secbox.lan", SECBOX_RESPONDERS_DOMAIN: "secbox.lan" }),
      serve({ SECBOX_SERVER_PUBLIC_URL: "https://secbox.lan", SECBOX_RESPONDERS_DOMAIN: "secbox.lan" }),
      serve({ SECBOX_SERVER_PUBLIC_URL: "http://secbox.lan", SECBOX_RESPONDERS_DOMAIN: "secbox-hooks.lan" }),
      serve({ SECBOX_SERVER_PUBLIC_URL: "http://localhost:7070", SECBOX_RESPONDERS_DOMAIN: "localhost" }),
    ]);
    expect(http.code).toBe(2);
    expect(http.stderr).toStartWith("config error: server.public_url: ");
    expect(http.stderr).toContain('responders.domain "secbox.lan"');
    expect(http.stderr).toContain("same site (secbox.lan)");
    expect(http.stderr).toContain('responders.domain = "secbox-hooks.lan"');
    expect(http.stderr.trim().split("\n").length).toBe(1);

    expect(https.code).toBe("serving");
    expect(https.stderr).toContain("WARN server.public_url and responders.domain: ");
    expect(https.stderr).toContain("same site (secbox.lan)");

    for (const fine of [sibling, local]) {
      expect(fine.code).toBe("serving");
      expect(fine.stderr).not.toContain("same site");
    }
  }, 120_000);
});
