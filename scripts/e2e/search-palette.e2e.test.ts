// Browser: issue 30 item 8 — global search. A search box in the header and Ctrl+K / "/" open a palette over
// POST /api/search: results grouped by tool, ↑/↓ and Enter open an item; "/" does nothing while typing in a field or
// an editor; 1–2 characters search names only and say so; typing fast never has two searches in flight; a list
// whose filter finds nothing offers "Search everywhere for …". axe with the palette open, light and dark.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import {
  axeViolations,
  byRole,
  click,
  expectClean,
  goto,
  path,
  startUiHarness,
  TEST_TIMEOUT,
  waitForDialogsClosed,
  waitForText,
  type UiHarness,
  type UiPage,
} from "./harness";

// page-side globals of the functions evaluated in the browser (the root program has no DOM types)
declare const document: any;
declare const location: any;

let h: UiHarness;
beforeAll(async () => {
  h = await startUiHarness();
}, TEST_TIMEOUT);
afterAll(() => h?.stop());

const INPUT = 'input[aria-label="Search everything"]';
const status = (page: Page) => page.$eval("[data-testid=search-status]", (e: any) => String(e.textContent)) as Promise<string>;
const options = (page: Page) =>
  page.$$eval('[data-testid=search-results] [role="option"]', (els: any[]) => els.map((e) => String(e.textContent))) as Promise<string[]>;
const groups = (page: Page) =>
  page.$$eval('[data-testid=search-results] [role="group"]', (els: any[]) =>
    els.map((e) => String(e.getAttribute("aria-labelledby") && document.getElementById(e.getAttribute("aria-labelledby"))?.textContent)),
  ) as Promise<string[]>;
const paletteOpen = async (page: Page) => (await page.$(INPUT)) !== null;

async function ctrlK(page: Page) {
  await page.keyboard.down("Control");
  await page.keyboard.press("k");
  await page.keyboard.up("Control");
  await page.waitForSelector(INPUT, { visible: true });
}

/** Waits until the palette shows the results of what is in its box (not of an earlier text), then checks the status. */
async function settled(page: Page, expected: RegExp) {
  await page.waitForFunction(
    () => {
      const s = document.querySelector("[data-testid=search-status]");
      const box = document.querySelector('input[aria-label="Search everything"]');
      return s !== null && box !== null && s.getAttribute("data-for") === box.value.trim();
    },
    { timeout: 15_000 },
  );
  expect(await status(page)).toMatch(expected);
}

async function seed(user: Awaited<ReturnType<UiHarness["srv"]["createUser"]>>) {
  const c = user.client;
  const script = (
    await c.post("/api/user/scripts", { name: "sign-request", scriptType: "universal", content: "// needle: signs the orders call\nreturn null" })
  ).json;
  const responder = (await c.post("/api/webhooks/responders", { name: "orders-hook", location: { pathType: "=", path: "/needle/orders" } })).json;
  const tracker = (await c.post("/api/web_scraping/api_trackers", { name: "price feed", target: { url: "https://example.com/needle.json" } })).json;
  const tag = (await c.post("/api/user/tags", { name: "needle-team", color: "primary" })).json;
  return { script, responder, tracker, tag };
}

