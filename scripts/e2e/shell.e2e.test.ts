// Browser: the app shell — navigation by area with real links (deep links, reload, back button), tool pages not
// built yet, unknown routes, the collapsible navigation on a phone, keyboard use, and the theme remembered per
// user (stored setting, applied on another browser); axe on the shell in light and dark.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import type { TestUser } from "../../src/tests/harness";
import {
  axeViolations,
  click,
  expectClean,
  goto,
  path,
  startUiHarness,
  TEST_TIMEOUT,
  waitForDialogsClosed,
  waitForText,
  type UiHarness,
} from "./harness";

let h: UiHarness;
let user: TestUser;
beforeAll(async () => {
  h = await startUiHarness();
  user = await h.srv.createUser();
}, TEST_TIMEOUT);
afterAll(() => h?.stop());

const heading = (page: Page) => page.$eval("main h1", (e: any) => String(e.textContent)) as Promise<string>;
const scheme = (page: Page) => page.evaluate(`document.documentElement.getAttribute("data-mantine-color-scheme")`) as Promise<string>;
const focused = (page: Page) =>
  page.evaluate(
    `(document.activeElement && (document.activeElement.getAttribute("aria-label") || document.activeElement.textContent || "")).trim()`,
  ) as Promise<string>;

describe("app shell", () => {
  test(
    "navigation links, deep links, reload and back; tools not built yet; unknown routes",
    async () => {
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/`);
      await waitForText(page, "Pick a tool");
      expect(await axeViolations(page)).toEqual([]);
      for (const [label, url, title] of [
        ["Secrets", "/secrets", "Secrets"],
        ["Scripts", "/scripts", "Scripts"],
        ["Tags", "/tags", "Tags"],
        ["Settings", "/settings", "Settings"],
        ["Responders", "/responders", "Responders"],
        ["Private keys", "/certificates/private-keys", "Private keys"],
        ["API trackers", "/trackers/apis", "API trackers"],
      ] as const) {
        await click(page, "link", label);
        await page.waitForFunction(`location.pathname === ${JSON.stringify(url)}`);
        await page.waitForFunction(`document.querySelector("main h1")?.textContent === ${JSON.stringify(title)}`);
        expect(await page.$eval(`nav a[href="${url}"]`, (a: any) => a.getAttribute("aria-current"))).toBe("page");
      }
      // Back twice: private keys, then responders.
      await page.goBack();
      await page.waitForFunction(`location.pathname === "/certificates/private-keys"`);
      await page.goBack();
      await page.waitForFunction(`location.pathname === "/responders"`);
      expect(await heading(page)).toBe("Responders");
      // A reload of a deep link stays there.
      await goto(ui, `${h.url}/settings`);
      await waitForText(page, "API keys");
      expect(await heading(page)).toBe("Settings");
      await goto(ui, `${h.url}/no/such/page`);
      await waitForText(page, "Page not found");
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "phone width: the navigation opens from the menu button and closes after a choice; dark theme passes axe",
    async () => {
      const ui = await h.open({ user, width: 390, height: 844, colorScheme: "dark" });
      const { page } = ui;
      await goto(ui, `${h.url}/`);
      await waitForText(page, "Pick a tool");
      // Collapsed: the navigation sits off screen until the menu button opens it.
      const navRight = `document.querySelector("nav[aria-label='Main navigation']").getBoundingClientRect().right`;
      expect((await page.evaluate(navRight)) as number).toBeLessThanOrEqual(0);
      await click(page, "button", "Open navigation");
      await page.waitForFunction(`${navRight} > 0`);
      await click(page, "link", "Secrets");
      await page.waitForFunction(`location.pathname === "/secrets"`);
      await page.waitForSelector(`aria/Open navigation[role="button"]`);
      await page.waitForFunction(`${navRight} <= 0`);
      expect(await axeViolations(page)).toEqual([]);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "keyboard: reach the navigation and a list page's create dialog, fill and submit it, all without a mouse",
    async () => {
      const u = await h.srv.createUser();
      const ui = await h.open({ user: u });
      const { page } = ui;
      await goto(ui, `${h.url}/`);
      await waitForText(page, "Pick a tool");
      // Tab from the top of the page to the "Tags" navigation link.
      let seen = "";
      for (let i = 0; i < 25 && seen !== "Tags"; i++) {
        await page.keyboard.press("Tab");
        seen = await focused(page);
      }
      expect(seen).toBe("Tags");
      await page.keyboard.press("Enter");
      await page.waitForFunction(`location.pathname === "/tags"`);
      for (let i = 0; i < 25 && seen !== "New tag"; i++) {
        await page.keyboard.press("Tab");
        seen = await focused(page);
      }
      expect(seen).toBe("New tag");
      await page.keyboard.press("Enter");
      await waitForText(page, "Lower-cased, up to 50 characters");
      // The dialog focuses its first field; Enter submits the form.
      await page.keyboard.type("keyboard");
      await page.keyboard.press("Enter");
      await waitForDialogsClosed(page);
      await waitForText(page, "Tag “keyboard” created");
      expect((await u.client.get("/api/user/tags")).json.items.map((t: any) => t.name)).toEqual(["keyboard"]);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "theme: chosen in the header, stored for the user, kept on reload and applied in another browser",
    async () => {
      const u = await h.srv.createUser();
      const ui = await h.open({ user: u });
      const { page } = ui;
      await goto(ui, `${h.url}/tags`);
      await waitForText(page, "No tags yet");
      expect(await scheme(page)).toBe("light");
      await click(page, "radio", "Dark");
      await page.waitForFunction(`document.documentElement.getAttribute("data-mantine-color-scheme") === "dark"`);
      // Stored for the user.
      for (let i = 0; i < 50 && (await u.client.get("/api/user/settings")).json["common.uiTheme"] !== "dark"; i++) await Bun.sleep(100);
      expect((await u.client.get("/api/user/settings")).json["common.uiTheme"]).toBe("dark");
      await page.reload({ waitUntil: "networkidle0" });
      expect(await scheme(page)).toBe("dark");
      expect(await axeViolations(page)).toEqual([]);

      // Another browser (no local storage) whose system prefers light: the stored theme wins.
      const other = await h.open({ user: u, colorScheme: "light" });
      await goto(other, `${h.url}/settings`);
      await waitForText(other.page, "API keys");
      await other.page.waitForFunction(`document.documentElement.getAttribute("data-mantine-color-scheme") === "dark"`);
      // "System" follows the browser's preference.
      await click(other.page, "radio", "System");
      await other.page.waitForFunction(`document.documentElement.getAttribute("data-mantine-color-scheme") === "light"`);
      expectClean(ui);
      expectClean(other);
    },
    TEST_TIMEOUT,
  );
});
