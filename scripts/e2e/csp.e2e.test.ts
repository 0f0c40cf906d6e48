// Browser: content security policies. A policy built in the editor (directive picker, value tokens with checks,
// reorder) is evaluated as it is edited: a high finding appears with 'unsafe-inline' and goes when a nonce
// neutralises it, and clicking a finding selects its directive. Saved, it serializes to the exact header and <meta>
// tag and is copied; its share link works signed out. Imports read an in-test page's header and <meta> (with the
// warnings shown) and pasted text. axe in both themes.
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
  startUiHarness,
  TEST_TIMEOUT,
  waitForDialogsClosed,
  waitForText,
  type UiHarness,
} from "./harness";

let h: UiHarness;
let upstream: ReturnType<typeof Bun.serve>;
const HEADER_POLICY = "default-src 'self'; script-src 'self' 'unsafe_inline' https://cdn.example.com; unknown-directive x";
const META_POLICY = "script-src 'self'; object-src 'none'; base-uri 'none'";

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      if (path === "/header")
        return new Response("<!doctype html><title>h</title>", {
          headers: { "content-type": "text/html", "content-security-policy": HEADER_POLICY },
        });
      if (path === "/meta")
        return new Response(
          `<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="${META_POLICY}"></head><body>m</body></html>`,
          { headers: { "content-type": "text/html" } },
        );
      return new Response("not found", { status: 404 });
    },
  });
  // The in-test page is on loopback, a private target: allowed for this server only.
  h = await startUiHarness({ env: { SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true" } });
}, TEST_TIMEOUT);
afterAll(async () => {
  await h?.stop();
  upstream?.stop(true);
});

const findings = (page: Page) =>
  page.$$eval("[data-finding]", (lis: any[]) => lis.map((li) => `${li.dataset.severity}:${li.dataset.finding}`)) as Promise<string[]>;
const rows = (page: Page) =>
  page.$$eval("ul[aria-label=Directives] > li", (lis: any[]) => lis.map((li) => String(li.dataset.directive))) as Promise<string[]>;
const selectedRow = (page: Page) =>
  page.$eval("ul[aria-label=Directives] > li[aria-current=true]", (li: any) => String(li.dataset.directive)).catch(() => null) as Promise<
    string | null
  >;
const serialized = (page: Page) => page.$eval("[data-testid=serialized-line]", (e: any) => String(e.textContent)) as Promise<string>;

/** Adds a directive from the picker (its options show a description too, so they are found by value). */
async function pickDirective(page: Page, name: string) {
  await fill(page, "Add a directive", name, "combobox");
  const option = await page.waitForSelector(`[role=option][value="${name}"]`, { visible: true });
  await option!.click();
}

/** Types a value into a directive's token input and presses Enter. */
async function addValue(page: Page, directive: string, value: string) {
  const input = await byRole(page, "combobox", `${directive} values`);
  await input.click();
  await input.type(value);
  await page.keyboard.press("Enter");
}

describe("content security policies", () => {
  test(
    "build in the editor with live findings, save, serialize and copy, share",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await ui.context.overridePermissions(h.url, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
      await goto(ui, `${h.url}/csp`);
      await waitForText(page, "No policies yet");
      await click(page, "button", "New policy");
      await waitForText(page, "New content security policy");
      await fill(page, "Name", "site");
      expect(await rows(page)).toEqual(["default-src"]);
      await page.waitForSelector("[data-finding]");
      expect(await findings(page)).not.toContain("high:unsafe-inline");

      // Add script-src from the picker; the new row takes the focus.
      await pickDirective(page, "script-src");
      expect(await rows(page)).toEqual(["default-src", "script-src"]);
      expect(await selectedRow(page)).toBe("script-src");
      await addValue(page, "script-src", "'self'");
      await addValue(page, "script-src", "'unsafe-inline'");
      await page.waitForSelector(`li[data-finding="unsafe-inline"][data-severity="high"]`);
      // A typo is refused with the reason; nothing is added.
      await addValue(page, "script-src", "'unsafe_inline'");
      await waitForText(page, "'unsafe_inline': not a CSP keyword");
      // Clicking a finding selects its directive. (Escape first: script-src's open suggestion list may cover the
      // row above it, and the click would pick a suggestion instead.)
      await page.keyboard.press("Escape");
      await (await byRole(page, "combobox", "default-src values")).click();
      await page.waitForFunction(`document.querySelector("ul[aria-label=Directives] > li[aria-current=true]")?.dataset.directive === "default-src"`);
      await (await page.waitForSelector(`li[data-finding="unsafe-inline"] button`))!.click();
      await page.waitForFunction(`document.querySelector("ul[aria-label=Directives] > li[aria-current=true]")?.dataset.directive === "script-src"`);
      expect(await page.evaluate(`document.activeElement.closest("li").dataset.directive`)).toBe("script-src");
      // (The focused input's suggestion list is open; axe runs on the page, not on Mantine's open listbox.)
      await page.keyboard.press("Escape");
      expect(await axeViolations(page)).toEqual([]);
      // A nonce neutralises 'unsafe-inline': the high finding goes.
      await addValue(page, "script-src", "'nonce-rAnd0m123'");
      await page.waitForFunction(`!document.querySelector('li[data-finding="unsafe-inline"]')`);
      await pickDirective(page, "object-src");
      await addValue(page, "object-src", "'none'");
      await click(page, "button", "Move script-src up");
      expect(await rows(page)).toEqual(["script-src", "default-src", "object-src"]);
      await click(page, "button", "Create policy");
      await waitForText(page, "Policy “site” created");
      await page.waitForFunction(`/^\\/csp\\/[0-9a-f-]{36}$/.test(location.pathname)`);
      const id = page.url().split("/").pop()!;
      expect((await user.client.get(`/api/web_security/csp/${id}`)).json.policy.directives).toEqual([
        { name: "script-src", value: ["'self'", "'unsafe-inline'", "'nonce-rAnd0m123'"] },
        { name: "default-src", value: ["'self'"] },
        { name: "object-src", value: ["'none'"] },
      ]);

      // Serialize: the exact header line, copied; the <meta> tag.
      const value = "script-src 'self' 'unsafe-inline' 'nonce-rAnd0m123'; default-src 'self'; object-src 'none'";
      await page.waitForFunction(`document.querySelector("[data-testid=serialized-line]")?.textContent.startsWith("Content-Security-Policy: ")`);
      expect(await serialized(page)).toBe(`Content-Security-Policy: ${value}`);
      await click(page, "button", "Copy header");
      await waitForText(page, "Header copied");
      expect(await page.evaluate("navigator.clipboard.readText()")).toBe(`Content-Security-Policy: ${value}`);
      await click(page, "radio", "<meta> tag");
      await page.waitForFunction(`document.querySelector("[data-testid=serialized-line]")?.textContent.startsWith("<meta")`);
      expect(await serialized(page)).toBe(`<meta http-equiv="Content-Security-Policy" content="${value}">`);

      // Share: the link opens signed out, read-only, with serialize.
      await click(page, "button", "Share");
      await waitForText(page, "Share link created");
      const link = (await (await byRole(page, "textbox", "Share link")).evaluate((e: any) => String(e.value))) as string;
      expect(link).toMatch(new RegExp(`^${h.url}/shared/csp/${id}\\?share=[0-9a-f-]{36}$`));
      const anon = await h.open({ colorScheme: "dark" });
      await goto(anon, link);
      await waitForText(anon.page, "Content security policy “site”");
      await anon.page.waitForFunction(`document.querySelector("[data-testid=serialized-line]")?.textContent.startsWith("Content-Security-Policy: ")`);
      expect(await serialized(anon.page)).toBe(`Content-Security-Policy: ${value}`);
      expect(await axeViolations(anon.page)).toEqual([]);
      expectClean(anon);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "import from a page's header (warnings shown) and <meta>, and replace from pasted text",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user, colorScheme: "dark" });
      const { page } = ui;
      const up = `http://127.0.0.1:${upstream.port}`;
      await goto(ui, `${h.url}/csp`);
      await click(page, "button", "Import…");
      await fill(page, "Name", "from header");
      await click(page, "radio", "From a URL");
      await fill(page, "Page URL", `${up}/header`);
      await click(page, "radio", "Content-Security-Policy header");
      expect(await axeViolations(page)).toEqual([]);
      await clickInDialog(page, "Import");
      await waitForText(page, "Imported, with 2 warnings");
      const warnings = await page.$$eval("ul[aria-label='Import warnings'] li", (lis: any[]) => lis.map((li) => String(li.textContent)));
      expect(warnings.some((w) => w.includes("'unsafe_inline'"))).toBe(true);
      expect(warnings.some((w) => w.includes("unknown-directive"))).toBe(true);
      await clickInDialog(page, "Open the policy");
      await waitForText(page, "Policy “from header”");
      expect(await rows(page)).toEqual(["default-src", "script-src"]);

      await goto(ui, `${h.url}/csp`);
      await click(page, "button", "Import…");
      await fill(page, "Name", "from meta");
      await click(page, "radio", "From a URL");
      await fill(page, "Page URL", `${up}/meta`);
      await click(page, "radio", "<meta http-equiv> tag");
      await clickInDialog(page, "Import");
      await waitForText(page, "Policy “from meta”");
      expect(await rows(page)).toEqual(["script-src", "object-src", "base-uri"]);
      await page.waitForSelector("[data-finding]");
      expect((await findings(page)).filter((f) => f.startsWith("high:"))).toEqual([]);

      // Replace the directives from pasted text (the header name is accepted and stripped).
      await click(page, "button", "Replace from import…");
      await fill(page, "Policy", "Content-Security-Policy: default-src 'none'; img-src https:", "textbox");
      await clickInDialog(page, "Import");
      await waitForText(page, "replaced from the import");
      await waitForDialogsClosed(page);
      await page.waitForFunction(
        `[...document.querySelectorAll("ul[aria-label=Directives] > li")].map(li => li.dataset.directive).join() === "default-src,img-src"`,
      );
      const ids = (await user.client.get("/api/web_security/csp")).json.items.map((p: { name: string }) => p.name);
      expect(ids).toEqual(["from header", "from meta"]);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );
});
