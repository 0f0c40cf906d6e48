// platform/jobs: cron parsing (croner) and the scheduler + lanes, driven by a fake clock and tick(now).
import { describe, expect, test } from "bun:test";
import { ApiError } from "../core/errors";
import { analyzeSchedule, expandPreset, nextOccurrence, normalizeSchedule } from "./cron";
import { JobLanes, Slots } from "./queue";
import { Scheduler, type RunEvent, type RunInfo } from "./scheduler";

const T0 = Date.UTC(2026, 0, 1, 10, 17, 30); // Thursday 2026-01-01 10:17:30 UTC

function errorOf(fn: () => unknown): ApiError {
  try {
    fn();
  } catch (err) {
    return err as ApiError;
  }
  throw new Error("expected an error");
}

describe("cron", () => {
  test("6 fields as is, 5 fields get seconds 0, 7 fields add a year; whitespace collapsed", () => {
    expect(normalizeSchedule("0 17 9 * * *", T0)).toBe("0 17 9 * * *");
    expect(normalizeSchedule("  */5   * * * * ", T0)).toBe("0 */5 * * * *");
    expect(normalizeSchedule("0 0 0 1 1 * 2030-2040", T0)).toBe("0 0 0 1 1 * 2030-2040");
    expect(nextOccurrence("0 */5 * * * *", T0)).toBe(Date.UTC(2026, 0, 1, 10, 20, 0));
  });

  test("presets expand against the current UTC time into anchored crons", () => {
    expect(expandPreset("@hourly", T0)).toBe("0 17 * * * *");
    expect(expandPreset("@daily", T0)).toBe("0 17 10 * * *");
    expect(expandPreset("@weekly", T0)).toBe("0 17 10 * * 4");
    expect(expandPreset("@monthly", Date.UTC(2026, 0, 31, 3, 4, 5))).toBe("0 4 3 28 * *");
    expect(normalizeSchedule("@daily", T0)).toBe("0 17 10 * * *");
    expect(errorOf(() => normalizeSchedule("@yearly", T0)).code).toBe("INVALID_SCHEDULE");
  });

  test("minInterval over many occurrences: step patterns wrap", () => {
    expect(analyzeSchedule("*/7 * * * * *", T0).minIntervalMs).toBe(4000);
    expect(analyzeSchedule("0 0,50 * * * *", T0).minIntervalMs).toBe(10 * 60_000);
    const hourly = analyzeSchedule("0 0 * * * *", T0);
    expect(hourly.minIntervalMs).toBe(3_600_000);
    expect(hourly.next).toEqual([11, 12, 13, 14, 15].map((h) => Date.UTC(2026, 0, 1, h, 0, 0)));
  });

  test("day fields: either may match when both are restricted; 0 and 7 are Sunday; L and # work", () => {
    const occ = analyzeSchedule("0 0 12 13 * 5", T0).next.map((t) => new Date(t).toISOString().slice(0, 10));
    expect(occ).toEqual(["2026-01-02", "2026-01-09", "2026-01-13", "2026-01-16", "2026-01-23"]);
    expect(analyzeSchedule("0 0 0 * * 7", T0).next[0]).toBe(analyzeSchedule("0 0 0 * * 0", T0).next[0]!);
    expect(new Date(analyzeSchedule("0 0 0 L * *", T0).next[0]!).toISOString()).toBe("2026-01-31T00:00:00.000Z");
    expect(new Date(analyzeSchedule("0 0 0 * * 1#2", T0).next[0]!).toISOString()).toBe("2026-01-12T00:00:00.000Z");
  });

  test("invalid, never firing and too frequent", () => {
    for (const bad of ["* * *", "0 61 * * * *", "*/0 * * * *", "2030-01-23T00:00:00", "", "a b c d e f"]) {
      expect(errorOf(() => analyzeSchedule(bad, T0)).code).toBe("INVALID_SCHEDULE");
    }
    expect(errorOf(() => analyzeSchedule(42, T0)).code).toBe("INVALID_INPUT");
    const never = errorOf(() => analyzeSchedule("0 0 0 30 2 *", T0));
    expect(never.code).toBe("INVALID_SCHEDULE");
    expect(never.message).toContain("never fires");
    expect(errorOf(() => analyzeSchedule("0 0 0 1 1 * 2027", T0)).code).toBe("INVALID_SCHEDULE"); // one occurrence only
    expect(errorOf(() => analyzeSchedule("0 0 0 1 1 * 2020", T0)).code).toBe("INVALID_SCHEDULE"); // past
    const frequent = errorOf(() => analyzeSchedule("0 */30 * * * *", T0, { minAllowedSec: 3600 }));
    expect(frequent.code).toBe("SCHEDULE_TOO_FREQUENT");
    expect(frequent.message).toContain("30 min");
    expect(analyzeSchedule("0 0 * * * *", T0, { minAllowedSec: 3600 }).minIntervalMs).toBe(3_600_000);
  });
});

