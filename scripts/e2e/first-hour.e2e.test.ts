// Browser: what a self-hoster meets in the first hour (issue 30), on a server with the defaults (private targets
// refused): a refused private target reads as a sentence with the way to allow it (CSP import, tracker test), never
// a field path; prefilled fields ("/", "https://") do not double what is typed after them; success toasts leave the
// page's actions uncovered; a not-found item offers the way back, not "Try again"; tag pickers offer every tag;
// the responder page's request-count tab follows the live rows.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import { axeViolations, byRole, click, clickInDialog, expectClean, fill, goto, startUiHarness, TEST_TIMEOUT, waitForText, type UiHarness } from "./harness";

let h: UiHarness;
beforeAll(async () => {
  h = await startUiHarness();
}, TEST_TIMEOUT);
afterAll(() => h?.stop());

const HINT_SENTENCE = "URL not allowed (private address). An operator can allow private targets with network.allow_private_targets.";

/** Puts the caret at the end of the field (as a click after its prefilled text does) and types `text`. */
async function typeAtEnd(page: Page, label: string, text: string) {
  const el = await byRole(page, "textbox", label);
  await el.focus();
  await page.keyboard.press("End");
  await page.keyboard.type(text);
  return (await el.evaluate((e: any) => String(e.value))) as string;
}

describe("first hour", () => {
  test(
    "a refused private target is a sentence with the hint: CSP import from localhost, tracker test against a LAN address",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/csp?import=1`);
      await waitForText(page, "Import a policy");
      await fill(page, "Name", "local app");
      await click(page, "radio", "From a URL");
      await fill(page, "Page URL", "http://localhost:8081/");
      await clickInDialog(page, "Import");
      await waitForText(page, "Could not import");
      const alert = await page.$eval("[role=dialog] [role=alert]", (e: any) => String(e.innerText));
      expect(alert).toContain(HINT_SENTENCE);
      expect(alert).not.toContain("content.value.url");
      expect(await axeViolations(page)).toEqual([]);

      await goto(ui, `${h.url}/trackers/apis/new`);
      await waitForText(page, "New API tracker");
      await fill(page, "URL", "http://192.168.1.20/status");
      await click(page, "button", "Test requests");
      await page.waitForSelector("[data-testid=test-response] [role=alert]", { visible: true, timeout: 30_000 });
      const tested = await page.$eval("[data-testid=test-response] [role=alert]", (e: any) => String(e.innerText));
      expect(tested).toBe(HINT_SENTENCE);
      expectClean(ui, ["400 POST /api/web_security/csp", "400 POST /api/web_scraping/api_trackers/_test"]);
    },
    TEST_TIMEOUT,
  );

  test(
    "prefilled fields: typing /orders after the path's / gives /orders; a pasted http:// URL after https:// replaces it",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/responders/new`);
      await waitForText(page, "Where it listens");
      expect(await typeAtEnd(page, "Path", "/orders")).toBe("/orders");
      await page.waitForFunction(`document.querySelector("[data-testid=url-preview]").textContent.endsWith("/orders")`);
      expect(await page.$eval("[data-testid=url-preview]", (e: any) => String(e.textContent))).not.toContain("//orders");
      await fill(page, "Name", "orders");
      await click(page, "button", "Create responder");
      await waitForText(page, "Responder “orders” created");
      expect((await user.client.get("/api/webhooks/responders")).json.items[0].location.path).toBe("/orders");

      // The CSP import's URL box starts with https://; a pasted http:// URL replaces that prefix, not follows it.
      await goto(ui, `${h.url}/csp?import=1`);
      await click(page, "radio", "From a URL");
      expect(await typeAtEnd(page, "Page URL", "http://localhost:8081/")).toBe("http://localhost:8081/");
      // Fetching a certificate chain: the HTTPS URL box starts with https:// too.
      await goto(ui, `${h.url}/certificates/templates?fetch=1`);
      expect(await typeAtEnd(page, "HTTPS URL", "https://example.com/")).toBe("https://example.com/");
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );
});
