// Browser: axe-core (WCAG 2 A/AA) on every page of the UI (pages.ts: the screenshot pages, dialogs included), in
// light and dark, in a viewport tall enough to hold the whole page, and on each page with its pickers and menus open: every visible combobox in turn (opened with
// ArrowDown, as a keyboard user does) and the first menu button. Nothing serious or critical may be found
// (issue 30 item 9). Several tests, a few pages each, so one slow page does not take the whole file down. Waits are
// for transitions to end (settled), not fixed sleeps.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import type { TestUser } from "../../src/tests/harness";
import { axeViolations, goto, startUiHarness, TEST_TIMEOUT, waitForText, type UiHarness } from "./harness";
import { PUBLIC_PAGES, seedPages, type UiPageSpec } from "./pages";
import { startTrackerFixtures, TRACKER_SERVER_ENV, type TrackerFixtures } from "./tracker-fixtures";

let h: UiHarness;
let fixtures: TrackerFixtures;
let user: TestUser;
let pages: UiPageSpec[] = [];
beforeAll(async () => {
  fixtures = startTrackerFixtures();
  h = await startUiHarness({ env: TRACKER_SERVER_ENV });
  ({ user, pages } = await seedPages(h, fixtures));
}, TEST_TIMEOUT * 2);
afterAll(async () => {
  await h?.stop();
  fixtures?.stop();
});

/** At most this many pickers per page and theme (the first ones: forms repeat the same kinds further down). */
const MAX_PICKERS = 4;

/**
 * Waits for what a transition would change to settle (instead of sleeping its length): no CSS transition or
 * animation running in the document and, with `sel`, its element at full opacity (`gone`: no such element visible).
 * Gives up after 3 s like the waits around it (axe then reports what it sees).
 */
const settled = (page: Page, sel?: string, gone = false) =>
  page
    .waitForFunction(
      `(() => {
        const sel = ${JSON.stringify(sel ?? null)};
        if (sel !== null) {
          const e = [...document.querySelectorAll(sel)].find((x) => x.getClientRects().length > 0);
          if (${gone} ? e : !e) return false;
          for (let x = e; !${gone} && x; x = x.parentElement) if (getComputedStyle(x).opacity !== "1") return false;
        }
        // (endless ones, a spinner's, never settle: only those that end count)
        return document.getAnimations().every((a) => a.playState !== "running" || a.effect?.getComputedTiming().endTime === Infinity);
      })()`,
      { timeout: 3_000, polling: 25 },
    )
    .catch(() => {});

/** The visible, enabled comboboxes (Select, MultiSelect, TagsInput), in page order, by index. */
const comboboxes = (page: Page) =>
  page.$$eval("[role=combobox]", (els: any[]) =>
    els.map((e, i) => (e.getClientRects().length > 0 && !e.disabled && !e.readOnly ? i : -1)).filter((i) => i >= 0),
  ) as Promise<number[]>;

/** Opens picker `i` with the keyboard, runs axe with its list shown, closes it again. */
async function axeWithPicker(page: Page, i: number): Promise<{ label: string; found: string[] }> {
  const label = (await page.evaluate(`(() => {
    const e = document.querySelectorAll("[role=combobox]")[${i}];
    e.focus();
    return (e.getAttribute("aria-label") || (e.labels && e.labels[0] && e.labels[0].textContent) || e.id).trim();
  })()`)) as string;
  await page.keyboard.press("ArrowDown");
  await page
    .waitForFunction(
      `[...document.querySelectorAll("[role=option], [role=listbox]")].some((o) => o.getClientRects().length > 0 && o.getBoundingClientRect().height > 0)`,
      { timeout: 3_000 },
    )
    .catch(() => {});
  await settled(page, "[role=listbox]"); // the dropdown's entry transition
  // The page itself was checked already: now only what opening the picker changed (its list and its input).
  const found = await axeViolations(page, ["[role=listbox]", "[role=combobox][aria-expanded=true]"]);
  await page.keyboard.press("Escape");
  await settled(page, "[role=listbox]", true);
  return { label, found };
}

/** Opens the first menu button (row actions, "more actions"), runs axe with the menu shown, closes it. */
async function axeWithMenu(page: Page): Promise<{ label: string; found: string[] } | null> {
  const label = (await page.evaluate(`(() => {
    const b = [...document.querySelectorAll("main button[aria-haspopup=menu]")].find((e) => e.getClientRects().length > 0);
    if (!b) return null;
    b.click();
    return b.getAttribute("aria-label") || b.textContent;
  })()`)) as string | null;
  if (label === null) return null;
  await settled(page, "[role=menu]");
  const found = await axeViolations(page, ["[role=menu]", "button[aria-haspopup=menu][aria-expanded=true]"]);
  await page.keyboard.press("Escape");
  return { label, found };
}