describe("lanes", () => {
  test("slots bound concurrency; FIFO", async () => {
    const slots = new Slots(2);
    const order: number[] = [];
    const a = await slots.acquire();
    const b = await slots.acquire();
    const c = slots.acquire().then((r) => (order.push(3), r));
    const d = slots.acquire().then((r) => (order.push(4), r));
    expect(slots.waiting).toBe(2);
    a();
    (await c)();
    b();
    (await d)();
    expect(order).toEqual([3, 4]);
    expect(slots.inUse).toBe(0);
  });

  test("one key never runs twice at once; different keys share the lane limit", async () => {
    const lanes = new JobLanes({ api: 2 });
    let active = 0;
    let peak = 0;
    const perKey = new Map<string, number>();
    let keyOverlap = false;
    const job = (key: string) =>
      lanes.run("api", key, async () => {
        active++;
        peak = Math.max(peak, active);
        perKey.set(key, (perKey.get(key) ?? 0) + 1);
        if (perKey.get(key)! > 1) keyOverlap = true;
        await Bun.sleep(5);
        perKey.set(key, perKey.get(key)! - 1);
        active--;
      });
    await Promise.all([job("a"), job("a"), job("b"), job("c"), job("a"), job("d")]);
    expect(peak).toBe(2);
    expect(keyOverlap).toBe(false);
    expect(lanes.isBusy("a")).toBe(false);
  });
});

describe("fair share between owners", () => {
  test("a free slot goes to the owner holding the fewest; one owner never holds every slot", async () => {
    const slots = new Slots(3);
    const order: string[] = [];
    const take = (owner: string, name: string) => slots.acquire(owner).then((r) => (order.push(name), r));
    const a1 = await take("a", "a1");
    const a2 = await take("a", "a2");
    // a third slot is free, but user A already holds all but one: it waits, user B gets it
    const a3 = take("a", "a3");
    const a4 = take("a", "a4");
    await Bun.sleep(5);
    expect(slots.inUse).toBe(2);
    const b1 = await take("b", "b1");
    const b2 = take("b", "b2");
    expect(slots.heldBy("a")).toBe(2);
    a1();
    // A holds 1, B holds 1: the freed slot goes to the owner waiting longest among equals (A's a3 came first)
    (await a3)();
    // again one each (a2, b1): a4 has waited longer than b2
    (await a4)();
    a2();
    b1();
    (await b2)();
    expect(order).toEqual(["a1", "a2", "b1", "a3", "a4", "b2"]);
    expect(slots.inUse).toBe(0);
    expect(slots.waiting).toBe(0);
  });

  test("lanes: another user's run gets a slot at once while one user has many runs queued", async () => {
    const lanes = new JobLanes({ api: 8 });
    const started: string[] = [];
    const gates: (() => void)[] = [];
    const job = (owner: string, name: string) =>
      lanes.run(
        "api",
        undefined,
        () =>
          new Promise<void>((resolve) => {
            started.push(name);
            gates.push(resolve);
          }),
        owner,
      );
    const flood = Array.from({ length: 20 }, (_, i) => job("user-a", `a${i}`));
    await Bun.sleep(5);
    expect(lanes.stats("api")).toEqual({ running: 7, waiting: 13 });
    const b = job("user-b", "b");
    await Bun.sleep(5);
    expect(started).toContain("b");
    // as A's runs end, the slots go to A again (B waits for nothing)
    while (gates.length > 0) {
      gates.shift()!();
      await Bun.sleep(1);
    }
    await Promise.all([...flood, b]);
    expect(started).toHaveLength(21);
  });

  test("scheduled runs carry their owner into the lane", async () => {
    let now = Date.UTC(2026, 0, 1, 0, 0, 0);
    const lanes = new JobLanes({ api: 3 });
    const sched = new Scheduler({ clock: { now: () => now }, lanes });
    const started: string[] = [];
    const release: (() => void)[] = [];
    sched.setHandler("api", {
      run: (id) =>
        new Promise<{ ok: boolean }>((resolve) => {
          started.push(id);
          release.push(() => resolve({ ok: true }));
        }),
    });
    for (const id of ["a1", "a2", "a3", "a4", "b1"])
      sched.add({ id, kind: "api", schedule: "* * * * * *", minGapMs: 0, owner: id[0] }, { anchorAt: now });
    now += 1000;
    sched.tick(now);
    await Bun.sleep(5);
    // three slots: user A holds two of them, user B's run the third
    expect(started.sort()).toEqual(["a1", "a2", "b1"]);
    while (release.length > 0) {
      release.shift()!();
      await Bun.sleep(2);
    }
    await sched.idle();
    expect(started.sort()).toEqual(["a1", "a2", "a3", "a4", "b1"]);
  });
});

