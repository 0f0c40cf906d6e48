// API trackers through real HTTP: CRUD and validation, runs without scripts against a real upstream, revisions with
// dedupe, caps and diffs, logs and phases, _test, _debug, notifications through a real SMTP sink, isolation.
import { expectHiddenFromOtherUser } from "../../../tests/fixtures/tracker-isolation";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { lookup } from "node:dns/promises";
import { hostname } from "node:os";
import { isPrivateAddress } from "../../../platform/net/guard";
import { startTestServer, type TestServer, type TestUser } from "../../../tests/harness";
import { startSmtpSink, type SmtpSink } from "../../../tests/smtp-sink";
import { startUpstream, type Upstream } from "../../../tests/fixtures/upstream";

const BASE = "/api/web_scraping/api_trackers";
let srv: TestServer;
let smtp: SmtpSink;
let up: Upstream;
/** Shared users (creating one costs an argon2 hash): alice owns most trackers, bob is the other user. */
let alice: TestUser;
let bob: TestUser;
const clock = {
  t: Date.UTC(2026, 0, 1, 10, 17, 30),
  now() {
    return this.t;
  },
};

beforeAll(async () => {
  up = startUpstream();
  smtp = await startSmtpSink();
  srv = await startTestServer({
    clock,
    env: {
      // New users get basic here (the built-in default is ultimate, §27): the tests below name basic's limits.
      SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
      SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true",
      SECBOX_SMTP_HOST: "127.0.0.1",
      SECBOX_SMTP_PORT: String(smtp.port),
      SECBOX_SERVER_PUBLIC_URL: "https://secbox.test",
    },
  });
  [alice, bob] = await Promise.all([srv.createUser(), srv.createUser()]);
});
afterAll(async () => {
  await srv.stop();
  await smtp.close();
  up.stop();
});

const create = (u: TestUser, body: Record<string, unknown>) => u.client.post(BASE, { name: `t-${crypto.randomUUID().slice(0, 8)}`, ...body });
const target = (path: string, extra: Record<string, unknown> = {}) => ({ requests: [{ url: `${up.url}${path}`, ...extra }] });
const refresh = (u: TestUser, id: string, extra: Record<string, unknown> = {}) =>
  u.client.post(`${BASE}/${id}/_history`, { refresh: true, ...extra });

