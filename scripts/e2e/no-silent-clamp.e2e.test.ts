// Browser: issue 30 item 11 — out-of-range numbers are said, never silently changed. A responder's status 999 used to
// become 599 when the field lost focus, and 5000 requests to track became the plan's maximum, with no word; a
// tracker's 5000 revisions became 1000. Now the typed value stays, the field says what is allowed (at once, and the
// API's 400 lands under it too), and nothing is saved until it is fixed. A page tracker's wait-for selector that no
// run can use (`div[`) is refused at save, under its field, naming it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import { byRole, click, expectClean, fill, goto, startUiHarness, TEST_TIMEOUT, waitForText, type UiHarness } from "./harness";

let h: UiHarness;
beforeAll(async () => {
  h = await startUiHarness();
}, TEST_TIMEOUT);
afterAll(() => h?.stop());

/** The value of the textbox labelled `label`. */
const valueOf = async (page: Page, label: string) => (await (await byRole(page, "textbox", label)).evaluate((e: any) => String(e.value))) as string;

/** The text the input labelled `label` is described by (its description and error). */
const describedBy = async (page: Page, label: string) =>
  (await (
    await byRole(page, "textbox", label)
  ).evaluate((e: any) =>
    String(e.getAttribute("aria-describedby") ?? "")
      .split(/\s+/)
      .filter(Boolean)
      .map((id: string) => (globalThis as any).document.getElementById(id)?.textContent ?? "")
      .join(" "),
  )) as string;

describe("numbers out of range", () => {
  test(
    "responder editor: status 999 and 5000 requests to track stay as typed and are said to be out of range; nothing is saved",
    async () => {
      const user = await h.srv.createUser(); // ultimate: at most 1000 requests to track
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/responders/new`);
      await fill(page, "Name", "out-of-range");
      await fill(page, "Status code", "999");
      await page.keyboard.press("Tab");
      await waitForText(page, "A status from 200 to 599");
      expect(await valueOf(page, "Status code")).toBe("999");

      await fill(page, "Requests to track", "5000");
      await page.keyboard.press("Tab");
      await waitForText(page, "At most 1000 on your plan");
      expect(await valueOf(page, "Requests to track")).toBe("5000");

      await click(page, "button", "Create responder");
      await waitForText(page, "Some fields need attention");
      expect((await user.client.get("/api/webhooks/responders")).json.total).toBe(0);

      // Fixed, it saves.
      await fill(page, "Status code", "418");
      await fill(page, "Requests to track", "1000");
      await click(page, "button", "Create responder");
      await waitForText(page, "Responder “out-of-range” created");
      const [saved] = (await user.client.get("/api/webhooks/responders")).json.items;
      expect(saved.settings).toMatchObject({ statusCode: 418, requestsToTrack: 1000 });
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "tracker editor: 5000 revisions stay as typed; the API's limit is shown under the field",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/trackers/apis/new`);
      await fill(page, "Name", "many-revisions");
      await fill(page, "URL", "https://status.example.com/api");
      await fill(page, "Revisions to keep", "5000");
      await page.keyboard.press("Tab");
      expect(await valueOf(page, "Revisions to keep")).toBe("5000");
      await click(page, "button", "Create API tracker");
      await page.waitForFunction(
        (label: string) => {
          const input = [...(globalThis as any).document.querySelectorAll("input")].find(
            (i: any) => i.labels && [...i.labels].some((l: any) => l.textContent.includes(label)),
          );
          return input?.getAttribute("aria-invalid") === "true";
        },
        { timeout: 15_000 },
        "Revisions to keep",
      );
      expect(await describedBy(page, "Revisions to keep")).toContain("1000");
      expect(await valueOf(page, "Revisions to keep")).toBe("5000");
      expect((await user.client.get("/api/web_scraping/api_trackers")).json.total).toBe(0);
      expectClean(ui, ["400 POST /api/web_scraping/api_trackers"]);
    },
    TEST_TIMEOUT,
  );

  test(
    "page tracker editor: a selector no run can use is refused under its field, naming it; 99999 ms of waiting stays as typed and is said",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/trackers/pages/new`);
      await fill(page, "Name", "bad-selector");
      await fill(page, "URL", "https://status.example.com/");
      await fill(page, "Wait for selector", "div[");
      await click(page, "button", "Create page tracker");
      await waitForText(page, '"div[" is not a valid CSS selector (Expected attribute name)');
      expect(await describedBy(page, "Wait for selector")).toContain('"div[" is not a valid CSS selector');

      await fill(page, "Wait for selector", "div[data-ready]");
      await fill(page, "Then wait (ms)", "99999");
      await page.keyboard.press("Tab");
      expect(await valueOf(page, "Then wait (ms)")).toBe("99999");
      await click(page, "button", "Create page tracker");
      await waitForText(page, "From 0 to 30,000 ms");
      expect(await valueOf(page, "Then wait (ms)")).toBe("99999");
      expect((await user.client.get("/api/web_scraping/page_trackers")).json.total).toBe(0);
      expectClean(ui, ["400 POST /api/web_scraping/page_trackers"]);
    },
    TEST_TIMEOUT,
  );
});
