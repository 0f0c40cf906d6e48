// Browser: issue 30 item 5 — broken scripts no longer save silently. The code editors mark syntax errors as you type
// (lint gutter + a status line, checked as the script will run: QuickJS forms, or the page's forms for page
// extractors), a save of a script that does not compile asks first ("Keep editing" sends nothing), and after "Save
// anyway" the server's `warnings` are shown. axe on the open confirmation, light and dark.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import {
  axeViolations,
  click,
  clickInDialog,
  expectClean,
  fill,
  goto,
  startUiHarness,
  TEST_TIMEOUT,
  typeInEditor,
  waitForDialogsClosed,
  waitForText,
  type UiHarness,
} from "./harness";

let h: UiHarness;
beforeAll(async () => {
  h = await startUiHarness();
}, TEST_TIMEOUT);
afterAll(() => h?.stop());

const syntaxStatus = (page: Page, n = 0) =>
  page.$$eval("[data-testid=syntax-status]", (els: any[], i: number) => String(els[i]?.textContent ?? ""), n) as Promise<string>;

describe("script editors", () => {
  test(
    "library script: marked as you type; saving asks first; Keep editing sends nothing; Save anyway shows the server's warning",
    async () => {
      const user = await h.srv.createUser();
      for (const scheme of ["light", "dark"] as const) {
        const ui = await h.open({ user, colorScheme: scheme });
        const { page } = ui;
        await goto(ui, `${h.url}/scripts/new`);
        await fill(page, "Name", `broken-${scheme}`);
        await typeInEditor(page, "return {statusCode: 200, body: ");
        // the gutter mark and the line under the editor
        await page.waitForSelector(".cm-lint-marker-error", { visible: true });
        await page.waitForFunction(`document.querySelector("[data-testid=syntax-status]").textContent.includes("line 1, column 32")`);
        expect(await syntaxStatus(page)).toBe("SyntaxError: Unexpected token (line 1, column 32)");

        const posts = () => ui.requests.filter((u) => u.endsWith("/api/user/scripts")).length;
        const before = posts();
        await click(page, "button", "Create script");
        await waitForText(page, "The source does not compile");
        await waitForText(page, "SyntaxError: Unexpected token (line 1, column 32)");
        expect(await axeViolations(page)).toEqual([]);
        await clickInDialog(page, "Keep editing");
        await waitForDialogsClosed(page);
        expect(posts()).toBe(before);
        expect((await user.client.get("/api/user/scripts")).json.total).toBe(scheme === "light" ? 0 : 1);

        await click(page, "button", "Create script");
        await clickInDialog(page, "Save anyway");
        await waitForText(page, "Saved, but a script does not compile");
        await waitForText(page, "content: SyntaxError: unexpected token in expression: '}' (line 1, column 32)");
        expect(await axeViolations(page)).toEqual([]); // the toast too
        await page.waitForFunction(`/^\\/scripts\\/[0-9a-f-]{36}$/.test(location.pathname)`);
        const id = new URL(page.url()).pathname.split("/")[2]!;
        expect((await user.client.get(`/api/user/scripts/${id}`)).json.content).toBe("return {statusCode: 200, body: }");

        // fixed: the mark goes, and a save no longer asks
        await typeInEditor(page, "return {statusCode: 201");
        await page.waitForFunction(`document.querySelector("[data-testid=syntax-status]").textContent === "No syntax errors."`);
        expect(await page.$(".cm-lint-marker-error")).toBeNull();
        await click(page, "button", "Save");
        await waitForText(page, `Script “broken-${scheme}” saved`);
        expect(await page.$(".mantine-Modal-content")).toBeNull();
        expectClean(ui);
        await ui.context.close();
      }
    },
    TEST_TIMEOUT * 2,
  );

  test(
    "responder: Save anyway stores the script and shows settings.script's warning",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/responders/new`);
      await fill(page, "Name", "broken-hook");
      await typeInEditor(page, "return x y", "Script source");
      await page.waitForSelector(".cm-lint-marker-error", { visible: true });
      await click(page, "button", "Create responder");
      await waitForText(page, "The script source does not compile");
      await clickInDialog(page, "Save anyway");
      await waitForText(page, "settings.script: SyntaxError: expecting ';' (line 1, column 10)");
      const list = (await user.client.get("/api/webhooks/responders")).json;
      expect(list.items.map((r: { settings: { script?: string } }) => r.settings.script)).toEqual(["return x y"]);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "page tracker extractor is checked as page code (`context` is its parameter); an API tracker update shows 200 {warnings}",
    async () => {
      const user = await h.srv.createUser();
      const api = (
        await user.client.post("/api/web_scraping/api_trackers", { name: "feed", target: { url: "https://example.com/feed", extractor: "return 1" } })
      ).json;
      const ui = await h.open({ user });
      const { page } = ui;

      await goto(ui, `${h.url}/trackers/pages/new`);
      await waitForText(page, "In-page extractor");
      await typeInEditor(page, "let context = 1; return context", "In-page extractor");
      await page.waitForSelector(".cm-lint-marker-error", { visible: true });
      expect(await syntaxStatus(page)).toBe("SyntaxError: Identifier 'context' has already been declared (line 1, column 5)");

      expectClean(ui);
      await ui.context.close(); // the form is dirty: leaving would ask

      const ui2 = await h.open({ user });
      const page2 = ui2.page;
      await goto(ui2, `${h.url}/trackers/apis/${api.id}/edit`);
      await waitForText(page2, "Extractor");
      await typeInEditor(page2, "return 1 +", "Extractor");
      await page2.waitForFunction(
        `[...document.querySelectorAll("[data-testid=syntax-status]")].some((e) => e.textContent.includes("unexpected end of script"))`,
      );
      await click(page2, "button", "Save");
      await waitForText(page2, "The extractor does not compile");
      await clickInDialog(page2, "Save anyway");
      await waitForText(page2, "target.extractor: SyntaxError: unexpected end of script (line 1, column 11)");
      expect((await user.client.get(`/api/web_scraping/api_trackers/${api.id}`)).json.target.extractor).toBe("return 1 +");
      expectClean(ui2);
    },
    TEST_TIMEOUT,
  );
});
