// The scheduler through the API: parse_schedule, scheduled runs driven by a fake clock and scheduler.tick(),
// restart recovery with missed runs spread over the first minute, bounded concurrency, one run per tracker at a
// time, retries, the tier gap, and enable/disable.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiClient, startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { startUpstream, type Upstream } from "../../tests/fixtures/upstream";

const BASE = "/api/web_scraping/api_trackers";
const at = (h: number, m: number, s = 0) => Date.UTC(2026, 0, 1, h, m, s);
const clock = {
  t: at(10, 17, 30),
  now() {
    return this.t;
  },
};
const env = (up: Upstream) => ({
  // New users get basic (the built-in default is ultimate, §27): `basic` below is on basic's 1 h minimum.
  SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
  SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true",
  SECBOX_SCHEDULER_MAX_CONCURRENT_API: "2",
  SECBOX_SUBSCRIPTIONS_TIERS_ULTIMATE_MIN_SCHEDULE_INTERVAL_SEC: "1",
  SECBOX_SERVER_PUBLIC_URL: up.url, // unused; keeps links deterministic
});

let up: Upstream;
let srv: TestServer;
let basic: TestUser;
let ultra: TestUser;

beforeAll(async () => {
  up = startUpstream();
  srv = await startTestServer({ clock, env: env(up) });
  [basic, ultra] = await Promise.all([srv.createUser(), srv.createUser(undefined, { tier: "ultimate" })]);
});
afterAll(async () => {
  await srv.stop();
  up.stop();
});

/** Moves the fake clock, fires what is due and waits until every fired run has finished. */
async function advanceTo(s: TestServer, ms: number) {
  clock.t = ms;
  s.services.trackers.scheduler.tick();
  await s.services.trackers.scheduler.idle();
}

const logsOf = async (u: TestUser | ApiClient, id: string) => (await ("client" in u ? u.client : u).get(`${BASE}/${id}/_logs`)).json as any[];

describe("POST /api/scheduler/parse_schedule", () => {
  const parse = (u: TestUser, schedule: unknown) => u.client.post("/api/scheduler/parse_schedule", { schedule });

  test("minimum interval and the next 5 occurrences (UTC); presets expanded against now; 5 and 7 fields", async () => {
    clock.t = at(10, 17, 30);
    const hourly = await parse(basic, "@hourly");
    expect(hourly.status).toBe(200);
    expect(hourly.json).toEqual({ minInterval: 3_600_000, nextOccurrences: [11, 12, 13, 14, 15].map((h) => at(h, 17) / 1000) });
    expect((await parse(basic, "0 9 * * *")).json.nextOccurrences[0]).toBe(Date.UTC(2026, 0, 2, 9, 0) / 1000);
    expect((await parse(basic, "0 0 0 1 1 * 2030-2040")).json).toEqual({
      minInterval: 365 * 86_400_000,
      nextOccurrences: [2030, 2031, 2032, 2033, 2034].map((y) => Date.UTC(y, 0, 1) / 1000),
    });
    const sevens = await parse(ultra, "*/7 * * * * *");
    expect(sevens.json.minInterval).toBe(4000);
    expect(sevens.json.nextOccurrences).toEqual([35, 42, 49, 56, 60].map((s) => (at(10, 17) + s * 1000) / 1000));
  });

  test("400 JSON: invalid, never firing, unknown preset, too frequent for the tier; 401 without credentials", async () => {
    for (const [schedule, code] of [
      ["* * *", "INVALID_SCHEDULE"],
      ["0 0 25 * * *", "INVALID_SCHEDULE"],
      ["0 0 0 30 2 *", "INVALID_SCHEDULE"],
      ["@yearly", "INVALID_SCHEDULE"],
      [42, "INVALID_INPUT"],
      [undefined, "INVALID_INPUT"],
      ["0 */10 * * * *", "SCHEDULE_TOO_FREQUENT"],
    ] as const) {
      const res = await parse(basic, schedule);
      expect({ schedule, status: res.status, code: res.json.code }).toEqual({ schedule, status: 400, code });
      expect(res.json.message).toStartWith("schedule:");
    }
    expect((await parse(ultra, "0 */10 * * * *")).status).toBe(200);
    expect((await srv.anon.post("/api/scheduler/parse_schedule", { schedule: "@daily" })).status).toBe(401);
  });
});

