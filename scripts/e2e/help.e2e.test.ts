// Browser: the manual inside the app (issue 30, README split). Every topic at /help/<topic> (a deep link, as a
// bookmark or the README's map opens it) renders its Markdown — headings with GitHub's ids, code blocks, tables — in
// light and dark with no request leaving loopback, no console error and nothing axe calls serious; its links are
// the app's own (a topic → /help/<topic>, the default address → this server, the README → plain text). The renderer
// and the pages are a lazy chunk: the start page does not load it. An in-app link between topics changes the route
// without reloading and lands on its section; each tool's page has a Help link to its topic; the shell's navigation
// and account menu lead to the index.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "puppeteer-core";
import type { TestUser } from "../../src/tests/harness";
import { HELP_TOPICS, type HelpTopicSlug } from "../../web/features/help/topics";
import { axeViolations, byRole, click, expectClean, goto, sleep, startUiHarness, TEST_TIMEOUT, waitForText, type UiHarness } from "./harness";

let h: UiHarness;
let user: TestUser;
beforeAll(async () => {
  h = await startUiHarness();
  user = await h.srv.createUser();
}, TEST_TIMEOUT);
afterAll(() => h?.stop());

/** A topic's top heading, as its Markdown file has it. */
const titleOf = (slug: HelpTopicSlug) =>
  /^# (.+)$/m.exec(readFileSync(join(import.meta.dir, `../../web/features/help/pages/${slug}.md`), "utf8"))![1]!;
const h1 = (page: Page) => page.evaluate(`document.querySelector("main h1")?.textContent ?? ""`) as Promise<string>;
const waitForH1 = (page: Page, text: string) =>
  page.waitForFunction(`document.querySelector("main h1")?.textContent === ${JSON.stringify(text)}`, { timeout: 15_000 });
const location = (page: Page) => page.evaluate(`location.pathname + location.hash`) as Promise<string>;
/** Whether the element with this id is at the top of the viewport (below the fixed header), as an anchor puts it. */
const atTop = (page: Page, id: string) =>
  page.evaluate(
    `(() => { const e = document.getElementById(${JSON.stringify(id)}); if (!e) return false; const t = e.getBoundingClientRect().top; return t >= 40 && t < 140; })()`,
  ) as Promise<boolean>;
const helpChunkRequested = (requests: string[]) => requests.some((u) => /\/assets\/help-page-[\w-]+\.js$/.test(new URL(u).pathname));