describe("API tracker CRUD", () => {
  test("create with defaults, get, list, update (present members replace), delete", async () => {
    const u = alice;
    const tag = (await u.client.post("/api/user/tags", { name: "feeds" })).json;
    const res = await u.client.post(BASE, {
      name: "  release-feed ",
      target: { requests: [{ url: `${up.url}/value`, headers: { accept: "application/json" } }], extractor: "return {body: 1}" },
      tagIds: [tag.id],
    });
    expect(res.status).toBe(201);
    const t = res.json;
    expect(t).toMatchObject({
      name: "release-feed",
      enabled: true,
      config: { revisions: 3, timeout: 10000 },
      target: {
        requests: [{ url: `${up.url}/value`, method: "GET", headers: { accept: "application/json" }, acceptInvalidCertificates: false }],
        extractor: "return {body: 1}",
      },
      notifications: false,
      secrets: "none",
      tagIds: [tag.id],
      tags: [{ id: tag.id, name: "feeds", color: "default" }],
    });
    expect(t.target.configurator).toBeUndefined();
    expect(t.target.requests[0].body).toBeUndefined();
    expect(t.config.job).toBeUndefined();
    expect(t.scheduledAt).toBeUndefined();
    expect(t.lastRanAt).toBeUndefined();
    expect(t.createdAt).toBe(Math.floor(clock.t / 1000));

    expect((await u.client.get(`${BASE}/${t.id}`)).json).toEqual(t);
    const list = await u.client.get(`${BASE}?q=release`);
    expect(list.json.total).toBe(1);
    expect(list.json.items[0].id).toBe(t.id);

    // Flat alias, echoed in the requests form.
    const flat = await create(u, { target: { url: `${up.url}/echo`, method: "POST", body: "{}", acceptStatuses: [200, 201] } });
    expect(flat.status).toBe(201);
    expect(flat.json.target).toEqual({
      requests: [{ url: `${up.url}/echo`, method: "POST", headers: {}, body: "{}", acceptInvalidCertificates: false, acceptStatuses: [200, 201] }],
    });

    const upd = await u.client.put(`${BASE}/${t.id}`, { config: { revisions: 5 }, notifications: true, tagIds: [] });
    expect(upd.status).toBe(204);
    const after = (await u.client.get(`${BASE}/${t.id}`)).json;
    expect(after.config).toEqual({ revisions: 5, timeout: 10000 });
    expect(after.notifications).toBe(true);
    expect(after.tagIds).toEqual([]);
    expect(after.target).toEqual(t.target); // absent member kept
    expect((await u.client.put(`${BASE}/${t.id}`, {})).json.code).toBe("INVALID_INPUT");

    expect((await u.client.delete(`${BASE}/${t.id}`)).status).toBe(204);
    expect((await u.client.get(`${BASE}/${t.id}`)).status).toBe(404);
    expect((await u.client.delete(`${BASE}/${t.id}`)).status).toBe(404);
  });

  test("validation: 400s with field names and codes, 409 duplicate names, 404 for malformed ids", async () => {
    const u = alice;
    const cases: [Record<string, unknown>, string, string][] = [
      [{ target: target("/value") }, "name", "INVALID_INPUT"],
      [{ name: "x" }, "target", "INVALID_INPUT"],
      [{ name: "x", target: { requests: [] } }, "target.requests", "INVALID_INPUT"],
      [{ name: "x", target: { requests: [{ url: "ftp://example.com/" }] } }, "target.requests[0].url", "INVALID_INPUT"],
      [{ name: "x", target: { requests: [{ url: "https://example.com/", method: "HEAD" }] } }, "target.requests[0].method", "INVALID_INPUT"],
      [{ name: "x", target: { requests: [{ url: "https://example.com/", headers: { a: 1 } }] } }, "target.requests[0].headers.a", "INVALID_INPUT"],
      [{ name: "x", target: { url: "https://example.com/", acceptStatuses: [99] } }, "target.acceptStatuses[0]", "INVALID_INPUT"],
      [{ name: "x", target: { url: "https://example.com/", extractor: "" } }, "target.extractor", "INVALID_INPUT"],
      [{ name: "x", target: { url: "https://example.com/", extractor: "x".repeat(51_201) } }, "target.extractor", "INVALID_INPUT"],
      [{ name: "x", target: target("/value"), config: { revisions: 31 } }, "config.revisions", "INVALID_INPUT"],
      [{ name: "x", target: target("/value"), config: { revisions: 2.5 } }, "config.revisions", "INVALID_INPUT"],
      [{ name: "x", target: target("/value"), config: { timeout: 999 } }, "config.timeout", "INVALID_INPUT"],
      [{ name: "x", target: target("/value"), config: { job: { schedule: "0 61 * * * *" } } }, "config.job.schedule", "INVALID_SCHEDULE"],
      [{ name: "x", target: target("/value"), config: { job: { schedule: "0 */5 * * * *" } } }, "config.job.schedule", "SCHEDULE_TOO_FREQUENT"],
      [
        { name: "x", target: target("/value"), config: { job: { schedule: "@hourly", retryStrategy: { type: "exponential" } } } },
        "config.job.retryStrategy.type",
        "INVALID_INPUT",
      ],
      [
        {
          name: "x",
          target: target("/value"),
          config: { job: { schedule: "@hourly", retryStrategy: { type: "constant", interval: 30_000, maxAttempts: 2 } } },
        },
        "config.job.retryStrategy.interval",
        "INVALID_INPUT",
      ],
      [
        {
          name: "x",
          target: target("/value"),
          config: { job: { schedule: "@hourly", retryStrategy: { type: "constant", interval: 60_000, maxAttempts: 11 } } },
        },
        "config.job.retryStrategy.maxAttempts",
        "INVALID_INPUT",
      ],
      [{ name: "x", target: target("/value"), secrets: { selected: ["NOPE"] } }, "secrets.selected[0]", "INVALID_INPUT"],
      [{ name: "x", target: target("/value"), tagIds: ["0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f40"] }, "tagIds", "INVALID_INPUT"],
      [{ name: "x", target: target("/value"), enabled: "yes" }, "enabled", "INVALID_INPUT"],
    ];
    for (const [body, field, code] of cases) {
      const res = await u.client.post(BASE, body);
      expect({ body, status: res.status, code: res.json.code }).toEqual({ body, status: 400, code });
      expect(res.json.message).toStartWith(`${field}:`);
    }
    const ok = await create(u, { name: "dup", target: target("/value"), config: { job: { schedule: "@daily" } } });
    expect(ok.status).toBe(201);
    expect(ok.json.config.job.schedule).toBe("0 17 10 * * *"); // preset anchored at the creation time (10:17 UTC)
    expect((await create(u, { name: "dup", target: target("/value") })).status).toBe(409);
    expect((await u.client.get(`${BASE}/not-a-uuid`)).status).toBe(404);
    expect((await u.client.post(`${BASE}/not-a-uuid/_history`, {})).status).toBe(404);
  });

  test("header names and values the outbound client would refuse → 400 INVALID_INPUT at create, update, _test and _debug", async () => {
    const u = alice;
    const bad: [Record<string, unknown>, string][] = [
      [{ x: "€" }, "target.requests[0].headers.x"], // above U+00FF: every run would fail with "Invalid header value"
      [{ x: "a\u0100" }, "target.requests[0].headers.x"],
      [{ x: "😀" }, "target.requests[0].headers.x"],
      [{ x: "a\nb" }, "target.requests[0].headers.x"],
      [{ x: "a\u007f" }, "target.requests[0].headers.x"],
      [{ "x y": "1" }, "target.requests[0].headers"],
      [{ é: "1" }, "target.requests[0].headers"],
      [{ "": "1" }, "target.requests[0].headers"],
    ];
    const existing = (await create(u, { target: target("/value") })).json;
    for (const [headers, field] of bad) {
      const requests = [{ url: `${up.url}/echo`, headers }];
      for (const [path, body, put] of [
        [BASE, { name: "hdr", target: { requests } }, false],
        [`${BASE}/${existing.id}`, { target: { requests } }, true],
        [`${BASE}/_test`, { target: { requests } }, false],
        [`${BASE}/_debug`, { target: { requests } }, false],
      ] as const) {
        const res = put ? await u.client.put(path, body) : await u.client.post(path, body);
        expect({ path, headers, status: res.status, code: res.json.code }).toEqual({ path, headers, status: 400, code: "INVALID_INPUT" });
        expect(res.json.message).toStartWith(`${field}:`);
      }
    }
    // The flat alias names the field without the requests index.
    const flat = await create(u, { target: { url: `${up.url}/echo`, headers: { x: "€" } } });
    expect([flat.status, flat.json.message]).toEqual([400, "target.headers.x: must not contain characters above U+00FF"]);
    expect((await u.client.get(`${BASE}/${existing.id}`)).json.target).toEqual(existing.target);
    expect((await u.client.get(`${BASE}?q=hdr`)).json.total).toBe(0);

    // Tab, visible ASCII and Latin-1 (U+0080..U+00FF) stay accepted, and runs send them.
    const ok = await create(u, { target: target("/echo", { headers: { "x-latin": "caf\u00e9\tok \u00ff" } }) });
    expect(ok.status).toBe(201);
    expect(ok.json.target.requests[0].headers).toEqual({ "x-latin": "caf\u00e9\tok \u00ff" });
    await refresh(u, ok.json.id);
    const [log] = (await u.client.get(`${BASE}/${ok.json.id}/_logs`)).json;
    expect(log).toMatchObject({ status: "success" });
    const tested = await u.client.post(`${BASE}/_test`, { target: target("/echo", { headers: { "x-latin": "caf\u00e9" } }) });
    expect(tested.status).toBe(200);
    await u.client.delete(`${BASE}/${ok.json.id}`);
    await u.client.delete(`${BASE}/${existing.id}`);
  });

  test("refused literal targets → 400 TARGET_NOT_ALLOWED unless private targets are allowed", async () => {
    const strict = await startTestServer({ clock });
    try {
      const u = await strict.createUser();
      for (const url of ["http://127.0.0.1:1/", "http://localhost/", "http://169.254.169.254/latest", "http://[::1]/", "http://10.1.2.3/"]) {
        const res = await u.client.post(BASE, { name: "x", target: { url } });
        expect(res.status).toBe(400);
        expect(res.json.code).toBe("TARGET_NOT_ALLOWED");
        const t = await u.client.post(`${BASE}/_test`, { target: { url } });
        expect(t.json.code).toBe("TARGET_NOT_ALLOWED");
        // §27: the refusal says how to allow it.
        expect(t.json.message).toEndWith("(an operator can allow private targets with network.allow_private_targets)");
        expect(res.json.message).toEndWith("(an operator can allow private targets with network.allow_private_targets)");
      }
      // Host names are only checked when a run resolves them.
      const res = await u.client.post(BASE, { name: "dns", target: { url: `http://example.invalid/` } });
      expect(res.status).toBe(201);
      // The machine's own host name resolves to a private or loopback address: the run fails with the guard's message.
      const host = hostname();
      const resolved = await lookup(host).catch(() => undefined);
      if (resolved && isPrivateAddress(resolved.address)) {
        const t = (await u.client.post(BASE, { name: "via-dns", target: { url: `http://${host}:1/` } })).json;
        await u.client.post(`${BASE}/${t.id}/_history`, { refresh: true });
        expect((await u.client.get(`${BASE}/${t.id}/_logs`)).json[0].error).toBe("Request 1 failed: URL not allowed (private address)");
        const tested = await u.client.post(`${BASE}/_test`, { target: { url: `http://${host}:1/` } });
        expect(tested.json.code).toBe("TARGET_NOT_ALLOWED");
        expect(tested.json.message).toEndWith(
          "URL not allowed (private address) (an operator can allow private targets with network.allow_private_targets)",
        );
      }
    } finally {
      await strict.stop();
    }
  });

  test("at most max_api_trackers per user", async () => {
    const capped = await startTestServer({ clock, env: { SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_API_TRACKERS: "2" } });
    try {
      const u = await capped.createUser(undefined, { tier: "basic" });
      for (const name of ["a", "b"]) expect((await u.client.post(BASE, { name, target: { url: "https://example.com/" } })).status).toBe(201);
      const third = await u.client.post(BASE, { name: "c", target: { url: "https://example.com/" } });
      expect(third.status).toBe(400);
      expect(third.json.code).toBe("LIMIT_REACHED");
    } finally {
      await capped.stop();
    }
  });
});

