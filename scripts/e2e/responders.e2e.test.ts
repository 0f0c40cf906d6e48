// Browser: responders — create a static responder in the editor (URL preview, validation errors on their fields,
// ordered and repeated headers that reach the wire in order), open its URL at <handle>.localhost as a user would
// and see the request arrive live; a scripted responder from an inserted example with selected secrets, debugged
// with "Try it"; the history's Status column (the status sent, supplement §27) for static and scripted responders;
// the history's detail views (JSON, binary, proxy headers), copy as curl, HAR download, clear.
// The server's public URL is set to the port the harness got, so the URLs the UI shows are the ones that answer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
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
  path,
  startUiHarness,
  TEST_TIMEOUT,
  typeInEditor,
  waitForDialogsClosed,
  waitForText,
  type UiHarness,
} from "./harness";

let h: UiHarness;
let port: number;
beforeAll(async () => {
  h = await startUiHarness();
  port = Number(new URL(h.url).port);
  h.srv.config.server.public_url = `http://localhost:${port}`;
}, TEST_TIMEOUT);
afterAll(() => h?.stop());

const BASE = "/api/webhooks/responders";

const errorUnder = (page: Page, label: string) =>
  page.evaluate(
    `(() => { const input = [...document.querySelectorAll("input")].find(i => i.getAttribute("aria-label") === ${JSON.stringify(label)} || (i.labels && [...i.labels].some(l => l.textContent.replace(" *", "").trim() === ${JSON.stringify(label)})));
      const id = input && input.getAttribute("aria-describedby"); return id ? id.split(" ").map(x => document.getElementById(x)?.textContent ?? "").join(" ") : ""; })()`,
  ) as Promise<string>;

