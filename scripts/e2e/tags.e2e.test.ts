// Browser: the list-page pattern on tags — empty state, create, edit, duplicate, search, sort, paging (all in the
// URL, reload-safe), delete with confirmation; axe in light and dark.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TestUser } from "../../src/tests/harness";
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
  waitForNoText,
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

const rowNames = (page: import("puppeteer-core").Page) =>
  page.$$eval(".mantine-datatable tbody tr td:first-child", (tds: any[]) => tds.map((td) => String(td.innerText).trim())) as Promise<string[]>;

describe("tags page", () => {
  test(
    "empty state, create, edit, duplicate, delete",
    async () => {
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/tags`);
      await waitForText(page, "No tags yet");
      expect(await axeViolations(page)).toEqual([]);

      await click(page, "button", "New tag");
      expect(path(page)).toBe("/tags?create=1");
      await fill(page, "Name", "Prod");
      await click(page, "radio", "Danger (red)");
      expect(await axeViolations(page)).toEqual([]);
      await click(page, "button", "Create tag");
      await waitForDialogsClosed(page);
      await waitForText(page, "Tag “prod” created");
      expect(await rowNames(page)).toEqual(["prod"]);
      const stored = (await user.client.get("/api/user/tags")).json.items;
      expect(stored.map((t: any) => [t.name, t.color])).toEqual([["prod", "danger"]]);

      // A duplicate name: the API's 409 message appears in the dialog.
      await click(page, "button", "New tag");
      await fill(page, "Name", "prod");
      await click(page, "button", "Create tag");
      await waitForText(page, "already");
      await click(page, "button", "Cancel");
      // The form was changed: closing asks first.
      await waitForText(page, "Discard unsaved changes?");
      await click(page, "button", "Discard changes");
      await waitForDialogsClosed(page);

      // Edit through the name: a custom hex colour.
      await click(page, "button", "Edit tag prod");
      expect(path(page)).toBe(`/tags?edit=${stored[0].id}`);
      await click(page, "radio", "Custom colour");
      await fill(page, "Custom colour (hex)", "#1864AB");
      await click(page, "button", "Save");
      await waitForDialogsClosed(page);
      expect((await user.client.get(`/api/user/tags/${stored[0].id}`)).json.color).toBe("#1864ab");

      // The edit dialog is reload-safe.
      await goto(ui, `${h.url}/tags?edit=${stored[0].id}`);
      await waitForText(page, "Edit tag");
      await page.keyboard.press("Escape");
      await waitForDialogsClosed(page);
      expect(path(page)).toBe("/tags");

      // Duplicate from the row menu.
      await click(page, "button", "Actions for prod");
      await click(page, "menuitem", "Duplicate");
      await waitForText(page, "Duplicate tag");
      await click(page, "button", "Create tag");
      await waitForDialogsClosed(page);
      await waitForText(page, "prod-copy");

      // Delete asks first; cancel keeps it, confirm deletes it.
      await click(page, "button", "Actions for prod-copy");
      await click(page, "menuitem", "Delete tag");
      await waitForText(page, "Delete tag “prod-copy”?");
      await click(page, "button", "Cancel");
      await waitForDialogsClosed(page);
      expect((await user.client.get("/api/user/tags")).json.total).toBe(2);
      await click(page, "button", "Actions for prod-copy");
      await click(page, "menuitem", "Delete tag");
      await clickInDialog(page, "Delete");
      await waitForDialogsClosed(page);
      await waitForNoText(page, "prod-copy");
      expect((await user.client.get("/api/user/tags")).json.total).toBe(1);
      expectClean(ui, ["409 POST /api/user/tags"]);
    },
    TEST_TIMEOUT,
  );

  test(
    "search, sort and paging live in the URL and survive a reload; dark theme passes axe",
    async () => {
      const u = await h.srv.createUser();
      for (let i = 1; i <= 17; i++) await u.client.post("/api/user/tags", { name: `t${String(i).padStart(2, "0")}` });
      await u.client.post("/api/user/tags", { name: "other" });
      const ui = await h.open({ user: u, colorScheme: "dark" });
      const { page } = ui;
      await goto(ui, `${h.url}/tags`);
      await waitForText(page, "1–15 of 18");
      expect((await rowNames(page))[0]).toBe("other");
      expect(await axeViolations(page)).toEqual([]);

      // Page 2 through the pagination control.
      await click(page, "button", "Next page");
      await waitForText(page, "16–18 of 18");
      expect(path(page)).toBe("/tags?page=2");
      expect(await rowNames(page)).toEqual(["t15", "t16", "t17"]);
      await page.reload({ waitUntil: "networkidle0" });
      await waitForText(page, "16–18 of 18");
      // Back goes to page 1.
      await page.goBack({ waitUntil: "networkidle0" });
      await waitForText(page, "1–15 of 18");

      // Sort by name descending: click the sortable header (ascending is the default).
      await page.click('th[data-accessor="name"]');
      await waitForText(page, "1–15 of 18");
      await page.waitForFunction(`location.search.includes("order=desc")`);
      expect((await rowNames(page))[0]).toBe("t17");

      // Search: the query goes to the URL (replacing the entry) and the list follows.
      await fill(page, "Search", "t1");
      await page.waitForFunction(`location.search.includes("q=t1")`);
      await waitForText(page, "1–8 of 8");
      expect(await rowNames(page)).toEqual(["t17", "t16", "t15", "t14", "t13", "t12", "t11", "t10"]);
      await page.reload({ waitUntil: "networkidle0" });
      await waitForText(page, "1–8 of 8");
      expect(await page.$eval("input[value='t1']", (e: any) => e.value)).toBe("t1");
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );
});
