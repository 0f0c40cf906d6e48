// Browser: page trackers against an in-test page whose script the test swaps (tracker-fixtures.ts; the tracker's
// own Chromium loads it through Secbox's guarded proxy, private targets allowed on this server). Create one through
// the form with the resource inventory on, run it twice around a script swap and see the inventory diff; debug it
// and see the screenshots and the page's console. Three page runs in all (each ~0.2–0.6 s). axe in light and dark.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import { axeViolations, click, expectClean, fill, goto, path, startUiHarness, TEST_TIMEOUT, waitForText, type UiHarness } from "./harness";
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

const BASE = "/api/web_scraping/page_trackers";

async function dismissToasts(page: Page) {
  for (const b of await page.$$(".mantine-Notification-root .mantine-Notification-closeButton")) await b.click().catch(() => {});
  await page.waitForFunction(`!document.querySelector(".mantine-Notification-root")`, { timeout: 15_000 });
}

async function runNow(page: Page, text: string) {
  await dismissToasts(page);
  await click(page, "button", "Run now");
  await waitForText(page, text, 30_000);
  await page.waitForFunction(`[...document.querySelectorAll("button")].some(b => b.textContent === "Run now" && !b.disabled && !b.dataset.loading)`, {
    timeout: 30_000,
  });
}

describe("page trackers pages", () => {
  test(
    "create with the resource inventory, swap a script between two runs: the inventory diff names it; debug shows screenshots and console",
    async () => {
      const user = await h.srv.createUser();
      f.page.libVersion = 1;
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/trackers/pages`);
      await waitForText(page, "No page trackers yet");
      await click(page, "button", "New page tracker");
      await waitForText(page, "New page tracker");
      await fill(page, "Name", "shop-assets");
      await fill(page, "URL", `${f.url}/shop`);
      await click(page, "switch", "Track loaded scripts and stylesheets");
      await click(page, "button", "Insert example into the in-page extractor");
      await click(page, "menuitem", "Text of a selector");
      await page.waitForFunction(`!document.querySelector("[role=menu]")`);

      // Debug before saving: the page is rendered once, with screenshots and its console output.
      await click(page, "button", "Debug");
      await page.waitForSelector("img[data-shot=final]", { timeout: 30_000 });
      await page.waitForFunction(`[...document.querySelectorAll("img[data-shot]")].every(i => i.complete && i.naturalWidth === 1280)`, {
        timeout: 15_000,
      });
      expect(await page.$$eval("img[data-shot]", (imgs: any[]) => imgs.map((i) => i.dataset.shot))).toEqual(["navigated", "final"]);
      const trace = await page.$eval("[data-testid=debug-trace]", (e: any) => String(e.innerText));
      expect(trace).toContain('"Catalogue"'); // the extractor's result (h1 text), as JSON
      expect(await page.$eval("[data-testid=console-logs]", (e: any) => String(e.innerText))).toContain("fixture page loaded");
      expect(await axeViolations(page)).toEqual([]);
      await click(page, "button", "Close");
      await page.waitForFunction(`!document.querySelector(".mantine-Drawer-content")`, { timeout: 15_000 });

      await click(page, "button", "Create page tracker");
      await waitForText(page, "Page tracker “shop-assets” created");
      await page.waitForFunction(`/^\\/trackers\\/pages\\/[0-9a-f-]{36}$/.test(location.pathname)`);
      const id = path(page).split("/")[3]!;
      const stored = (await user.client.get(`${BASE}/${id}`)).json;
      expect(stored.target).toMatchObject({ url: `${f.url}/shop`, resources: true });
      expect(stored.target.extractor).toContain('document.querySelector("h1")');
      expect(stored.config.job).toBeUndefined(); // manual by default

      // Two runs around a script swap: same text, another lib.js.
      await runNow(page, "1 revision");
      f.page.libVersion = 2;
      await runNow(page, "2 revisions");
      await page.waitForSelector("[data-testid=resources-diff] tr[data-change]", { timeout: 15_000 });
      const rows = await page.$$eval("[data-testid=resources-diff] tr[data-change]", (trs: any[]) =>
        trs.map((tr) => [tr.dataset.change, String(tr.innerText)]),
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]![0]).toBe("changed");
      expect(rows[0]![1]).toContain(`${f.url}/lib.js`);
      expect(rows[0]![1]).toContain("script");
      expect(await page.$eval("[data-testid=resources-diff]", (e: any) => String(e.innerText))).toContain("1 unchanged"); // the stylesheet
      // The extracted content did not change: the text diff shows the same heading on both sides, and says so.
      await page.waitForSelector(".cm-mergeView", { timeout: 15_000 });
      expect(await page.$$eval(".cm-mergeView .cm-content", (els: any[]) => els.map((e) => String(e.textContent)))).toEqual([
        "Catalogue",
        "Catalogue",
      ]);
      await waitForText(page, "The two texts are identical.");
      expect(await axeViolations(page)).toEqual([]);
      expectClean(ui);

      const dark = await h.open({ user, colorScheme: "dark" });
      await goto(dark, `${h.url}/trackers/pages/${id}`);
      await dark.page.waitForSelector("[data-testid=resources-diff] tr[data-change]", { timeout: 15_000 });
      expect(await axeViolations(dark.page)).toEqual([]);
      await goto(dark, `${h.url}/trackers/pages`);
      await dark.page.waitForSelector("[data-status=ok]", { timeout: 15_000 });
      expect(await axeViolations(dark.page)).toEqual([]);
      expectClean(dark);
    },
    TEST_TIMEOUT,
  );
});