describe("runs without scripts", () => {
  test("default extractor stores the last response body; only changes make revisions; caps keep the newest", async () => {
    const u = alice;
    up.state.value = '{"version":"1.0.0"}';
    const t = (
      await create(u, {
        target: { requests: [{ url: `${up.url}/echo`, method: "POST", body: "ping", headers: { "x-test": "1" } }, { url: `${up.url}/value` }] },
        config: { revisions: 2 },
      })
    ).json;
    const before = up.hits.get("/echo") ?? 0;
    const first = await refresh(u, t.id);
    expect(first.status).toBe(200);
    expect(first.json).toHaveLength(1);
    expect(first.json[0]).toMatchObject({ trackerId: t.id, size: 19, data: { version: "1.0.0" } });
    expect(up.hits.get("/echo")).toBe(before + 1);
    const echoed = up.log.filter((l) => l.path === "/echo").at(-1)!;
    expect(echoed.body).toBe("ping");
    expect(echoed.headers["x-test"]).toBe("1");
    expect(echoed.headers["user-agent"]).toStartWith("Secbox/");
    expect(echoed.headers["content-type"]).toBeUndefined(); // no automatic Content-Type

    // Same bytes: no new revision.
    expect((await refresh(u, t.id)).json).toHaveLength(1);
    up.state.value = '{"version":"1.1.0"}';
    clock.t += 1000;
    expect((await refresh(u, t.id)).json.map((r: any) => r.data.version)).toEqual(["1.1.0", "1.0.0"]);
    up.state.value = "plain text, not JSON";
    clock.t += 1000;
    const third = (await refresh(u, t.id)).json;
    expect(third.map((r: any) => r.data)).toEqual(["plain text, not JSON", { version: "1.1.0" }]); // capped at 2

    const logs = (await u.client.get(`${BASE}/${t.id}/_logs`)).json;
    expect(logs).toHaveLength(4);
    expect(logs.map((l: any) => l.hasChanges)).toEqual([true, true, false, true]);
    expect(logs[0]).toMatchObject({ trackerId: t.id, status: "success", isManual: true, revisionSize: 20 });
    expect(logs[0].phases.map((p: any) => [p.phase, p.status])).toEqual([
      ["configurator", "skipped"],
      ["request", "success"],
      ["extractor", "skipped"],
      ["compare", "success"],
      ["persist", "success"],
      ["notify", "skipped"],
    ]);
    expect(logs[1].phases.find((p: any) => p.phase === "persist").status).toBe("success");
    expect(logs[2].phases.find((p: any) => p.phase === "persist").status).toBe("skipped");
    for (const p of logs[0].phases) expect(Number.isInteger(p.durationMs)).toBe(true);

    // Lowering config.revisions trims at once.
    await u.client.put(`${BASE}/${t.id}`, { config: { revisions: 1 } });
    expect((await u.client.post(`${BASE}/${t.id}/_history`, {})).json.map((r: any) => r.data)).toEqual(["plain text, not JSON"]);
    expect((await u.client.get(`${BASE}/${t.id}`)).json.lastRanAt).toBe(Math.floor(clock.t / 1000));
  });

  test("1 MB cap, decompression, acceptStatuses, status / network / timeout failures", async () => {
    const u = alice;
    const big = (await create(u, { target: target("/big?bytes=1500000") })).json;
    const rev = (await refresh(u, big.id)).json[0];
    expect(rev.size).toBe(1_048_576);
    expect(rev.data.length).toBe(1_048_576);

    up.state.value = "compressed hello";
    const gz = (await create(u, { target: target("/gzip") })).json;
    expect((await refresh(u, gz.id)).json[0].data).toBe("compressed hello");

    const accepted = (await create(u, { target: target("/status/404", { acceptStatuses: [404] }) })).json;
    expect((await refresh(u, accepted.id)).json[0]).toMatchObject({ size: 0, data: "" });

    const failing = (await create(u, { target: { requests: [{ url: `${up.url}/value` }, { url: `${up.url}/status/503` }] } })).json;
    expect((await refresh(u, failing.id)).status).toBe(200);
    const [log] = (await u.client.get(`${BASE}/${failing.id}/_logs`)).json;
    expect(log.status).toBe("failure");
    expect(log.error).toBe("Request 2 returned status 503 (expected 2xx)");
    expect(log.hasChanges).toBeUndefined();
    expect(log.phases.map((p: any) => [p.phase, p.status])).toEqual([
      ["configurator", "skipped"],
      ["request", "failure"],
      ["extractor", "skipped"],
      ["compare", "skipped"],
      ["persist", "skipped"],
      ["notify", "skipped"],
    ]);
    expect(log.phases[1].error).toBe(log.error);

    const down = (await create(u, { target: { url: "http://127.0.0.1:1/" } })).json;
    await refresh(u, down.id);
    expect((await u.client.get(`${BASE}/${down.id}/_logs`)).json[0].error).toStartWith("Request 1 failed: Failed to connect to upstream");

    const slow = (await create(u, { target: target("/slow?ms=1200"), config: { timeout: 1000 } })).json;
    await refresh(u, slow.id);
    expect((await u.client.get(`${BASE}/${slow.id}/_logs`)).json[0].error).toBe("Request 1 failed: Upstream request timed out");
    expect((await u.client.post(`${BASE}/${slow.id}/_history`, {})).json).toEqual([]);
  });

  test("secrets access modes: scripts see exactly the granted secrets by name ({} for none); previousContent after a revision", async () => {
    const u = alice;
    const a = (await u.client.post("/api/user/secrets", { name: "ALPHA", value: "a-value" })).json;
    await u.client.post("/api/user/secrets", { name: "BETA", value: "b-value" });
    // A recording stand-in for the sandbox (what the pipeline hands to scripts is the point here; the real sandbox
    // runs in scripts.test.ts): configurator returns null, extractor the default.
    const contexts: any[] = [];
    const wired = srv.services.trackers.scriptRunner;
    srv.services.trackers.setScriptRunner({
      async run(req) {
        contexts.push(req.context);
        return { ok: true, value: null, logs: [], durationMs: 0 };
      },
    });
    try {
      up.state.value = '{"n":1}';
      const seen: Record<string, unknown> = {};
      for (const [mode, selector] of [
        ["none", "none"],
        ["all", "all"],
        ["selected", { selected: [a.id] }],
        ["typed", { type: "selected", secrets: ["BETA"] }],
      ] as const) {
        const t = (await create(u, { target: { url: `${up.url}/value`, configurator: "null", extractor: "null" }, secrets: selector })).json;
        contexts.length = 0;
        await refresh(u, t.id);
        seen[mode] = contexts[0].params.secrets;
        expect(contexts[1].params.secrets).toEqual(contexts[0].params.secrets);
        expect("previousContent" in contexts[0]).toBe(false);
        await refresh(u, t.id);
        expect(contexts[2].previousContent).toEqual({ n: 1 });
        expect(contexts[3].responses[0].status).toBe(200);
        expect((await u.client.get(`${BASE}/${t.id}/_logs`)).json[0].phases.map((p: any) => p.status)).toEqual([
          "success",
          "success",
          "success",
          "success",
          "skipped",
          "skipped",
        ]);
      }
      expect(seen).toEqual({
        none: {},
        all: { ALPHA: "a-value", BETA: "b-value" },
        selected: { ALPHA: "a-value" },
        typed: { BETA: "b-value" },
      });
      // _debug masks the values it shows.
      const dbg = (await u.client.post(`${BASE}/_debug`, { target: { url: `${up.url}/value`, configurator: "null" }, secrets: "all" })).json;
      expect(dbg.configurator.params.params.secrets).toEqual({ ALPHA: "********", BETA: "********" });
      expect(contexts.at(-1).params.secrets).toEqual({ ALPHA: "a-value", BETA: "b-value" });
    } finally {
      srv.services.trackers.setScriptRunner(wired);
    }
  });

  test("a tracker with scripts fails clearly when no sandbox is wired", async () => {
    const u = alice;
    const t = (await create(u, { target: { url: `${up.url}/value`, configurator: "({requests: context.requests})" } })).json;
    const wired = srv.services.trackers.scriptRunner;
    srv.services.trackers.setScriptRunner(undefined);
    try {
      await refresh(u, t.id);
    } finally {
      srv.services.trackers.setScriptRunner(wired);
    }
    const [log] = (await u.client.get(`${BASE}/${t.id}/_logs`)).json;
    expect(log.status).toBe("failure");
    expect(log.error).toBe("Configurator failed: the script sandbox is not available on this server");
    expect(log.phases[0]).toMatchObject({ phase: "configurator", status: "failure" });
  });
});