describe("scheduled runs", () => {
  test("runs at each occurrence; scheduledAt and lastRanAt follow; disabling unschedules, enabling reschedules", async () => {
    clock.t = at(10, 17, 30);
    const t = (
      await ultra.client.post(BASE, { name: "every-minute", target: { url: `${up.url}/count` }, config: { job: { schedule: "0 * * * * *" } } })
    ).json;
    expect(t.scheduledAt).toBe(at(10, 18) / 1000);
    await advanceTo(srv, at(10, 17, 59));
    expect(await logsOf(ultra, t.id)).toHaveLength(0);
    await advanceTo(srv, at(10, 18));
    const [log] = await logsOf(ultra, t.id);
    expect(log).toMatchObject({ status: "success", isManual: false, startedAt: at(10, 18) / 1000 });
    const after = (await ultra.client.get(`${BASE}/${t.id}`)).json;
    expect(after.lastRanAt).toBe(at(10, 18) / 1000);
    expect(after.scheduledAt).toBe(at(10, 19) / 1000);

    await ultra.client.put(`${BASE}/${t.id}`, { enabled: false });
    expect((await ultra.client.get(`${BASE}/${t.id}`)).json.scheduledAt).toBeUndefined();
    await advanceTo(srv, at(10, 25));
    expect(await logsOf(ultra, t.id)).toHaveLength(1);
    // A disabled tracker still runs by hand.
    await ultra.client.post(`${BASE}/${t.id}/_history`, { refresh: true });
    expect(await logsOf(ultra, t.id)).toHaveLength(2);

    await ultra.client.put(`${BASE}/${t.id}`, { enabled: true });
    expect((await ultra.client.get(`${BASE}/${t.id}`)).json.scheduledAt).toBe(at(10, 26) / 1000);
    await advanceTo(srv, at(10, 26));
    expect(await logsOf(ultra, t.id)).toHaveLength(3);
    // Removing the job keeps the tracker but unschedules it.
    await ultra.client.put(`${BASE}/${t.id}`, { config: { revisions: 3 } });
    expect((await ultra.client.get(`${BASE}/${t.id}`)).json.scheduledAt).toBeUndefined();
    await advanceTo(srv, at(10, 30));
    expect(await logsOf(ultra, t.id)).toHaveLength(3);
  });

  test("bounded concurrency per kind (scheduler.max_concurrent_api = 2); every due tracker still runs", async () => {
    clock.t = at(11, 0, 30);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const t = (
        await ultra.client.post(BASE, { name: `slow-${i}`, target: { url: `${up.url}/slow?ms=150` }, config: { job: { schedule: "0 5 * * * *" } } })
      ).json;
      ids.push(t.id);
    }
    up.concurrency.peak = 0;
    const before = up.hits.get("/slow") ?? 0;
    await advanceTo(srv, at(11, 5));
    expect(up.hits.get("/slow")! - before).toBe(6);
    expect(up.concurrency.peak).toBe(2);
    for (const id of ids) {
      expect(await logsOf(ultra, id)).toHaveLength(1);
      await ultra.client.delete(`${BASE}/${id}`);
    }
  });

  test("one tracker never runs twice at once: a manual refresh waits for the scheduled run", async () => {
    clock.t = at(12, 0, 30);
    const t = (
      await ultra.client.post(BASE, { name: "exclusive", target: { url: `${up.url}/slow?ms=300` }, config: { job: { schedule: "0 1 * * * *" } } })
    ).json;
    up.concurrency.peak = 0;
    clock.t = at(12, 1);
    srv.services.trackers.scheduler.tick();
    const manual = ultra.client.post(`${BASE}/${t.id}/_history`, { refresh: true });
    await Bun.sleep(50);
    srv.services.trackers.scheduler.tick(); // due again? no: already fired, and busy anyway
    expect((await manual).status).toBe(200);
    await srv.services.trackers.scheduler.idle();
    expect(up.concurrency.peak).toBe(1);
    const logs = await logsOf(ultra, t.id);
    expect(logs.map((l) => l.isManual)).toEqual([true, false]);
    await ultra.client.delete(`${BASE}/${t.id}`);
  });

  test("constant retries after a failed scheduled run; the retry's log carries retryAttempt", async () => {
    clock.t = at(13, 0, 30);
    up.state.fail = true;
    const t = (
      await ultra.client.post(BASE, {
        name: "retrying",
        target: { url: `${up.url}/flaky` },
        config: { job: { schedule: "0 0 * * * *", retryStrategy: { type: "constant", interval: 60_000, maxAttempts: 2 } } },
      })
    ).json;
    expect(t.config.job.retryStrategy).toEqual({ type: "constant", interval: 60_000, maxAttempts: 2 });
    await advanceTo(srv, at(14, 0));
    expect((await ultra.client.get(`${BASE}/${t.id}`)).json.scheduledAt).toBe(at(14, 1) / 1000);
    await advanceTo(srv, at(14, 1));
    up.state.fail = false;
    await advanceTo(srv, at(14, 2));
    const logs = await logsOf(ultra, t.id);
    expect(logs.map((l) => [l.status, l.retryAttempt])).toEqual([
      ["success", 2],
      ["failure", 1],
      ["failure", undefined],
    ]);
    expect((await ultra.client.get(`${BASE}/${t.id}`)).json.scheduledAt).toBe(at(15, 0) / 1000);
    await ultra.client.delete(`${BASE}/${t.id}`);
  });

  test("the owner's tier minimum applies at run time: after a downgrade, early occurrences are skipped", async () => {
    clock.t = at(16, 0, 30);
    const u = ultra;
    const t = (await u.client.post(BASE, { name: "downgraded", target: { url: `${up.url}/count` }, config: { job: { schedule: "0 */5 * * * *" } } }))
      .json;
    await srv.services.users.setSubscription(u.email, { tier: "standard" }); // 600 s minimum
    await advanceTo(srv, at(16, 5));
    expect(await logsOf(u, t.id)).toHaveLength(1);
    expect((await u.client.get(`${BASE}/${t.id}`)).json.scheduledAt).toBe(at(16, 15) / 1000);
    await srv.services.users.setSubscription(u.email, { tier: "ultimate" });
    await u.client.delete(`${BASE}/${t.id}`);
  });
  test("the tier gap counts from the last scheduled run's due time: a manual run or a late start never skips an occurrence on re-enable or schedule edit", async () => {
    clock.t = at(17, 30);
    const u = basic; // 1 h minimum
    const t = (await u.client.post(BASE, { name: "gap-floor", target: { url: `${up.url}/count` }, config: { job: { schedule: "0 0 * * * *" } } }))
      .json;
    expect(t.scheduledAt).toBe(at(18, 0) / 1000);
    expect((await u.client.post(`${BASE}/${t.id}/_history`, { refresh: true })).status).toBe(200); // manual run at 17:30
    await u.client.put(`${BASE}/${t.id}`, { enabled: false });
    await u.client.put(`${BASE}/${t.id}`, { enabled: true });
    const reenabled = (await u.client.get(`${BASE}/${t.id}`)).json;
    expect(reenabled.lastRanAt).toBe(at(17, 30) / 1000);
    expect(reenabled.scheduledAt).toBe(at(18, 0) / 1000);

    await advanceTo(srv, at(18, 0, 2)); // the 18:00 run starts 2 s late
    expect((await logsOf(u, t.id)).map((l) => [l.isManual, l.startedAt])).toEqual([
      [false, at(18, 0, 2) / 1000],
      [true, at(17, 30) / 1000],
    ]);
    clock.t = at(18, 30);
    const job = { schedule: "0 0 * * * *", retryStrategy: { type: "constant", interval: 60_000, maxAttempts: 1 } };
    expect((await u.client.put(`${BASE}/${t.id}`, { config: { job } })).status).toBe(204);
    const edited = (await u.client.get(`${BASE}/${t.id}`)).json;
    expect(edited.lastRanAt).toBe(at(18, 0, 2) / 1000);
    expect(edited.scheduledAt).toBe(at(19, 0) / 1000);
    // The floor itself still holds: 18:45 is closer than 1 h to the 18:00 run.
    await u.client.put(`${BASE}/${t.id}`, { config: { job: { schedule: "0 45 * * * *" } } });
    expect((await u.client.get(`${BASE}/${t.id}`)).json.scheduledAt).toBe(at(19, 45) / 1000);
    await u.client.put(`${BASE}/${t.id}`, { config: { job } });
    await advanceTo(srv, at(19, 0));
    expect(await logsOf(u, t.id)).toHaveLength(3);
    await u.client.delete(`${BASE}/${t.id}`);
  });
});

