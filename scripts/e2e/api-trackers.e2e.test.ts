// Browser: API trackers against an in-test upstream whose answer the test changes (tracker-fixtures.ts; private
// targets allowed on this server, nothing leaves loopback). Create one through the form with a custom cron (next
// runs shown live, the too-frequent error of the basic tier), run it twice with different upstream content, compare
// the revisions side by side and inline, see the chart of the numeric extractor, read the logs' phases; debug a
// configurator error and test the requests; see a failing tracker at a glance in the list. axe in light and dark.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import {
  axeViolations,
  click,
  expectClean,
  fill,
  goto,
  path,
  startUiHarness,
  TEST_TIMEOUT,
  typeInEditor,
  waitForText,
  type UiHarness,
  type UiPage,
} from "./harness";
import { startTrackerFixtures, TRACKER_SERVER_ENV, type TrackerFixtures } from "./tracker-fixtures";

let h: UiHarness;
let f: TrackerFixtures;
beforeAll(async () => {
  f = startTrackerFixtures();
  h = await startUiHarness({ env: TRACKER_SERVER_ENV });
}, TEST_TIMEOUT);
afterAll(async () => {
  await h?.stop();
  f?.stop();
});

const BASE = "/api/web_scraping/api_trackers";
const PARSE_400 = "400 POST /api/scheduler/parse_schedule";

/** Closes the toasts (top right, over the page's header actions). */
async function dismissToasts(page: Page) {
  for (const b of await page.$$(".mantine-Notification-root .mantine-Notification-closeButton")) await b.click().catch(() => {});
  await page.waitForFunction(`!document.querySelector(".mantine-Notification-root")`, { timeout: 15_000 });
}

/** Clicks a "Run now" button and waits until the run is over (the button is enabled again) and `text` shows. */
async function runNow(page: Page, text: string) {
  await dismissToasts(page);
  await click(page, "button", "Run now");
  await waitForText(page, text, 30_000);
  await page.waitForFunction(`[...document.querySelectorAll("button")].some(b => b.textContent === "Run now" && !b.disabled && !b.dataset.loading)`, {
    timeout: 30_000,
  });
}

/** The page made no request to anything but loopback, logged nothing, and its only HTTP errors were parse_schedule's 400s. */
function expectCleanAllowingParseErrors(ui: UiPage) {
  expectClean(
    ui,
    ui.httpErrors.filter((e) => e === PARSE_400),
  );
}