describe("history, diffs and logs", () => {
  test("_history {diff} gives unified diffs (JSON pretty-printed); _clear and _clear_logs; logs summary", async () => {
    const u = alice;
    up.state.value = JSON.stringify({ version: "1.0.0", tags: ["a"] });
    const t = (await create(u, { target: target("/value") })).json;
    await refresh(u, t.id);
    up.state.value = JSON.stringify({ version: "1.1.0", tags: ["a"] });
    clock.t += 1000;
    const revs = (await refresh(u, t.id, { diff: true })).json;
    expect(revs).toHaveLength(2);
    expect(revs[1].diff).toBeUndefined(); // the oldest has nothing to compare with
    const diff: string = revs[0].diff;
    expect(diff).toContain("--- previous");
    expect(diff).toContain("+++ current");
    expect(diff).toContain('-  "version": "1.0.0",');
    expect(diff).toContain('+  "version": "1.1.0",');
    expect(diff).toContain('   "tags": [');
    expect((await u.client.post(`${BASE}/${t.id}/_history`, { diff: "yes" })).json.code).toBe("INVALID_INPUT");
    expect((await u.client.post(`${BASE}/${t.id}/_history`, {})).json[0].diff).toBeUndefined();

    const other = (await create(u, { target: target("/value") })).json;
    const empty = (await create(u, { target: target("/value") })).json;
    for (let i = 0; i < 12; i++) await refresh(u, other.id);
    const summary = (await u.client.get(`${BASE}/_logs_summary`)).json;
    expect(Object.keys(summary)).toEqual(expect.arrayContaining([t.id, other.id, empty.id]));
    expect(Object.keys(summary)).toHaveLength((await u.client.get(BASE)).json.total);
    expect(summary[t.id]).toHaveLength(2);
    expect(summary[other.id]).toHaveLength(10);
    expect(summary[empty.id]).toEqual([]);

    expect((await u.client.post(`${BASE}/${t.id}/_clear`)).status).toBe(204);
    expect((await u.client.post(`${BASE}/${t.id}/_history`, {})).json).toEqual([]);
    expect((await u.client.post(`${BASE}/${t.id}/_clear_logs`)).status).toBe(204);
    expect((await u.client.get(`${BASE}/${t.id}/_logs`)).json).toEqual([]);
  });

  test("(additions) revisionCount follows runs, caps and _clear; running is true while a run waits or runs", async () => {
    const u = alice;
    up.state.value = '{"n":1}';
    const t = (await create(u, { target: target("/value"), config: { revisions: 2 } })).json;
    expect([t.revisionCount, t.running]).toEqual([0, false]);
    const count = async () => (await u.client.get(`${BASE}/${t.id}`)).json.revisionCount;
    await refresh(u, t.id);
    expect(await count()).toBe(1);
    for (const n of [2, 3]) {
      up.state.value = `{"n":${n}}`;
      clock.t += 1000;
      await refresh(u, t.id);
    }
    expect(await count()).toBe(2); // capped by config.revisions
    const listed = (await u.client.get(`${BASE}?q=${t.id}`)).json.items[0];
    expect([listed.revisionCount, listed.running]).toEqual([2, false]);
    await u.client.post(`${BASE}/${t.id}/_clear`);
    expect(await count()).toBe(0);

    // A manual run against a slow upstream: running while it is in flight, false again once it has finished.
    const slow = (await create(u, { target: target("/slow?ms=1500") })).json;
    const run = refresh(u, slow.id);
    const deadline = Date.now() + 20_000;
    let seen = false;
    while (!seen && Date.now() < deadline) {
      seen = (await u.client.get(`${BASE}/${slow.id}`)).json.running === true;
      if (!seen) await Bun.sleep(20);
    }
    expect(seen).toBe(true);
    expect((await run).status).toBe(200);
    const after = (await u.client.get(`${BASE}/${slow.id}`)).json;
    expect([after.running, after.revisionCount]).toEqual([false, 1]);
  }, 30_000);

  test("at most 50 logs are kept", async () => {
    const u = alice;
    const t = (await create(u, { target: target("/count") })).json;
    for (let i = 0; i < 53; i++) await refresh(u, t.id);
    const logs = (await u.client.get(`${BASE}/${t.id}/_logs`)).json;
    expect(logs).toHaveLength(50);
    expect(logs.every((l: any) => l.hasChanges)).toBe(true);
    expect((await u.client.post(`${BASE}/${t.id}/_history`, {})).json[0].data).toBe(up.hits.get("/count")!);
  });
});

