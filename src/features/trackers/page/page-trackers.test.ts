// Page trackers through real HTTP with the real Chromium (/usr/bin/chromium, `[chromium] executable`) against local
// pages served by Bun.serve on 127.0.0.1 (private targets allowed on this server): CRUD and validation, scheduled and
// manual runs storing the visible text, JS-rendered content with waitFor, secrets and previousContent reaching the
// in-page extractor, extractor failures in the logs, the resources inventory, `_debug` with screenshots, change
// emails through a real SMTP sink, delete cleanup and isolation between users. One server (one Chromium) per file.
import { expectHiddenFromOtherUser } from "../../../tests/fixtures/tracker-isolation";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { startTestServer, type TestServer, type TestUser } from "../../../tests/harness";
import { startSmtpSink, type SmtpSink } from "../../../tests/smtp-sink";

const BASE = "/api/web_scraping/page_trackers";
let srv: TestServer;
let smtp: SmtpSink;
let pages: ReturnType<typeof Bun.serve>;
let site = "";
/** alice owns most trackers (ultimate tier: 10 s schedules), bob is the other user. */
let alice: TestUser;
let bob: TestUser;
const clock = {
  t: Date.UTC(2026, 0, 1, 10, 17, 30),
  now() {
    return this.t;
  },
};

// Mutable page state the tests drive.
const state = { price: 1, libVersion: 1 };
const html = (body: string, head = "") =>
  new Response(`<!doctype html><html><head><title>t</title>${head}</head><body>${body}</body></html>`, {
    headers: { "content-type": "text/html; charset=utf-8" },
  });
const libSource = () => `window.lib = ${state.libVersion};`;

beforeAll(async () => {
  pages = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const u = new URL(req.url);
      switch (u.pathname) {
        case "/static":
          return html(`<h1>Catalogue</h1><p>price: ${state.price} EUR</p>`);
        case "/rendered":
          // The text only exists once a script has run, 400 ms (or ?after= ms) after the load event.
          return html(
            `<p id="status">loading</p><script>setTimeout(() => { const d = document.createElement("div"); d.id = "late"; d.textContent = "rendered price " + ${state.price}; document.body.appendChild(d); }, ${Number(u.searchParams.get("after") ?? 400)});</script>`,
          );
        case "/console":
          return html(`<p>console page</p><script>console.log("hello from the page", 42); console.warn("careful");</script>`);
        case "/assets":
          return html(`<p>same text</p><script src="/lib.js"></script>`, `<link rel="stylesheet" href="/style.css">`);
        case "/lib.js":
          return new Response(libSource(), { headers: { "content-type": "text/javascript" } });
        case "/style.css":
          return new Response("body { color: #111; }", { headers: { "content-type": "text/css" } });
        default:
          return new Response("not found", { status: 404 });
      }
    },
  });
  site = `http://127.0.0.1:${pages.port}`;
  smtp = await startSmtpSink();
  srv = await startTestServer({
    clock,
    env: {
      SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true",
      SECBOX_SMTP_HOST: "127.0.0.1",
      SECBOX_SMTP_PORT: String(smtp.port),
      SECBOX_SERVER_PUBLIC_URL: "https://secbox.test",
      SECBOX_SUBSCRIPTIONS_TIERS_PROFESSIONAL_MAX_PAGE_TRACKERS: "2",
    },
  });
  [alice, bob] = await Promise.all([srv.createUser(undefined, { tier: "ultimate" }), srv.createUser()]);
});
afterAll(async () => {
  await srv.stop();
  await smtp.close();
  pages.stop(true);
});

const create = (u: TestUser, body: Record<string, unknown>) => u.client.post(BASE, { name: `p-${crypto.randomUUID().slice(0, 8)}`, ...body });
const createOk = async (u: TestUser, body: Record<string, unknown>) => {
  const res = await create(u, body);
  expect(res.status).toBe(201);
  return res.json;
};
const refresh = async (u: TestUser, id: string, extra: Record<string, unknown> = {}) => {
  const res = await u.client.post(`${BASE}/${id}/_history`, { refresh: true, ...extra });
  expect(res.status).toBe(200);
  return res.json as any[];
};
const logs = async (u: TestUser, id: string) => (await u.client.get(`${BASE}/${id}/_logs`)).json as any[];
const phaseNames = ["browser", "navigate", "extract", "compare", "persist", "notify"];

