// Browser: the UI with the keyboard alone (issue 30 item 9). "Skip to content" is the first tab stop; a route change
// puts focus on the new page's heading; the phone menu button says whether the navigation is open; closing a dialog
// with Escape gives focus back to what opened it (a button, or the row menu whose item opened it); typing an
// option's name and Enter picks it in a Select (a POST responder, a CSP directive). And the whole job: create a POST
// responder answering 201, hit it, and find the request with its 201 in its history, with Tab, Enter, arrows and
// typing only.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import type { TestUser } from "../../src/tests/harness";
import { axeViolations, expectClean, goto, startUiHarness, TEST_TIMEOUT, waitForDialogsClosed, waitForText, type UiHarness } from "./harness";
import { hit } from "./responders-seed";

let h: UiHarness;
beforeAll(async () => {
  h = await startUiHarness();
}, TEST_TIMEOUT);
afterAll(() => h?.stop());

/** The focused element's accessible name, roughly: aria-label, its label, aria-labelledby, or its text. */
const focusedName = (page: Page) =>
  page.evaluate(`(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return "<body>";
    const by = el.getAttribute("aria-labelledby");
    const name = el.getAttribute("aria-label") || (el.labels && el.labels[0] && el.labels[0].textContent) || (by && by.split(" ").map((id) => document.getElementById(id)?.textContent ?? "").join(" ")) || el.textContent || "";
    return name.replace(/\\s*\\*\\s*$/, "").replace(/\\s+/g, " ").trim();
  })()`) as Promise<string>;
const focusedTag = (page: Page) => page.evaluate(`document.activeElement ? document.activeElement.tagName.toLowerCase() : ""`) as Promise<string>;

/**
 * Presses Tab until the focused element's name is `name` (or starts with it, `prefix`); fails after `max` presses.
 * In a code editor Tab indents: Escape first, then Tab leaves it (the editor's documented way out).
 */
async function tabTo(page: Page, name: string, { max = 40, prefix = false, back = false } = {}) {
  const seen: string[] = [];
  for (let i = 0; i < max; i++) {
    if (await page.evaluate(`!!(document.activeElement && document.activeElement.closest(".cm-editor"))`)) await page.keyboard.press("Escape");
    if (back) {
      await page.keyboard.down("Shift");
      await page.keyboard.press("Tab");
      await page.keyboard.up("Shift");
    } else await page.keyboard.press("Tab");
    const got = await focusedName(page);
    seen.push(got);
    if (got === name || (prefix && got.startsWith(name))) return;
  }
  throw new Error(`"${name}" not reached with Tab; focus went through: ${seen.join(" | ")}`);
}

async function newUser(): Promise<TestUser> {
  return h.srv.createUser();
}