describe("_test and _debug", () => {
  test("_test sends requests[0] only, persists nothing, returns the raw response", async () => {
    const u = alice;
    const before = (await u.client.get(BASE)).json.total;
    const res = await u.client.post(`${BASE}/_test`, {
      target: {
        requests: [{ url: `${up.url}/echo`, method: "PUT", body: "hi", headers: { "X-A": "b" } }, { url: `${up.url}/status/500` }],
        configurator: "throw 1",
      },
    });
    expect(res.status).toBe(200);
    expect(res.json.status).toBe(200);
    expect(res.json.headers["content-type"]).toContain("application/json");
    expect(JSON.parse(res.json.body)).toMatchObject({ method: "PUT", body: "hi", headers: { "x-a": "b" } });
    expect(res.json.latencyMs).toBeNumber();
    const status = await u.client.post(`${BASE}/_test`, { target: { url: `${up.url}/status/418` } });
    expect(status.json).toMatchObject({ status: 418, body: "" });
    const down = await u.client.post(`${BASE}/_test`, { target: { url: "http://127.0.0.1:1/" } });
    expect(down.status).toBe(400);
    expect(down.json.code).toBe("UPSTREAM_FAILED");
    expect(down.json.message).toStartWith("Request failed: Failed to connect");
    expect((await u.client.post(`${BASE}/_test`, { target: { url: `${up.url}/` }, timeout: 60_001 })).json.code).toBe("INVALID_INPUT");
    expect((await u.client.get(BASE)).json.total).toBe(before);
  });

  test("_debug trace: stages null without scripts, request/response pairs, result as data; failures stop later stages", async () => {
    const u = alice;
    const before = (await u.client.get(BASE)).json.total;
    up.state.value = '{"a":1}';
    const ok = await u.client.post(`${BASE}/_debug`, {
      target: { requests: [{ url: `${up.url}/echo` }, { url: `${up.url}/value` }] },
      config: { timeout: 5000 },
    });
    expect(ok.status).toBe(200);
    expect(Object.keys(ok.json).sort()).toEqual(["configurator", "elapsedMs", "extractor", "requests", "result"]);
    expect(ok.json.configurator).toBeNull();
    expect(ok.json.extractor).toBeNull();
    expect(ok.json.requests).toHaveLength(2);
    expect(ok.json.requests[0].request).toEqual({ url: `${up.url}/echo`, method: "GET", headers: {} });
    expect(ok.json.requests[1].response).toMatchObject({ status: 200, body: '{"a":1}', bodySize: 7 });
    expect(ok.json.result).toEqual({ body: { a: 1 } });

    const failed = await u.client.post(`${BASE}/_debug`, { target: { requests: [{ url: "http://127.0.0.1:1/" }, { url: `${up.url}/value` }] } });
    expect(failed.json.requests).toHaveLength(1);
    expect(failed.json.requests[0].response.error).toStartWith("Failed to connect to upstream");
    expect(failed.json.result).toBeNull();

    const wired = srv.services.trackers.scriptRunner;
    srv.services.trackers.setScriptRunner(undefined);
    const scripted = await u.client
      .post(`${BASE}/_debug`, { target: { url: `${up.url}/value`, configurator: "null" } })
      .finally(() => srv.services.trackers.setScriptRunner(wired));
    expect(scripted.json.configurator.error).toBe("Configurator failed: the script sandbox is not available on this server");
    expect(scripted.json.configurator.params).toEqual({
      requests: [{ url: `${up.url}/value`, method: "GET", headers: {}, acceptInvalidCertificates: false }],
      params: { secrets: {} },
    });
    expect(scripted.json.requests).toEqual([]);
    expect(scripted.json.extractor).toBeNull();
    expect(scripted.json.result).toBeNull();
    expect((await u.client.post(`${BASE}/_debug`, { target: { url: `${up.url}/` }, secrets: { selected: ["missing"] } })).status).toBe(400);
    expect((await u.client.get(BASE)).json.total).toBe(before);
  });
});