describe("page tracker CRUD and validation", () => {
  test("create with defaults, get, list, update (present members replace), delete", async () => {
    const u = alice;
    const tag = (await u.client.post("/api/user/tags", { name: "pages" })).json;
    const t = await createOk(u, { name: "  shop page ", target: { url: `${site}/static` }, tagIds: [tag.id] });
    expect(t).toMatchObject({
      name: "shop page",
      enabled: true,
      config: { revisions: 3, timeout: 30000 },
      target: { url: `${site}/static`, headers: {}, acceptInvalidCertificates: false, resources: false },
      notifications: false,
      secrets: "none",
      tagIds: [tag.id],
      tags: [{ id: tag.id, name: "pages", color: "default" }],
      createdAt: Math.floor(clock.t / 1000),
    });
    expect(Object.keys(t.target).sort()).toEqual(["acceptInvalidCertificates", "headers", "resources", "url"]);
    expect(t.scheduledAt).toBeUndefined();
    expect(t.lastRanAt).toBeUndefined();
    expect((await u.client.get(`${BASE}/${t.id}`)).json).toEqual(t);
    const list = await u.client.get(`${BASE}?q=shop`);
    expect(list.json).toEqual({ items: [t], total: 1 });
    // API trackers and page trackers are separate lists.
    expect((await u.client.get(`/api/web_scraping/api_trackers?q=shop`)).json.total).toBe(0);

    const full = {
      url: `${site}/rendered`,
      extractor: "document.title",
      waitFor: { selector: "#late", delayMs: 100 },
      userAgent: "SecboxTest/1.0",
      headers: { "x-test": "1" },
      acceptInvalidCertificates: true,
      resources: true,
    };
    const upd = await u.client.put(`${BASE}/${t.id}`, {
      target: full,
      config: { revisions: 5, timeout: 60000, job: { schedule: "*/30 * * * * *" } },
      notifications: true,
      tagIds: [],
    });
    expect(upd.status).toBe(204);
    const after = (await u.client.get(`${BASE}/${t.id}`)).json;
    expect(after.target).toEqual(full);
    expect(after.config).toEqual({ revisions: 5, timeout: 60000, job: { schedule: "*/30 * * * * *" } });
    expect(after.scheduledAt).toBeNumber();
    expect(after.notifications).toBe(true);
    expect(after.tagIds).toEqual([]);
    expect(after.name).toBe("shop page"); // absent member kept
    const empty = await u.client.put(`${BASE}/${t.id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.json.code).toBe("INVALID_INPUT");

    expect((await u.client.delete(`${BASE}/${t.id}`)).status).toBe(204);
    expect((await u.client.get(`${BASE}/${t.id}`)).status).toBe(404);
    expect((await u.client.delete(`${BASE}/${t.id}`)).status).toBe(404);
  });

  test("validation: 400s naming the field, 409 duplicate names, 404 for malformed ids, max_page_trackers", async () => {
    const u = alice;
    const ok = { url: `${site}/static` };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ target: ok }, "name", "INVALID_INPUT"],
      [{ name: "x" }, "target", "INVALID_INPUT"],
      [{ name: "x", target: "https://example.com/" }, "target", "INVALID_INPUT"],
      [{ name: "x", target: {} }, "target.url", "INVALID_INPUT"],
      [{ name: "x", target: { url: "ftp://example.com/" } }, "target.url", "INVALID_INPUT"],
      [{ name: "x", target: { url: `https://example.com/${"a".repeat(2048)}` } }, "target.url", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, extractor: "" } }, "target.extractor", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, extractor: "x".repeat(51_201) } }, "target.extractor", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, extractor: 5 } }, "target.extractor", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: "#a" } }, "target.waitFor", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: { selector: "a".repeat(1025) } } }, "target.waitFor.selector", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: { selector: "" } } }, "target.waitFor.selector", "INVALID_INPUT"],
      // Selectors no run could ever use (querySelector throws on them).
      [{ name: "x", target: { ...ok, waitFor: { selector: "[[[" } } }, "target.waitFor.selector", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: { selector: "##" } } }, "target.waitFor.selector", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: { selector: "div > p)" } } }, "target.waitFor.selector", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: { selector: "a:not(.x]" } } }, "target.waitFor.selector", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: { selector: ".5" } } }, "target.waitFor.selector", "INVALID_INPUT"],
      // Issue 30: accepted before, though every run failed on them ("Invalid selector").
      [{ name: "x", target: { ...ok, waitFor: { selector: "div[" } } }, "target.waitFor.selector", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: { selector: "li:nth-child(x)" } } }, "target.waitFor.selector", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: { selector: "main >" } } }, "target.waitFor.selector", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: { selector: "svg|rect" } } }, "target.waitFor.selector", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: { delayMs: 30_001 } } }, "target.waitFor.delayMs", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: { delayMs: -1 } } }, "target.waitFor.delayMs", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, waitFor: { delayMs: 1.5 } } }, "target.waitFor.delayMs", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, userAgent: "u".repeat(513) } }, "target.userAgent", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, userAgent: "a\nb" } }, "target.userAgent", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, headers: { a: 1 } } }, "target.headers.a", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, headers: { "bad name": "v" } } }, "target.headers", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, headers: ["a"] } }, "target.headers", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, headers: { Host: "x.example" } } }, "target.headers", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, headers: { "Proxy-Authorization": "Basic eA==" } } }, "target.headers", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, headers: { connection: "close" } } }, "target.headers", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, acceptInvalidCertificates: "yes" } }, "target.acceptInvalidCertificates", "INVALID_INPUT"],
      [{ name: "x", target: { ...ok, resources: 1 } }, "target.resources", "INVALID_INPUT"],
      [{ name: "x", target: ok, config: { timeout: 4999 } }, "config.timeout", "INVALID_INPUT"],
      [{ name: "x", target: ok, config: { timeout: 120_001 } }, "config.timeout", "INVALID_INPUT"],
      [{ name: "x", target: ok, config: { revisions: 1001 } }, "config.revisions", "INVALID_INPUT"],
      [{ name: "x", target: ok, config: { job: { schedule: "0 61 * * * *" } } }, "config.job.schedule", "INVALID_SCHEDULE"],
      [{ name: "x", target: ok, config: { job: { schedule: "*/5 * * * * *" } } }, "config.job.schedule", "SCHEDULE_TOO_FREQUENT"],
      [{ name: "x", target: ok, secrets: { selected: ["NOPE"] } }, "secrets.selected[0]", "INVALID_INPUT"],
      [{ name: "x", target: ok, tagIds: ["0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f40"] }, "tagIds", "INVALID_INPUT"],
      [{ name: "x", target: ok, notifications: "yes" }, "notifications", "INVALID_INPUT"],
      [{ name: "", target: ok }, "name", "INVALID_INPUT"],
    ];
    for (const [body, fieldName, code] of cases) {
      const res = await u.client.post(BASE, body);
      expect({ body, status: res.status, code: res.json?.code }).toEqual({ body, status: 400, code });
      expect(res.json.message).toStartWith(`${fieldName}:`);
    }
    // The refusal names the selector and says what is wrong with it; an update is checked the same way.
    const unusable = await u.client.post(BASE, { name: "x", target: { ...ok, waitFor: { selector: "div[" } } });
    expect(unusable.json.message).toBe('target.waitFor.selector: "div[" is not a valid CSS selector (Expected attribute name)');
    const saved = await createOk(u, { target: ok });
    const updated = await u.client.put(`${BASE}/${saved.id}`, { target: { ...ok, waitFor: { selector: "#a > .b:not(.c" } } }); // closed by CSS: fine
    expect(updated.status).toBe(204);
    const broken = await u.client.put(`${BASE}/${saved.id}`, { target: { ...ok, waitFor: { selector: "#a > .b:nth-child(2n+)" } } });
    expect(broken.status).toBe(400);
    expect(broken.json.message).toStartWith('target.waitFor.selector: "#a > .b:nth-child(2n+)" is not a valid CSS selector (');
    await u.client.delete(`${BASE}/${saved.id}`);
    // Boundaries accepted; an empty waitFor and user agent mean "none".
    const edge = await createOk(u, {
      target: { url: `https://example.com/${"a".repeat(2000)}`, waitFor: { delayMs: 0 }, userAgent: "", extractor: "x".repeat(51_200) },
      config: { timeout: 5000 },
    });
    expect(edge.target.waitFor).toEqual({ delayMs: 0 });
    expect(edge.target.userAgent).toBeUndefined();
    expect(edge.config.timeout).toBe(5000);
    expect((await createOk(u, { target: { ...ok, waitFor: {} }, config: { timeout: 120_000 } })).target.waitFor).toBeUndefined();
    // Valid selectors of every shape pass (brackets and parentheses inside strings, escapes, comments, nesting).
    for (const selector of [
      `main article[data-id="a]b(c"] > p:nth-child(2n + 1 of .x):not(:has(> img))`,
      `#\\31 23.a\\:b::part(x), :is(h1, h2)[lang|=en i] /* ( ] */ ~ span`,
      `li:nth-last-of-type(odd) a[href$='.pdf' i]`,
    ]) {
      expect((await createOk(u, { target: { ...ok, waitFor: { selector } } })).target.waitFor).toEqual({ selector });
    }

    await createOk(u, { name: "dup", target: ok });
    const dup = await create(u, { name: "dup", target: ok });
    expect(dup.status).toBe(409);
    expect(dup.json.code).toBe("DUPLICATE_NAME");
    expect((await u.client.get(`${BASE}/not-a-uuid`)).status).toBe(404);
    expect((await u.client.put(`${BASE}/not-a-uuid`, { name: "y" })).status).toBe(404);
    expect((await u.client.post(`${BASE}/not-a-uuid/_history`, {})).status).toBe(404);
    expect((await u.client.post(`${BASE}/not-a-uuid/_clear`)).status).toBe(404);
    const badHistory = await u.client.post(`${BASE}/${edge.id}/_history`, { refresh: "yes" });
    expect(badHistory.status).toBe(400);

    // max_page_trackers (2 on the professional tier of this server).
    const capped = await srv.createUser(undefined, { tier: "professional" });
    for (const name of ["a", "b"]) expect((await capped.client.post(BASE, { name, target: ok })).status).toBe(201);
    const third = await capped.client.post(BASE, { name: "c", target: ok });
    expect(third.status).toBe(400);
    expect(third.json.code).toBe("LIMIT_REACHED");
  });
});