describe("keyboard", () => {
  test(
    "skip link first, focus on the new page's heading after a route change, the menu button's aria-expanded",
    async () => {
      const user = await newUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/`);
      await waitForText(page, "Pick a tool");
      await page.keyboard.press("Tab");
      expect(await focusedName(page)).toBe("Skip to content");
      expect(await page.$eval(".skip-link", (e: any) => e.getBoundingClientRect().top >= 0)).toBe(true);
      expect(await axeViolations(page)).toEqual([]);
      await page.keyboard.press("Enter");
      expect(await focusedTag(page)).toBe("h1");
      expect(await focusedName(page)).toBe("Secbox");
      // From the heading, the next stop is in the content, not the header or the navigation.
      await page.keyboard.press("Tab");
      expect(await page.evaluate(`document.getElementById("main").contains(document.activeElement)`)).toBe(true);

      // A navigation link followed with Enter: the new page's heading has focus.
      await goto(ui, `${h.url}/`);
      await waitForText(page, "Pick a tool");
      await tabTo(page, "Secrets");
      expect(await focusedTag(page)).toBe("a");
      await page.keyboard.press("Enter");
      await page.waitForFunction(`location.pathname === "/secrets"`);
      await page.waitForFunction(`document.activeElement && document.activeElement.tagName === "H1"`, { timeout: 15_000 });
      expect(await focusedName(page)).toBe("Secrets");

      // Phone width: the menu button says whether the navigation is open.
      const phone = await h.open({ user, width: 390, height: 844, colorScheme: "dark" });
      await goto(phone, `${h.url}/`);
      await waitForText(phone.page, "Pick a tool");
      const burger = `document.querySelector("button[aria-controls=main-navigation]")`;
      expect(await phone.page.evaluate(`${burger}.getAttribute("aria-expanded")`)).toBe("false");
      await tabTo(phone.page, "Open navigation");
      await phone.page.keyboard.press("Enter");
      await phone.page.waitForFunction(`${burger}.getAttribute("aria-expanded") === "true"`);
      expect(await phone.page.evaluate(`${burger}.getAttribute("aria-label")`)).toBe("Close navigation");
      expect(await axeViolations(phone.page)).toEqual([]);
      expectClean(ui);
      expectClean(phone);
    },
    TEST_TIMEOUT,
  );

  test(
    "Escape from a dialog gives focus back to what opened it: a button, or the row menu of the item that opened it",
    async () => {
      const user = await newUser();
      await user.client.post("/api/user/secrets", { name: "API_TOKEN", value: "x" });
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/secrets`);
      await waitForText(page, "API_TOKEN");
      await tabTo(page, "New secret");
      await page.keyboard.press("Enter");
      await page.waitForSelector("[role=dialog]", { visible: true });
      await page.keyboard.press("Escape");
      await waitForDialogsClosed(page);
      await page.waitForFunction(`document.activeElement !== document.body`, { timeout: 5_000 }).catch(() => {});
      expect(await focusedName(page)).toBe("New secret");

      // Row menu → Edit (the menu item is gone once the dialog opens): focus returns to the row's menu button.
      await tabTo(page, "Actions for API_TOKEN");
      await page.keyboard.press("Enter");
      await page.waitForSelector("[role=menu]", { visible: true });
      await page.waitForFunction(`document.activeElement && document.activeElement.getAttribute("role") === "menuitem"`).catch(() => {});
      if ((await focusedName(page)) !== "Edit") await page.keyboard.press("ArrowDown");
      expect(await focusedName(page)).toBe("Edit");
      await page.keyboard.press("Enter");
      await page.waitForSelector("[role=dialog]", { visible: true });
      await waitForText(page, "Edit secret API_TOKEN");
      await page.keyboard.press("Escape");
      await waitForDialogsClosed(page);
      await page.waitForFunction(`document.activeElement !== document.body`, { timeout: 5_000 }).catch(() => {});
      expect(await focusedName(page)).toBe("Actions for API_TOKEN");
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "typing an option's name and Enter picks it: a CSP directive",
    async () => {
      const user = await newUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/csp/new`);
      await waitForText(page, "Add a directive");
      await tabTo(page, "Add a directive");
      await page.keyboard.type("script-src");
      await page.keyboard.press("Enter");
      await page.waitForSelector("ul[aria-label=Directives] > li[data-directive='script-src']", { timeout: 15_000 });
      expect((await page.$$eval("ul[aria-label=Directives] > li", (lis: any[]) => lis.map((li) => String(li.dataset.directive)))).at(-1)).toBe(
        "script-src",
      );
      // With the picker open, axe finds nothing serious (its list scrolls and is reachable).
      await tabTo(page, "Add a directive", { back: false, max: 60 });
      await page.keyboard.press("ArrowDown");
      await page.waitForFunction(`[...document.querySelectorAll("[role=option]")].some((o) => o.getClientRects().length > 0)`);
      expect(await axeViolations(page)).toEqual([]);
      await page.keyboard.press("Escape");
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "keyboard only: create a POST responder answering 201, hit it, see the request and its 201 in its history",
    async () => {
      const user = await newUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/`);
      await waitForText(page, "Pick a tool");
      await tabTo(page, "Responders");
      await page.keyboard.press("Enter");
      await page.waitForFunction(`location.pathname === "/responders"`);
      await waitForText(page, "No responders yet");
      await tabTo(page, "New responder");
      await page.keyboard.press("Enter");
      await page.waitForFunction(`location.pathname === "/responders/new"`);
      await waitForText(page, "Where it listens");
      await page.waitForFunction(`document.activeElement && document.activeElement.tagName === "H1"`, { timeout: 15_000 });

      await tabTo(page, "Name");
      await page.keyboard.type("orders");
      // The method: typed and Enter (a Select used to keep ANY).
      await tabTo(page, "Method");
      await page.keyboard.type("POST");
      await page.keyboard.press("Enter");
      expect(await page.evaluate(`document.activeElement.value`)).toBe("POST");
      await tabTo(page, "Path");
      await page.keyboard.type("/orders");
      expect(await page.evaluate(`document.activeElement.value`)).toBe("/orders");
      await tabTo(page, "Status code");
      await page.keyboard.down("Control");
      await page.keyboard.press("a");
      await page.keyboard.up("Control");
      await page.keyboard.type("201");
      expect(await axeViolations(page)).toEqual([]);
      await tabTo(page, "Create responder");
      await page.keyboard.press("Enter");
      await waitForText(page, "Responder “orders” created");
      await page.waitForFunction(`/^\\/responders\\/[0-9a-f-]{36}$/.test(location.pathname)`);
      await page.waitForFunction(`document.activeElement && document.activeElement.tagName === "H1"`, { timeout: 15_000 });
      expect(await focusedName(page)).toBe("orders");
      const [r] = (await user.client.get("/api/webhooks/responders")).json.items;
      expect({ method: r.method, path: r.location.path, status: r.settings.statusCode }).toEqual({ method: "POST", path: "/orders", status: 201 });

      // The hit (sent by the test), then the history, by keyboard.
      await waitForText(page, "Waiting for requests");
      const res = await hit(h.url, user, "/orders", { method: "POST", headers: { "content-type": "application/json" }, body: '{"id":1}' });
      expect(res.status).toBe(201);
      await page.waitForSelector("[data-record]", { timeout: 15_000 });
      await tabTo(page, "Open POST /orders at", { prefix: true, max: 60 });
      await page.keyboard.press("Enter");
      await page.waitForFunction(`new URLSearchParams(location.search).has("request")`);
      const row = await page.$eval("[data-record]", (e: any) => String(e.innerText));
      expect(row).toContain("POST /orders");
      // Every record carries the status it was answered with (supplement §27): 201 in the row's Status column.
      const status = await page.evaluate(`(() => {
        const col = [...document.querySelectorAll("[data-testid=history-table] thead th")].findIndex((th) => th.textContent.trim() === "Status");
        return col < 0 ? "no Status column" : document.querySelector("[data-record]").children[col].textContent.trim();
      })()`);
      expect(status).toBe("201");
      await waitForText(page, "Copy as curl");
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );
});