describe("notifications", () => {
  test("change email with the diff to the routed address, only when notifications are on and an older revision exists", async () => {
    const u = await srv.createUser(`notify-${Date.now()}@example.com`);
    up.state.value = '{"version":"1.0.0"}';
    const t = (await create(u, { name: "release-feed", target: target("/value"), notifications: true })).json;
    await refresh(u, t.id); // first revision: nothing to compare with, no email
    up.state.value = '{"version":"2.0.0"}';
    clock.t += 1000;
    await refresh(u, t.id);
    const [mail] = await smtp.waitForTo(u.email, 1);
    expect(mail!.subject).toBe('[Secbox] Change detected: "release-feed"');
    expect(mail!.text).toContain('-  "version": "1.0.0"');
    expect(mail!.text).toContain('+  "version": "2.0.0"');
    expect(mail!.text).toContain(`https://secbox.test/trackers/api/${t.id}`);
    expect(mail!.headers.get("list-unsubscribe")).toContain("/api/notifications/unsubscribe?token=");
    const [log] = (await u.client.get(`${BASE}/${t.id}/_logs`)).json;
    expect(log.phases.at(-1)).toMatchObject({ phase: "notify", status: "success" });

    const quiet = (await create(u, { target: target("/value"), notifications: false })).json;
    await refresh(u, quiet.id);
    up.state.value = '{"version":"3.0.0"}';
    await refresh(u, quiet.id);
    await Bun.sleep(200);
    expect(smtp.messages.filter((m) => m.to.includes(u.email))).toHaveLength(1);
  });

  test("N failed scheduled runs in a row → one failing email; the next success → one recovered email", async () => {
    const u = await srv.createUser(`failing-${Date.now()}@example.com`, { tier: "ultimate" });
    up.state.fail = true;
    const t = (await create(u, { name: "flaky-api", target: target("/flaky"), notifications: true, config: { job: { schedule: "*/10 * * * * *" } } }))
      .json;
    const sched = srv.services.trackers.scheduler;
    const step = async () => {
      clock.t = sched.dueAt(t.id)!;
      sched.tick();
      await sched.idle();
    };
    await step();
    await step();
    await Bun.sleep(200);
    expect(smtp.messages.filter((m) => m.to.includes(u.email))).toHaveLength(0);
    await step(); // third consecutive failure (failure_alert_after = 3)
    const [failing] = await smtp.waitForTo(u.email, 1);
    expect(failing!.subject).toBe('[Secbox] Check failing: "flaky-api"');
    expect(failing!.text).toContain("Request 1 returned status 500");
    await step();
    await step();
    await Bun.sleep(200);
    expect(smtp.messages.filter((m) => m.to.includes(u.email))).toHaveLength(1); // once per streak
    up.state.fail = false;
    await step();
    const mails = await smtp.waitForTo(u.email, 2);
    expect(mails[1]!.subject).toBe('[Secbox] Check recovered: "flaky-api"');
    const logs = (await u.client.get(`${BASE}/${t.id}/_logs`)).json;
    expect(logs.map((l: any) => l.status)).toEqual(["success", "failure", "failure", "failure", "failure", "failure"]);
    expect(logs.every((l: any) => l.isManual === false)).toBe(true);
    await u.client.put(`${BASE}/${t.id}`, { enabled: false });
  });
});