describe("runs", () => {
  test("a scheduled run stores the visible text; a change adds a revision with a diff; no change adds none", async () => {
    const u = alice;
    state.price = 10;
    const t = await createOk(u, { name: "catalogue", target: { url: `${site}/static` }, config: { job: { schedule: "*/10 * * * * *" } } });
    const sched = srv.services.trackers.scheduler;
    expect(t.scheduledAt).toBe(Math.floor(sched.dueAt(t.id)! / 1000));
    const step = async () => {
      clock.t = sched.dueAt(t.id)!;
      sched.tick();
      await sched.idle();
    };
    await step();
    let revs: any[] = (await u.client.post(`${BASE}/${t.id}/_history`, {})).json;
    expect(revs).toHaveLength(1);
    expect(revs[0].data).toBe("Catalogue\n\nprice: 10 EUR");
    expect(revs[0].size).toBe(new TextEncoder().encode(revs[0].data).byteLength);
    let [log] = await logs(u, t.id);
    expect(log).toMatchObject({ status: "success", isManual: false, hasChanges: true, revisionSize: revs[0].size });
    expect(log.phases.map((p: any) => p.phase)).toEqual(phaseNames);
    expect(log.phases.map((p: any) => p.status)).toEqual(["success", "success", "success", "success", "success", "skipped"]);
    expect((await u.client.get(`${BASE}/${t.id}`)).json.lastRanAt).toBe(log.startedAt);

    await step(); // same page: no new revision
    [log] = await logs(u, t.id);
    expect(log).toMatchObject({ status: "success", hasChanges: false });

    state.price = 12;
    revs = await refresh(u, t.id, { diff: true }); // manual run
    expect(revs.map((r) => r.data)).toEqual(["Catalogue\n\nprice: 12 EUR", "Catalogue\n\nprice: 10 EUR"]);
    expect(revs[0].diff).toContain("-price: 10 EUR");
    expect(revs[0].diff).toContain("+price: 12 EUR");
    expect(revs[1].diff).toBeUndefined();
    const all = await logs(u, t.id);
    expect(all.map((l) => l.isManual)).toEqual([true, false, false]);
    const summary = (await u.client.get(`${BASE}/_logs_summary`)).json;
    expect(summary[t.id]).toHaveLength(3);

    expect((await u.client.post(`${BASE}/${t.id}/_clear`)).status).toBe(204);
    expect((await u.client.post(`${BASE}/${t.id}/_history`)).json).toEqual([]);
    expect((await u.client.post(`${BASE}/${t.id}/_clear_logs`)).status).toBe(204);
    expect(await logs(u, t.id)).toEqual([]);
    await u.client.put(`${BASE}/${t.id}`, { enabled: false });
    expect((await u.client.get(`${BASE}/${t.id}`)).json.scheduledAt).toBeUndefined();
  });

  test("JS-rendered content: waitFor selector (and delay) waits for what scripts add after load", async () => {
    const u = alice;
    state.price = 7;
    const bySelector = await createOk(u, {
      target: { url: `${site}/rendered`, waitFor: { selector: "#late" }, extractor: `document.querySelector("#late").textContent` },
    });
    expect((await refresh(u, bySelector.id))[0]?.data).toBe("rendered price 7");
    const byDelay = await createOk(u, { target: { url: `${site}/rendered`, waitFor: { delayMs: 800 } } });
    expect((await refresh(u, byDelay.id))[0]?.data).toBe("loading\n\nrendered price 7");
    // Without waiting, the extractor sees the page right after its load event (the text comes a minute later here, so
    // that a slow machine cannot let it in first).
    const noWait = await createOk(u, {
      target: { url: `${site}/rendered?after=60000`, extractor: `document.querySelector("#late") === null ? "not yet" : "rendered"` },
    });
    expect((await refresh(u, noWait.id))[0]?.data).toBe("not yet");
  });

  test("secrets and previousContent reach the in-page extractor; JSON results are stored as JSON", async () => {
    const u = alice;
    const s = (await u.client.post("/api/user/secrets", { name: "PAGE_TOKEN", value: "t0ps3cret-page" })).json;
    await u.client.post("/api/user/secrets", { name: "NOT_GRANTED", value: "hidden" });
    const extractor = `({
      token: context.params.secrets.PAGE_TOKEN,
      other: context.params.secrets.NOT_GRANTED ?? null,
      names: Object.keys(context.params.secrets),
      previous: context.previousContent === undefined ? null : context.previousContent.title,
      title: document.querySelector("h1").textContent,
    })`;
    const t = await createOk(u, { target: { url: `${site}/static`, extractor }, secrets: { selected: ["PAGE_TOKEN"] } });
    expect(t.secrets).toEqual({ selected: [s.id] });
    const [first] = await refresh(u, t.id);
    expect(first.data).toEqual({ token: "t0ps3cret-page", other: null, names: ["PAGE_TOKEN"], previous: null, title: "Catalogue" });
    const [second] = await refresh(u, t.id);
    expect(second.data).toEqual({ token: "t0ps3cret-page", other: null, names: ["PAGE_TOKEN"], previous: "Catalogue", title: "Catalogue" });

    // "none": an empty secrets object, still present.
    const none = await createOk(u, { target: { url: `${site}/static`, extractor: `JSON.stringify(context.params.secrets)` } });
    expect((await refresh(u, none.id))[0]?.data).toEqual({});
  });

  test("an extractor error fails the run: failure log with phases, no revision, 200 from _history", async () => {
    const u = alice;
    const t = await createOk(u, { target: { url: `${site}/static`, extractor: `throw new Error("no price found")` } });
    expect(await refresh(u, t.id)).toEqual([]);
    const [log] = await logs(u, t.id);
    expect(log).toMatchObject({ status: "failure", isManual: true, error: "Extractor failed: Error: no price found" });
    expect(log.hasChanges).toBeUndefined();
    expect(log.phases.map((p: any) => [p.phase, p.status])).toEqual([
      ["browser", "success"],
      ["navigate", "success"],
      ["extract", "failure"],
      ["compare", "skipped"],
      ["persist", "skipped"],
      ["notify", "skipped"],
    ]);
    expect(log.phases[2].error).toBe("Extractor failed: Error: no price found");

    // A page that cannot be reached fails in navigate.
    const gone = await createOk(u, { target: { url: `http://127.0.0.1:1/` } });
    await refresh(u, gone.id);
    const [navLog] = await logs(u, gone.id);
    expect(navLog.status).toBe("failure");
    expect(navLog.phases.map((p: any) => p.status).slice(0, 3)).toEqual(["success", "failure", "skipped"]);
  });

  test("resources inventory: a swapped script is a change even when the text is the same", async () => {
    const u = alice;
    state.libVersion = 1;
    const t = await createOk(u, { target: { url: `${site}/assets`, resources: true } });
    const sha = (s: string) => createHash("sha256").update(s).digest("hex");
    const [r1] = await refresh(u, t.id);
    expect(r1.data).toEqual({
      content: "same text",
      resources: [
        { url: `${site}/lib.js`, type: "script", size: libSource().length, sha256: sha(libSource()) },
        { url: `${site}/style.css`, type: "stylesheet", size: 21, sha256: sha("body { color: #111; }") },
      ],
    });
    await refresh(u, t.id);
    expect((await logs(u, t.id))[0].hasChanges).toBe(false);
    state.libVersion = 2;
    const revs = await refresh(u, t.id, { diff: true });
    expect(revs).toHaveLength(2);
    expect(revs[0].data.content).toBe("same text");
    expect(revs[0].data.resources[0].sha256).toBe(sha(libSource()));
    expect(revs[0].diff).toContain(`-      "sha256": "${sha("window.lib = 1;")}"`);
    expect((await logs(u, t.id))[0].hasChanges).toBe(true);
  });
});

