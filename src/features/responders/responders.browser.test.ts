// Responder cookies in a real browser (/usr/bin/chromium through puppeteer-core; supplement §11.3, §11.5 step 4):
// a responder that answers with 40 large Set-Cookie headers must not lock its visitor out of the API (431 Request
// Header Fields Too Large) nor reach the API with its cookies, on the path form (the API's own origin) or on a
// responder host (Domain=<parent> cookies; a LAN-style domain, secbox.test, since Chromium refuses Domain=localhost
// anyway). The browser here is only the test's client, launched directly.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { quickUser } from "../../tests/fixtures/quick-users";

let srv: TestServer;
let browser: Browser;
let port: number;
let u: TestUser;

const BIG = "x".repeat(4000);
const cookies = (domain?: string): [string, string][] =>
  Array.from({ length: 40 }, (_, i) => ["set-cookie", `big${i}=${BIG}; Path=/${domain ? `; Domain=${domain}` : ""}`]);

beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_RESPONDERS_DOMAIN: "secbox.test" } });
  port = Number(new URL(srv.url).port);
  u = await quickUser(srv);
  for (const [name, path, headers] of [
    ["path-form", "/plant", cookies()],
    ["host-form", "/plant-parent", cookies("secbox.test")],
  ] as const) {
    const res = await u.client.post("/api/webhooks/responders", {
      name,
      location: { pathType: "=", path },
      settings: { headers, body: "<p>planted</p>" },
    });
    expect(res.status).toBe(201);
  }
  browser = await puppeteer.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    pipe: true,
    args: [
      ...(process.getuid?.() === 0 ? ["--no-sandbox"] : []),
      "--disable-gpu",
      "--no-first-run",
      // secbox.test (the API) and *.secbox.test (responder hosts) on the test server's loopback address
      "--host-resolver-rules=MAP secbox.test 127.0.0.1, MAP *.secbox.test 127.0.0.1",
    ],
  });
});
afterAll(async () => {
  await browser?.close();
  await srv.stop();
});

/** Visits `url`, then requests `apiUrl` from a page of the API origin; returns that request's status and the Cookie
 *  header Chromium actually sent with it (from the DevTools protocol). */
async function visitThenCallApi(page: Page, url: string, apiUrl: string): Promise<{ visit: number; api: number; cookieSent: string }> {
  const cdp = await page.createCDPSession();
  await cdp.send("Network.enable");
  const sent = new Map<string, Record<string, string>>();
  cdp.on("Network.requestWillBeSentExtraInfo", (e: any) => sent.set(e.requestId, e.headers));
  const urls = new Map<string, string>();
  cdp.on("Network.requestWillBeSent", (e: any) => urls.set(e.requestId, e.request.url));
  const visit = (await page.goto(url))!.status();
  const api = (await page.goto(apiUrl))!.status();
  const again = await page.evaluate(`fetch(${JSON.stringify(apiUrl)}).then((r) => r.status)`);
  expect(again).toBe(api);
  await Bun.sleep(200); // extra-info events may trail the response
  let cookieSent = "";
  for (const [id, u] of urls) {
    if (u !== apiUrl) continue;
    const h = sent.get(id) ?? {};
    for (const [k, v] of Object.entries(h)) if (k.toLowerCase() === "cookie") cookieSent += v;
  }
  await cdp.detach();
  return { visit, api, cookieSent };
}

describe("a responder's cookies never reach the API", () => {
  test("path form: 40 × 4 KB Set-Cookie, then /api/status from the same origin answers 200 and carries none of them", async () => {
    const context = await browser.createBrowserContext();
    try {
      const page = await context.newPage();
      const origin = `http://127.0.0.1:${port}`;
      const out = await visitThenCallApi(page, `${origin}/api/webhooks/${u.handle}/plant`, `${origin}/api/status`);
      expect(out.visit).toBe(200);
      expect(out.api).toBe(200);
      expect(out.cookieSent).not.toContain("big0=");
      expect(await context.cookies()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  test("responder host: Domain=secbox.test cookies stay on the responder's host; the API at secbox.test gets none", async () => {
    const context = await browser.createBrowserContext();
    try {
      const page = await context.newPage();
      const out = await visitThenCallApi(page, `http://${u.handle}.secbox.test:${port}/plant-parent`, `http://secbox.test:${port}/api/status`);
      expect(out.visit).toBe(200);
      expect(out.api).toBe(200);
      expect(out.cookieSent).not.toContain("big0=");
      // the cookies exist, host-only, for the responder's own host
      const jar = await context.cookies();
      expect(jar.length).toBeGreaterThan(0);
      expect(new Set(jar.map((c) => c.domain))).toEqual(new Set([`${u.handle}.secbox.test`]));
    } finally {
      await context.close();
    }
  }, 60_000);
});