describe("isolation and cleanup", () => {
  test("user B gets 404 on user A's tracker and never sees it", async () => {
    const [a, b] = [alice, bob];
    const t = (await create(a, { target: target("/value") })).json;
    await refresh(a, t.id);
    await expectHiddenFromOtherUser(b.client, BASE, t.id);
    expect((await a.client.get(`${BASE}?q=${t.id}`)).json.total).toBe(1);
    expect((await a.client.post(`${BASE}/${t.id}/_history`, {})).json).toHaveLength(1);
    expect((await srv.anon.get(BASE)).status).toBe(401);
    expect((await srv.anon.post(`${BASE}/_test`, { target: { url: "https://example.com" } })).status).toBe(401);
  });

  test("deleting a secret strips it from selectors; deleting a tracker removes revisions, logs and the schedule", async () => {
    const u = await srv.createUser(undefined, { tier: "ultimate" });
    const s1 = (await u.client.post("/api/user/secrets", { name: "TOKEN", value: "t0ps3cret" })).json;
    const s2 = (await u.client.post("/api/user/secrets", { name: "OTHER", value: "x" })).json;
    const t = (await create(u, { target: target("/value"), secrets: { selected: ["TOKEN", s2.id] }, config: { job: { schedule: "0 * * * * *" } } }))
      .json;
    expect(t.secrets).toEqual({ selected: [s1.id, s2.id] });
    expect(t.scheduledAt).toBeNumber();
    await u.client.delete(`/api/user/secrets/${s1.id}`);
    expect((await u.client.get(`${BASE}/${t.id}`)).json.secrets).toEqual({ selected: [s2.id] });
    await u.client.delete(`/api/user/secrets/${s2.id}`);
    expect((await u.client.get(`${BASE}/${t.id}`)).json.secrets).toBe("none");

    await refresh(u, t.id);
    expect(srv.services.trackers.scheduler.has(t.id)).toBe(true);
    expect((await u.client.delete(`${BASE}/${t.id}`)).status).toBe(204);
    expect(srv.services.trackers.scheduler.has(t.id)).toBe(false);
    const db = srv.rt.db;
    expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM tracker_revisions WHERE tracker_id = ?", [t.id]))!.n).toBe(0);
    expect((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM tracker_logs WHERE tracker_id = ?", [t.id]))!.n).toBe(0);

    const kept = (await create(u, { target: target("/value"), config: { job: { schedule: "0 * * * * *" } } })).json;
    expect(srv.services.trackers.scheduler.has(kept.id)).toBe(true);
    await srv.services.users.removeUser(u.id);
    expect(srv.services.trackers.scheduler.has(kept.id)).toBe(false);
  });
});
