// POST /api/users/_clone (supplement §19.5) through real HTTP: operator only; a fresh activated user without a
// password holding a copy of everything (history and subscription by default), never logs, KV data, shares, API keys,
// sessions or the notification email; the recovery link lets the operator set a password and sign in as the clone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ApiClient, startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { startUpstream, type Upstream } from "../../tests/fixtures/upstream";
import { hit, quickUser } from "../../tests/fixtures/user-data";

const OPERATOR = "op@clone.example";
let srv: TestServer;
let upstream: Upstream;
let op: TestUser;
let src: TestUser;
let trackerId: string;

beforeAll(async () => {
  upstream = startUpstream();
  // basic by default: a clone without its subscription gets it, and is not re-checked against its limits
  srv = await startTestServer({
    env: {
      SECBOX_SECURITY_OPERATORS: OPERATOR,
      SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true",
      SECBOX_SCHEDULER_ENABLED: "false",
      SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "basic",
    },
  });
  op = await quickUser(srv, { email: OPERATOR });
  src = await quickUser(srv, { tier: "professional", email: "ana@clone.example" });
  const c = src.client;
  await c.post("/api/user/secrets", { name: "TOKEN", value: "t0k" });
  // A responder that counts its hits in KV (KV is never copied).
  await c.post("/api/webhooks/responders", {
    name: "counter",
    location: { pathType: "=", path: "/count" },
    settings: {
      requestsToTrack: 50,
      script:
        "(async () => { const n = Number((await Secbox.kv.get('n')) ?? 0) + 1; await Secbox.kv.set('n', String(n)); return {body: String(n)}; })()",
    },
  });
  for (let i = 0; i < 3; i++) expect(await (await hit(srv, src, "/count")).text()).toBe(String(i + 1));
  const template = (
    await c.post("/api/certificates/templates", {
      templateName: "t",
      attributes: {
        commonName: "x",
        keyAlgorithm: { keyType: "ed25519" },
        signatureAlgorithm: "ed25519",
        notValidBefore: 1767225600,
        notValidAfter: 1798761600,
      },
    })
  ).json;
  expect((await c.post(`/api/certificates/templates/${template.id}/_share`)).status).toBe(200);
  trackerId = (await c.post("/api/web_scraping/api_trackers", { name: "feed", enabled: false, target: { url: `${upstream.url}/value` } })).json.id;
  expect((await c.post(`/api/web_scraping/api_trackers/${trackerId}/_history`, { refresh: true })).status).toBe(200);
  await c.post("/api/user/api_keys", { name: "ci" });
  await c.put("/api/user/notification_email", { email: "alerts@clone.example" });
  await c.post("/api/user/settings", { "common.uiTheme": "dark" });
  await srv.services.users.setSubscription(src.email, { tier: "ultimate", endsAt: Math.floor(Date.now() / 1000) + 86_400 });
});
afterAll(async () => {
  await srv.stop();
  upstream.stop();
});

const clone = (body: unknown, as: TestUser = op) => as.client.post("/api/users/_clone", body);

