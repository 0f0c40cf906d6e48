// `secbox data migrate --from sqlite:PATH --to postgres://…` (issue 26), as a real subprocess: a SQLite instance
// holding every kind of data (history, revisions, KV, outbox, sessions, API keys) is copied into an empty PostgreSQL
// database; every table then holds the same rows (compared row by row, bytes included), and a server started on the
// PostgreSQL database with the same master key serves the same data (sessions, secrets, responders). A second copy
// into the now non-empty database is refused. Needs the test cluster (SECBOX_TEST_PG_URL): runs in the PostgreSQL
// pass of the suite.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Db } from "../platform/db/db";
import { PgDb } from "../platform/db/postgres";
import { openDatabase } from "../platform/db/sqlite";
import { createTestDatabase, dropTestDatabase, onPostgres } from "../tests/backend";
import { ApiClient, startTestServer, type TestServer, type TestUser } from "../tests/harness";
import { startUpstream, type Upstream } from "../tests/fixtures/upstream";
import { buildDataset, fullExport, hit, normalize, quickUser } from "../tests/fixtures/user-data";

const MAIN = resolve(import.meta.dir, "../main.ts");
const root = mkdtempSync(join(tmpdir(), "secbox-data-migrate-"));
const dataDir = join(root, "data");
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SECBOX_")));
const PASS = "migrate passphrase";
const SERVER_ENV = { SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true", SECBOX_SCHEDULER_ENABLED: "false" };

let upstream: Upstream;
let target = "";
let user: TestUser;
let before: any;

async function cli(args: string[]) {
  const proc = Bun.spawn(["bun", "run", MAIN, ...args], {
    cwd: root,
    env: { ...baseEnv, SECBOX_SERVER_LOG_LEVEL: "error" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** Every row of every table, in a form both backends give alike (bytes as hex), sorted. */
async function dump(db: Db, tables: string[]): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of tables) {
    const rows = await db.all(`SELECT * FROM ${t}`);
    out[t] = rows
      .map((r) =>
        JSON.stringify(
          Object.keys(r)
            .sort()
            .map((k) => [k, r[k] instanceof Uint8Array ? Buffer.from(r[k]).toString("hex") : r[k]]),
        ),
      )
      .sort();
  }
  return out;
}

const TABLES = [
  "users",
  "sessions",
  "recovery_tokens",
  "api_keys",
  "tags",
  "entity_tags",
  "secrets",
  "scripts",
  "user_settings",
  "outbox",
  "notification_destinations",
  "verification_sends",
  "shares",
  "private_keys",
  "certificate_templates",
  "content_security_policies",
  "kv_entries",
  "kv_usage",
  "responders",
  "responder_requests",
  "trackers",
  "tracker_revisions",
  "tracker_logs",
  "server_state",
  "rate_events",
  "storage_usage",
];

beforeAll(async () => {
  if (!onPostgres) return;
  upstream = startUpstream();
  // The source: a server on SQLite (whatever the suite's backend), with a data set of every type.
  const srv: TestServer = await startTestServer({ dataDir, env: { ...SERVER_ENV, SECBOX_DATABASE_URL: "" } });
  try {
    user = await quickUser(srv);
    await buildDataset(srv, user, upstream);
    // KV entries (a scripted responder writes them) and an email in the outbox.
    const kv = await user.client.post("/api/webhooks/responders", {
      name: "kv-writer",
      location: { pathType: "=", path: "/kv" },
      settings: {
        requestsToTrack: 3,
        script: "await Secbox.kv.set('hits', 'one'); await Secbox.kv.set('bytes', '\\u00e9\\u{1F600}'); return {body: 'kv'};",
      },
    });
    expect(kv.status).toBe(201);
    expect(await (await hit(srv, user, "/kv")).text()).toBe("kv");
    await srv.services.messages.queueOperatorEmail({ recipient: "held@example.com", subject: "held", text: "kept" });
    before = normalize(await fullExport(user.client, PASS), PASS);
  } finally {
    await srv.stop();
  }
  target = await createTestDatabase("m");
}, 120_000);

afterAll(async () => {
  upstream?.stop();
  if (target) await dropTestDatabase(target);
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!onPostgres)("data migrate sqlite → postgres", () => {
  test("copies every table; the rows are the same, bytes included; the report says so", async () => {
    const run = await cli(["data", "migrate", "--from", `sqlite:${dataDir}`, "--to", target]);
    expect(run.stderr).toContain("copied responder_requests:");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.verified).toBe(true);
    expect(report.tables.responder_requests).toBeGreaterThan(5);
    expect(report.tables.tracker_revisions).toBeGreaterThan(0);
    expect(report.tables.kv_entries).toBe(2);
    expect(report.tables.instances).toBeUndefined();

    const sqlite = openDatabase(dataDir);
    const pg = await PgDb.connect(target, { max: 2 });
    try {
      const [a, b] = [await dump(sqlite, TABLES), await dump(pg, TABLES)];
      for (const t of TABLES) expect([t, b[t]]).toEqual([t, a[t]!]);
      expect(Object.values(a).reduce((n, rows) => n + rows.length, 0)).toBe(report.rows);
    } finally {
      await sqlite.close();
      await pg.close();
    }
  }, 120_000);

  test("a server on the PostgreSQL copy (same master key) serves the same data: session, export, responders", async () => {
    const srv = await startTestServer({ dataDir, env: { ...SERVER_ENV, SECBOX_DATABASE_URL: target } });
    try {
      const client = new ApiClient(srv.url, { session: user.session });
      expect((await client.get("/api/users/self")).json.email).toBe(user.email);
      expect(normalize(await fullExport(client, PASS), PASS)).toEqual(before);
      expect(await (await hit(srv, user, "/kv")).text()).toBe("kv");
    } finally {
      await srv.stop();
    }
  }, 120_000);

  test("a target that is not empty is refused (exit 1), nothing written", async () => {
    const run = await cli(["data", "migrate", "--from", `sqlite:${dataDir}`, "--to", target]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("the target is not empty");
    expect((await cli(["data", "migrate", "--from", `sqlite:${join(root, "nothing")}`, "--to", target])).code).toBe(1);
    expect((await cli(["data", "migrate", "--from", "mysql://x", "--to", target])).code).toBe(2);
  }, 60_000);
});