describe("API trackers pages", () => {
  test(
    "create with a custom cron (live next runs, too frequent on basic), run twice, diff side by side and inline, chart, logs",
    async () => {
      const user = await h.srv.createUser(undefined, { tier: "basic" }); // schedules at most hourly
      f.api.body = JSON.stringify({ price: 10, version: "1.0.0" });
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/trackers/apis`);
      await waitForText(page, "No API trackers yet");
      await click(page, "button", "New API tracker");
      await waitForText(page, "New API tracker");
      expect(path(page)).toBe("/trackers/apis/new");
      await fill(page, "Name", "price-feed");
      await fill(page, "URL", `${f.url}/api/value`);

      // A custom cron: the API answers live; every 5 minutes is too frequent for the basic tier.
      await click(page, "radio", "Custom cron");
      await fill(page, "Cron expression (UTC)", "0 */5 * * * *");
      await waitForText(page, "the minimum interval for your plan is 1 h");
      expect(await page.$("[data-testid=schedule-preview]")).toBeNull();
      await fill(page, "Cron expression (UTC)", "0 0 */2 * * *");
      await waitForText(page, "Every 2 hours at minute 0");
      expect(await page.$$eval("[data-testid=next-runs] li", (li: any[]) => li.length)).toBe(5);
      await waitForText(page, "at most every 2 h");

      // The numeric extractor from the examples.
      await click(page, "button", "Insert example into the extractor");
      await click(page, "menuitem", "A number to chart");
      await page.waitForFunction(`[...document.querySelectorAll(".cm-content")].some(e => e.textContent.includes("Number(data.price)"))`);
      await page.waitForFunction(`!document.querySelector("[role=menu]")`);
      expect(await axeViolations(page)).toEqual([]);
      await click(page, "button", "Create API tracker");
      await waitForText(page, "API tracker “price-feed” created");
      await page.waitForFunction(`/^\\/trackers\\/apis\\/[0-9a-f-]{36}$/.test(location.pathname)`);
      const id = path(page).split("/")[3]!;
      const stored = (await user.client.get(`${BASE}/${id}`)).json;
      expect(stored.config.job).toEqual({ schedule: "0 0 */2 * * *" });
      expect(stored.target.requests).toEqual([{ url: `${f.url}/api/value`, method: "GET", headers: {}, acceptInvalidCertificates: false }]);
      expect(stored.target.extractor).toContain("Number(data.price)");
      await waitForText(page, "Every 2 hours at minute 0");
      await waitForText(page, "No revisions yet");

      // Two runs with different upstream content.
      await runNow(page, "1 revision");
      f.api.body = JSON.stringify({ price: 12, version: "1.0.0" });
      await runNow(page, "2 revisions");
      await page.waitForSelector("[data-testid=diff-view][data-mode=split] .cm-mergeView", { timeout: 15_000 });
      const sides = await page.$$eval(".cm-mergeView .cm-content", (els: any[]) => els.map((e) => String(e.textContent)));
      expect(sides).toEqual(['{  "value": 10}', '{  "value": 12}']);
      expect(await page.$$eval(".cm-merge-b .cm-changedLine", (els: any[]) => els.map((e) => String(e.textContent)))).toEqual(['  "value": 12']);
      expect(await page.$eval("[data-testid=value-chart] svg[role=img]", (e: any) => String(e.getAttribute("aria-label")))).toBe(
        "Value over 2 revisions, from 10 to 12; lowest 10, highest 12",
      );
      expect(await page.$$eval("[data-testid=change-size]", (els: any[]) => els.map((e) => String(e.textContent).trim()))).toEqual([
        "+1 −1 lines",
        "first kept",
      ]);
      expect(await axeViolations(page)).toEqual([]);

      await click(page, "radio", "Inline");
      await page.waitForSelector("[data-testid=diff-view][data-mode=unified] .cm-deletedChunk", { timeout: 15_000 });
      expect(await page.$eval(".cm-deletedChunk", (e: any) => String(e.textContent))).toContain('"value": 10');
      expect(new URL(page.url()).searchParams.get("view")).toBe("unified");

      // The logs: two manual runs with their phases.
      await click(page, "tab", "Logs");
      await waitForText(page, "2 runs logged");
      const phases = await page.$$eval("[data-testid=phase-waterfall] .mono", (els: any[]) => els.map((e) => String(e.textContent)));
      expect(phases).toEqual(["configurator", "request", "extractor", "compare", "persist", "notify"]);
      const waterfall = await page.$eval("[data-testid=phase-waterfall]", (e: any) => String(e.innerText));
      expect(waterfall).toMatch(/configurator\s+skipped/);
      expect(waterfall).toMatch(/request\s+\d+ ms/);
      expect(await axeViolations(page)).toEqual([]);
      expectCleanAllowingParseErrors(ui);
      expect(ui.httpErrors).toContain(PARSE_400);

      // Dark: the revisions (chart, diff) and the editor pass axe too.
      const dark = await h.open({ user, colorScheme: "dark" });
      await goto(dark, `${h.url}/trackers/apis/${id}`);
      await dark.page.waitForSelector(".cm-mergeView", { timeout: 15_000 });
      expect(await axeViolations(dark.page)).toEqual([]);
      await goto(dark, `${h.url}/trackers/apis/${id}/edit`);
      await dark.page.waitForSelector(".cm-content", { timeout: 15_000 });
      await waitForText(dark.page, "Every 2 hours at minute 0");
      expect(await axeViolations(dark.page)).toEqual([]);
      expectClean(dark);
    },
    TEST_TIMEOUT,
  );

  test(
    "debug shows a configurator error and stops; test shows each raw response; the list shows failing trackers and toggles",
    async () => {
      const user = await h.srv.createUser();
      f.api.body = JSON.stringify({ price: 10, version: "1.0.0" });
      const ok = (await user.client.post(BASE, { name: "ok-feed", target: { url: `${f.url}/api/value` } })).json;
      const down = (await user.client.post(BASE, { name: "down-feed", target: { url: `${f.url}/api/down` } })).json;
      await user.client.post(`${BASE}/${down.id}/_history`, { refresh: true });

      const ui = await h.open({ user, colorScheme: "dark" });
      const { page } = ui;
      await goto(ui, `${h.url}/trackers/apis/${ok.id}/edit`);
      await waitForText(page, "Edit “ok-feed”");
      await typeInEditor(page, 'console.log("about to fail"); throw new Error("boom from configurator")', 0);
      await click(page, "button", "Debug");
      await page.waitForSelector("[data-stage=configurator][data-state=failed]", { timeout: 30_000 });
      const stage = await page.$eval("[data-stage=configurator]", (e: any) => String(e.innerText));
      expect(stage).toContain("boom from configurator");
      expect(stage).toContain("about to fail");
      expect(await page.$eval("[data-stage=requests]", (e: any) => String(e.innerText))).toContain("Not sent");
      expect(await page.$eval("[data-stage=result]", (e: any) => String(e.innerText))).toContain("the run would fail");
      expect(await axeViolations(page)).toEqual([]);
      await click(page, "button", "Close");
      await page.waitForFunction(`!document.querySelector(".mantine-Drawer-content")`, { timeout: 15_000 });

      // Test: the raw response of the request, pretty and raw.
      await click(page, "button", "Test requests");
      await page.waitForSelector("[data-testid=test-response] [data-testid=response-status]", { timeout: 30_000 });
      expect(await page.$eval("[data-testid=test-response] [data-testid=response-status]", (e: any) => String(e.textContent))).toBe("HTTP 200");
      const body = await page.$eval("[data-testid=test-response]", (e: any) => String(e.innerText));
      expect(body).toContain('"price": 10'); // pretty-printed
      expect(body).toContain("etag");
      await page.$eval("[data-testid=test-response] input[value=raw]", (e: any) => e.click());
      await page.waitForFunction(`document.querySelector("[data-testid=test-response]").innerText.includes('{"price":10,"version":"1.0.0"}')`);
      await click(page, "button", "Close");
      // Nothing was saved by debugging or testing.
      expect((await user.client.get(`${BASE}/${ok.id}`)).json.target.configurator).toBeUndefined();

      // The list: the failing tracker is named in the banner and marked; disabling one is one click. (The editor
      // has unsaved changes, so leaving it by a full navigation meets the browser's own prompt: accept it.)
      page.on("dialog", (d) => void d.accept());
      await goto(ui, `${h.url}/trackers/apis`);
      await page.waitForSelector("[data-testid=failing-banner]", { timeout: 15_000 });
      expect(await page.$eval("[data-testid=failing-banner]", (e: any) => String(e.innerText))).toContain("down-feed");
      expect(await page.$$eval("[data-status]", (els: any[]) => els.map((e) => e.dataset.status))).toEqual(["failing", "never"]);
      await click(page, "switch", "ok-feed enabled");
      await waitForText(page, "“ok-feed” disabled");
      expect((await user.client.get(`${BASE}/${ok.id}`)).json.enabled).toBe(false);
      expect(await axeViolations(page)).toEqual([]);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );
});
