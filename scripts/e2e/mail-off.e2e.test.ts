// Browser: a server without mail (issue 30 item 6, supplement §27 `features.mail`). Every email switch says that
// mail is not configured (trackers' "Email me on change", the responder's request summaries, the notification
// email settings), and /forgot tells the truth: the recovery link must come from the operator, never "Check your
// inbox". With mail on (auth.e2e, settings.e2e) none of this shows. axe in light and dark.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import { axeViolations, byRole, expectClean, goto, startUiHarness, TEST_TIMEOUT, waitForText, type UiHarness } from "./harness";

let h: UiHarness;
beforeAll(async () => {
  h = await startUiHarness(); // no [smtp] host: mail is off
}, TEST_TIMEOUT);
afterAll(() => h?.stop());

const MAIL_OFF = "Mail is not configured on this server";

/** The accessible description of the switch named `name` (what a screen reader reads with it). */
async function switchDescription(page: Page, name: string): Promise<string> {
  const el = await byRole(page, "switch", name);
  return (await el.evaluate((e: any) =>
    String(e.getAttribute("aria-describedby") ?? "")
      .split(/\s+/)
      .filter(Boolean)
      .map((id: string) => (globalThis as any).document.getElementById(id)?.textContent ?? "")
      .join(" "),
  )) as string;
}

describe("mail is off", () => {
  test(
    "/forgot says the link must come from the operator; no form, never “Check your inbox”",
    async () => {
      for (const colorScheme of ["light", "dark"] as const) {
        const ui = await h.open({ colorScheme });
        const { page } = ui;
        await goto(ui, `${h.url}/forgot`);
        await waitForText(page, "secbox users recover");
        const text = (await page.evaluate("document.body.innerText")) as string;
        expect(text).toContain("Ask the operator");
        expect(text).not.toContain("Check your inbox");
        expect(text).not.toContain("we will send you a link");
        expect(await page.$('aria/Send link[role="button"]')).toBeNull();
        expect(await axeViolations(page)).toEqual([]);
        expectClean(ui);
      }
    },
    TEST_TIMEOUT,
  );

  test(
    "tracker editors: “Email me on change” says mail is not configured",
    async () => {
      const user = await h.srv.createUser();
      for (const [kind, colorScheme] of [
        ["apis", "light"],
        ["pages", "dark"],
      ] as const) {
        const ui = await h.open({ user, colorScheme });
        await goto(ui, `${h.url}/trackers/${kind}/new`);
        expect(await switchDescription(ui.page, "Email me on change")).toContain(MAIL_OFF);
        expect(await axeViolations(ui.page)).toEqual([]);
        expectClean(ui);
      }
    },
    TEST_TIMEOUT,
  );

  test(
    "responder editor: the request-summary switch says mail is not configured; settings say it too",
    async () => {
      const user = await h.srv.createUser();
      for (const colorScheme of ["light", "dark"] as const) {
        const ui = await h.open({ user, colorScheme });
        await goto(ui, `${h.url}/responders/new`);
        expect(await switchDescription(ui.page, "Email a summary of new requests")).toContain(MAIL_OFF);
        expect(await axeViolations(ui.page)).toEqual([]);
        await goto(ui, `${h.url}/settings`);
        await waitForText(ui.page, MAIL_OFF);
        expectClean(ui);
      }
    },
    TEST_TIMEOUT,
  );
});