describe("scheduler", () => {
  function setup(opts: { random?: () => number } = {}) {
    const clock = {
      t: T0,
      now() {
        return this.t;
      },
    };
    const lanes = new JobLanes({ api: 4 });
    const sched = new Scheduler({ clock, lanes, random: opts.random ?? (() => 0.5) });
    const runs: { id: string; info: RunInfo; at: number }[] = [];
    const settled: { id: string; ok: boolean; retryAt?: number }[] = [];
    let fail = new Set<string>();
    let gate: Promise<void> | undefined;
    sched.setHandler("api", {
      async run(id, info) {
        runs.push({ id, info, at: clock.t });
        if (gate) await gate;
        return { ok: !fail.has(id) };
      },
      settled(id, _info, outcome, retryAt) {
        settled.push({ id, ok: outcome.ok, ...(retryAt !== undefined ? { retryAt } : {}) });
      },
    });
    return {
      clock,
      sched,
      runs,
      settled,
      setFail: (ids: string[]) => (fail = new Set(ids)),
      setGate: (g: Promise<void> | undefined) => (gate = g),
      at: async (ms: number) => {
        clock.t = ms;
        sched.tick();
        await sched.idle();
      },
    };
  }
  const MIN = 60_000;
  const at = (h: number, m: number, s = 0) => Date.UTC(2026, 0, 1, h, m, s);

  test("fires at each occurrence, never early, no backlog replay after a late tick", async () => {
    const s = setup();
    s.sched.add({ id: "j", kind: "api", schedule: "0 * * * * *", minGapMs: MIN }, { anchorAt: T0 });
    expect(s.sched.dueAt("j")).toBe(at(10, 18));
    await s.at(at(10, 17, 59));
    expect(s.runs).toHaveLength(0);
    await s.at(at(10, 18));
    expect(s.runs).toHaveLength(1);
    await s.at(at(10, 25, 10)); // several occurrences late: one run, then the next future one
    expect(s.runs).toHaveLength(2);
    expect(s.sched.dueAt("j")).toBe(at(10, 26));
  });

  test("tier gap: occurrences closer than minGap are skipped", async () => {
    const s = setup();
    s.sched.add({ id: "j", kind: "api", schedule: "*/10 * * * * *", minGapMs: 60_000 }, { anchorAt: T0 });
    await s.at(at(10, 17, 40));
    expect(s.runs).toHaveLength(1);
    expect(s.sched.dueAt("j")).toBe(at(10, 18, 40));
  });

  test("an occurrence while the job still runs is skipped (one run at a time)", async () => {
    const s = setup();
    let open!: () => void;
    s.setGate(new Promise<void>((r) => (open = r)));
    s.sched.add({ id: "j", kind: "api", schedule: "0 * * * * *", minGapMs: MIN }, { anchorAt: T0 });
    s.clock.t = at(10, 18);
    s.sched.tick();
    s.clock.t = at(10, 19);
    s.sched.tick();
    open();
    await s.sched.idle();
    expect(s.runs).toHaveLength(1);
  });

  test("constant retries after failures, up to maxAttempts, never at or after the next occurrence", async () => {
    const s = setup();
    s.setFail(["j"]);
    s.sched.add({ id: "j", kind: "api", schedule: "0 0 * * * *", minGapMs: MIN, retry: { intervalMs: 10 * MIN, maxAttempts: 2 } }, { anchorAt: T0 });
    await s.at(at(11, 0));
    expect(s.settled.at(-1)).toEqual({ id: "j", ok: false, retryAt: at(11, 10) });
    await s.at(at(11, 10));
    expect(s.runs.at(-1)!.info.attempt).toBe(1);
    await s.at(at(11, 20));
    expect(s.runs.at(-1)!.info.attempt).toBe(2);
    expect(s.settled.at(-1)).toEqual({ id: "j", ok: false }); // attempts exhausted: final failure
    await s.at(at(11, 55));
    expect(s.runs).toHaveLength(3);
    // A retry that would land on or after the next occurrence is dropped.
    s.setFail(["k"]);
    s.sched.add(
      { id: "k", kind: "api", schedule: "0 0 * * * *", minGapMs: MIN, retry: { intervalMs: 60 * MIN, maxAttempts: 3 } },
      { anchorAt: at(11, 55) },
    );
    await s.at(at(12, 0));
    expect(s.settled.at(-1)).toEqual({ id: "k", ok: false });
    expect(s.sched.dueAt("k")).toBe(at(13, 0));
  });

  test("recovery: a missed run runs once within the catch-up window; none when nothing was missed", async () => {
    const rnd = [0.1, 0.9];
    const s = setup({ random: () => rnd.shift() ?? 0.5 });
    s.clock.t = at(15, 0, 30);
    // Last ran at 10:00, hourly: 11:00 .. 15:00 were missed → one catch-up run, at now + 0.1 * 60 s.
    s.sched.add({ id: "a", kind: "api", schedule: "0 0 * * * *", minGapMs: MIN }, { anchorAt: at(9, 0), lastRunAt: at(10, 0), recover: true });
    s.sched.add({ id: "b", kind: "api", schedule: "0 0 * * * *", minGapMs: MIN }, { anchorAt: at(9, 0), lastRunAt: at(14, 0), recover: true });
    s.sched.add({ id: "c", kind: "api", schedule: "0 0 * * * *", minGapMs: MIN }, { anchorAt: at(15, 0, 10), recover: true });
    expect(s.sched.dueAt("a")).toBe(at(15, 0, 36));
    expect(s.sched.dueAt("b")).toBe(at(15, 0, 84));
    expect(s.sched.dueAt("c")).toBe(at(16, 0));
    await s.at(at(15, 1, 30));
    expect(s.runs.map((r) => [r.id, r.info.catchUp])).toEqual([
      ["a", true],
      ["b", true],
    ]);
    await s.at(at(15, 59, 59));
    expect(s.runs).toHaveLength(2);
    await s.at(at(16, 0));
    expect(s.runs.slice(2).map((r) => [r.id, r.info.catchUp])).toEqual([
      ["a", false],
      ["b", false],
      ["c", false],
    ]);
  });

  test("re-added jobs: the tier gap counts from the last scheduled fire's due time, never from a manual run or a late start", async () => {
    const H = 3_600_000;
    const s = setup();
    // Restart at 05:30 after the 05:00 occurrence started 2 s late: 06:00 still runs.
    s.clock.t = at(5, 30);
    s.sched.add(
      { id: "late", kind: "api", schedule: "0 0 * * * *", minGapMs: H },
      { anchorAt: at(0, 0), lastRunAt: at(5, 0, 2), lastFireAt: at(5, 0), recover: true },
    );
    expect(s.sched.dueAt("late")).toBe(at(6, 0));
    // Re-enabled / restarted at 05:45 after a manual run at 05:40 (last scheduled fire 05:00): 06:00 still runs.
    s.clock.t = at(5, 45);
    s.sched.add(
      { id: "manual", kind: "api", schedule: "0 0 * * * *", minGapMs: H },
      { anchorAt: at(5, 45), lastRunAt: at(5, 40), lastFireAt: at(5, 0) },
    );
    expect(s.sched.dueAt("manual")).toBe(at(6, 0));
    s.sched.add(
      { id: "manual-restart", kind: "api", schedule: "0 0 * * * *", minGapMs: H },
      { anchorAt: at(0, 0), lastRunAt: at(5, 40), lastFireAt: at(5, 0), recover: true },
    );
    expect(s.sched.dueAt("manual-restart")).toBe(at(6, 0));
    // Only manual runs so far: no floor at all.
    s.sched.add({ id: "never", kind: "api", schedule: "0 0 * * * *", minGapMs: H }, { anchorAt: at(5, 45), lastRunAt: at(5, 40) });
    expect(s.sched.dueAt("never")).toBe(at(6, 0));
    // The floor still holds for occurrences closer than the gap to the last scheduled fire.
    s.sched.add(
      { id: "frequent", kind: "api", schedule: "0 */10 * * * *", minGapMs: H },
      { anchorAt: at(5, 45), lastRunAt: at(5, 40), lastFireAt: at(5, 10) },
    );
    expect(s.sched.dueAt("frequent")).toBe(at(6, 10));
    await s.at(at(6, 0));
    expect(s.runs.map((r) => [r.id, r.info.dueAt])).toEqual([
      ["late", at(6, 0)],
      ["manual", at(6, 0)],
      ["manual-restart", at(6, 0)],
      ["never", at(6, 0)],
    ]);
  });

  test("recovery: a catch-up run never starts before the tier gap since the last scheduled fire", async () => {
    // Every 10 min, 30 min gap; last scheduled fire 05:00, down until 05:15 (05:10 missed): nothing before 05:30.
    const a = setup({ random: () => 0.5 });
    a.clock.t = at(5, 15);
    a.sched.add(
      { id: "j", kind: "api", schedule: "0 */10 * * * *", minGapMs: 30 * MIN },
      { anchorAt: at(0, 0), lastRunAt: at(5, 0), lastFireAt: at(5, 0), recover: true },
    );
    expect(a.sched.dueAt("j")).toBe(at(5, 30));
    await a.at(at(5, 29, 59));
    expect(a.runs).toHaveLength(0);
    await a.at(at(5, 30));
    expect(a.runs.map((r) => r.info.dueAt)).toEqual([at(5, 30)]);
    // 12 min gap, back at 05:11 (05:10 missed): the catch-up (05:11:30 by the window) waits until 05:12.
    const b = setup({ random: () => 0.5 });
    b.clock.t = at(5, 11);
    b.sched.add(
      { id: "k", kind: "api", schedule: "0 */10 * * * *", minGapMs: 12 * MIN },
      { anchorAt: at(0, 0), lastRunAt: at(5, 0), lastFireAt: at(5, 0), recover: true },
    );
    expect(b.sched.dueAt("k")).toBe(at(5, 12));
    await b.at(at(5, 12));
    expect(b.runs.map((r) => [r.info.dueAt, r.info.catchUp])).toEqual([[at(5, 12), true]]);
    expect(b.sched.dueAt("k")).toBe(at(5, 30)); // 05:20 is closer than 12 min to the catch-up
  });

  test("observers see due, start and finish times; remove() unschedules", async () => {
    const s = setup();
    const events: RunEvent[] = [];
    s.sched.observe((e) => events.push(e));
    s.sched.add({ id: "j", kind: "api", schedule: "0 * * * * *", minGapMs: MIN }, { anchorAt: T0 });
    await s.at(at(10, 18, 2));
    expect(events).toHaveLength(1);
    expect(events[0]!.dispatchedAt - events[0]!.dueAt).toBe(2000);
    s.sched.remove("j");
    await s.at(at(10, 30));
    expect(events).toHaveLength(1);
    expect(s.sched.dueAt("j")).toBeUndefined();
  });

  test("start() arms a real timer that fires due jobs", async () => {
    const clock = { now: () => Date.now() };
    const sched = new Scheduler({ clock, lanes: new JobLanes({ api: 1 }) });
    let ran = 0;
    sched.setHandler("api", { run: async () => (ran++, { ok: true }) });
    sched.add({ id: "j", kind: "api", schedule: "* * * * * *", minGapMs: 0 }, { anchorAt: Date.now() });
    sched.start();
    await Bun.sleep(1300);
    sched.stop();
    await sched.idle();
    expect(ran).toBeGreaterThanOrEqual(1);
  });
});
