// Several instances on one PostgreSQL database (issue 26; README "Running several instances"): two real
// `secbox serve` processes share a database of the test cluster behind an in-test round-robin proxy that, like a
// load balancer with passive health checks (nginx `proxy_next_upstream error`), retries a request on the other
// instance when one cannot be reached. What is created through one instance works through the other (sessions, API
// keys, responders, cache invalidation within 1 s, KV watch, rate limits); then the scheduler leader is killed with
// SIGKILL in the middle of tracker runs and mail sending, while responder hits keep coming through the proxy:
// trackers keep running once per due time, no email is sent twice, no hit is refused; the failover times are
// measured and printed. Runs in the PostgreSQL pass of the suite.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createServices } from "../app";
import { loadConfig } from "../config/load";
import { destinationsStore } from "../features/notification-email/store";
import { openRuntime } from "../platform/boot";
import { INTERRUPTED_ERROR } from "../platform/mail/outbox-store";
import { createLogger } from "../platform/log";
import { PgDb } from "../platform/db/postgres";
import { createTestDatabase, dropTestDatabase, onPostgres } from "./backend";
import { ApiClient } from "./harness";
import { startSmtpSink, type SmtpSink } from "./smtp-sink";
import { waitUntil } from "./fixtures/wait";

const MAIN = resolve(import.meta.dir, "../main.ts");
const OPERATOR = "ops@multi.example";
const TRACKERS = 4;
/** Each tracker request waits this long upstream, so a kill lands in the middle of runs. */
const UPSTREAM_DELAY_MS = 300;

interface Instance {
  name: string;
  url: string;
  proc: Subprocess<"ignore", "ignore", "pipe">;
  dataDir: string;
}

let root = "";
let url = "";
let db: PgDb;
let smtp: SmtpSink;
let env: Record<string, string> = {};
let instances: Instance[] = [];
let proxy: ReturnType<typeof Bun.serve> | undefined;
let upstream: ReturnType<typeof Bun.serve> | undefined;
/** Upstream requests: tracker index and arrival time. */
const upstreamLog: { tracker: number; at: number }[] = [];
let alice: { session: string; handle: string; id: string };
let operatorSession = "";

function freePort(): number {
  const l = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = l.port;
  l.stop(true);
  return port;
}