describe("restarts", () => {
  test("next runs come from the stored schedule and last run; missed runs run once, spread over the first minute", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "secbox-sched-"));
    try {
      clock.t = at(9, 30);
      const first = await startTestServer({ clock, env: env(up), dataDir });
      const u = await first.createUser(undefined, { tier: "ultimate" });
      const hourly: string[] = [];
      for (let i = 0; i < 8; i++) {
        hourly.push(
          (await u.client.post(BASE, { name: `hourly-${i}`, target: { url: `${up.url}/count` }, config: { job: { schedule: "0 0 * * * *" } } })).json
            .id,
        );
      }
      const daily = (await u.client.post(BASE, { name: "daily", target: { url: `${up.url}/count` }, config: { job: { schedule: "0 0 0 * * *" } } }))
        .json.id;
      await advanceTo(first, at(10, 0));
      await advanceTo(first, at(11, 0));
      for (const id of hourly) expect(await logsOf(u, id)).toHaveLength(2);
      await first.stop();

      // Down from 11:00 to 15:00:30: 12:00 .. 15:00 were missed.
      clock.t = at(15, 0, 30);
      const second = await startTestServer({ clock, env: env(up), dataDir });
      try {
        const client = new ApiClient(second.url, { session: u.session });
        const due = await Promise.all(hourly.map(async (id) => (await client.get(`${BASE}/${id}`)).json.scheduledAt as number));
        for (const s of due) {
          expect(s).toBeGreaterThanOrEqual(at(15, 0, 30) / 1000);
          expect(s).toBeLessThanOrEqual(at(15, 1, 30) / 1000);
        }
        expect(new Set(due).size).toBeGreaterThan(1); // spread, not all at once
        expect((await client.get(`${BASE}/${daily}`)).json.scheduledAt).toBe(Date.UTC(2026, 0, 2) / 1000); // nothing missed

        await advanceTo(second, at(15, 1, 30));
        for (const id of hourly) {
          const logs = await logsOf(client, id);
          expect(logs).toHaveLength(3); // exactly one catch-up run, no backlog replay
          expect(logs[0].startedAt).toBeGreaterThanOrEqual(at(15, 0, 30) / 1000);
        }
        await advanceTo(second, at(15, 59, 59));
        for (const id of hourly) expect(await logsOf(client, id)).toHaveLength(3);
        await advanceTo(second, at(16, 0));
        for (const id of hourly) expect(await logsOf(client, id)).toHaveLength(4);
        expect(await logsOf(client, daily)).toHaveLength(0);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("after a restart the tier gap counts from the last scheduled run's due time, not from a manual run or a late start", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "secbox-sched-"));
    try {
      clock.t = at(5, 59, 30);
      const first = await startTestServer({ clock, env: env(up), dataDir });
      const [b, d] = await Promise.all([first.createUser(), first.createUser(undefined, { tier: "ultimate" })]);
      const make = async (u: TestUser, name: string, schedule: string) =>
        (await u.client.post(BASE, { name, target: { url: `${up.url}/count` }, config: { job: { schedule } } })).json.id as string;
      const late = await make(b, "late", "0 0 * * * *");
      const manual = await make(b, "manual", "0 0 * * * *");
      const fiveMin = await make(d, "five-min", "0 */5 * * * *");
      await first.services.users.setSubscription(d.email, { tier: "standard" }); // 10 min minimum from now on
      await advanceTo(first, at(6, 0, 2)); // the 06:00 runs start 2 s late
      clock.t = at(6, 2);
      await b.client.post(`${BASE}/${manual}/_history`, { refresh: true });
      await first.stop();

      clock.t = at(6, 3);
      const second = await startTestServer({ clock, env: env(up), dataDir });
      try {
        const bc = new ApiClient(second.url, { session: b.session });
        const dc = new ApiClient(second.url, { session: d.session });
        const get = async (c: ApiClient, id: string) => (await c.get(`${BASE}/${id}`)).json;
        expect(await get(bc, late)).toMatchObject({ lastRanAt: at(6, 0, 2) / 1000, scheduledAt: at(7, 0) / 1000 });
        expect(await get(bc, manual)).toMatchObject({ lastRanAt: at(6, 2) / 1000, scheduledAt: at(7, 0) / 1000 });
        // The floor survives the restart: 06:05 is closer than 10 min to the 06:00 scheduled run.
        expect(await get(dc, fiveMin)).toMatchObject({ lastRanAt: at(6, 0, 2) / 1000, scheduledAt: at(6, 10) / 1000 });
        await advanceTo(second, at(7, 0));
        expect((await logsOf(bc, late)).map((l) => l.startedAt)).toEqual([at(7, 0) / 1000, at(6, 0, 2) / 1000]);
        expect((await logsOf(bc, manual)).map((l) => [l.isManual, l.startedAt])).toEqual([
          [false, at(7, 0) / 1000],
          [true, at(6, 2) / 1000],
          [false, at(6, 0, 2) / 1000],
        ]);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test("with scheduler.enabled = false nothing is scheduled; manual runs still work", async () => {
    const off = await startTestServer({ clock, env: { ...env(up), SECBOX_SCHEDULER_ENABLED: "false" } });
    try {
      const u = await off.createUser(undefined, { tier: "ultimate" });
      const t = (await u.client.post(BASE, { name: "off", target: { url: `${up.url}/count` }, config: { job: { schedule: "0 * * * * *" } } })).json;
      expect(t.scheduledAt).toBeUndefined();
      expect(t.config.job.schedule).toBe("0 * * * * *");
      await advanceTo(off, clock.t + 3_600_000);
      expect(await logsOf(u, t.id)).toHaveLength(0);
      expect((await u.client.post(`${BASE}/${t.id}/_history`, { refresh: true })).json).toHaveLength(1);
    } finally {
      await off.stop();
    }
  });
});