describe("clone", () => {
  test("operator only: 401 without credentials, 403 NOT_OPERATOR for others", async () => {
    const body = { source: { email: src.email }, destination: { email: "x@clone.example" } };
    expect((await srv.anon.post("/api/users/_clone", body)).status).toBe(401);
    const res = await clone(body, src);
    expect(res.status).toBe(403);
    expect(res.json.code).toBe("NOT_OPERATOR");
  });

  test("400 for bad parameters (before the source), 404 for an unknown source, 400 EMAIL_TAKEN for a registered destination", async () => {
    const cases: [unknown, string][] = [
      [{}, "source"],
      [{ source: { email: src.email, id: src.id }, destination: { email: "a@x.io" } }, "source"],
      [{ source: { id: "nope" }, destination: { email: "a@x.io" } }, "source.id"],
      [{ source: { email: src.email }, destination: { email: "not an email" } }, "destination.email"],
      [{ source: { email: src.email }, destination: { email: "a@x.io" }, recoveryLinkExpiresIn: 59 }, "recoveryLinkExpiresIn"],
      [{ source: { email: src.email }, destination: { email: "a@x.io" }, recoveryLinkExpiresIn: 604_801 }, "recoveryLinkExpiresIn"],
      [{ source: { email: src.email }, destination: { email: "a@x.io" }, includeHistory: "yes" }, "includeHistory"],
      [{ source: { email: src.email }, destination: { email: "a@x.io", handle: "API" } }, "handle"],
    ];
    for (const [body, field] of cases) {
      const res = await clone(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.json.message).toContain(field);
    }
    expect((await clone({ source: { email: "ghost@clone.example" }, destination: { email: "a@x.io" } })).status).toBe(404);
    expect((await clone({ source: { id: "01890000-0000-7000-8000-000000000000" }, destination: { email: "a@x.io" } })).status).toBe(404);
    // §1 check order: the destination handle's format is a body value (400 before the unknown source's 404); whether
    // it is taken needs stored data (after the 404).
    const badHandle = await clone({ source: { email: "ghost@clone.example" }, destination: { email: "a@x.io", handle: "API" } });
    expect({ status: badHandle.status, code: badHandle.json.code }).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect(badHandle.json.message).toContain("destination.handle");
    expect((await clone({ source: { email: "ghost@clone.example" }, destination: { email: "a@x.io", handle: op.handle } })).status).toBe(404);
    const taken = await clone({ source: { email: src.email }, destination: { email: op.email } });
    expect({ status: taken.status, code: taken.json.code }).toEqual({ status: 400, code: "EMAIL_TAKEN" });
    expect(await srv.services.users.getRowByEmail("a@x.io")).toBeUndefined();
  });

  test("copies everything with history and subscription; the recovery link signs the operator in as the clone", async () => {
    const res = await clone({
      source: { email: src.email },
      destination: { email: "Ana+Clone@clone.example", handle: "anaclone" },
      recoveryLinkExpiresIn: 600,
    });
    expect(res.status).toBe(200);
    const body = res.json;
    expect(body.id).toBe(body.user.id);
    expect(body.user).toMatchObject({
      email: "ana+clone@clone.example",
      handle: "anaclone",
      isActivated: true,
      subscription: { tier: "ultimate", endsAt: expect.any(Number) },
    });
    expect(body.recoveryLink.url).toMatch(/^http:\/\/localhost:7070\/recover\?token=[A-Za-z0-9_-]{43}$/);
    expect(body.recoveryLink.expiresAt - Math.floor(Date.now() / 1000)).toBeWithin(480, 601); // 600 s from the server's now
    expect(body.summary.results).toMatchObject({
      secrets: { imported: 1 },
      responders: { imported: 1 },
      certificateTemplates: { imported: 1 },
      apiTrackers: { imported: 1 },
      settings: { imported: true },
    });
    expect(body.summary.warnings).toEqual([]);

    // An operator made it, so the address counts as proven (supplement §3.5).
    expect(await srv.rt.db.get("SELECT email_proof FROM users WHERE id = ?", [body.id])).toEqual({ email_proof: "clone" });
    // No password: sign-in fails until the recovery link is used.
    expect((await srv.anon.post("/api/auth/signin", { email: "ana+clone@clone.example", password: "whatever-password" })).status).toBe(401);
    const token = new URL(body.recoveryLink.url).searchParams.get("token");
    const recovered = await srv.anon.post("/api/auth/recover", { token, newPassword: "clone password 1" });
    expect(recovered.status).toBe(200);
    const signin = await srv.anon.post("/api/auth/signin", { email: "ana+clone@clone.example", password: "clone password 1" });
    expect(signin.status).toBe(200);
    const session = /secbox_session=([^;]+)/.exec(signin.headers.get("set-cookie") ?? "")![1]!;
    const c = new ApiClient(srv.url, { session });
    expect((await c.get("/api/users/self")).json.id).toBe(body.id);
    // The link works once.
    expect((await srv.anon.post("/api/auth/recover", { token, newPassword: "again password" })).json.code).toBe("INVALID_TOKEN");

    // History and revisions copied; logs, KV, shares, API keys, notification email not.
    const responder = (await c.get("/api/webhooks/responders")).json.items[0];
    expect((await c.get(`/api/webhooks/responders/${responder.id}/_history`)).json.length).toBe(3);
    const tracker = (await c.get("/api/web_scraping/api_trackers")).json.items[0];
    expect((await c.post(`/api/web_scraping/api_trackers/${tracker.id}/_history`, {})).json.length).toBe(1);
    expect((await c.get(`/api/web_scraping/api_trackers/${tracker.id}/_logs`)).json).toEqual([]);
    expect((await src.client.get(`/api/web_scraping/api_trackers/${trackerId}/_logs`)).json.length).toBe(1);
    const cloneUser: TestUser = { id: body.id, email: body.user.email, handle: "anaclone", session, client: c };
    expect(await (await hit(srv, cloneUser, "/count")).text()).toBe("1");
    const template = (await c.get("/api/certificates/templates")).json.items[0];
    expect((await c.get(`/api/certificates/templates/${template.id}`)).json.userShare).toBeUndefined();
    expect((await c.get("/api/user/api_keys")).json).toEqual([]);
    expect((await c.get("/api/user/notification_email")).json).toBeNull();
    expect((await c.get("/api/user/settings")).json).toEqual({ "common.uiTheme": "dark" });
    // The source is untouched.
    expect(await (await hit(srv, src, "/count")).text()).toBe("4");
  });

  test("includeHistory: false and copySubscription: false", async () => {
    const res = await clone({ source: { id: src.id }, destination: { email: "lite@clone.example" }, includeHistory: false, copySubscription: false });
    expect(res.status).toBe(200);
    expect(res.json.user.subscription.tier).toBe("basic");
    const session = await srv.services.users.createSession(res.json.id);
    const c = new ApiClient(srv.url, { session });
    const responder = (await c.get("/api/webhooks/responders")).json.items[0];
    expect((await c.get(`/api/webhooks/responders/${responder.id}/_history`)).json).toEqual([]);
    // Not re-checked against the destination's tier: requestsToTrack 50 is above basic's 30.
    expect(responder.settings.requestsToTrack).toBe(50);
  });
});
