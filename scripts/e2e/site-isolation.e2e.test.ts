// Browser: responder pages cannot take over the UI's session (issue 29 B, supplement §28, §28.1). Chromium
// resolves the README's LAN names to loopback (`--host-resolver-rules`; everything else fails to resolve, so no
// request can leave the machine): the UI at `secbox.lan`, responders either at `*.secbox.lan` (the old, same-site
// recipe, which `serve` now refuses on http; the test server is started in-process, where that start check does
// not run, to show what the request-time defences do on their own) or at `*.secbox-hooks.lan` (the new recipe).
// - the session swap: a responder page plants the attacker's session cookie for `Domain=secbox.lan; Path=/api`;
//   the victim's UI is signed out instead of running as the attacker, and nothing lands in the attacker's account;
// - the cookie bomb: 12 × 4 KB cookies for `Domain=secbox.lan` no longer lock the user out (one page expires them);
// - the gadget: a script served by a path-form responder (same origin as the UI) does not run in the UI;
// - /api-docs renders and "Try it out" works under its CSP, and it cannot be framed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { disableFeaturesFlag, lockedDownFlags } from "../../src/features/trackers/page/chromium-flags";
import { uiAssets } from "../../src/platform/ui/assets";
import { startTestServer, type TestServer, type TestUser } from "../../src/tests/harness";
import { CHROMIUM, click, fill, sleep, TEST_TIMEOUT, waitForText } from "./harness";

const PASSWORD = "correct horse battery";
/** The names the README's recipes use; Chromium maps exactly these to loopback. */
const LOOPBACK_NAMES = /^(?:127\.0\.0\.1|secbox\.lan|[a-z0-9-]+\.secbox\.lan|[a-z0-9-]+\.secbox-hooks\.lan)$/;

let sameSite: TestServer; // responders at *.secbox.lan
let sibling: TestServer; // responders at *.secbox-hooks.lan
let browser: Browser;
let userDataDir: string;
const requested: string[] = [];

/** A free loopback port, so that `server.public_url` can name the port the server really uses. */
async function freePort(): Promise<number> {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const p = s.port!;
  await s.stop(true);
  return p;
}

/** A server whose UI is at http://secbox.lan:<port> and whose responders are at *.<domain>:<port>. */
async function lanServer(domain: string): Promise<TestServer> {
  const p = await freePort();
  return startTestServer({ port: p, env: { SECBOX_SERVER_PUBLIC_URL: `http://secbox.lan:${p}`, SECBOX_RESPONDERS_DOMAIN: domain } });
}

beforeAll(async () => {
  [sameSite, sibling] = await Promise.all([lanServer("secbox.lan"), lanServer("secbox-hooks.lan")]);
  await uiAssets();
  userDataDir = mkdtempSync(join(tmpdir(), "secbox-e2e-site-"));
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    pipe: true,
    userDataDir,
    args: [
      ...lockedDownFlags(process.getuid?.() === 0),
      "--host-resolver-rules=MAP secbox.lan 127.0.0.1, MAP *.secbox.lan 127.0.0.1, MAP *.secbox-hooks.lan 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
      disableFeaturesFlag(),
    ],
    defaultViewport: { width: 1366, height: 768 },
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    protocolTimeout: 60_000,
  });
}, TEST_TIMEOUT);

afterAll(async () => {
  await browser?.close().catch(() => {});
  if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
  await Promise.all([sameSite?.stop(), sibling?.stop()]);
  // Nothing left loopback in the whole file.
  expect(requested.filter((u) => !LOOPBACK_NAMES.test(new URL(u).hostname) && !/^(data|blob|about|chrome-error):/.test(u))).toEqual([]);
});

const port = (srv: TestServer) => new URL(srv.url).port;
const uiUrl = (srv: TestServer) => `http://secbox.lan:${port(srv)}`;

/** A fresh incognito page that records every URL it requests. */
async function freshPage(): Promise<Page> {
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  // Generous: the machine is shared and a 1.4 MB Swagger UI bundle parses slowly under load.
  page.setDefaultNavigationTimeout(60_000);
  page.on("request", (r) => requested.push(r.url()));
  return page;
}

async function signIn(page: Page, srv: TestServer, user: TestUser) {
  await page.goto(`${uiUrl(srv)}/signin`, { waitUntil: "networkidle0" });
  await fill(page, "Email", user.email);
  await fill(page, "Password", PASSWORD);
  await click(page, "button", "Sign in");
  await waitForText(page, "Pick a tool");
}

