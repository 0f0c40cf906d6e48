// The trackers UI's pure functions: schedules in words and the editor's presets, revision values (text, numbers,
// resource inventory diff, change size, file names).
import { describe, expect, test } from "bun:test";
import { changeSize, diffResources, numericSeries, numericValue, resourcesOf, revisionFileName, revisionText } from "./revision-values";
import { describeCron, formatInterval, jobBody, presetCron, scheduleFromJob, scheduleWords } from "./schedule";

describe("schedules in words", () => {
  test("the common shapes", () => {
    expect(describeCron("0 0 6 * * *")).toBe("every day at 06:00 UTC");
    expect(describeCron("0 30 18 * * 1")).toBe("every Monday at 18:30 UTC");
    expect(describeCron("0 0 9 * * 1-5")).toBe("Monday to Friday at 09:00 UTC");
    expect(describeCron("0 0 9 * * MON,WED,FRI")).toBe("every Monday, Wednesday and Friday at 09:00 UTC");
    expect(describeCron("0 0 9 * * 0,7")).toBe("every Sunday at 09:00 UTC"); // 0 and 7 are both Sunday
    expect(describeCron("0 17 * * * *")).toBe("every hour at minute 17");
    expect(describeCron("0 */15 * * * *")).toBe("every 15 minutes");
    expect(describeCron("*/10 * * * * *")).toBe("every 10 seconds");
    expect(describeCron("0 0 */2 * * *")).toBe("every 2 hours at minute 0");
    expect(describeCron("0 5 4 15 * *")).toBe("on the 15th of every month at 04:05 UTC");
    expect(describeCron("0 5 4 1 * *")).toBe("on the 1st of every month at 04:05 UTC");
    expect(describeCron("0 0 6,18 * * *")).toBe("every day at 06:00 and 18:00 UTC");
    expect(describeCron("0 6 * * *")).toBe("every day at 06:00 UTC"); // 5 fields: seconds 0
    expect(describeCron("15 0 6 * * *")).toBe("every day at 06:00:15 UTC");
    expect(describeCron("0 0 6 * * * *")).toBe("every day at 06:00 UTC"); // 7th field * = any year
  });

  test("anything else is not put into words", () => {
    for (const c of ["0 0 6 * 1 *", "0 0 6 1 * 1", "0 0-30 6 * * *", "0 0 6 * * 1#2", "0 0 6 * * * 2030", "nonsense", ""])
      expect(describeCron(c)).toBeNull();
    expect(scheduleWords("0 0 6 * 1 *")).toBe("Cron 0 0 6 * 1 * (UTC)");
    expect(scheduleWords(undefined)).toBe("Manual only");
    expect(scheduleWords("0 0 6 * * *")).toBe("Every day at 06:00 UTC");
  });

  test("intervals", () => {
    expect([
      formatInterval(10_000),
      formatInterval(900_000),
      formatInterval(3_600_000),
      formatInterval(5_400_000),
      formatInterval(86_400_000),
      formatInterval(604_800_000),
    ]).toEqual(["10 s", "15 min", "1 h", "1 h 30 min", "1 day", "7 days"]);
  });

  test("presets round-trip through the stored cron; other crons are custom", () => {
    const cases: [string, string][] = [
      ["0 17 * * * *", "hourly"],
      ["0 30 6 * * *", "daily"],
      ["0 30 6 * * 3", "weekly"],
      ["0 30 6 * * 7", "weekly"],
      ["0 */5 * * * *", "custom"],
      ["0 30 6 1 * *", "custom"],
    ];
    for (const [cron, preset] of cases) {
      const v = scheduleFromJob({ schedule: cron });
      expect(v.preset as string).toBe(preset);
      expect(presetCron(v)).toBe(cron === "0 30 6 * * 7" ? "0 30 6 * * 0" : cron);
    }
    expect(scheduleFromJob(undefined).preset).toBe("manual");
    expect(jobBody(scheduleFromJob(undefined))).toBeNull();
    const withRetry = scheduleFromJob({ schedule: "0 0 6 * * *", retryStrategy: { interval: 300_000, maxAttempts: 3 } });
    expect(jobBody(withRetry)).toEqual({ schedule: "0 0 6 * * *", retryStrategy: { type: "constant", interval: 300_000, maxAttempts: 3 } });
    expect(jobBody({ ...withRetry, retry: false })).toEqual({ schedule: "0 0 6 * * *" });
  });
});

