// Browser: scripts — create in the CodeMirror editor (lazy chunk) with the size counter, edit, leaving with
// unsaved changes asks first, duplicate, sort by type, delete; axe on the editor page in both themes.
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

const rowNames = (page: Page) =>
  page.$$eval(".mantine-datatable tbody tr td:first-child", (tds: any[]) => tds.map((td) => String(td.innerText).trim())) as Promise<string[]>;
const counter = (page: Page) => page.$eval("[data-testid=size-counter]", (e: any) => String(e.textContent)) as Promise<string>;

describe("scripts pages", () => {
  test(
    "create in the editor, size counter, edit, unsaved-changes guard, duplicate, delete",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/scripts`);
      await waitForText(page, "No scripts yet");
      const before = ui.requests.filter((u) => u.includes("/assets/code-mirror-")).length;
      expect(before).toBe(0); // the editor is not part of the first load

      await click(page, "button", "New script");
      await waitForText(page, "New script");
      expect(path(page)).toBe("/scripts/new");
      await page.waitForSelector(".cm-content", { visible: true });
      expect(ui.requests.some((u) => u.includes("/assets/code-mirror-"))).toBe(true);
      expect(await axeViolations(page)).toEqual([]);

      await fill(page, "Name", "echo");
      await typeInEditor(page, "return { body: context.query };");
      await page.waitForFunction(`document.querySelector("[data-testid=size-counter]").textContent.startsWith("31 /")`);
      expect(await counter(page)).toBe("31 / 51,200 bytes");
      await click(page, "button", "Create script");
      await waitForText(page, "Script “echo” created");
      await page.waitForFunction(`/^\\/scripts\\/[0-9a-f-]{36}$/.test(location.pathname)`);
      const id = path(page).split("/")[2]!;
      const stored = (await user.client.get(`/api/user/scripts/${id}`)).json;
      expect([stored.name, stored.scriptType, stored.content]).toEqual(["echo", "responder", "return { body: context.query };"]);

      // An edit makes the form dirty.
      await typeInEditor(page, "x");
      await page.waitForFunction(`document.querySelector("[data-testid=size-counter]").textContent.startsWith("1 /")`);

      // Unsaved changes: leaving through the navigation asks first; "Keep editing" stays.
      await click(page, "link", "Tags");
      await waitForText(page, "Discard unsaved changes?");
      await click(page, "button", "Keep editing");
      await waitForDialogsClosed(page);
      expect(path(page)).toBe(`/scripts/${id}`);
      await click(page, "link", "Tags");
      await click(page, "button", "Discard changes");
      await waitForText(page, "Coloured labels");
      expect((await user.client.get(`/api/user/scripts/${id}`)).json.content).toBe("return { body: context.query };");

      // Duplicate from the list keeps type, content and tags under a new name.
      await goto(ui, `${h.url}/scripts`);
      await click(page, "button", "Actions for echo");
      await click(page, "menuitem", "Duplicate");
      await waitForText(page, "Duplicate script");
      expect(await page.$eval("input[value='echo (copy)']", (e: any) => e.value)).toBe("echo (copy)");
      await click(page, "button", "Create script");
      await waitForText(page, "Script “echo (copy)” created");
      await goto(ui, `${h.url}/scripts`);
      await waitForText(page, "1–2 of 2");
      expect(await rowNames(page)).toEqual(["echo", "echo (copy)"]);

      // Delete from the editor page.
      await click(page, "link", "echo (copy)");
      await click(page, "button", "Delete");
      await clickInDialog(page, "Delete");
      await waitForText(page, "1–1 of 1");
      expect(path(page)).toBe("/scripts");
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "the size limit: over 51,200 bytes the counter says so and saving is disabled; dark editor passes axe",
    async () => {
      const user = await h.srv.createUser();
      const big = "a".repeat(51_190);
      const created = (await user.client.post("/api/user/scripts", { name: "big", scriptType: "universal", content: big })).json;
      const ui = await h.open({ user, colorScheme: "dark" });
      const { page } = ui;
      await goto(ui, `${h.url}/scripts/${created.id}`);
      await page.waitForSelector(".cm-content", { visible: true });
      await waitForText(page, "51,190 / 51,200 bytes");
      expect(await axeViolations(page)).toEqual([]);
      // Type past the limit at the end of the document.
      await page.click(".cm-content");
      await page.keyboard.down("Control");
      await page.keyboard.press("End");
      await page.keyboard.up("Control");
      await page.keyboard.type("é".repeat(6));
      await waitForText(page, "51,202 / 51,200 bytes");
      expect(await page.$eval("button[type=submit]", (b: any) => b.disabled)).toBe(true);
      await page.keyboard.press("Backspace");
      await waitForText(page, "51,200 / 51,200 bytes");
      expect(await page.$eval("button[type=submit]", (b: any) => b.disabled)).toBe(false);
      await click(page, "button", "Save");
      await waitForText(page, "Script “big” saved");
      expect(new TextEncoder().encode((await user.client.get(`/api/user/scripts/${created.id}`)).json.content).byteLength).toBe(51_200);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );
});