describe("search palette", () => {
  test(
    "Ctrl+K and the header box open it; results grouped by tool; arrows and Enter open an item; Escape closes",
    async () => {
      const user = await h.srv.createUser();
      const s = await seed(user);
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/`);
      await waitForText(page, "Pick a tool");

      await ctrlK(page);
      await page.keyboard.type("needle");
      await settled(page, /4 results by name, id or content/);
      expect(await groups(page)).toEqual(["Responders", "API trackers", "Scripts", "Tags"]);
      expect(await options(page)).toEqual(["orders-hookin path", "price feedin URL", "sign-requestin source", "needle-team"]);
      // the combobox points at the highlighted option; ↓ twice → the script
      const active = () => page.$eval(INPUT, (e: any) => document.getElementById(e.getAttribute("aria-activedescendant"))?.textContent ?? "");
      expect(await active()).toBe("orders-hookin path");
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("ArrowDown");
      expect(await active()).toBe("sign-requestin source");
      await page.keyboard.press("Enter");
      await page.waitForFunction((p: string) => location.pathname === p, {}, `/scripts/${s.script.id}`);
      await waitForDialogsClosed(page);
      await page.waitForSelector(".cm-content", { visible: true });

      // the header box opens it too; Escape closes it and the page stays
      await click(page, "button", "Search everything");
      await page.waitForSelector(INPUT, { visible: true });
      await page.keyboard.type("price");
      await settled(page, /1 result/);
      await page.keyboard.press("Escape");
      await waitForDialogsClosed(page);
      expect(path(page)).toBe(`/scripts/${s.script.id}`);
      // a click opens an item
      await ctrlK(page);
      await page.keyboard.type("orders-h");
      await settled(page, /1 result/);
      await (await byRole(page, "option", "orders-hook"))!.click();
      await page.waitForFunction((p: string) => location.pathname === p, {}, `/responders/${s.responder.id}`);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    '"/" opens it outside fields only: not while typing in a text field or the code editor',
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/scripts/new`);
      await page.waitForSelector(".cm-content", { visible: true });
      // in the Name field, "/" is a character
      const name = (await byRole(page, "textbox", "Name"))!;
      await name.type("a/b");
      expect(await name.evaluate((e: any) => e.value)).toBe("a/b");
      expect(await paletteOpen(page)).toBe(false);
      // in the editor too
      await page.click(".cm-content");
      await page.keyboard.type("// x/y");
      await page.waitForFunction(`document.querySelector(".cm-content").textContent.includes("// x/y")`);
      expect(await paletteOpen(page)).toBe(false);
      // outside a field it opens the palette, and Ctrl+K works even from inside the editor
      await page.click("h1");
      await page.keyboard.press("/");
      await page.waitForSelector(INPUT, { visible: true });
      expect(await page.$eval(INPUT, (e: any) => e.value)).toBe("");
      await page.keyboard.press("Escape");
      await waitForDialogsClosed(page);
      await page.click(".cm-content");
      await ctrlK(page);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "1–2 characters search names and ids only and say so; typing fast sends few searches, never two at once",
    async () => {
      const user = await h.srv.createUser();
      await seed(user);
      const ui = await h.open({ user });
      const { page } = ui;
      let inFlight = 0;
      let maxInFlight = 0;
      const searches = new Set<unknown>();
      page.on("request", (r) => {
        if (!r.url().endsWith("/api/search")) return;
        searches.add(r);
        maxInFlight = Math.max(maxInFlight, ++inFlight);
      });
      const done = (r: { url(): string }) => {
        if (r.url().endsWith("/api/search")) inFlight--;
      };
      page.on("requestfinished", done);
      page.on("requestfailed", done);
      await goto(ui, `${h.url}/`);
      await ctrlK(page);
      await page.keyboard.type("ne");
      await settled(page, /by name or id/);
      // "ne" is in the content of three items and the name of one: only the name match, and no claim about contents
      expect(await options(page)).toEqual(["needle-team"]);
      expect(await status(page)).toBe("1 result by name or id. Type 3 characters or more to search contents too.");

      // a fast typist: 13 more keys, 15 ms apart, a typo corrected on the way
      await page.keyboard.type("edle/orderz", { delay: 15 });
      await page.keyboard.press("Backspace");
      await page.keyboard.type("s", { delay: 15 });
      await settled(page, /result/);
      expect(await options(page)).toEqual(["orders-hookin path"]);
      expect(searches.size).toBeLessThan(8);
      expect(maxInFlight).toBe(1);
      expect(ui.httpErrors.filter((e) => e.startsWith("429"))).toEqual([]);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    'a list whose filter finds nothing offers "Search everywhere for …", which finds the script by its source',
    async () => {
      const user = await h.srv.createUser();
      const s = await seed(user);
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/scripts?q=orders%20call`);
      await waitForText(page, "This list searches script names and ids only.");
      await click(page, "button", "Search everywhere for “orders call”");
      await page.waitForSelector(INPUT, { visible: true });
      expect(await page.$eval(INPUT, (e: any) => e.value)).toBe("orders call");
      await settled(page, /1 result by name, id or content/);
      expect(await options(page)).toEqual(["sign-requestin source"]);
      await page.keyboard.press("Enter");
      await page.waitForFunction((p: string) => location.pathname === p, {}, `/scripts/${s.script.id}`);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "axe finds nothing serious with the palette open, light and dark, desktop and phone",
    async () => {
      const user = await h.srv.createUser();
      await seed(user);
      for (const colorScheme of ["light", "dark"] as const) {
        for (const width of [1366, 390]) {
          const ui: UiPage = await h.open({ user, colorScheme, width, height: width > 800 ? 768 : 844 });
          await goto(ui, `${h.url}/responders`);
          await waitForText(ui.page, "orders-hook");
          expect(await axeViolations(ui.page)).toEqual([]);
          if (width < 800) {
            await click(ui.page, "button", "Search everything");
            await ui.page.waitForSelector(INPUT, { visible: true });
          } else await ctrlK(ui.page);
          await ui.page.keyboard.type("needle");
          await settled(ui.page, /4 results/);
          await ui.page.keyboard.press("ArrowDown");
          expect(await axeViolations(ui.page)).toEqual([]);
          expectClean(ui);
          await ui.context.close();
        }
      }
    },
    TEST_TIMEOUT * 2,
  );
});
