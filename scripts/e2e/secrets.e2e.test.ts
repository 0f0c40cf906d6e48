// Browser: secrets — the value is write-only (never rendered, not even in the edit form), replace only; tag filter
// any/all in the URL; delete; axe on list and form in both themes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import {
  axeViolations,
  click,
  clickInDialog,
  expectClean,
  fill,
  goto,
  path,
  startUiHarness,
  TEST_TIMEOUT,
  waitForDialogsClosed,
  waitForText,
  type UiHarness,
} from "./harness";

let h: UiHarness;
beforeAll(async () => {
  h = await startUiHarness();
}, TEST_TIMEOUT);
afterAll(() => h?.stop());

const VALUE = "s3cr3t-VALUE-never-shown";
const NEW_VALUE = "replaced-VALUE-also-hidden";
/** Everything the page holds: markup, every field's current value, and what React keeps in storage. */
const pageHolds = (page: Page, text: string) =>
  page.evaluate(
    `(() => { const t = ${JSON.stringify(text)}; const fields = [...document.querySelectorAll("input, textarea")].map(e => e.value);
      return document.documentElement.outerHTML.includes(t) || fields.some(v => v.includes(t)) || JSON.stringify(localStorage).includes(t) || JSON.stringify(sessionStorage).includes(t); })()`,
  ) as Promise<boolean>;
const rowNames = (page: Page) =>
  page.$$eval(".mantine-datatable tbody tr td:first-child", (tds: any[]) => tds.map((td) => String(td.innerText).trim())) as Promise<string[]>;

describe("secrets page", () => {
  test(
    "create, the value never comes back, replace it, delete",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/secrets`);
      await waitForText(page, "No secrets yet");
      await click(page, "button", "New secret");
      await fill(page, "Name", "bad name");
      await fill(page, "Value", VALUE);
      await click(page, "button", "Create secret");
      await waitForText(page, "Start with a letter");
      await fill(page, "Name", "GITHUB_TOKEN");
      expect(await axeViolations(page)).toEqual([]);
      await click(page, "button", "Create secret");
      await waitForDialogsClosed(page);
      await waitForText(page, "Secret GITHUB_TOKEN created");
      expect(await pageHolds(page, VALUE)).toBe(false);

      // The edit form shows the name (read-only) and an empty "replace value" field.
      await click(page, "button", "GITHUB_TOKEN");
      await waitForText(page, "Edit secret GITHUB_TOKEN");
      expect(await pageHolds(page, VALUE)).toBe(false);
      expect(await page.$eval("textarea", (t: any) => t.value)).toBe("");
      await fill(page, "Replace value", NEW_VALUE);
      await click(page, "button", "Save");
      await waitForDialogsClosed(page);
      await waitForText(page, "saved with its new value");
      expect(await pageHolds(page, NEW_VALUE)).toBe(false);
      // The server has the new value (decrypted through the service, as a script would see it).
      expect(await h.srv.services.secrets.valuesFor(user.id, "all")).toEqual({ GITHUB_TOKEN: NEW_VALUE });
      // Nothing the browser received ever carried a value.
      expect(await pageHolds(page, VALUE)).toBe(false);

      await click(page, "button", "Actions for GITHUB_TOKEN");
      await click(page, "menuitem", "Delete secret");
      await clickInDialog(page, "Delete");
      await waitForText(page, "No secrets yet");
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "tag filter: any (tags=) and all (globalTags=), kept in the URL; dark theme passes axe",
    async () => {
      const user = await h.srv.createUser();
      const c = user.client;
      const prod = (await c.post("/api/user/tags", { name: "prod", color: "danger" })).json;
      const ci = (await c.post("/api/user/tags", { name: "ci", color: "primary" })).json;
      await c.post("/api/user/secrets", { name: "BOTH", value: "x", tagIds: [prod.id, ci.id] });
      await c.post("/api/user/secrets", { name: "PROD_ONLY", value: "x", tagIds: [prod.id] });
      await c.post("/api/user/secrets", { name: "CI_ONLY", value: "x", tagIds: [ci.id] });
      await c.post("/api/user/secrets", { name: "NONE", value: "x" });
      const ui = await h.open({ user, colorScheme: "dark" });
      const { page } = ui;
      await goto(ui, `${h.url}/secrets`);
      await waitForText(page, "1–4 of 4");
      expect(await axeViolations(page)).toEqual([]);

      // Pick both tags in the filter: any of them by default.
      await click(page, "combobox", "Tags");
      await click(page, "option", "prod");
      await waitForText(page, "1–2 of 2");
      await click(page, "option", "ci");
      await page.keyboard.press("Escape");
      await waitForText(page, "1–3 of 3");
      expect(await rowNames(page)).toEqual(["BOTH", "CI_ONLY", "PROD_ONLY"]);
      expect(path(page)).toContain(`tags=${prod.id}%2C${ci.id}`);

      await click(page, "radio", "All tags");
      await waitForText(page, "1–1 of 1");
      expect(await rowNames(page)).toEqual(["BOTH"]);
      expect(path(page)).toContain("match=all");
      await page.reload({ waitUntil: "networkidle0" });
      await waitForText(page, "1–1 of 1");
      expect(await rowNames(page)).toEqual(["BOTH"]);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );
});