async function spawnInstance(name: string): Promise<Instance> {
  const dataDir = join(root, name);
  const port = freePort();
  const proc = Bun.spawn(["bun", MAIN, "serve", "--data-dir", dataDir, "--host", "127.0.0.1", "--port", String(port)], {
    cwd: root,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? "/root", ...env },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const instanceUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${name} exited with ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
    try {
      if ((await fetch(`${instanceUrl}/api/status`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${name} did not start within 60 s`);
    await Bun.sleep(100);
  }
  return { name, url: instanceUrl, proc, dataDir };
}

/** Round robin over the live instances; a request that cannot reach one is retried on the next (and that one is
 *  left out for 2 s), as a load balancer with passive health checks does. */
function startProxy(backends: () => Instance[]) {
  const downUntil = new Map<string, number>();
  let next = 0;
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(req) {
      const u = new URL(req.url);
      const body = req.method === "GET" || req.method === "HEAD" ? undefined : await req.arrayBuffer();
      const all = backends();
      for (let attempt = 0; attempt < all.length * 2; attempt++) {
        const b = all[next++ % all.length]!;
        if ((downUntil.get(b.url) ?? 0) > Date.now()) continue;
        try {
          const res = await fetch(b.url + u.pathname + u.search, { method: req.method, headers: req.headers, body, redirect: "manual" });
          const headers = new Headers(res.headers);
          headers.delete("content-encoding");
          headers.delete("content-length");
          headers.set("x-backend", b.name);
          return new Response(await res.arrayBuffer(), { status: res.status, headers });
        } catch {
          downUntil.set(b.url, Date.now() + 2000);
        }
      }
      return new Response("no instance reachable", { status: 502 });
    },
  });
}

const client = (base: string, session: string) => new ApiClient(base, { session });
const hitOn = (base: string, path: string) => fetch(base + path, { headers: { host: `${alice.handle}.localhost` } });

beforeAll(async () => {
  if (!onPostgres) return;
  root = mkdtempSync(join(tmpdir(), "secbox-multi-"));
  url = await createTestDatabase("mi");
  db = await PgDb.connect(url, { max: 2 });
  smtp = await startSmtpSink();
  let counter = 0;
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const m = /^\/t\/(\d+)$/.exec(new URL(req.url).pathname);
      if (!m) return new Response("not found", { status: 404 });
      upstreamLog.push({ tracker: Number(m[1]), at: Date.now() });
      await Bun.sleep(UPSTREAM_DELAY_MS);
      return new Response(`tracker ${m[1]} answer ${++counter}`); // new content every run: a revision and an email
    },
  });
  env = {
    SECBOX_DATABASE_URL: url,
    SECBOX_SECURITY_MASTER_KEY: randomBytes(32).toString("hex"),
    SECBOX_SECURITY_OPERATORS: OPERATOR,
    SECBOX_SMTP_HOST: "127.0.0.1",
    SECBOX_SMTP_PORT: String(smtp.port),
    SECBOX_SERVER_LOG_LEVEL: "error",
    SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true",
    SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
    SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MIN_SCHEDULE_INTERVAL_SEC: "1",
    SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_CONCURRENT_HITS: "1000",
    // the hit load below comes from one address: neither the tier's hit rate nor the per-client cap may refuse it
    SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_HITS_PER_SECOND: "0",
    SECBOX_SERVER_MAX_IN_FLIGHT_PER_CLIENT: "1000",
  };
  // Users written before any instance runs (the same database, in this process).
  const rt = await openRuntime(loadConfig({ file: "", env: { ...env, SECBOX_SERVER_DATA_DIR: join(root, "setup") } }), {
    log: createLogger("error"),
  });
  try {
    const services = createServices(rt);
    const a = await services.users.create({ email: "alice@multi.example", emailProof: "operator" });
    const op = await services.users.create({ email: OPERATOR, emailProof: "operator" });
    alice = { id: a.id, handle: a.handle, session: await services.users.createSession(a.id) };
    operatorSession = await services.users.createSession(op.id);
    // A verified notification address, so tracker changes send email.
    await destinationsStore.upsertPending(rt.db, {
      id: crypto.randomUUID(),
      userId: a.id,
      address: "alice-alerts@multi.example",
      codeHash: "x",
      expiresAt: 0,
      now: 0,
    });
    const dest = await destinationsStore.byUser(rt.db, a.id);
    await destinationsStore.markVerified(rt.db, dest!.id, 0);
  } finally {
    await rt.close();
  }
  instances.push(await spawnInstance("a"));
  instances.push(await spawnInstance("b"));
  proxy = startProxy(() => instances);
}, 180_000);

afterAll(async () => {
  if (!onPostgres) return;
  for (const i of instances) if (i.proc.exitCode === null && i.proc.signalCode === null) i.proc.kill(9);
  await Promise.all(instances.map((i) => i.proc.exited));
  proxy?.stop(true);
  upstream?.stop(true);
  await smtp?.close();
  await db?.close();
  if (url) await dropTestDatabase(url);
  if (root) rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!onPostgres)("two instances on one database", () => {
  test("a session and an API key work on every instance", async () => {
    const [a, b] = instances as [Instance, Instance];
    for (const base of [a.url, b.url]) expect((await client(base, alice.session).get("/api/users/self")).json.email).toBe("alice@multi.example");
    const key = await client(a.url, alice.session).post("/api/user/api_keys", { name: "everywhere" });
    expect(key.status).toBe(201);
    const self = await new ApiClient(b.url, { token: key.json.token }).get("/api/users/self");
    expect(self.status).toBe(200);
    expect(self.json.id).toBe(alice.id);
  });

  test("a responder created through one instance answers through the other; a change reaches it (the time is printed)", async () => {
    const [a, b] = instances as [Instance, Instance];
    const created = await client(a.url, alice.session).post("/api/webhooks/responders", {
      name: "shared",
      location: { pathType: "=", path: "/shared" },
      settings: { body: "v1", requestsToTrack: 5 },
    });
    expect(created.status).toBe(201);
    expect(await (await hitOn(b.url, "/shared")).text()).toBe("v1"); // now cached by b
    const changedAt = performance.now();
    expect(
      (await client(a.url, alice.session).put(`/api/webhooks/responders/${created.json.id}`, { settings: { body: "v2", requestsToTrack: 5 } }))
        .status,
    ).toBe(200);
    let seen = "";
    // (how soon is measured, not asserted: the 15 s are a backstop; README "Running several instances" gives the figure)
    while (performance.now() - changedAt < 15_000 && (seen = await (await hitOn(b.url, "/shared")).text()) !== "v2") await Bun.sleep(10);
    const took = performance.now() - changedAt;
    console.log(`responder change visible on the other instance after ${Math.round(took)} ms`);
    expect(seen).toBe("v2");
    // The history holds the hits of both instances.
    const history = await client(b.url, alice.session).get(`/api/webhooks/responders/${created.json.id}/_history`);
    expect(history.json.length).toBe(2);
  });

  test("Secbox.kv.watch on one instance wakes on a write made through the other", async () => {
    const [a, b] = instances as [Instance, Instance];
    const script = `
      if (context.path === '/kv/ping') return { body: 'pong' };
      if (context.path === '/kv/watch') {
        const page = await Secbox.kv.watch({ prefix: 'ev', timeoutMs: 8000 });
        return { body: JSON.stringify(page.entries.map((e) => e.key)) };
      }
      await Secbox.kv.set('ev1', 'x');
      return { body: 'set' };`;
    const r = await client(a.url, alice.session).post("/api/webhooks/responders", {
      name: "kv",
      location: { pathType: "^", path: "/kv" },
      settings: { script },
    });
    expect(r.status).toBe(201);
    // b serves the new responder once it has seen the change (a 404 until then)
    await waitUntil(async () => (await (await hitOn(b.url, "/kv/ping")).text()) === "pong", "the responder on the other instance", 15_000);
    const watching = hitOn(b.url, "/kv/watch").then((res) => res.text());
    await Bun.sleep(500); // the watch is waiting on b
    expect(await (await hitOn(a.url, "/kv/set")).text()).toBe("set");
    expect(await watching).toBe('["ev1"]'); // woken: a timed-out watch (8 s) gives no entries
  });

  test("sign-in failures count across instances (rate limit shared)", async () => {
    const [a, b] = instances as [Instance, Instance];
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const base = i % 2 === 0 ? a.url : b.url;
      statuses.push((await new ApiClient(base).post("/api/auth/signin", { email: "alice@multi.example", password: `wrong password ${i}` })).status);
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
  });

  test("kill -9 of the scheduler leader mid-run and mid-send: trackers run once per due time, no email twice, no hit refused", async () => {
    const viaProxy = `http://127.0.0.1:${proxy!.port}`;
    const alices = client(viaProxy, alice.session);
    const base = `http://127.0.0.1:${upstream!.port}`;
    const ids: string[] = [];
    for (let i = 0; i < TRACKERS; i++) {
      const res = await alices.post("/api/web_scraping/api_trackers", {
        name: `t${i}`,
        target: { requests: [{ url: `${base}/t/${i}` }] },
        config: { job: { schedule: "*/2 * * * * *" } },
        notifications: true,
      });
      expect(res.status).toBe(201);
      ids.push(res.json.id);
    }
    // Responder traffic through the proxy for the whole test: every hit must be answered 200.
    const hits: { at: number; status: number; ms: number }[] = [];
    let hitting = true;
    const traffic = (async () => {
      while (hitting) {
        const t = performance.now();
        const res = await fetch(`${viaProxy}/shared`, { headers: { host: `${alice.handle}.localhost` } }).catch(() => undefined);
        if (res) await res.arrayBuffer();
        hits.push({ at: Date.now(), status: res?.status ?? 0, ms: performance.now() - t });
        await Bun.sleep(20);
      }
    })();
    await Bun.sleep(7000); // a few runs on the first leader

    // Who leads: the instance holding the scheduler's advisory lock.
    const holder = await db.get<{ pid: number }>(
      `SELECT i.pid FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid JOIN instances i ON s.application_name = 'secbox/' || i.id
       WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 LIMIT 1`,
    );
    const leader = instances.find((i) => i.proc.pid === holder?.pid);
    expect(leader).toBeDefined();
    const survivor = instances.find((i) => i !== leader)!;

    // Mail in flight: operator emails queued through the proxy, SMTP replies held, so sends are mid-transaction.
    const opClient = client(viaProxy, operatorSession);
    for (let i = 0; i < 20; i++)
      expect((await opClient.post("/api/users/email", { recipient: `r${i}@multi.example`, subject: `bulk ${i}`, text: "x" })).status).toBe(204);
    smtp.holdReplies(true);
    // Kill while a tracker request is in flight upstream.
    const inFlight = Date.now();
    while (Date.now() - inFlight < 3000 && !upstreamLog.some((l) => Date.now() - l.at < UPSTREAM_DELAY_MS / 2)) await Bun.sleep(5);
    const killedAt = Date.now();
    leader!.proc.kill("SIGKILL");
    await leader!.proc.exited;
    instances = instances.filter((i) => i !== leader);
    await Bun.sleep(300);
    smtp.holdReplies(false);

    // The survivor takes over the schedule: the first tracker request after the kill.
    let resumedAt = 0;
    const until = Date.now() + 15_000;
    while (Date.now() < until && !(resumedAt = upstreamLog.find((l) => l.at > killedAt + UPSTREAM_DELAY_MS)?.at ?? 0)) await Bun.sleep(20);
    expect(resumedAt).toBeGreaterThan(0);
    await Bun.sleep(8000); // runs on the new leader
    hitting = false;
    await traffic;

    // Tracker runs: per tracker, scheduled runs started at distinct seconds (a due time ran once), and no gap longer
    // than the schedule plus the failover window.
    const endAt = Date.now();
    for (const id of ids) {
      const logs = await db.all<{ started_at: number; is_manual: number; retry_attempt: number | null }>(
        "SELECT started_at, is_manual, retry_attempt FROM tracker_logs WHERE tracker_id = ? ORDER BY started_at",
        [id],
      );
      const starts = logs.filter((l) => l.is_manual === 0 && l.retry_attempt === null).map((l) => l.started_at);
      expect(new Set(starts).size).toBe(starts.length);
      expect(starts.some((s) => s * 1000 > killedAt)).toBe(true);
      const gaps = starts.slice(1).map((s, i) => s - starts[i]!);
      expect(Math.max(...gaps)).toBeLessThanOrEqual(8);
      const revisions = (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM tracker_revisions WHERE tracker_id = ?", [id]))!.n;
      expect(revisions).toBeGreaterThan(0);
    }
    // Mail: nothing queued is left; nothing arrived twice; a message left failed was cut off by the kill.
    const settledBy = Date.now() + 20_000;
    let queued = 1;
    while (Date.now() < settledBy && (queued = (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM outbox WHERE status = 'queued'"))!.n) > 0)
      await Bun.sleep(200);
    expect(queued).toBe(0);
    const ids2 = smtp.messages.map((m) => m.messageId);
    expect(new Set(ids2).size).toBe(ids2.length);
    const failed = await db.all<{ last_error: string }>("SELECT last_error FROM outbox WHERE status = 'failed'");
    for (const f of failed) expect(f.last_error).toBe(INTERRUPTED_ERROR);
    expect(failed.length).toBeLessThanOrEqual(1); // one send at a time per instance
    const sent = (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM outbox WHERE status = 'sent'"))!.n;
    expect(sent + failed.length).toBe((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM outbox"))!.n);
    expect(smtp.messages.filter((m) => m.subject.startsWith("bulk ")).length).toBeGreaterThanOrEqual(20 - failed.length);

    // Responder hits: none refused; the slowest one around the kill is the failover window a client saw.
    const refused = hits.filter((h) => h.status !== 200);
    const around = hits.filter((h) => h.at >= killedAt - 1000 && h.at <= killedAt + 5000);
    const worst = Math.max(...around.map((h) => h.ms));
    console.log(
      `multi-instance: ${hits.length} hits, ${refused.length} refused, slowest around the kill ${Math.round(worst)} ms; ` +
        `tracker runs resumed ${resumedAt - killedAt} ms after the kill (survivor ${survivor.name}); ` +
        `${smtp.messages.length} emails, ${failed.length} interrupted; ${endAt - killedAt} ms observed after the kill`,
    );
    expect(refused).toEqual([]);
    // (the survivor's takeover time is printed above, not asserted: it resumed at all, within the 15 s backstop)
  }, 240_000);
});
