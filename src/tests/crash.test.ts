// Crash safety with the real server process (`bun src/main.ts serve`): it is started, loaded, then stopped by a
// signal or killed with SIGKILL, and what it left in its data directory is checked (supplement §11.10 durability,
// §18.1 outbox). Data directories are prepared (users, responders, trackers) by an in-process server on the same
// directory before the child starts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { openDataDirDb, testDatabaseEnv } from "./backend";
import { ApiClient, startTestServer, type TestServer, type TestUser } from "./harness";
import { startSmtpSink, type SmtpSink } from "./smtp-sink";

const MAIN = resolve(import.meta.dir, "../main.ts");
const dirs: string[] = [];
const children: Subprocess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill(9);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), "secbox-crash-"));
  dirs.push(d);
  return d;
}

function freePort(): number {
  const l = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = l.port;
  l.stop(true);
  return port;
}

interface Child {
  proc: Subprocess<"ignore", "ignore", "pipe">;
  url: string;
  stderr(): Promise<string>;
}

/** `secbox serve` as a child process on a free port, with only the given SECBOX_* settings; resolves once it answers. */
async function spawnServer(dataDir: string, env: Record<string, string>): Promise<Child> {
  const port = freePort();
  const database = (await testDatabaseEnv(dataDir, false)).env;
  const proc = Bun.spawn(["bun", MAIN, "serve", "--data-dir", dataDir, "--host", "127.0.0.1", "--port", String(port)], {
    cwd: dataDir, // no ./secbox.toml or .env of the checkout
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? "/root", SECBOX_SERVER_LOG_LEVEL: "warn", ...database, ...env },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  children.push(proc);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`server exited with ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
    try {
      if ((await fetch(`${url}/api/status`)).status === 200) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) throw new Error("server did not start within 60 s");
    await Bun.sleep(100);
  }
  return { proc, url, stderr: () => new Response(proc.stderr).text() };
}

/** A user with a session (no password hashing), created through the in-process server's services. */
async function userOn(srv: TestServer): Promise<TestUser> {
  const email = `crash-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const row = await srv.services.users.create({ email });
  const session = await srv.services.users.createSession(row.id);
  return { id: row.id, email, handle: row.handle, session, client: new ApiClient(srv.url, { session }) };
}

const asClient = (u: TestUser, url: string) => new ApiClient(url, { session: u.session });

/** A count read from the data directory's database (SQLite file, or its PostgreSQL database: backend.ts). */
async function count(dataDir: string, sql: string, params: (string | number)[] = []): Promise<number> {
  const db = await openDataDirDb(dataDir);
  try {
    return (await db.get<{ n: number }>(sql, params))!.n;
  } finally {
    await db.close();
  }
}

/** `n` GETs on a responder host, `parallel` at a time; every one must be answered 200. */
async function fireHits(url: string, handle: string, path: string, n: number, parallel = 50): Promise<void> {
  let next = 0;
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < n) {
        next++;
        const res = await fetch(`${url}${path}`, { headers: { host: `${handle}.localhost` } });
        await res.arrayBuffer();
        statuses.push(res.status);
      }
    }),
  );
  expect(statuses.length).toBe(n);
  expect(statuses.every((s) => s === 200)).toBe(true);
}

// Tiers: enough concurrent hits and tracking depth for the load below.
const TIER_ENV = {
  SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
  SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_CONCURRENT_HITS: "1000",
  SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_REQUESTS_TO_TRACK: "5000",
  // 300 hits, 50 at a time, from one address: neither the tier's hit rate (200/s) nor the per-client in-flight cap may
  // refuse any (whether they did depended on how fast the machine was)
  SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_HITS_PER_SECOND: "0",
  SECBOX_SERVER_MAX_IN_FLIGHT_PER_CLIENT: "1000",
};

/** A data directory with one user and one tracking responder at /hook (static, or scripted). */
async function responderDir(scripted: boolean): Promise<{ dataDir: string; user: TestUser; responderId: string }> {
  const dataDir = freshDir();
  const prep = await startTestServer({ dataDir, env: TIER_ENV });
  try {
    const user = await userOn(prep);
    const settings = scripted ? { requestsToTrack: 5000, script: "({body: 'ok'})" } : { requestsToTrack: 5000, body: "ok" };
    const res = await user.client.post("/api/webhooks/responders", { name: "hook", location: { pathType: "=", path: "/hook" }, settings });
    expect(res.status).toBe(201);
    return { dataDir, user, responderId: res.json.id };
  } finally {
    await prep.stop();
  }
}

const recordsOf = (dataDir: string, id: string) => count(dataDir, "SELECT COUNT(*) AS n FROM responder_requests WHERE responder_id = ?", [id]);

