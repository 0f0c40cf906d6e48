// Browser: Settings → Your data. One account exports (chosen types, secret values under a passphrase) and the file
// downloads under the API's name; another account previews it (totals, conflicts, in apply mode what would be
// deleted), makes per-item choices, imports it with the passphrase and sees the items. axe in both themes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
  waitForDownload,
  waitForText,
  type UiHarness,
} from "./harness";

let h: UiHarness;
const dir = mkdtempSync(join(tmpdir(), "secbox-e2e-dl-"));
beforeAll(async () => {
  h = await startUiHarness();
}, TEST_TIMEOUT);
afterAll(async () => {
  await h?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const tableRows = (page: Page, label: string) =>
  page.$$eval(`table[aria-label='${label}'] tbody tr`, (trs: any[]) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].map((td: any) => String(td.textContent).trim()).join(" | ")),
  ) as Promise<string[]>;

describe("data export and import", () => {
  test(
    "export from one account, preview and import into another, see the items",
    async () => {
      const ana = await h.srv.createUser();
      const a = ana.client;
      const prod = (await a.post("/api/user/tags", { name: "prod", color: "danger" })).json;
      await a.post("/api/user/tags", { name: "staging", color: "warning" });
      await a.post("/api/user/secrets", { name: "API_TOKEN", value: "tok-123", tagIds: [prod.id] });
      await a.post("/api/user/scripts", { name: "sign", scriptType: "universal", content: "// x\n" });
      await a.post("/api/web_security/csp", { name: "site", content: { type: "serialized", value: "default-src 'self'" } });

      const ui = await h.open({ user: ana, downloads: dir });
      await goto(ui, `${h.url}/settings`);
      await waitForText(ui.page, "Your data");
      // Not every type: responders and trackers stay out.
      await click(ui.page, "checkbox", "Responders");
      await fill(ui.page, "Secrets passphrase (optional)", "short");
      await waitForText(ui.page, "At least 8 characters");
      await fill(ui.page, "Secrets passphrase (optional)", "export-pass-1");
      expect(await axeViolations(ui.page)).toEqual([]);
      await click(ui.page, "button", "Export");
      await waitForText(ui.page, "Downloaded secbox-export-");
      const fileName = /Downloaded (secbox-export-\S+)/.exec((await ui.page.evaluate("document.body.innerText")) as string)?.[1];
      expect(fileName).toMatch(/^secbox-export-\d{8}-\d{6}\.json$/);
      const file = JSON.parse(new TextDecoder().decode(await waitForDownload(dir, fileName!)));
      expect(file.format).toBe("secbox-export");
      expect(Object.keys(file.data).sort()).toEqual([
        "apiTrackers",
        "certificateTemplates",
        "contentSecurityPolicies",
        "pageTrackers",
        "privateKeys",
        "scripts",
        "secrets",
        "settings",
        "tags",
      ]);
      expect(file.secretsEncryption).toBeDefined();
      expectClean(ui);

      // Another account: it already has a tag "prod" (a conflict) and one the file lacks.
      const ben = await h.srv.createUser();
      await ben.client.post("/api/user/tags", { name: "prod", color: "primary" });
      await ben.client.post("/api/user/tags", { name: "old", color: "primary" });
      const ui2 = await h.open({ user: ben, colorScheme: "dark" });
      const { page } = ui2;
      await goto(ui2, `${h.url}/settings`);
      await click(page, "button", "Import from a file…");
      const input = await page.waitForSelector("[role=dialog] input[type=file]");
      await input!.uploadFile(join(dir, fileName!));
      await page.waitForFunction(`[...document.querySelectorAll("[role=dialog] button")].some(b => b.textContent === "Preview" && !b.disabled)`);
      // Apply mode lists what would be deleted; back, and merge instead.
      await click(page, "radio", "Apply");
      await clickInDialog(page, "Preview");
      await waitForText(page, "Not in the file: tick what to delete");
      await waitForText(page, "Tags: old");
      await clickInDialog(page, "Back");
      await click(page, "radio", "Merge");
      await clickInDialog(page, "Preview");
      await waitForText(page, "Choose tags");
      expect(await tableRows(page, "Import preview")).toEqual([
        "Tags | 2 | 1",
        "Scripts | 1 | —",
        "Secrets | 1 | —",
        "Certificate templates | 0 | —",
        "Private keys | 0 | —",
        "Content security policies | 1 | —",
        "Page trackers | 0 | —",
        "API trackers | 0 | —",
      ]);
      // Per item: keep the existing "prod" instead of a renamed copy; leave the script out.
      await click(page, "button", "Choose tags 1 already exist");
      await click(page, "combobox", "If “prod” exists");
      await click(page, "option", "Keep the existing one");
      await click(page, "button", "Choose scripts");
      await click(page, "checkbox", "sign");
      expect(await axeViolations(page)).toEqual([]);
      await clickInDialog(page, "Import");
      await waitForText(page, "The passphrase");
      await fill(page, "Secrets passphrase", "export-pass-1");
      await clickInDialog(page, "Import");
      await waitForText(page, "Everything was imported in one step");
      expect(await tableRows(page, "Import result")).toEqual([
        "Tags | 1 | 0 | 1 | 0",
        "Scripts | 0 | 0 | 1 | 0",
        "Secrets | 1 | 0 | 0 | 0",
        "Certificate templates | 0 | 0 | 0 | 0",
        "Private keys | 0 | 0 | 0 | 0",
        "Content security policies | 1 | 0 | 0 | 0",
        "Page trackers | 0 | 0 | 0 | 0",
        "API trackers | 0 | 0 | 0 | 0",
      ]);
      await clickInDialog(page, "Done");

      // The items are there: in the UI and, for the secret's value, on the server.
      await goto(ui2, `${h.url}/csp`);
      await waitForText(page, "site");
      await goto(ui2, `${h.url}/tags`);
      await waitForText(page, "staging");
      expect((await ben.client.get("/api/user/tags")).json.items.map((t: { name: string }) => t.name)).toEqual(["old", "prod", "staging"]);
      expect((await ben.client.get("/api/user/scripts")).json.total).toBe(0);
      expect(await h.srv.services.secrets.valuesFor(ben.id, "all")).toEqual({ API_TOKEN: "tok-123" });
      expectClean(ui2, ["400 POST /api/user/data/_import"]);
    },
    TEST_TIMEOUT,
  );
});