/** A static HTML responder of `owner` at `path` whose page runs `script`; returns its URL on the responder host. */
async function attackPage(srv: TestServer, owner: TestUser, path: string, script: string, domain: string): Promise<string> {
  const res = await owner.client.post("/api/webhooks/responders", {
    name: `attack ${path}`,
    location: { pathType: "=", path },
    settings: {
      headers: [["content-type", "text/html; charset=utf-8"]],
      body: `<!doctype html><title>hi</title><body><script>${script}; document.title = "done";</script></body>`,
    },
  });
  expect(res.status).toBe(201);
  return `http://${owner.handle}.${domain}:${port(srv)}${path}`;
}

async function visit(page: Page, url: string) {
  await page.goto(url, { waitUntil: "load" });
  await page.waitForFunction(`document.title === "done"`, { timeout: 15_000 });
}

const secretNames = async (srv: TestServer, user: TestUser) => (await srv.services.secrets.list(user.id, {})).items.map((s) => s.name);

/** What the page's own fetch gets for a new secret: the browser's cookie jar decides whose account it is. */
const saveSecret = (page: Page, name: string) =>
  page.evaluate(
    `fetch("/api/user/secrets", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: ${JSON.stringify(name)}, value: "1234" }) }).then((r) => r.status)`,
  ) as Promise<number>;

const sessionCookies = async (page: Page, srv: TestServer) =>
  (await page.cookies(`${uiUrl(srv)}/api/user/secrets`))
    .filter((c) => c.name === "secbox_session")
    .map((c) => `${c.domain} ${c.path}`)
    .sort();

