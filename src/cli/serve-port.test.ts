// Issue 30 item 1 (supplement §27): `server.public_url` defaults to http://localhost:<effective port>, the port
// given by `--port` or SECBOX_SERVER_PORT included, so the README quick start on another port gives responder URLs
// that answer. An explicit public_url is used as is. The start log names the public URL, the responder URL form and
// the interaction listeners. Run as the real CLI (`bun run src/main.ts serve`) in a scratch directory, on SQLite.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const MAIN = resolve(import.meta.dir, "../main.ts");
const root = mkdtempSync(join(tmpdir(), "secbox-port-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SECBOX_")));

async function freePort(): Promise<number> {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = s.port!;
  await s.stop(true);
  return port;
}

interface Running {
  port: number;
  dataDir: string;
  api: string;
  /** stderr so far (the start log). */
  log(): string;
  stop(): Promise<void>;
}

/** `secbox serve` with these flags and environment, once it answers. */
async function serve(how: (port: number) => { flags?: string[]; env?: Record<string, string> }): Promise<Running> {
  const port = await freePort();
  const { flags = [], env = {} } = how(port);
  const dataDir = join(root, `data${++n}`);
  const proc = Bun.spawn(["bun", "run", MAIN, "serve", "--data-dir", dataDir, "--host", "127.0.0.1", ...flags], {
    cwd: root,
    env: { ...baseEnv, SECBOX_SERVER_LOG_LEVEL: "info", ...env },
    stdout: "ignore",
    stderr: "pipe",
  });
  let stderr = "";
  void (async () => {
    for await (const chunk of proc.stderr) stderr += new TextDecoder().decode(chunk);
  })();
  const api = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`serve exited ${proc.exitCode}: ${stderr}`);
    try {
      if ((await fetch(`${api}/api/status`)).ok && stderr.includes("listening on")) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error("serve did not come up");
    }
    await Bun.sleep(50);
  }
  return {
    port,
    dataDir,
    api,
    log: () => stderr,
    async stop() {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** Signs up through the API (sign-up is open by default) and returns the session cookie header. */
async function signUp(api: string): Promise<string> {
  const res = await fetch(`${api}/api/auth/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: `u${n}@example.com`, password: "correct horse battery" }),
  });
  expect(res.status).toBe(200);
  const cookie = res.headers.getSetCookie().find((c) => c.startsWith("secbox_session="));
  expect(cookie).toBeDefined();
  return cookie!.split(";")[0]!;
}

async function createResponder(api: string, cookie: string, path: string): Promise<{ url: string }> {
  const res = await fetch(`${api}/api/webhooks/responders`, {
    method: "POST",
    headers: { "content-type": "application/json", cookie },
    body: JSON.stringify({
      name: `r${path}`,
      location: { pathType: "=", path },
      settings: { statusCode: 201, body: "hello from secbox", requestsToTrack: 5 },
    }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { url: string };
}

describe("serve on another port", () => {
  test("`serve --port P`: responder URLs name P and answer; the start log names the public URL and the URL form", async () => {
    const srv = await serve((port) => ({ flags: ["--port", String(port)] }));
    try {
      const cookie = await signUp(srv.api);
      const responder = await createResponder(srv.api, cookie, "/orders");
      expect(responder.url).toMatch(new RegExp(`^http://[a-z0-9]+\\.localhost:${srv.port}/orders$`));
      // The URL it reports answers (*.localhost resolves to loopback).
      const hit = await fetch(responder.url, { method: "POST", body: "{}" });
      expect(hit.status).toBe(201);
      expect(await hit.text()).toBe("hello from secbox");
      // The URL bases the editor previews with (`_info`) name the port too.
      const info = (await (await fetch(`${srv.api}/api/webhooks/responders/_info`, { headers: { cookie } })).json()) as { baseUrl: string };
      expect(info.baseUrl).toEndWith(`.localhost:${srv.port}`);
      // Links in emails and recovery links use the same public URL: the OpenAPI document's server shows it.
      const doc = (await (await fetch(`${srv.api}/api-docs/openapi.json`)).json()) as { servers: { url: string }[] };
      expect(doc.servers[0]?.url).toBe(`http://localhost:${srv.port}`);

      const log = srv.log();
      expect(log).toContain(`public URL http://localhost:${srv.port}`);
      expect(log).toContain(`responder URLs http://<handle>.localhost:${srv.port}/…`);
      expect(log).toContain("interactions: off");

      // The operator's CLI on the same data, without --port: its recovery links name the port the server answers on.
      const cli = async (...args: string[]) => {
        const p = Bun.spawn(["bun", "run", MAIN, ...args, "--data-dir", srv.dataDir], {
          cwd: root,
          env: { ...baseEnv, SECBOX_SERVER_LOG_LEVEL: "error" },
          stdout: "pipe",
          stderr: "pipe",
        });
        const [out, code] = await Promise.all([new Response(p.stdout).text(), p.exited]);
        expect(code).toBe(0);
        return out;
      };
      const added = JSON.parse(await cli("users", "add", "--email", "ops@example.com"));
      expect(added.recoveryLink.url).toStartWith(`http://localhost:${srv.port}/recover?token=`);
      expect(await cli("users", "recover", "--email", "ops@example.com")).toStartWith(`http://localhost:${srv.port}/recover?token=`);
    } finally {
      await srv.stop();
    }
  }, 90_000);

  test("SECBOX_SERVER_PORT likewise; path-style URLs name the port as well", async () => {
    const env = await serve((port) => ({ env: { SECBOX_SERVER_PORT: String(port), SECBOX_RESPONDERS_URL_STYLE: "path" } }));
    try {
      const cookie = await signUp(env.api);
      const responder = await createResponder(env.api, cookie, "/hook");
      expect(responder.url).toMatch(new RegExp(`^http://localhost:${env.port}/api/webhooks/[a-z0-9]+/hook$`));
      const hit = await fetch(responder.url, { method: "POST", body: "{}" });
      expect(hit.status).toBe(201);
      expect(env.log()).toContain(`responder URLs http://localhost:${env.port}/api/webhooks/<handle>/…`);
    } finally {
      await env.stop();
    }
  }, 90_000);

  test("a fresh server's users are on the ultimate tier (§27): a 10-minute schedule and 1000 tracked requests are accepted", async () => {
    const srv = await serve((port) => ({ flags: ["--port", String(port)] }));
    try {
      const cookie = await signUp(srv.api);
      const self = (await (await fetch(`${srv.api}/api/users/self`, { headers: { cookie } })).json()) as { subscription: { tier: string } };
      expect(self.subscription.tier).toBe("ultimate");
      const post = (path: string, body: unknown) =>
        fetch(`${srv.api}${path}`, { method: "POST", headers: { "content-type": "application/json", cookie }, body: JSON.stringify(body) });
      const responder = await post("/api/webhooks/responders", {
        name: "keep-many",
        location: { pathType: "=", path: "/many" },
        settings: { requestsToTrack: 1000 },
      });
      expect(responder.status).toBe(201);
      const tracker = await post("/api/web_scraping/api_trackers", {
        name: "every-10-min",
        enabled: false, // never runs: nothing leaves loopback
        target: { requests: [{ url: "https://status.example.com/api" }] },
        config: { job: { schedule: "0 */10 * * * *" } },
      });
      expect(tracker.status).toBe(201);
    } finally {
      await srv.stop();
    }
  }, 90_000);
});