describe("revision values", () => {
  test("text: strings as they are, JSON pretty-printed", () => {
    expect(revisionText("plain")).toBe("plain");
    expect(revisionText({ a: 1, b: [2] })).toBe('{\n  "a": 1,\n  "b": [\n    2\n  ]\n}');
    expect(revisionText(42)).toBe("42");
  });

  test("numbers: a number, a numeric string, {value: n}, or the content of an inventory", () => {
    expect([numericValue(3), numericValue("4.5"), numericValue({ value: 6 }), numericValue({ content: 7, resources: [] })]).toEqual([3, 4.5, 6, 7]);
    for (const v of ["1.2.3", { value: "8" }, [1], null, true, { price: 3 }]) expect(numericValue(v)).toBeUndefined();
    const revs = [
      { id: "b", createdAt: 20, data: { value: 12 } },
      { id: "a", createdAt: 10, data: 10 },
    ];
    expect(numericSeries(revs)).toEqual([
      { id: "a", at: 10, value: 10 },
      { id: "b", at: 20, value: 12 },
    ]);
    expect(numericSeries(revs.slice(0, 1))).toBeUndefined(); // one point is no chart
    // Two revisions in the same second: the list order (newest first) decides.
    expect(
      numericSeries([
        { id: "new", createdAt: 7, data: 2 },
        { id: "old", createdAt: 7, data: 1 },
      ])?.map((p) => p.id),
    ).toEqual(["old", "new"]);
    expect(numericSeries([...revs, { id: "c", createdAt: 5, data: "text" }])).toBeUndefined();
  });

  test("resource inventory: added, removed and changed scripts and stylesheets; unchanged counted", () => {
    const r = (url: string, type: string, sha256: string, size = 10) => ({ url, type, size, sha256 });
    const before = [
      r("https://a/app.js", "script", "aa"),
      r("https://a/old.js", "script", "bb"),
      r("https://a/site.css", "stylesheet", "cc"),
      r("https://a/same.js", "script", "dd"),
    ];
    const after = [
      r("https://a/app.js", "script", "ab", 12),
      r("https://a/new.css", "stylesheet", "ee"),
      r("https://a/site.css", "stylesheet", "cc"),
      r("https://a/same.js", "script", "dd"),
    ];
    const { changes, unchanged } = diffResources(before, after);
    expect(unchanged).toBe(2);
    expect(changes.map((c) => [c.change, c.url])).toEqual([
      ["changed", "https://a/app.js"],
      ["added", "https://a/new.css"],
      ["removed", "https://a/old.js"],
    ]);
    expect(resourcesOf({ content: "x", resources: before })?.resources).toHaveLength(4);
    expect(resourcesOf({ content: "x" })).toBeUndefined();
    expect(resourcesOf("text")).toBeUndefined();
  });

  test("change size from a unified diff; file names", () => {
    const diff = '--- previous\n+++ current\n@@ -1,3 +1,3 @@\n {\n-  "v": 1\n+  "v": 2\n+  "w": 3\n }';
    expect(changeSize(diff)).toEqual({ added: 2, removed: 1 });
    expect(changeSize(undefined)).toBeUndefined();
    expect(revisionFileName("release feed/β", 1767225600, { v: 1 })).toBe("release-feed-2026-01-01T00-00-00Z.json");
    expect(revisionFileName("x", 1767225600, "text")).toBe("x-2026-01-01T00-00-00Z.txt");
  });
});
