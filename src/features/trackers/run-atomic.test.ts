// A tracker run is written whole or not at all (supplement §17, §18.2): the new revision, its change email and the
// run's log commit in one transaction. A trigger (SQLite or PostgreSQL: tests/backend.ts) makes the log insert fail (a stand-in for a crash between the
// writes): neither the revision nor the email may remain. Real HTTP, real upstream, real database.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { failingTrigger } from "../../tests/backend";
import { startTestServer, type TestServer } from "../../tests/harness";
import { startUpstream, type Upstream } from "../../tests/fixtures/upstream";

let srv: TestServer;
let up: Upstream;

beforeAll(async () => {
  up = startUpstream();
  srv = await startTestServer({ env: { SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true" } }); // no SMTP: emails are held
});
afterAll(async () => {
  await srv.stop();
  up.stop();
});

test("a failure while writing the run's log leaves no revision and no change email; the next run writes all three once", async () => {
  const u = await srv.createUser();
  const created = await u.client.post("/api/web_scraping/api_trackers", {
    name: "atomic",
    target: { requests: [{ url: `${up.url}/value` }] },
    notifications: true,
  });
  expect(created.status).toBe(201);
  const id = created.json.id;
  const base = `/api/web_scraping/api_trackers/${id}`;
  const count = async (sql: string) => (await srv.rt.db.get<{ n: number }>(sql, [id]))!.n;
  const revisions = () => count("SELECT COUNT(*) AS n FROM tracker_revisions WHERE tracker_id = ?");
  const emails = () =>
    count("SELECT COUNT(*) AS n FROM outbox WHERE kind = 'tracker_change' AND subject LIKE '%' || (SELECT name FROM trackers WHERE id = ?) || '%'");

  up.state.value = '{"version":"1.0.0"}';
  expect((await u.client.post(`${base}/_history`, { refresh: true })).status).toBe(200);
  expect(await revisions()).toBe(1);

  up.state.value = '{"version":"2.0.0"}';
  const dropTrigger = await failingTrigger(
    srv.rt.db,
    "fail_run_log",
    "INSERT",
    "tracker_logs",
    `NEW.tracker_id = '${id}' AND NEW.status = 'success'`,
    "simulated failure",
  );
  try {
    const res = await u.client.post(`${base}/_history`, { refresh: true });
    expect(res.status).toBe(200);
    expect(await revisions()).toBe(1);
    expect(await emails()).toBe(0);
    const [log] = (await u.client.get(`${base}/_logs`)).json;
    expect(log).toMatchObject({ status: "failure" });
    expect(log.error).toContain("simulated failure");
    expect(log.phases.find((p: any) => p.phase === "notify")).toMatchObject({ status: "skipped" });
  } finally {
    await dropTrigger();
  }

  expect((await u.client.post(`${base}/_history`, { refresh: true })).status).toBe(200);
  expect(await revisions()).toBe(2);
  expect(await emails()).toBe(1);
  const [log] = (await u.client.get(`${base}/_logs`)).json;
  expect(log).toMatchObject({ status: "success", hasChanges: true });
  expect(log.phases.map((p: any) => [p.phase, p.status])).toEqual([
    ["configurator", "skipped"],
    ["request", "success"],
    ["extractor", "skipped"],
    ["compare", "success"],
    ["persist", "success"],
    ["notify", "success"],
  ]);
});