/** The raw response head of a request to `host`, read off the socket (the wire, not a parsed Headers object). */
async function rawHead(host: string, target: string): Promise<string[]> {
  let text = "";
  const done = Promise.withResolvers<void>();
  const sock = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, d) {
        text += Buffer.from(d).toString("latin1");
        if (text.includes("\r\n\r\n")) done.resolve();
      },
      close: () => done.resolve(),
      error: () => done.resolve(),
    },
  });
  sock.write(`GET ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  await done.promise;
  sock.end();
  return text.split("\r\n\r\n")[0]!.split("\r\n");
}

/** Opens the history row of the request "<METHOD> <target>". */
const openRecord = (page: Page, request: string) =>
  page.evaluate(
    `[...document.querySelectorAll("[data-record] button")].find(b => b.getAttribute("aria-label").startsWith(${JSON.stringify(`Open ${request} at `)})).click()`,
  );

describe("responders pages", () => {
  test(
    "create a static responder: field errors, URL preview, ordered repeated headers on the wire; its URL opened in the browser shows up live",
    async () => {
      const user = await h.srv.createUser();
      // Taken already: the name "taken" and the location ANY * /taken.
      expect((await user.client.post(BASE, { name: "taken", location: { pathType: "*", path: "/taken" } })).status).toBe(201);
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/responders`);
      await waitForText(page, "No responders yet");
      await click(page, "button", "New responder");
      await waitForText(page, "Where it listens");
      expect(path(page)).toBe("/responders/new");

      // Checks in the page first.
      await fill(page, "Path", "orders");
      await fill(page, "Status code", "");
      await click(page, "button", "Create responder");
      await waitForText(page, "Enter a name");
      expect(await errorUnder(page, "Path")).toContain("Start with /");
      expect(await errorUnder(page, "Status code")).toContain("A status from 200 to 599");

      // Then the API's, each under its field: a duplicate name, an overlapping location, a bad header name.
      await fill(page, "Name", "taken");
      await fill(page, "Path", "/taken");
      await fill(page, "Status code", "201");
      await click(page, "button", "Create responder");
      await page.waitForFunction(`document.body.innerText.includes("You already have a responder with this name")`);
      await fill(page, "Name", "orders");
      await click(page, "button", "Create responder");
      await page.waitForFunction(`document.body.innerText.includes('Responder "taken" already serves')`);
      expect(await errorUnder(page, "Path")).toContain('Responder "taken" already serves * /taken');
      await fill(page, "Path", "/orders");
      await click(page, "button", "Add header");
      await fill(page, "Header 2 name", "bad name");
      await fill(page, "Header 2 value", "x");
      await click(page, "button", "Create responder");
      await page.waitForFunction(`document.body.innerText.includes("Header name must be an RFC 9110 token")`);
      expect(await errorUnder(page, "Header 2 name")).toContain("Header name must be an RFC 9110 token");
      expect(await axeViolations(page)).toEqual([]);

      // Repeated names in an order changed with the arrows: x-dup two before one, set-cookie b before a.
      await fill(page, "Header 2 name", "x-dup");
      await fill(page, "Header 2 value", "one");
      for (const [n, v] of [
        ["x-dup", "two"],
        ["set-cookie", "a=1"],
        ["set-cookie", "b=2"],
      ]) {
        await click(page, "button", "Add header");
        const i = (await page.$$("[data-testid=header-row]")).length;
        await fill(page, `Header ${i} name`, n!);
        await fill(page, `Header ${i} value`, v!);
      }
      await click(page, "button", "Move header 3 up");
      await click(page, "button", "Move header 5 up");
      await click(page, "radio", "* sub-paths");
      await waitForText(page, "this path and everything below it");
      const url = `http://${user.handle}.localhost:${port}/orders`;
      expect(await page.$eval("[data-testid=url-preview]", (e: any) => e.textContent)).toBe(url);
      await fill(page, "Subdomain prefix", "shop");
      expect(await page.$eval("[data-testid=url-preview]", (e: any) => e.textContent)).toBe(`http://shop-${user.handle}.localhost:${port}/orders`);
      await fill(page, "Subdomain prefix", "");
      await typeInEditor(page, '{"ok":true}', "Body");
      await click(page, "button", "Create responder");
      await waitForText(page, "Responder “orders” created");
      await page.waitForFunction(`/^\\/responders\\/[0-9a-f-]{36}$/.test(location.pathname)`);
      const id = path(page).split("/")[2]!;
      const stored = (await user.client.get(`${BASE}/${id}`)).json;
      expect(stored.url).toBe(url);
      expect(stored.settings.headers).toEqual([
        ["content-type", "application/json"],
        ["x-dup", "two"],
        ["x-dup", "one"],
        ["set-cookie", "b=2"],
        ["set-cookie", "a=1"],
      ]);
      expect(stored.settings.body).toBe('{"ok":true}');
      // On the wire repeats of a name may be folded into one line (supplement §11.5), in their order.
      const head = await rawHead(`${user.handle}.localhost:${port}`, "/orders/probe");
      expect(head[0]).toBe("HTTP/1.1 201 Created");
      expect(
        head
          .filter((l) => /^x-dup:/i.test(l))
          .join(" | ")
          .replace(/^x-dup: /i, ""),
      ).toBe("two, one");
      expect(head.filter((l) => /^set-cookie:/i.test(l)).map((l) => l.slice(12))).toEqual(["b=2", "a=1"]);
      await waitForText(page, "GET /orders/probe"); // the probe arrives in the history

      // A visitor opens the URL in a browser, as the "open in a new tab" link does.
      const visitor = await h.open();
      const started = Date.now();
      const res = await visitor.page.goto(`${url}/7?from=browser`);
      expect(res!.status()).toBe(201);
      expect(await visitor.page.evaluate("document.body.innerText")).toContain('{"ok":true}');
      await waitForText(page, "GET /orders/7?from=browser"); // live: without a reload (waitForText gives up after 15 s)
      const arrivedMs = Date.now() - started;
      console.log(`live history: the browser's request appeared after ${arrivedMs} ms`);
      await openRecord(page, "GET /orders/7?from=browser");
      await waitForText(page, "GET /orders/7?from=browser HTTP/1.1");
      expect(path(page)).toContain("request=");
      expect(await page.$eval("[aria-label='Query parameters']", (e: any) => e.innerText)).toContain("from\tbrowser");
      expect(await axeViolations(page)).toEqual([]);
      // The list: the URL, the request count and the last hit from _stats.
      await click(page, "link", "← All responders");
      await waitForText(page, "Requests stored");
      await page.waitForFunction(`/Requests stored\\s+2/.test(document.querySelector("[data-testid=responder-totals]").innerText)`);
      expect(await axeViolations(page)).toEqual([]);
      // the API's refusals above: duplicate name, overlapping location, bad header name
      expectClean(ui, ["409 POST /api/webhooks/responders", "409 POST /api/webhooks/responders", "400 POST /api/webhooks/responders"]);
      // (the browser also asks the responder host for /favicon.ico, which no responder serves: 404)
      expectClean({ ...visitor, httpErrors: visitor.httpErrors.filter((e) => e !== "404 GET /favicon.ico") });
    },
    TEST_TIMEOUT,
  );

  test(
    "scripted responder from an inserted example with a selected secret, debugged with Try it (dark theme)",
    async () => {
      const user = await h.srv.createUser();
      const pw = (await user.client.post("/api/user/secrets", { name: "BASIC_PASSWORD", value: "s3cret" })).json;
      await user.client.post("/api/user/secrets", { name: "OTHER", value: "x" });
      const ui = await h.open({ user, colorScheme: "dark" });
      const { page } = ui;
      await goto(ui, `${h.url}/responders/new`);
      await waitForText(page, "Where it listens");
      await fill(page, "Name", "private");
      await click(page, "radio", "= exact");
      await fill(page, "Path", "/private");
      await click(page, "button", "Insert example");
      await (await page.waitForSelector("text/HTTP Basic check (401", { visible: true }))!.click();
      await page.waitForFunction(`document.querySelector("[data-testid=script-size]").textContent.trim() !== "0 / 51,200 bytes"`);
      await click(page, "radio", "Selected");
      await click(page, "combobox", "Selected secrets");
      await click(page, "option", "BASIC_PASSWORD");
      await page.keyboard.press("Escape");
      expect(await axeViolations(page)).toEqual([]);
      await click(page, "button", "Create responder");
      await waitForText(page, "Responder “private” created");
      const id = path(page).split("/")[2]!;
      const stored = (await user.client.get(`${BASE}/${id}`)).json;
      expect(stored.settings.secrets).toEqual({ selected: [pw.id] });
      expect(stored.settings.script).toContain("context.secrets.BASIC_PASSWORD");

      await click(page, "tab", "Try it");
      expect(path(page)).toContain("tab=try");
      await click(page, "button", "Send request");
      await page.waitForSelector("[data-testid=try-result]");
      await waitForText(page, "Authentication required");
      expect(await page.$eval("[aria-label='Try it response headers']", (e: any) => e.innerText)).toContain('www-authenticate\tBasic realm="secbox"');
      // With the right credentials the script lets it through; the record shows what was sent.
      await click(page, "button", "Add header");
      await fill(page, "Header 1 name", "authorization");
      await fill(page, "Header 1 value", `Basic ${btoa("admin:s3cret")}`);
      await click(page, "button", "Send request");
      await waitForText(page, "Welcome, admin");
      await waitForText(page, "Captured record");
      expect(await page.$eval("[data-testid=try-result] [data-testid=request-line]", (e: any) => e.textContent)).toBe("POST /private HTTP/1.1"); // an ANY responder: POST with a JSON body to start from
      expect(await axeViolations(page)).toEqual([]);
      // Both tries are in the history.
      await click(page, "tab", "Requests (2)");
      const rowCount = `document.querySelectorAll("[data-testid=history-table] tbody tr").length`;
      await page.waitForFunction(`${rowCount} === 2`);
      await Bun.sleep(1500); // a poll or two later: still two (a poll that overlapped another once listed them twice)
      expect(await page.evaluate(rowCount)).toBe(2);

      // Delete from the editor: asked first, then back on the list, and the responder is gone.
      await goto(ui, `${h.url}/responders/${id}/edit`);
      await waitForText(page, "Where it listens");
      await click(page, "button", "Delete");
      await clickInDialog(page, "Delete");
      await waitForText(page, "Responder “private” deleted");
      await page.waitForFunction(`location.pathname === "/responders"`);
      expect((await user.client.get(`${BASE}/${id}`)).status).toBe(404);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "the history's Status column shows the status sent for static and scripted responders, live and on load",
    async () => {
      const user = await h.srv.createUser();
      const make = async (name: string, path: string, settings: Record<string, unknown>, method = "ANY") => {
        const res = await user.client.post(BASE, { name, method, location: { pathType: "=", path }, settings: { requestsToTrack: 10, ...settings } });
        expect(res.status).toBe(201);
        return res.json.id as string;
      };
      const staticId = await make("static", "/static", { statusCode: 201 }, "POST");
      const scriptedId = await make("scripted", "/scripted", {
        script: "if (context.query.fail) throw new Error('kaboom'); return { statusCode: 418, body: 'teapot' };",
      });
      const send = (p: string, method = "GET") =>
        fetch(`${h.url}${p}`, { method, headers: { host: `${user.handle}.localhost:${port}` } }).then(async (x) => (await x.arrayBuffer(), x.status));
      /** The Status column's header and each row's status cell, newest first. */
      const statuses = (page: Page) =>
        page.evaluate(`(() => {
          const table = document.querySelector("[data-testid=history-table]");
          const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent.trim());
          const col = heads.indexOf("Status");
          return { col, cells: [...table.querySelectorAll("tbody tr[data-record]")].map((tr) => (col < 0 ? "no Status column" : tr.children[col].textContent.trim())) };
        })()`) as Promise<{ col: number; cells: string[] }>;
      const rows = (n: number) => `document.querySelectorAll("[data-testid=history-table] tbody tr[data-record]").length === ${n}`;

      const ui = await h.open({ user });
      const { page } = ui;
      // Static: the page is open before the hit; the record arrives through the live poll with its 201.
      await goto(ui, `${h.url}/responders/${staticId}`);
      await waitForText(page, "Waiting for requests");
      expect(await send("/static", "POST")).toBe(201);
      await page.waitForFunction(rows(1), { timeout: 15_000 });
      expect(await statuses(page)).toEqual({ col: 1, cells: ["201"] });
      expect(await axeViolations(page)).toEqual([]);

      // Scripted, no trackResponse: the script's 418 and a failure's 500, on load and then live.
      expect(await send("/scripted")).toBe(418);
      expect(await send("/scripted?fail=1")).toBe(500);
      await goto(ui, `${h.url}/responders/${scriptedId}`);
      await page.waitForFunction(rows(2), { timeout: 15_000 });
      expect((await statuses(page)).cells).toEqual(["500", "418"]);
      expect(await send("/scripted")).toBe(418);
      await page.waitForFunction(rows(3), { timeout: 15_000 });
      expect((await statuses(page)).cells).toEqual(["418", "500", "418"]);
      // The detail of a record whose response was not stored still says what was sent.
      await openRecord(page, "GET /scripted");
      await waitForText(page, "Headers and body not stored.");
      expect(await page.$eval("[data-testid=request-detail]", (e: any) => e.innerText)).toContain("418");
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "history detail: JSON and binary bodies, proxy headers behind a switch, copy as curl, HAR 1.2 download, clear",
    async () => {
      const user = await h.srv.createUser();
      const r = (
        await user.client.post(BASE, { name: "inbox", method: "POST", location: { pathType: "*", path: "/in" }, settings: { requestsToTrack: 10 } })
      ).json;
      const send = (p: string, body: string | Uint8Array, headers: Record<string, string>) =>
        fetch(`${h.url}${p}`, { method: "POST", body, headers: { host: `${user.handle}.localhost:${port}`, ...headers } }).then((x) =>
          x.arrayBuffer(),
        );
      await send("/in/json?x=1", JSON.stringify({ a: 1, b: [true, "two"] }), {
        "content-type": "application/json",
        "x-forwarded-for": "198.51.100.9",
      });
      await send("/in/bin", new Uint8Array([0, 1, 2, 255, 72, 105]), { "content-type": "application/octet-stream" });
      const ui = await h.open({ user, colorScheme: "dark" });
      const { page } = ui;
      await ui.context.overridePermissions(h.url, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
      await goto(ui, `${h.url}/responders/${r.id}`);
      await waitForText(page, "POST /in/bin");
      expect((await page.$$("[data-record] button")).length).toBe(2);

      await openRecord(page, "POST /in/json?x=1");
      await waitForText(page, "POST /in/json?x=1 HTTP/1.1");
      const body = await page.$eval("[aria-label='Request body']", (e: any) => e.textContent);
      expect(body).toBe(JSON.stringify({ a: 1, b: [true, "two"] }, null, 2));
      expect(await page.$eval("[aria-label='Request headers']", (e: any) => e.innerText)).not.toContain("x-forwarded-for");
      expect(await page.$eval("[data-testid=request-detail]", (e: any) => e.innerText)).toContain("from 198.51.100.9");
      await click(page, "switch", "Show proxy headers (1)");
      expect(await page.$eval("[aria-label='Request headers']", (e: any) => e.innerText)).toContain("x-forwarded-for\t198.51.100.9");

      await click(page, "button", "Copy as curl");
      await waitForText(page, "curl command copied");
      const copied = (await page.evaluate("navigator.clipboard.readText()")) as string;
      const curl = copied.replace(/ \\\n\s*/g, " "); // one line (the command continues lines with \)
      expect(curl).toContain(`curl -X POST 'http://${user.handle}.localhost:${port}/in/json?x=1'`);
      expect(curl).toContain(`-H 'content-type: application/json'`);
      expect(curl).not.toContain("x-forwarded-for");
      expect(curl).toContain(`--data-binary '{"a":1,"b":[true,"two"]}'`);

      await openRecord(page, "POST /in/bin"); // binary: shown as hex
      await waitForText(page, "POST /in/bin HTTP/1.1");
      expect(await page.$eval("[aria-label='Request body']", (e: any) => e.textContent)).toBe(
        `00000000  ${"00 01 02 ff 48 69".padEnd(47)}  |....Hi|`,
      );
      await click(page, "button", "Copy as curl");
      expect(await axeViolations(page)).toEqual([]);
      await page.waitForFunction(`navigator.clipboard.readText().then(t => t.includes("base64 -d"))`);
      const binCurl = (await page.evaluate("navigator.clipboard.readText()")) as string;
      expect(binCurl.startsWith(`printf %s 'AAEC/0hp' | base64 -d | curl -X POST`)).toBe(true);
      // The command reproduces the request (curl resolves *.localhost to loopback itself).
      if (Bun.which("curl") && Bun.which("base64")) {
        // (async: the server answering it runs in this process)
        const proc = Bun.spawn(["sh", "-c", `${binCurl} -s -o /dev/null --max-time 20`], { stdout: "ignore", stderr: "ignore" });
        expect(await proc.exited).toBe(0);
        await waitForText(page, "3 shown");
        const [replayed] = (await user.client.get(`${BASE}/${r.id}/_history?limit=1`)).json;
        expect(replayed.body).toBe(Buffer.from([0, 1, 2, 255, 72, 105]).toString("base64"));
      }

      // HAR: the download is a HAR 1.2 document with every record.
      const dir = mkdtempSync(join(tmpdir(), "secbox-har-"));
      try {
        const cdp = await page.createCDPSession();
        await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: dir, browserContextId: (ui.context as any).id });
        await click(page, "link", "Download HAR");
        let files: string[] = [];
        for (let i = 0; i < 100 && !(files = readdirSync(dir)).some((f) => f.endsWith(".har")); i++) await Bun.sleep(100);
        const file = files.find((f) => f.endsWith(".har"))!;
        expect(file).toBe("inbox-history.har");
        const har = JSON.parse(readFileSync(join(dir, file), "utf8"));
        expect(har.log.version).toBe("1.2");
        expect(har.log.creator.name).toBe("Secbox");
        expect(har.log.entries.map((e: any) => e.request.url)).toContain(`http://${user.handle}.localhost:${port}/in/json?x=1`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }

      await click(page, "button", "Clear history");
      await clickInDialog(page, "Clear history");
      await waitForDialogsClosed(page);
      await waitForText(page, "Waiting for requests");
      expect((await user.client.get(`${BASE}/${r.id}/_history`)).json).toEqual([]);
      await goto(ui, `${h.url}/responders`);
      await waitForText(page, "inbox");
      expect(await axeViolations(page)).toEqual([]);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );
});
