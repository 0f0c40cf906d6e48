// Browser-test harness for the web UI: a real server on loopback (src/tests/harness.ts, UI built in memory as in
// `bun run start`), the system Chromium through puppeteer-core (with the engine's locked-down flags,
// src/features/trackers/page/chromium-flags.ts), one browser per test file, a fresh incognito context per page. Every page records the requests it makes and what it logs, so a test can assert that nothing
// left loopback and that the page logged no error (`expectClean`), and can run axe-core (WCAG 2 A/AA) on it.
//
// Selector rules under Bun (shared/notes/ui.md §5): puppeteer's ::-p-text()/::-p-aria() are broken under Bun; use
// CSS or the legacy `aria/Name[role="button"]` and `text/…` prefixes (helpers below).
import { expect } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type BrowserContext, type HTTPRequest, type Page } from "puppeteer-core";
import { startTestServer, type TestServer, type TestServerOptions, type TestUser } from "../../src/tests/harness";
import { uiAssets } from "../../src/platform/ui/assets";
import { disableFeaturesFlag, lockedDownFlags } from "../../src/features/trackers/page/chromium-flags";

export const CHROMIUM = process.env.SECBOX_TEST_CHROMIUM ?? "/usr/bin/chromium";
/** Per-test timeout: generous, a loaded 2-core machine is slow and a timeout kills the file's browser. */
export const TEST_TIMEOUT = 60_000;
const AXE_SOURCE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

export interface UiPage {
  page: Page;
  context: BrowserContext;
  /** Every URL requested. */
  requests: string[];
  /** console.error/warn messages, uncaught exceptions and failed requests. */
  problems: string[];
  /** Responses with status >= 400, as "<status> <METHOD> <path>" (Chromium also logs each as a console error). */
  httpErrors: string[];
}

export interface UiHarness {
  srv: TestServer;
  browser: Browser;
  url: string;
  /** A fresh incognito page; `user` signs it in (session cookie) before the first navigation. */
  open(opts?: { user?: TestUser; width?: number; height?: number; colorScheme?: "light" | "dark"; downloads?: string }): Promise<UiPage>;
  stop(): Promise<void>;
}

const isLoopback = (u: string) => {
  try {
    const { protocol, hostname } = new URL(u);
    if (protocol === "data:" || protocol === "blob:" || protocol === "about:") return true;
    // *.localhost is loopback by definition (RFC 6761; Chromium resolves it so without DNS): responder hosts in tests.
    return hostname === "127.0.0.1" || hostname === "localhost" || hostname === "[::1]" || hostname.endsWith(".localhost");
  } catch {
    return false;
  }
};

export async function startUiHarness(opts: TestServerOptions = {}): Promise<UiHarness> {
  const srv = await startTestServer(opts);
  await uiAssets(); // build once per process before the first page waits on it
  const userDataDir = mkdtempSync(join(tmpdir(), "secbox-e2e-chromium-"));
  const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    pipe: true,
    userDataDir,
    args: [
      ...lockedDownFlags(asRoot),
      // Nothing but loopback resolves: a request to anywhere else fails here instead of leaving the machine
      // (localhost and *.localhost, the responder hosts users open, Chromium resolves to loopback itself).
      "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1, EXCLUDE localhost, EXCLUDE *.localhost",
      disableFeaturesFlag(),
    ],
    defaultViewport: { width: 1366, height: 768 },
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    protocolTimeout: 60_000,
  });
  const contexts: BrowserContext[] = [];
  return {
    srv,
    browser,
    url: srv.url,
    async open(o = {}) {
      // `downloads`: files the page downloads are saved there (waitForDownload reads them back).
      const context = await browser.createBrowserContext(o.downloads ? { downloadBehavior: { policy: "allow", downloadPath: o.downloads } } : {});
      contexts.push(context);
      const page = await context.newPage();
      await page.setViewport({ width: o.width ?? 1366, height: o.height ?? 768 });
      await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: o.colorScheme ?? "light" }]);
      const ui: UiPage = { page, context, requests: [], problems: [], httpErrors: [] };
      page.on("request", (r: HTTPRequest) => ui.requests.push(r.url()));
      page.on("response", (r) => {
        if (r.status() >= 400) ui.httpErrors.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
      });
      page.on("console", (m) => {
        // Chromium's own line for an HTTP error status duplicates `httpErrors`, which tests check exactly.
        if (/^Failed to load resource: the server responded with a status of \d+/.test(m.text())) return;
        if (m.type() === "error" || m.type() === "warn") ui.problems.push(`console.${m.type()}: ${m.text()}`);
      });
      page.on("pageerror", (e) => ui.problems.push(`page error: ${(e as Error).message ?? e}`));
      page.on("requestfailed", (r) => {
        // A navigation away aborts pending fetches; that is not a failure of the page.
        if (r.failure()?.errorText !== "net::ERR_ABORTED") ui.problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
      });
      if (o.user)
        await context.setCookie({
          name: srv.config.security.session_cookie,
          value: o.user.session,
          domain: "127.0.0.1",
          path: "/",
          httpOnly: true,
          sameSite: "Lax",
        });
      return ui;
    },
    async stop() {
      for (const c of contexts) await c.close().catch(() => {});
      await browser.close().catch(() => {});
      rmSync(userDataDir, { recursive: true, force: true });
      await srv.stop();
    },
  };
}