describe("responder captures", () => {
  test("strict capture: kill -9 right after the responses, every answered hit is stored (static and scripted)", async () => {
    for (const scripted of [false, true]) {
      const { dataDir, user, responderId } = await responderDir(scripted);
      const child = await spawnServer(dataDir, { ...TIER_ENV, SECBOX_RESPONDERS_CAPTURE: "strict" });
      await fireHits(child.url, user.handle, "/hook", 300);
      child.proc.kill("SIGKILL");
      await child.proc.exited;
      expect(child.proc.signalCode).toBe("SIGKILL");
      expect(await recordsOf(dataDir, responderId)).toBe(300);
    }
  }, 180_000);

  test("batched capture: after SIGTERM, SIGINT or SIGHUP nothing answered is lost", async () => {
    const { dataDir, user, responderId } = await responderDir(false);
    let expected = 0;
    for (const signal of ["SIGHUP", "SIGTERM", "SIGINT"] as const) {
      const child = await spawnServer(dataDir, TIER_ENV);
      await fireHits(child.url, user.handle, "/hook", 300);
      expected += 300;
      child.proc.kill(signal);
      expect(await child.proc.exited).toBe(0); // a clean stop, not the signal's default action
      expect(await recordsOf(dataDir, responderId)).toBe(expected);
    }
  }, 180_000);
});

describe("tracker runs", () => {
  test("kill -9 during an API tracker run: nothing half-written, no stuck state; after a restart it runs again", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let arrived!: () => void;
    const arrival = new Promise<void>((r) => (arrived = r));
    let slow = true;
    const upstream = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      idleTimeout: 0,
      async fetch() {
        if (slow) {
          arrived();
          await released;
        }
        return Response.json({ version: "1.0" });
      },
    });
    try {
      const env = { SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true" };
      const dataDir = freshDir();
      const prep = await startTestServer({ dataDir, env });
      const user = await userOn(prep);
      const created = await user.client.post("/api/web_scraping/api_trackers", {
        name: "slow",
        target: { requests: [{ url: `http://127.0.0.1:${upstream.port}/v` }] },
        config: { timeout: 60_000 },
      });
      expect(created.status).toBe(201);
      const id = created.json.id;
      await prep.stop();

      const child = await spawnServer(dataDir, env);
      const running = asClient(user, child.url)
        .post(`/api/web_scraping/api_trackers/${id}/_history`, { refresh: true })
        .catch((e) => e);
      await arrival; // the run is in its request phase
      child.proc.kill("SIGKILL");
      await child.proc.exited;
      expect(await running).toBeInstanceOf(Error); // the caller saw the connection end
      expect(await count(dataDir, "SELECT COUNT(*) AS n FROM tracker_logs WHERE tracker_id = ?", [id])).toBe(0);
      expect(await count(dataDir, "SELECT COUNT(*) AS n FROM tracker_revisions WHERE tracker_id = ?", [id])).toBe(0);
      expect(await count(dataDir, "SELECT COUNT(*) AS n FROM trackers WHERE id = ? AND last_ran_at IS NULL", [id])).toBe(1);

      slow = false;
      release();
      const again = await spawnServer(dataDir, env);
      const client = asClient(user, again.url);
      const revisions = await client.post(`/api/web_scraping/api_trackers/${id}/_history`, { refresh: true });
      expect(revisions.status).toBe(200);
      expect(revisions.json.map((r: any) => r.data)).toEqual([{ version: "1.0" }]);
      const logs = (await client.get(`/api/web_scraping/api_trackers/${id}/_logs`)).json;
      expect(logs.map((l: any) => [l.status, l.isManual])).toEqual([["success", true]]);
      again.proc.kill("SIGTERM");
      expect(await again.proc.exited).toBe(0);
    } finally {
      release();
      upstream.stop(true);
    }
  }, 120_000);
});

/** The pid and its descendants (from /proc). */
function processTree(pid: number): number[] {
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

const running = (pid: number) => {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "latin1"));
  } catch {
    return false;
  }
};