describe("responder pages and the UI's session", () => {
  test(
    "session swap: a planted attacker cookie signs the victim out instead; nothing lands in the attacker's account",
    async () => {
      const [victim, attacker] = await Promise.all([sameSite.createUser(), sameSite.createUser()]);
      const page = await freshPage();
      await signIn(page, sameSite, victim);
      const planted = `secbox_session=${attacker.session}; domain=secbox.lan; path=/api; max-age=31536000`;
      await visit(page, await attackPage(sameSite, attacker, "/swap", `document.cookie = ${JSON.stringify(planted)}`, "secbox.lan"));
      // The browser took it (same site): the victim's host-only cookie and the attacker's /api copy.
      expect(await sessionCookies(page, sameSite)).toEqual([".secbox.lan /api", "secbox.lan /"]);

      // Back in the UI: signed out (not the attacker), every copy expired.
      await page.goto(`${uiUrl(sameSite)}/secrets`, { waitUntil: "networkidle0" });
      await waitForText(page, "Forgot your password?");
      expect(await sessionCookies(page, sameSite)).toEqual([]);
      expect(await saveSecret(page, "WHILE_SIGNED_OUT")).toBe(401);
      // Signing in again, the victim saves into the victim's own account.
      await signIn(page, sameSite, victim);
      expect(await saveSecret(page, "BANK_PIN")).toBe(201);
      expect(await secretNames(sameSite, attacker)).toEqual([]);
      expect(await secretNames(sameSite, victim)).toEqual(["BANK_PIN"]);

      // The README's recipe (responders at *.secbox-hooks.lan): the browser refuses the cookie outright.
      const [victim2, attacker2] = await Promise.all([sibling.createUser(), sibling.createUser()]);
      const page2 = await freshPage();
      await signIn(page2, sibling, victim2);
      await visit(
        page2,
        await attackPage(
          sibling,
          attacker2,
          "/swap",
          `document.cookie = ${JSON.stringify(`secbox_session=${attacker2.session}; domain=secbox.lan; path=/api`)}`,
          "secbox-hooks.lan",
        ),
      );
      expect(await sessionCookies(page2, sibling)).toEqual(["secbox.lan /"]);
      await page2.goto(`${uiUrl(sibling)}/secrets`, { waitUntil: "networkidle0" });
      await page2.waitForSelector(`aria/Account menu: ${victim2.email}[role="button"]`, { timeout: 15_000 });
      expect(await saveSecret(page2, "BANK_PIN")).toBe(201);
      expect(await secretNames(sibling, attacker2)).toEqual([]);
      expect(await secretNames(sibling, victim2)).toEqual(["BANK_PIN"]);
      await page.browserContext().close();
      await page2.browserContext().close();
    },
    TEST_TIMEOUT * 2,
  );

  test(
    "cookie bomb: 12 × 4 KB cookies for the UI's domain are expired by one page; a reload is the victim again",
    async () => {
      const [victim, attacker] = await Promise.all([sameSite.createUser(), sameSite.createUser()]);
      const page = await freshPage();
      await signIn(page, sameSite, victim);
      const bomb = `for (let i = 0; i < 12; i++) document.cookie = "bomb" + i + "=" + "x".repeat(4000) + "; domain=secbox.lan; path=/; max-age=31536000"`;
      await visit(page, await attackPage(sameSite, attacker, "/bomb", bomb, "secbox.lan"));
      expect((await page.cookies(`${uiUrl(sameSite)}/`)).filter((c) => c.name.startsWith("bomb")).length).toBe(12);

      const first = await page.goto(`${uiUrl(sameSite)}/`, { waitUntil: "load" });
      expect(first!.status()).toBe(431);
      await waitForText(page, "Too many cookies");
      expect((await page.cookies(`${uiUrl(sameSite)}/`)).filter((c) => c.name.startsWith("bomb"))).toEqual([]);
      await page.reload({ waitUntil: "networkidle0" });
      await page.waitForSelector(`aria/Account menu: ${victim.email}[role="button"]`, { timeout: 15_000 });
      await page.browserContext().close();
    },
    TEST_TIMEOUT,
  );

  test(
    "gadget: a path-form responder's script does not run in the UI, even when something injects its <script>",
    async () => {
      const [victim, attacker] = await Promise.all([sameSite.createUser(), sameSite.createUser()]);
      const res = await attacker.client.post("/api/webhooks/responders", {
        name: "gadget",
        location: { pathType: "=", path: "/x.js" },
        settings: { headers: [["content-type", "text/javascript"]], body: "window.__gadget = 'ran';" },
      });
      expect(res.status).toBe(201);
      const page = await freshPage();
      await signIn(page, sameSite, victim);
      const violations: string[] = [];
      page.on("console", (m) => {
        if (/Content Security Policy/.test(m.text())) violations.push(m.text());
      });
      // What an HTML injection into the UI would do: a <script> from the UI's own origin, under /api/webhooks/.
      const outcome = await page.evaluate(`new Promise((resolve) => {
        const s = document.createElement("script");
        s.src = "/api/webhooks/${attacker.handle}/x.js";
        s.onload = () => resolve("load");
        s.onerror = () => resolve("error");
        document.head.appendChild(s);
      })`);
      expect(outcome).toBe("error");
      expect(await page.evaluate("window.__gadget ?? null")).toBeNull();
      await sleep(100); // the console event of the violation
      expect(violations.some((v) => v.includes(`/api/webhooks/${attacker.handle}/x.js`))).toBe(true);
      // The UI's own scripts under /assets/ still run (the page is the signed-in app).
      await page.waitForSelector(`aria/Account menu: ${victim.email}[role="button"]`, { timeout: 15_000 });
      await page.browserContext().close();
    },
    TEST_TIMEOUT,
  );

  test(
    "/api-docs renders and 'Try it out' works under its CSP; another page cannot frame it",
    async () => {
      const page = await freshPage();
      const problems: string[] = [];
      page.on("console", (m) => {
        if (m.type() === "error") problems.push(m.text());
      });
      page.on("pageerror", (e) => problems.push(String(e)));
      await page.goto(`${uiUrl(sameSite)}/api-docs`, { waitUntil: "networkidle0" });
      await page.waitForSelector(".swagger-ui .info .title", { timeout: 30_000 });
      expect(await page.$eval(".swagger-ui .info .title", (e) => e.textContent)).toContain("Secbox API");
      const op = await page.waitForSelector('.opblock-get .opblock-summary-path[data-path="/api/status"]', { timeout: 30_000 });
      await op!.click();
      const tryIt = await page.waitForSelector(".opblock.is-open .try-out__btn", { visible: true, timeout: 30_000 });
      await tryIt!.click();
      const execute = await page.waitForSelector(".opblock.is-open .execute", { visible: true, timeout: 30_000 });
      await execute!.click();
      await page.waitForFunction(
        `[...document.querySelectorAll(".opblock.is-open .live-responses-table .response-col_status")].some((e) => e.textContent.trim() === "200")`,
        { timeout: 30_000 },
      );
      expect(problems).toEqual([]);

      // A responder page of another origin framing the docs: the frame is refused.
      const attacker = await sameSite.createUser();
      await visit(
        page,
        await attackPage(
          sameSite,
          attacker,
          "/frame",
          `document.body.innerHTML = '<iframe src="${uiUrl(sameSite)}/api-docs"></iframe>'`,
          "secbox.lan",
        ),
      );
      // Settled: the frame either shows Chromium's error page (refused) or the docs (rendered).
      let outcome = "";
      for (let i = 0; i < 150 && outcome === ""; i++) {
        const frame = page.frames().find((f) => f !== page.mainFrame());
        if (frame?.url().startsWith("chrome-error:")) outcome = "refused";
        else if (frame && (await frame.evaluate("document.querySelector('.swagger-ui .info') !== null").catch(() => false))) outcome = "rendered";
        else await sleep(100);
      }
      expect(outcome).toBe("refused");
      await page.browserContext().close();
    },
    TEST_TIMEOUT * 2,
  );
});