describe("_debug", () => {
  test("result, console logs and PNG screenshots; errors with an error screenshot; nothing persisted", async () => {
    const u = alice;
    const before = (await u.client.get(BASE)).json.total;
    const res = await u.client.post(`${BASE}/_debug`, {
      target: { url: `${site}/console`, extractor: `({p: document.querySelector("p").textContent})` },
      config: { timeout: 20000 },
    });
    expect(res.status).toBe(200);
    const d = res.json;
    expect(Object.keys(d).sort()).toEqual(["elapsedMs", "logs", "result", "screenshots"]);
    expect(d.result).toEqual({ p: "console page" });
    expect(d.logs).toContainEqual({ level: "log", message: "hello from the page 42" });
    expect(d.logs).toContainEqual({ level: "warn", message: "careful" });
    expect(d.screenshots.map((s: any) => s.label)).toEqual(["navigated", "final"]);
    for (const s of d.screenshots) {
      expect(s.mimeType).toBe("image/png");
      const png = Buffer.from(s.data, "base64");
      expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      expect(png.readUInt32BE(16)).toBe(1280); // IHDR width
      expect(png.readUInt32BE(20)).toBe(800); // IHDR height
    }
    expect(d.elapsedMs).toBeGreaterThan(0);

    // Secrets by selector; a failing extractor gives `error` and an error screenshot.
    await u.client.post("/api/user/secrets", { name: "DEBUG_TOKEN", value: "dbg" });
    const withSecret = (
      await u.client.post(`${BASE}/_debug`, { target: { url: `${site}/static`, extractor: "context.params.secrets.DEBUG_TOKEN" }, secrets: "all" })
    ).json;
    expect(withSecret.result).toBe("dbg");
    const failed = (await u.client.post(`${BASE}/_debug`, { target: { url: `${site}/static`, extractor: "throw new Error('nope')" } })).json;
    expect(failed.error).toBe("Extractor failed: Error: nope");
    expect(failed.result).toBeUndefined();
    expect(failed.screenshots.map((s: any) => s.label)).toEqual(["navigated", "error"]);

    for (const body of [
      {},
      { target: { url: "nope" } },
      { target: { url: `${site}/static` }, config: { timeout: 1000 } },
      { target: { url: `${site}/static` }, secrets: { selected: ["MISSING"] } },
    ]) {
      const bad = await u.client.post(`${BASE}/_debug`, body);
      expect({ body, status: bad.status, code: bad.json.code }).toEqual({ body, status: 400, code: "INVALID_INPUT" });
    }
    expect((await u.client.get(BASE)).json.total).toBe(before);
    expect((await srv.anon.post(`${BASE}/_debug`, { target: { url: `${site}/static` } })).status).toBe(401);
  });
});