describe("page tracker runs", () => {
  test("kill -9 during a page tracker run: Chromium exits with the server, nothing is written; after a restart the run works and the dead browser's directory is removed", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let arrived!: () => void;
    const arrival = new Promise<void>((r) => (arrived = r));
    let slow = true;
    const pages = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      idleTimeout: 0,
      async fetch() {
        if (slow) {
          arrived();
          await released;
        }
        return new Response("<!doctype html><p>page text</p>", { headers: { "content-type": "text/html" } });
      },
    });
    try {
      const env = { SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true" };
      const dataDir = freshDir();
      const prep = await startTestServer({ dataDir, env });
      const user = await userOn(prep);
      const created = await user.client.post("/api/web_scraping/page_trackers", {
        name: "page",
        target: { url: `http://127.0.0.1:${pages.port}/` },
        config: { timeout: 60_000 },
      });
      expect(created.status).toBe(201);
      const id = created.json.id;
      await prep.stop();

      const child = await spawnServer(dataDir, env);
      const run = asClient(user, child.url)
        .post(`/api/web_scraping/page_trackers/${id}/_history`, { refresh: true })
        .catch((e) => e);
      await arrival; // Chromium is loading the page
      const browsers = processTree(child.proc.pid).slice(1);
      expect(browsers.length).toBeGreaterThan(0);
      const browserCmd = readFileSync(`/proc/${browsers[0]}/cmdline`, "latin1").split("\0");
      const profile = browserCmd.find((a) => a.startsWith("--user-data-dir="))!.slice("--user-data-dir=".length);
      const browserDir = dirname(profile);
      child.proc.kill("SIGKILL");
      await child.proc.exited;
      expect(await run).toBeInstanceOf(Error);
      // Chromium notices its DevTools pipe closing and exits (no orphaned browser keeps running)
      const deadline = Date.now() + 20_000;
      while (browsers.some(running) && Date.now() < deadline) await Bun.sleep(100);
      expect(browsers.filter(running)).toEqual([]);
      expect(existsSync(browserDir)).toBe(true); // nobody was left to clean up ...
      expect(await count(dataDir, "SELECT COUNT(*) AS n FROM tracker_logs WHERE tracker_id = ?", [id])).toBe(0);
      expect(await count(dataDir, "SELECT COUNT(*) AS n FROM tracker_revisions WHERE tracker_id = ?", [id])).toBe(0);

      slow = false;
      release();
      const again = await spawnServer(dataDir, env);
      const client = asClient(user, again.url);
      const revisions = await client.post(`/api/web_scraping/page_trackers/${id}/_history`, { refresh: true });
      expect(revisions.status).toBe(200);
      expect(revisions.json.map((r: any) => r.data)).toEqual(["page text"]);
      expect((await client.get(`/api/web_scraping/page_trackers/${id}/_logs`)).json.map((l: any) => l.status)).toEqual(["success"]);
      expect(existsSync(browserDir)).toBe(false); // ... until the next browser start swept it
      again.proc.kill("SIGTERM");
      expect(await again.proc.exited).toBe(0);
    } finally {
      release();
      pages.stop(true);
    }
  }, 120_000);
});

describe("outbox", () => {
  let smtp: SmtpSink;
  beforeAll(async () => {
    smtp = await startSmtpSink();
  });
  afterAll(() => smtp.close());

  test("kill -9 while an email is in its SMTP transaction: after a restart it is not sent again (at most once) and shows as failed", async () => {
    const env = { SECBOX_SMTP_HOST: "127.0.0.1", SECBOX_SMTP_PORT: String(smtp.port), SECBOX_SMTP_CATCH_ALL: "ops@example.com" };
    const dataDir = freshDir();
    const child = await spawnServer(dataDir, env);
    const before = smtp.messages.length;
    smtp.holdReplies(true); // the message arrives, the "250 OK" does not go back yet
    const res = await fetch(`${child.url}/api/send_message`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "crash me", email: "visitor@example.com" }),
    });
    expect(res.status).toBe(204);
    await smtp.waitFor(before + 1, 20_000);
    child.proc.kill("SIGKILL");
    await child.proc.exited;
    smtp.holdReplies(false);

    const again = await startTestServer({ dataDir, env });
    try {
      await again.services.outbox.idle();
      again.services.outbox.kick();
      await again.services.outbox.idle();
      await Bun.sleep(1500); // anything sent would have arrived by now
      expect(smtp.messages.length).toBe(before + 1);
      const [entry] = await again.services.outbox.list();
      expect(entry).toMatchObject({ status: "failed", attempts: 1 });
      expect(entry!.lastError).toContain("interrupted");
    } finally {
      await again.stop();
    }
  }, 120_000);

  test("kill -9 with mail queued but not yet attempted (SMTP down): after a restart it is sent exactly once", async () => {
    const env = { SECBOX_SMTP_HOST: "127.0.0.1", SECBOX_SMTP_PORT: String(freePort()), SECBOX_SMTP_CATCH_ALL: "ops@example.com" };
    const dataDir = freshDir();
    const child = await spawnServer(dataDir, env);
    const res = await fetch(`${child.url}/api/send_message`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "queued before the crash" }),
    });
    expect(res.status).toBe(204);
    await Bun.sleep(500); // the first attempt fails (nothing listens) and is rescheduled
    child.proc.kill("SIGKILL");
    await child.proc.exited;

    const before = smtp.messages.length;
    let nowMs = Date.now() + 120_000; // past the first retry delay (30 s)
    const again = await startTestServer({ dataDir, env: { ...env, SECBOX_SMTP_PORT: String(smtp.port) }, clock: { now: () => nowMs } });
    try {
      again.services.outbox.kick();
      await smtp.waitFor(before + 1, 20_000);
      await again.services.outbox.idle();
      nowMs += 3_600_000;
      again.services.outbox.kick();
      await again.services.outbox.idle();
      await Bun.sleep(500);
      expect(smtp.messages.slice(before).map((m) => m.text.includes("queued before the crash"))).toEqual([true]);
      expect((await again.services.outbox.list())[0]).toMatchObject({ status: "sent" });
    } finally {
      await again.stop();
    }
  }, 120_000);
});
