#!/usr/bin/env bun
// How fast does the responders list show 100 rows? (issue 30 item 11: `/responders?size=100` blocked the page for
// 2–3 s; target: the first row in < 500 ms.) A real server on loopback and the system Chromium
// (scripts/e2e/harness.ts); a user with 100 responders (two tags each, a few with captured requests). Side by side in
// one run, alternating, `runs` fresh page loads each of `/responders?size=15` and `/responders?size=100`:
//   first row: from the navigation's start to the first table row in the DOM (a MutationObserver in the page);
//   all rows:  to the page's last row;
//   render:    from the list's API answer (its resource timing) to the first row and to all rows: the page's own
//              work, without the app's start (which a loaded machine makes noisy);
//   long tasks: their count and summed length (PerformanceObserver "longtask", > 50 ms) until all rows are in;
//   blocked:   the longest task.
// Then, with the page of 100 open: a stats refresh (every 5 s on this page) re-renders the rows; the longest task
// of 3 such refreshes. `--profile` also writes a CPU profile of one size=100 load to /tmp/responders-list.cpuprofile
// (open it in Chromium's DevTools, Performance panel). `bun scripts/bench/responders/ui-list.ts [runs] [--profile]`
import { writeFileSync } from "node:fs";
import { goto, startUiHarness } from "../../e2e/harness";

const RUNS = Number(Bun.argv.find((a) => /^\d+$/.test(a)) ?? 5);
const PROFILE = Bun.argv.includes("--profile");

const PROBE = `(() => {
  window.__bench = { long: [], firstRow: null, allRows: null };
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__bench.long.push([e.startTime, e.duration]); }).observe({ type: "longtask", buffered: true });
  const check = () => {
    const rows = document.querySelectorAll("table tbody tr a[href^='/responders/']").length;
    if (rows > 0 && window.__bench.firstRow === null) window.__bench.firstRow = performance.now();
    if (rows >= window.__expected && window.__bench.allRows === null) window.__bench.allRows = performance.now();
  };
  new MutationObserver(check).observe(document, { childList: true, subtree: true });
})()`;

const h = await startUiHarness();
try {
  const user = await h.srv.createUser(undefined, { tier: "ultimate" });
  const c = user.client;
  const tags: string[] = [];
  for (const [name, color] of [
    ["prod", "danger"],
    ["staging", "warning"],
    ["ci", "primary"],
  ] as const)
    tags.push((await c.post("/api/user/tags", { name, color })).json.id);
  for (let i = 0; i < 100; i++) {
    const res = await c.post("/api/webhooks/responders", {
      name: `responder-${String(i).padStart(3, "0")}`,
      method: i % 3 === 0 ? "POST" : "ANY",
      location: { pathType: "*", path: `/r${i}` },
      tagIds: [tags[i % 3]!, tags[(i + 1) % 3]!],
      settings: { requestsToTrack: 30 },
    });
    if (res.status !== 201) throw new Error(`seed: ${res.status} ${res.text}`);
  }

  type Sample = { firstRow: number; allRows: number; renderFirst: number; renderAll: number; longCount: number; longSum: number; longest: number };
  async function load(size: number, profile = false): Promise<Sample> {
    const ui = await h.open({ user });
    const { page } = ui;
    await page.evaluateOnNewDocument(`window.__expected = ${size};` + PROBE);
    const cdp = profile ? await page.createCDPSession() : undefined;
    if (cdp) {
      await cdp.send("Profiler.enable");
      await cdp.send("Profiler.setSamplingInterval", { interval: 200 });
      await cdp.send("Profiler.start");
    }
    await goto(ui, `${h.url}/responders?size=${size}`);
    await page.waitForFunction("window.__bench.allRows !== null", { timeout: 60_000 });
    await Bun.sleep(300);
    if (cdp) {
      const { profile: p } = await cdp.send("Profiler.stop");
      writeFileSync("/tmp/responders-list.cpuprofile", JSON.stringify(p));
    }
    const b = (await page.evaluate(
      `({ ...window.__bench, answered: performance.getEntriesByType("resource").filter((e) => e.name.includes("/api/webhooks/responders?")).map((e) => e.responseEnd)[0] })`,
    )) as {
      long: [number, number][];
      firstRow: number;
      allRows: number;
      answered: number;
    };
    const until = b.long.filter(([start]) => start <= b.allRows);
    const s = {
      firstRow: b.firstRow,
      allRows: b.allRows,
      renderFirst: b.firstRow - b.answered,
      renderAll: b.allRows - b.answered,
      longCount: until.length,
      longSum: until.reduce((n, [, d]) => n + d, 0),
      longest: Math.max(0, ...until.map(([, d]) => d)),
    };
    await ui.context.close();
    return s;
  }

  const results: Record<number, Sample[]> = { 15: [], 100: [] };
  await load(15); // warm the server's caches and Chromium's
  for (let i = 0; i < RUNS; i++) for (const size of [15, 100]) results[size]!.push(await load(size));
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const ms = (n: number) => `${Math.round(n)} ms`;
  console.log(`responders list, ${RUNS} fresh loads each (median; load average ${(await Bun.file("/proc/loadavg").text()).split(" ")[0]})`);
  for (const size of [15, 100]) {
    const r = results[size]!;
    console.log(
      `  size=${String(size).padEnd(3)} first row ${ms(med(r.map((x) => x.firstRow))).padStart(8)}  all rows ${ms(med(r.map((x) => x.allRows))).padStart(8)}  ` +
        `render ${ms(med(r.map((x) => x.renderFirst))).padStart(7)} / ${ms(med(r.map((x) => x.renderAll))).padStart(7)}  ` +
        `long tasks ${med(r.map((x) => x.longCount))} (${ms(med(r.map((x) => x.longSum)))})  longest ${ms(med(r.map((x) => x.longest)))}`,
    );
  }
  const ratio = (k: keyof Sample) => (med(results[100]!.map((x) => x[k])) / med(results[15]!.map((x) => x[k]))).toFixed(2);
  console.log(
    `  100 vs 15 rows: first row ×${ratio("firstRow")}, render to the first row ×${ratio("renderFirst")}, longest task ×${ratio("longest")}`,
  );

  // A stats refresh (the page refetches _stats every 5 s) with 100 rows shown.
  const ui = await h.open({ user });
  await goto(ui, `${h.url}/responders?size=100`);
  await ui.page.waitForFunction(`document.querySelectorAll("table tbody tr a[href^='/responders/']").length === 100`, { timeout: 60_000 });
  await ui.page.evaluate(
    `window.__refresh = []; new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__refresh.push(e.duration); }).observe({ type: "longtask" })`,
  );
  await Bun.sleep(16_000);
  const refresh = (await ui.page.evaluate("window.__refresh")) as number[];
  console.log(`  with 100 rows open for 16 s (3 stats refreshes): ${refresh.length} long tasks, longest ${ms(Math.max(0, ...refresh))}`);
  await ui.context.close();

  if (PROFILE) {
    await load(100, true);
    console.log("  CPU profile of a size=100 load: /tmp/responders-list.cpuprofile");
  }
} finally {
  await h.stop();
}