describe("notifications", () => {
  test("a change sends the change email with the diff and the page tracker link", async () => {
    const u = await srv.createUser(`page-notify-${Date.now()}@example.com`);
    state.price = 20;
    const t = await createOk(u, { name: "price-watch", target: { url: `${site}/static` }, notifications: true });
    await refresh(u, t.id); // first revision: nothing to compare with, no email
    state.price = 25;
    clock.t += 1000;
    await refresh(u, t.id);
    const [mail] = await smtp.waitForTo(u.email, 1);
    expect(mail!.subject).toBe('[Secbox] Change detected: "price-watch"');
    expect(mail!.text).toContain("-price: 20 EUR");
    expect(mail!.text).toContain("+price: 25 EUR");
    expect(mail!.text).toContain(`https://secbox.test/trackers/page/${t.id}`);
    const [log] = await logs(u, t.id);
    expect(log.phases.at(-1)).toMatchObject({ phase: "notify", status: "success" });
  });
});

describe("cleanup and isolation", () => {
  test("deleting a tracker unschedules it and deletes its revisions and logs", async () => {
    const u = alice;
    const t = await createOk(u, { target: { url: `${site}/static` }, config: { job: { schedule: "0 * * * * *" } } });
    await refresh(u, t.id);
    const sched = srv.services.trackers.scheduler;
    expect(sched.has(t.id)).toBe(true);
    expect((await u.client.delete(`${BASE}/${t.id}`)).status).toBe(204);
    expect(sched.has(t.id)).toBe(false);
    const db = srv.rt.db;
    expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM tracker_revisions WHERE tracker_id = ?", [t.id]))!.n).toBe(0);
    expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM tracker_logs WHERE tracker_id = ?", [t.id]))!.n).toBe(0);
  });

  test("user B gets 404 on user A's page tracker and never sees it", async () => {
    const t = await createOk(alice, { target: { url: `${site}/static` } });
    await refresh(alice, t.id);
    await expectHiddenFromOtherUser(bob.client, BASE, t.id);
    // An API tracker id is not a page tracker.
    const api = (await alice.client.post("/api/web_scraping/api_trackers", { name: "api-one", target: { url: `${site}/static` } })).json;
    expect((await alice.client.get(`${BASE}/${api.id}`)).status).toBe(404);
    // Still intact for the owner.
    expect((await alice.client.post(`${BASE}/${t.id}/_history`, {})).json).toHaveLength(1);
    expect((await alice.client.get(`${BASE}?q=${t.id}`)).json.total).toBe(1);
    expect((await srv.anon.get(BASE)).status).toBe(401);
  });
});