/**
 * Nothing left loopback, the page logged no error or warning, and the only HTTP errors were the ones the test
 * provoked on purpose (e.g. "401 POST /api/auth/signin").
 */
export function expectClean(ui: UiPage, expectedHttpErrors: string[] = []) {
  expect(ui.requests.filter((u) => !isLoopback(u))).toEqual([]);
  expect(ui.problems).toEqual([]);
  expect(ui.httpErrors).toEqual(expectedHttpErrors);
}

/**
 * axe-core, WCAG 2 A/AA: the serious and critical violations (expected to be none). `include`: only the elements
 * these CSS selectors match (an open picker's list, after the whole page was checked); none matching → nothing to check.
 */
export async function axeViolations(page: Page, include?: string[]): Promise<string[]> {
  // Injected once per document (axe is ~550 KB of source to parse).
  if (!(await page.evaluate(`typeof axe !== "undefined"`))) await page.evaluate(AXE_SOURCE);
  // Transitions and finite animations end first (at most 2 s): axe reads colours as blended, so a toast or dialog
  // still fading in measures as text without contrast (seen: 1.11:1 on a toast's code block mid fade-in).
  await page.evaluate(`Promise.race([
    Promise.all(document.getAnimations().filter((a) => a.effect?.getTiming().iterations !== Infinity).map((a) => a.finished.catch(() => {}))),
    new Promise((r) => setTimeout(r, 2000)),
  ])`);
  let context = "document";
  if (include) {
    const present = (await page.evaluate(`${JSON.stringify(include)}.filter((sel) => document.querySelector(sel))`)) as string[];
    if (present.length === 0) return [];
    context = `{ include: ${JSON.stringify(present.map((sel) => [sel]))} }`;
  }
  const result = (await page.evaluate(`axe.run(${context}, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } })
    .then(r => r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
      .map(v => v.id + " (" + v.impact + "): " + v.nodes.slice(0, 3).map(n => n.target.join(" ") + " — " + n.failureSummary.replace(/\\s+/g, " ")).join(" | ")))`)) as string[];
  return result;
}

// ---- interaction helpers (CSS / legacy aria/ selectors only) ------------------------------------------------------

export const goto = (ui: UiPage, url: string) => ui.page.goto(url, { waitUntil: "networkidle0" });

/** Waits for visible text anywhere in the page. */
export async function waitForText(page: Page, text: string, timeout = 15_000) {
  await page.waitForFunction(`document.body.innerText.includes(${JSON.stringify(text)})`, { timeout });
}

export async function waitForNoText(page: Page, text: string, timeout = 15_000) {
  await page.waitForFunction(`!document.body.innerText.includes(${JSON.stringify(text)})`, { timeout });
}

/** An element by accessible name and role, e.g. byRole(page, "button", "Sign in"). */
export async function byRole(page: Page, role: string, name: string, timeout = 15_000) {
  const el = await page.waitForSelector(`aria/${name}[role="${role}"]`, { visible: true, timeout });
  if (!el) throw new Error(`no ${role} named ${name}`);
  return el;
}

/**
 * Clicks `el` once nothing covers its centre: a closing Mantine modal's overlay keeps catching clicks for ~200 ms
 * (ui.md), and a click there would land on the overlay instead.
 */
async function clickWhenOnTop(el: import("puppeteer-core").ElementHandle, timeout: number) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const onTop = await el.evaluate((e: any) => {
      // Centred: "nearest" can leave it under the fixed app header.
      e.scrollIntoView({ block: "center", inline: "nearest" });
      const r = e.getBoundingClientRect();
      const hit = (globalThis as any).document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
      return hit !== null && (hit === e || e.contains(hit));
    });
    if (onTop) return el.click();
    if (Date.now() > deadline) {
      const what = await el.evaluate((e: any) => {
        const r = e.getBoundingClientRect();
        const hit = (globalThis as any).document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
        return `${e.tagName}.${e.className} "${String(e.textContent).slice(0, 40)}" covered by ${hit ? `${hit.tagName}.${hit.className}` : "nothing (off screen)"}`;
      });
      throw new Error(`element stays covered: ${what}`);
    }
    await sleep(50);
  }
}