async function sweep(names: (name: string) => boolean) {
  const findings: string[] = [];
  let checked = 0;
  for (const [name, url, text, then] of pages.filter(([n]) => names(n))) {
    for (const scheme of ["light", "dark"] as const) {
      // Tall: axe judges contrast only for what is in the viewport (a diff or an editor further down would be skipped).
      const ui = await h.open({ user: PUBLIC_PAGES.includes(name) ? undefined : user, colorScheme: scheme, height: 1800 });
      const { page } = ui;
      await goto(ui, h.url + url);
      if (text) await waitForText(page, text);
      if (then) await then(page);
      await settled(page);
      for (const v of await axeViolations(page)) findings.push(`${name} ${scheme}: ${v}`);
      for (const i of (await comboboxes(page)).slice(0, MAX_PICKERS)) {
        const { label, found } = await axeWithPicker(page, i);
        for (const v of found) findings.push(`${name} ${scheme}, picker “${label}” open: ${v}`);
      }
      const menu = await axeWithMenu(page);
      for (const v of menu?.found ?? []) findings.push(`${name} ${scheme}, menu “${menu!.label}” open: ${v}`);
      checked++;
      await ui.context.close();
    }
  }
  expect(checked).toBeGreaterThan(0);
  // Unique lines: the same finding on the same page may come back with each picker.
  expect([...new Set(findings)]).toEqual([]);
}

const GROUPS: [string, (n: string) => boolean][] = [
  [
    "sign-in pages, home, tags, secrets, scripts, settings",
    (n) =>
      [
        "signin",
        "signup",
        "forgot",
        "recover",
        "home",
        "tags",
        "tag-edit",
        "secrets",
        "secret-edit",
        "scripts",
        "script-new",
        "settings",
        "data-import",
        "data-import-file",
        "tag-delete",
      ].includes(n),
  ],
  ["certificate templates and private keys", (n) => n.startsWith("template") || n.startsWith("key")],
  ["content security policies", (n) => n.startsWith("csp")],
  ["responders", (n) => n.startsWith("responder")],
  ["API trackers", (n) => n.startsWith("api-tracker")],
  ["page trackers, not found", (n) => n.startsWith("page-tracker") || n === "not-found"],
  ["search palette, script checks", (n) => n.startsWith("search-") || ["script-lint", "script-confirm", "script-saved-warning"].includes(n)],
  ["help pages", (n) => n.startsWith("help")],
];

/**
 * Code text whose colour is under 4.5:1 against what is behind it, inside `root`: every text-bearing element of the
 * editors (axe leaves CodeMirror's text "incomplete": its background is drawn by layers it cannot see through).
 */
const lowContrastCode = (page: Page, root: string) =>
  page.evaluate(`(() => {
    const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
    const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
    const background = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c; } return [255, 255, 255]; };
    const out = [];
    for (const el of document.querySelectorAll(${JSON.stringify(root)} + " .cm-content span, " + ${JSON.stringify(root)} + " .cm-content .cm-line")) {
      const own = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join("").trim();
      if (!own) continue;
      const fg = rgb(getComputedStyle(el).color), bg = background(el);
      const [a, b] = [lum(fg), lum(bg)];
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      if (ratio < 4.5) out.push(own.slice(0, 30) + " " + ratio.toFixed(2) + ":1 (" + getComputedStyle(el).color + " on rgb(" + bg.slice(0, 3).join(", ") + "))");
    }
    return [...new Set(out)];
  })()`) as Promise<string[]>;

describe("accessibility (axe, WCAG 2 A/AA) of every page, with its pickers and menus open", () => {
  test(
    "code and diffs: every token at 4.5:1 or more, in light and dark (a JSON body, a script with a template string, changed numbers and words)",
    async () => {
      const found: string[] = [];
      for (const [name, selector] of [
        ["responder-edit-static", "[data-testid=code-editor]"],
        ["responder-edit", "[data-testid=code-editor]"],
        ["api-tracker", "[data-testid=diff-view]"],
        ["api-tracker-inline", "[data-testid=diff-view]"],
        ["page-tracker", "[data-testid=diff-view]"],
      ] as const) {
        const [, url, text] = pages.find(([n]) => n === name)!;
        for (const scheme of ["light", "dark"] as const) {
          const ui = await h.open({ user, colorScheme: scheme, height: 1800 });
          await goto(ui, h.url + url);
          await waitForText(ui.page, text!);
          await ui.page.waitForSelector(`${selector} .cm-content`, { timeout: 15_000 });
          await settled(ui.page);
          expect(await ui.page.$$eval(`${selector} .cm-content`, (els: any[]) => els.length)).toBeGreaterThan(0);
          for (const f of await lowContrastCode(ui.page, selector)) found.push(`${name} ${scheme}: ${f}`);
          await ui.context.close();
        }
      }
      expect(found).toEqual([]);
    },
    TEST_TIMEOUT * 2,
  );

  for (const [title, names] of GROUPS) test(title, () => sweep(names), TEST_TIMEOUT * 8);

  test("every page is in one of the groups above", () => {
    expect(pages.map(([n]) => n).filter((n) => !GROUPS.some(([, f]) => f(n)))).toEqual([]);
  });
});