describe("help pages", () => {
  test("the start page does not load the help chunk (the renderer is not on the first load)", async () => {
    const home = await h.open({ user });
    await goto(home, `${h.url}/`);
    await waitForText(home.page, "Pick a tool");
    expect(home.requests.some((u) => new URL(u).pathname.startsWith("/assets/"))).toBe(true);
    expect(helpChunkRequested(home.requests)).toBe(false);
    expectClean(home);
    await home.context.close();
  });

  for (const scheme of ["light", "dark"] as const) {
    test(
      `every topic at /help/<topic>, ${scheme}: its page rendered (sections, code, tables), app links only, axe clean, nothing off loopback`,
      async () => {
        const findings: string[] = [];
        const ui = await h.open({ user, colorScheme: scheme, height: 1200 });
        const { page } = ui;
        for (const t of HELP_TOPICS) {
          await goto(ui, `${h.url}/help/${t.slug}`);
          await waitForH1(page, titleOf(t.slug));
          const shape = (await page.evaluate(`(() => {
            const main = document.querySelector("main");
            const links = [...main.querySelectorAll("a[href]")].map((a) => a.getAttribute("href"));
            return {
              h1: main.querySelectorAll("h1").length,
              sections: [...main.querySelectorAll("h2[id]")].map((e) => e.id),
              code: main.querySelectorAll("pre").length,
              tables: main.querySelectorAll("table").length,
              images: main.querySelectorAll("img").length,
              mdLinks: links.filter((l) => /\\.md(#|$)/.test(l)),
              defaultAddress: links.filter((l) => l.includes("localhost:7070")),
              scheme: document.documentElement.getAttribute("data-mantine-color-scheme"),
            };
          })()`)) as {
            h1: number;
            sections: string[];
            code: number;
            tables: number;
            images: number;
            mdLinks: string[];
            defaultAddress: string[];
            scheme: string;
          };
          expect(shape.h1).toBe(1);
          expect(shape.sections.length).toBeGreaterThan(0);
          expect(shape.code).toBeGreaterThan(0);
          expect(shape.images).toBe(0);
          expect(shape.mdLinks).toEqual([]);
          expect(shape.defaultAddress).toEqual([]);
          expect(shape.scheme).toBe(scheme);
          if (t.slug === "csp" || t.slug === "responders") expect(shape.tables).toBeGreaterThan(0);
          for (const v of await axeViolations(page)) findings.push(`${t.slug} ${scheme}: ${v}`);
        }
        expect(helpChunkRequested(ui.requests)).toBe(true);
        expectClean(ui);
        await ui.context.close();
        expect(findings).toEqual([]);
      },
      TEST_TIMEOUT * 3,
    );
  }

  test(
    "links: a topic to another topic's section in-app (no reload, scrolled to it, back works), a section of the same page, this server's address, the README as text",
    async () => {
      const ui = await h.open({ user, height: 700 });
      const { page } = ui;
      await goto(ui, `${h.url}/help/page-trackers`);
      await waitForH1(page, titleOf("page-trackers"));
      await page.evaluate(`window.__sameDocument = true`);
      // "described under [Trackers in the browser](./api-trackers.md#trackers-in-the-browser)"
      expect(await page.$eval(`main a[href="/help/api-trackers#trackers-in-the-browser"]`, (a: any) => String(a.textContent))).toBe(
        "Trackers in the browser",
      );
      await page.click(`main a[href="/help/api-trackers#trackers-in-the-browser"]`);
      await waitForH1(page, titleOf("api-trackers"));
      expect(await location(page)).toBe("/help/api-trackers#trackers-in-the-browser");
      expect(await page.evaluate(`window.__sameDocument === true`)).toBe(true);
      await page.waitForFunction(
        `(() => { const t = document.getElementById("trackers-in-the-browser")?.getBoundingClientRect().top; return t !== undefined && t >= 40 && t < 140; })()`,
        { timeout: 5_000 },
      );
      // A further section through "On this page" (wide screens): the same document, scrolled there.
      await page.setViewport({ width: 1366, height: 700 });
      await page.click(`nav[aria-labelledby="help-toc-title"] a[href="#with-the-api"]`);
      await page.waitForFunction(`location.hash === "#with-the-api"`);
      await sleep(200);
      expect(await atTop(page, "with-the-api")).toBe(true);
      // Back to the page the link was on.
      await page.goBack();
      await page.waitForFunction(`location.hash === "#trackers-in-the-browser"`);
      await page.goBack();
      await waitForH1(page, titleOf("page-trackers"));
      expect(await page.evaluate(`window.__sameDocument === true`)).toBe(true);

      // A deep link with a section opens scrolled to it (as the README map's links and bookmarks do).
      await goto(ui, `${h.url}/help/responders#long-hits`);
      await waitForH1(page, titleOf("responders"));
      await page.waitForFunction(
        `(() => { const t = document.getElementById("long-hits")?.getBoundingClientRect().top; return t !== undefined && t >= 40 && t < 140; })()`,
        { timeout: 5_000 },
      );
      // The README is not served: its sections are named, not linked.
      expect(await page.$$eval(`main em`, (els: any[]) => els.map((e) => String(e.textContent)))).toContain("Security model");
      // The address the pages use goes to this server.
      await goto(ui, `${h.url}/help/api`);
      await waitForH1(page, titleOf("api"));
      expect(await page.$$eval(`main a[href="/api-docs"]`, (els: any[]) => els.length)).toBeGreaterThan(0);
      // An unknown topic says so and leads to the index.
      await goto(ui, `${h.url}/help/nope`);
      await waitForH1(page, "Help topic not found");
      await click(page, "link", "See every help topic");
      await waitForH1(page, "Help");
      expect(await page.$$eval(`main a[href^="/help/"]`, (els: any[]) => els.map((e) => String(e.getAttribute("href"))))).toEqual(
        HELP_TOPICS.map((t) => `/help/${t.slug}`),
      );
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "each tool's page has a Help link to its topic; the navigation and the account menu lead to the index",
    async () => {
      const ui = await h.open({ user });
      const { page } = ui;
      const tools: [url: string, heading: string, slug: HelpTopicSlug, section?: string][] = [
        ["/responders", "Responders", "responders"],
        ["/trackers/apis", "API trackers", "api-trackers"],
        ["/trackers/pages", "Page trackers", "page-trackers"],
        ["/certificates/templates", "Certificate templates", "certificates"],
        ["/certificates/private-keys", "Private keys", "certificates", "private-keys"],
        ["/csp", "Content security policies", "csp"],
        ["/secrets", "Secrets", "data", "tags-secrets-scripts-settings"],
        ["/tags", "Tags", "data", "tags-secrets-scripts-settings"],
        ["/scripts", "Scripts", "sandbox"],
        ["/settings", "Settings", "data"],
        ["/responders/new", "New responder", "responders"],
      ];
      for (const [url, heading, slug, section] of tools) {
        await goto(ui, h.url + url);
        await waitForH1(page, heading);
        const topic = HELP_TOPICS.find((t) => t.slug === slug)!;
        await click(page, "link", `Help: ${topic.title}`);
        await waitForH1(page, titleOf(slug));
        expect(await location(page)).toBe(`/help/${slug}${section ? `#${section}` : ""}`);
        if (section)
          await page.waitForFunction(
            `(() => { const t = document.getElementById(${JSON.stringify(section)})?.getBoundingClientRect().top; return t !== undefined && t >= 40 && t < 140; })()`,
            { timeout: 5_000 },
          );
      }
      // The navigation's Help entry (marked current on a help page) and the account menu's.
      await goto(ui, `${h.url}/`);
      await waitForText(page, "Pick a tool");
      await click(page, "link", "Help");
      await waitForH1(page, "Help");
      expect(await page.$eval(`nav a[href="/help"]`, (a: any) => a.getAttribute("aria-current"))).toBe("page");
      await goto(ui, `${h.url}/tags`);
      await waitForH1(page, "Tags");
      await (await byRole(page, "button", `Account menu: ${user.email}`)).click();
      await click(page, "menuitem", "Help");
      await waitForH1(page, "Help");
      expect(await h1(page)).toBe("Help");
      expectClean(ui);
    },
    TEST_TIMEOUT * 2,
  );
});