/** Clicks the element; a visually hidden input (SegmentedControl's radios) is clicked through its label. */
export async function click(page: Page, role: string, name: string, timeout = 15_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      return await clickOnce(page, role, name, Math.max(1000, deadline - Date.now()));
    } catch (err) {
      // React replaced the node between the check and the click (a list re-rendered after a refetch): find it again
      const gone = err instanceof Error && /not clickable or not an Element|detached from document/.test(err.message);
      if (!gone || Date.now() > deadline) throw err;
      await sleep(50);
    }
  }
}

async function clickOnce(page: Page, role: string, name: string, timeout: number) {
  const el = await page.waitForSelector(`aria/${name}[role="${role}"]`, { timeout });
  if (!el) throw new Error(`no ${role} named ${name}`);
  if (await el.isVisible()) return clickWhenOnTop(el, timeout);
  const id = (await el.evaluate((e: any) => String(e.id))) as string;
  const label = id ? await page.$(`label[for="${id}"]`) : null;
  if (!label) throw new Error(`${role} ${name} is hidden and has no label to click`);
  // The label too only once nothing covers it (a menu closing above it still takes clicks during its transition).
  await clickWhenOnTop(label, timeout);
}

/**
 * Replaces the text of a CodeMirror editor by typing: select all, delete, type (closeBrackets may add a closing
 * bracket itself). `editor` is the editor's label or its index among the page's editors (the first one by
 * default). Waits for CodeMirror itself (its lazy chunk), not the plain textarea that stands in while it loads.
 */
export async function typeInEditor(page: Page, text: string, editor: string | number = 0, timeout = 15_000) {
  const el = await page.waitForFunction(
    (which: string | number) => {
      const doc = (globalThis as any).document;
      const all = [...doc.querySelectorAll(".cm-content")];
      const e =
        typeof which === "number"
          ? all[which]
          : all.find((c: any) => doc.getElementById(c.getAttribute("aria-labelledby"))?.textContent.trim() === which);
      return e && e.getClientRects().length > 0 ? e : null;
    },
    { timeout },
    editor,
  );
  const content = el.asElement();
  if (!content) throw new Error(`no editor ${editor}`);
  await (content as import("puppeteer-core").ElementHandle).click();
  await page.keyboard.down("Control");
  await page.keyboard.press("a");
  await page.keyboard.up("Control");
  await page.keyboard.press("Backspace");
  if (text) await page.keyboard.type(text);
}

/** Types into the textbox labelled `label` (replacing what is there). */
export async function fill(page: Page, label: string, value: string, role = "textbox") {
  const el = await byRole(page, role, label);
  await el.click({ count: 3 });
  await page.keyboard.press("Backspace");
  if (value !== "") await el.type(value);
}

/** Mantine's modal overlay goes on catching clicks ~200 ms after closing: wait until no dialog is left. */
export async function waitForDialogsClosed(page: Page, timeout = 15_000) {
  try {
    await page.waitForFunction(`document.querySelectorAll(".mantine-Modal-overlay, [role=dialog]").length === 0`, { timeout });
  } catch (err) {
    const left = await page.evaluate(
      `[...document.querySelectorAll(".mantine-Modal-overlay, [role=dialog]")].map(e => e.className + ": " + e.textContent.slice(0, 120))`,
    );
    throw new Error(`dialogs still open: ${JSON.stringify(left)}`, { cause: err });
  }
}

/** A downloaded file once the browser finished writing it (no `.crdownload` left in the folder). */
export async function waitForDownload(dir: string, fileName: string, timeout = 15_000): Promise<Uint8Array> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const names = readdirSync(dir);
    if (names.includes(fileName) && !names.some((n) => n.endsWith(".crdownload"))) return new Uint8Array(readFileSync(join(dir, fileName)));
    if (Date.now() > deadline) throw new Error(`no download ${fileName} in ${dir} (found: ${names.join(", ") || "nothing"})`);
    await sleep(50);
  }
}

export const path = (page: Page) => new URL(page.url()).pathname + new URL(page.url()).search;

export function sleep(ms: number) {
  return new Promise((r) => setTimeout(r, ms));
}

/** Clicks a button inside the open dialog (confirmations reuse names like "Delete" that the page has too). */
export async function clickInDialog(page: Page, name: string, timeout = 15_000) {
  const dialog = await page.waitForSelector("[role=dialog]", { visible: true, timeout });
  const button = await dialog!.waitForSelector(`aria/${name}[role="button"]`, { visible: true, timeout });
  await clickWhenOnTop(button!, timeout);
}
