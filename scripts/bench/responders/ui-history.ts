#!/usr/bin/env bun
// Does the responder page's live history keep up with 50 requests/s without freezing? (issue 22, "done means")
// A real server on loopback and the system Chromium (scripts/e2e/harness.ts); a responder that keeps the last
// 1,000 requests (ultimate tier: the page then holds up to 500 rows, its heaviest case). The page is open on the
// history; then, side by side in one run:
//   idle:  10 s with the page open and nothing arriving;
//   flood: 10 s of 50 POSTs/s (500 requests, JSON bodies) to <handle>.localhost, sent at a steady pace.
// In the page: long tasks (PerformanceObserver "longtask", > 50 ms), the main thread's lag (a 50 ms timer's
// lateness, max and p95), and how long the newest request takes to show after it was sent. Also the polls the
// page made and the bytes they carried. `bun scripts/bench/responders/ui-history.ts [rate] [seconds]`
import { goto, startUiHarness, waitForText } from "../../e2e/harness";

const RATE = Number(Bun.argv[2] ?? 50);
const SECONDS = Number(Bun.argv[3] ?? 10);

const h = await startUiHarness();
try {
  const port = Number(new URL(h.url).port);
  h.srv.config.server.public_url = `http://localhost:${port}`;
  const user = await h.srv.createUser(undefined, { tier: "ultimate" });
  const r = (
    await user.client.post("/api/webhooks/responders", {
      name: "flood",
      method: "POST",
      location: { pathType: "*", path: "/flood" },
      settings: { requestsToTrack: 1000 },
    })
  ).json;
  const ui = await h.open({ user });
  const { page } = ui;
  await goto(ui, `${h.url}/responders/${r.id}`);
  await waitForText(page, "Waiting for requests");

  // Probes inside the page: long tasks, timer lateness.
  await page.evaluate(`(() => {
    window.__long = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); }).observe({ type: "longtask", buffered: false });
    window.__lag = [];
    let expected = performance.now() + 50;
    const tick = () => { const now = performance.now(); window.__lag.push(now - expected); expected = now + 50; setTimeout(tick, 50); };
    setTimeout(tick, 50);
  })()`);
  const take = async () =>
    (await page.evaluate(
      `(() => { const out = { long: window.__long, lag: window.__lag }; window.__long = []; window.__lag = []; return out; })()`,
    )) as { long: number[]; lag: number[] };
  const historyPolls = () => ui.requests.filter((u) => u.includes("/_history")).length;

  // idle
  let polls0 = historyPolls();
  await Bun.sleep(SECONDS * 1000);
  const idle = { ...(await take()), polls: historyPolls() - polls0 };

  // flood: RATE requests per second at a steady pace
  polls0 = historyPolls();
  const bytesBefore = await pollBytes(page);
  const total = RATE * SECONDS;
  const start = performance.now();
  const sends: Promise<unknown>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    sends.push(
      fetch(`${h.url}/flood/${i}?n=${i}`, {
        method: "POST",
        headers: { host: `${user.handle}.localhost:${port}`, "content-type": "application/json" },
        body: JSON.stringify({ n: i, at: Date.now(), items: [{ sku: "A-1", qty: i % 7 }] }),
      }).then((x) => x.arrayBuffer()),
    );
  }
  await Promise.all(sends);
  const lastSent = performance.now();
  await waitForText(page, `POST /flood/${total - 1}?n=${total - 1}`, 30_000);
  const lastShownMs = performance.now() - lastSent;
  const flood = { ...(await take()), polls: historyPolls() - polls0 };
  const bytes = (await pollBytes(page)) - bytesBefore;
  const rows = (await page.$$eval("[data-testid=history-table] tbody tr", (t: unknown[]) => t.length)) as number;
  const sendSeconds = (lastSent - start) / 1000;

  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return { max: s.at(-1) ?? 0, p95: s[Math.floor(s.length * 0.95)] ?? 0, n: s.length };
  };
  const row = (name: string, m: { long: number[]; lag: number[]; polls: number }) => {
    const lag = stats(m.lag);
    const long = stats(m.long);
    return `${name.padEnd(6)} long tasks ${String(long.n).padStart(3)} (max ${long.max.toFixed(0).padStart(4)} ms, total ${m.long
      .reduce((a, b) => a + b, 0)
      .toFixed(0)
      .padStart(5)} ms)  timer lag p95 ${lag.p95.toFixed(1).padStart(6)} ms, max ${lag.max.toFixed(1).padStart(6)} ms  polls ${m.polls}`;
  };
  console.log(
    `responder history page, ${RATE} requests/s for ${SECONDS} s (sent in ${sendSeconds.toFixed(1)} s), keeps 1000, page holds up to 500 rows; Chromium ${await h.browser.version()}`,
  );
  console.log(row("idle", idle));
  console.log(row("flood", flood));
  const lagRatio = stats(flood.lag).p95 / Math.max(1, stats(idle.lag).p95);
  console.log(
    `flood / idle timer lag p95: ${lagRatio.toFixed(2)}×; newest request shown ${lastShownMs.toFixed(0)} ms after it was sent; ${rows} rows on the page; ${(bytes / 1024).toFixed(0)} KiB of history polled during the flood (${(bytes / Math.max(1, flood.polls) / 1024).toFixed(1)} KiB per poll)`,
  );
} finally {
  await h.stop();
}

/** Bytes of `_history` responses received by the page so far (Resource Timing, same origin). */
async function pollBytes(page: import("puppeteer-core").Page): Promise<number> {
  return (await page.evaluate(
    `performance.getEntriesByType("resource").filter((e) => e.name.includes("/_history")).reduce((n, e) => n + e.encodedBodySize, 0)`,
  )) as number;
}
