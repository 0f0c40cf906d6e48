// Browser: what a self-hoster meets in the first hour (issue 30), on a server with the defaults (private targets
// refused): a refused private target reads as a sentence with the way to allow it (CSP import, tracker test), never
// a field path; prefilled fields ("/", "https://") do not double what is typed after them; success toasts leave the
// page's actions uncovered; a not-found item offers the way back, not "Try again"; tag pickers offer every tag;
// the responder page's request-count tab follows the live rows.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import {
  axeViolations,
  byRole,
  click,
  clickInDialog,
  expectClean,
  fill,
  goto,
  path,
  startUiHarness,
  TEST_TIMEOUT,
  waitForText,
  type UiHarness,
} from "./harness";
import { hit } from "./responders-seed";

let h: UiHarness;
beforeAll(async () => {
  // More tags than one page of the API (100): an operator may allow that (tier key max_tags).
  h = await startUiHarness({ env: { SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_TAGS: "150", SECBOX_SUBSCRIPTIONS_TIERS_ULTIMATE_MAX_TAGS: "150" } });
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

  test(
    "toasts leave the page's actions and the header uncovered (Run now, twice, after creating a tracker)",
    async () => {
      const user = await h.srv.createUser();
      for (const [width, height] of [
        [1366, 768],
        [390, 844],
      ] as const) {
        const ui = await h.open({ user, width, height });
        const { page } = ui;
        await goto(ui, `${h.url}/trackers/apis/new`);
        await waitForText(page, "New API tracker");
        await fill(page, "Name", `feed-${width}`);
        // A host name is only resolved when a run starts (a literal private address would be refused here).
        await fill(page, "URL", "https://feed.example.invalid/v1");
        await click(page, "button", "Create API tracker");
        await waitForText(page, `API tracker “feed-${width}” created`);
        // A run's toast joins the first one; the second "Run now" is still reachable, the header stays usable.
        await click(page, "button", "Run now");
        await page.waitForFunction(`document.querySelectorAll(".mantine-Notification-root").length >= 2`, { timeout: 30_000 });
        await page.waitForFunction(
          `[...document.querySelectorAll("button")].some(b => b.textContent === "Run now" && !b.disabled && !b.dataset.loading)`,
          { timeout: 30_000 },
        );
        await Bun.sleep(400); // the toasts' entry transition
        const covered = (await page.evaluate(`(() => {
          const toasts = [...document.querySelectorAll(".mantine-Notification-root")].map((t) => t.getBoundingClientRect());
          const runNow = [...document.querySelectorAll("button")].find((b) => b.textContent === "Run now");
          const targets = [["Run now", runNow], ["header", document.querySelector("header")]];
          const overlap = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
          return targets.filter(([, el]) => toasts.some((t) => overlap(t, el.getBoundingClientRect()))).map(([name]) => name);
        })()`)) as string[];
        expect({ width, covered }).toEqual({ width, covered: [] });
        await click(page, "button", "Run now");
        expectClean(ui);
        await ui.context.close();
      }
    },
    TEST_TIMEOUT * 2,
  );

  test(
    "a deleted or unknown item offers the way back to its list, not “Try again”",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      const gone = "00000000-0000-4000-8000-000000000000";
      await goto(ui, `${h.url}/responders/${gone}`);
      await waitForText(page, "Could not open the responder");
      expect(await page.$(`aria/Try again[role="button"]`)).toBeNull();
      expect(await axeViolations(page)).toEqual([]);
      await click(page, "link", "Back to responders");
      await page.waitForFunction(`location.pathname === "/responders"`);
      await goto(ui, `${h.url}/certificates/templates/${gone}`);
      await waitForText(page, "Could not open the template");
      expect(await page.$(`aria/Try again[role="button"]`)).toBeNull();
      await click(page, "link", "Back to certificate templates");
      await page.waitForFunction(`location.pathname === "/certificates/templates"`);
      expect(path(page)).toBe("/certificates/templates");
      expectClean(ui, [`404 GET /api/webhooks/responders/${gone}`, `404 GET /api/certificates/templates/${gone}`]);
    },
    TEST_TIMEOUT,
  );

  test(
    "tag pickers offer every tag, beyond the API's page of 100",
    async () => {
      const user = await h.srv.createUser();
      for (let i = 0; i < 105; i++)
        expect((await user.client.post("/api/user/tags", { name: `t-${String(i).padStart(3, "0")}`, color: "primary" })).status).toBe(201);
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/secrets?create=1`);
      await waitForText(page, "New secret");
      const picker = await byRole(page, "combobox", "Tags");
      await picker.click();
      await picker.type("t-104");
      const option = await page.waitForSelector("[role=option]:not([data-combobox-disabled])", { visible: true });
      expect(await option!.evaluate((o: any) => String(o.textContent))).toBe("t-104");
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "the Requests tab's count follows the live rows",
    async () => {
      const user = await h.srv.createUser();
      const r = (
        await user.client.post("/api/webhooks/responders", {
          name: "hits",
          method: "POST",
          location: { pathType: "*", path: "/hits" },
          settings: { requestsToTrack: 30, statusCode: 201 },
        })
      ).json;
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/responders/${r.id}`);
      await waitForText(page, "Waiting for requests");
      const tab = () => page.$eval(`[role=tab][aria-selected=true]`, (t: any) => String(t.textContent)) as Promise<string>;
      for (let n = 1; n <= 3; n++) {
        expect(
          (await hit(h.url, user, `/hits/${n}`, { method: "POST", body: `{"n":${n}}`, headers: { "content-type": "application/json" } })).status,
        ).toBe(201);
        await page.waitForFunction(`document.querySelectorAll("[data-record]").length === ${n}`, { timeout: 15_000 });
        expect(await tab()).toBe(`Requests (${n})`);
      }
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );
});
