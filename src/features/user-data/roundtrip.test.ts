// The round-trip property (issue 21): export everything (history and secrets included) → import into a fresh user →
// export again equals the first, modulo ids and timestamps, on a data set that uses every type and field. The same
// holds for an operator clone. Plus what the imported data does: secrets decrypt under this server's key and reach
// responders, history and revisions are restored with their times.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { startUpstream, type Upstream } from "../../tests/fixtures/upstream";
import { buildDataset, fullExport, hit, normalize, quickUser, type Dataset } from "../../tests/fixtures/user-data";

const PASS = "correct horse battery staple";
const OPERATOR = "op@roundtrip.example";
let srv: TestServer;
let upstream: Upstream;
let source: TestUser;
let dataset: Dataset;
let first: any;

beforeAll(async () => {
  upstream = startUpstream();
  srv = await startTestServer({
    env: { SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true", SECBOX_SECURITY_OPERATORS: OPERATOR, SECBOX_SCHEDULER_ENABLED: "false" },
  });
  source = await quickUser(srv);
  dataset = await buildDataset(srv, source, upstream);
  first = await fullExport(source.client, PASS);
});
afterAll(async () => {
  await srv.stop();
  upstream.stop();
});

describe("round trip", () => {
  test("the data set covers every type and field", () => {
    const d = first.data;
    expect(d.tags.length).toBe(3);
    expect(d.secrets.every((s: any) => typeof s.encryptedValue === "string")).toBe(true);
    expect(d.scripts.map((s: any) => s.scriptType).sort()).toEqual(["api_configurator", "api_extractor", "page_extractor", "responder", "universal"]);
    const orders = d.responders.find((r: any) => r.name === "orders-mock");
    expect(orders.location.subdomainPrefix).toBe("shop");
    expect(orders.settings.notifications).toEqual({ enabled: true, throttleSeconds: 900 });
    expect(orders.history.length).toBe(5); // 7 hits, 5 tracked
    expect(orders.history[0].body).toBe(Buffer.from('{"i":6}').toString("base64"));
    // every record carries the status sent (supplement §27), its response stored or not
    expect(orders.history.map((h: any) => [h.statusCode, h.response])).toEqual(Array(5).fill([201, undefined]));
    const echo = d.responders.find((r: any) => r.name === "echo");
    expect(echo.history[0].response).toMatchObject({ statusCode: 202, truncated: false });
    expect(echo.history[0].statusCode).toBe(202);
    expect(d.privateKeys.map((k: any) => k.encrypted).sort()).toEqual([false, false, true]);
    expect(d.apiTrackers[0].revisions.length).toBe(3);
    expect(d.pageTrackers[0].revisions.map((r: any) => Buffer.from(r.body, "base64").toString())).toEqual(["All systems go", '{"title":"Degraded"}']);
    expect(Object.keys(d.settings).length).toBe(6);
    expect(d.contentSecurityPolicies[0].directives.length).toBe(6);
  });

  test("export → import into a fresh user → export equals the first (modulo ids and timestamps)", async () => {
    const fresh = await quickUser(srv);
    const res = await fresh.client.post("/api/user/data/_import", { data: first, secretsPassphrase: PASS });
    expect(res.status).toBe(200);
    expect(res.json.warnings).toEqual([]);
    expect(res.json.results).toMatchObject({
      tags: { imported: 3, updated: 0, skipped: 0, deleted: 0 },
      secrets: { imported: 2 },
      scripts: { imported: 5 },
      responders: { imported: 3 },
      certificateTemplates: { imported: 2 },
      privateKeys: { imported: 3 },
      contentSecurityPolicies: { imported: 1 },
      pageTrackers: { imported: 1 },
      apiTrackers: { imported: 1 },
      settings: { imported: true },
    });
    const second = await fullExport(fresh.client, "another passphrase");
    expect(normalize(second, "another passphrase")).toEqual(normalize(first, PASS));
    // New ids everywhere; record times kept.
    const ids = (f: any) => new Set(Object.values(f.data).flatMap((v: any) => (Array.isArray(v) ? v.map((e: any) => e.id) : [])));
    const overlap = [...ids(second)].filter((id) => ids(first).has(id));
    expect(overlap).toEqual([]);
    expect(second.data.responders.find((r: any) => r.name === "orders-mock").history.map((h: any) => h.createdAt)).toEqual(
      first.data.responders.find((r: any) => r.name === "orders-mock").history.map((h: any) => h.createdAt),
    );
  });

  test("an operator clone exports equal to the source too", async () => {
    const op = await quickUser(srv, { email: OPERATOR });
    const res = await op.client.post("/api/users/_clone", { source: { id: source.id }, destination: { email: "clone-rt@example.com" } });
    expect(res.status).toBe(200);
    const clone = await srv.services.users.getRowByEmail("clone-rt@example.com");
    const session = await srv.services.users.createSession(clone!.id);
    const { ApiClient } = await import("../../tests/harness");
    const exported = await fullExport(new ApiClient(srv.url, { session }), PASS);
    expect(normalize(exported, PASS)).toEqual(normalize(first, PASS));
  });

  test("imported secrets decrypt under this server's key and reach the responder; history keeps its times", async () => {
    const fresh = await quickUser(srv);
    expect((await fresh.client.post("/api/user/data/_import", { data: first, secretsPassphrase: PASS })).status).toBe(200);
    const res = await hit(srv, fresh, "/orders/1", { method: "POST", prefix: "shop", body: "{}" });
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual({ ok: true, token: "tok-ünïcode-✓" });
    const echo = await hit(srv, fresh, "/echo", { method: "GET" });
    expect(((await echo.json()) as any).secrets.sort()).toEqual(["API_TOKEN", "signing-key"]);
    // The newly tracked hit sorts after the restored records; the depth of 5 still holds.
    const list = (await fresh.client.get("/api/webhooks/responders?q=orders-mock")).json.items[0];
    const history = (await fresh.client.get(`/api/webhooks/responders/${list.id}/_history`)).json;
    expect(history.length).toBe(5);
    expect(history[0].path).toBe("/orders/1");
    expect(history[0].body).toBe(Buffer.from("{}").toString("base64"));
  });

  test("an encrypted private key keeps its passphrase; an unencrypted one exports the same key", async () => {
    const fresh = await quickUser(srv);
    expect((await fresh.client.post("/api/user/data/_import", { data: first, secretsPassphrase: PASS })).status).toBe(200);
    const keys = (await fresh.client.get("/api/certificates/private_keys")).json.items;
    const signer = keys.find((k: any) => k.name === "signer");
    expect(signer.encrypted).toBe(true);
    expect((await fresh.client.post(`/api/certificates/private_keys/${signer.id}/_export`, { format: "pem" })).json.code).toBe("BAD_PASSPHRASE");
    expect(
      (await fresh.client.post(`/api/certificates/private_keys/${signer.id}/_export`, { format: "pem", passphrase: "key passphrase" })).status,
    ).toBe(200);
    const web = keys.find((k: any) => k.name === "web");
    const a = (await fresh.client.post(`/api/certificates/private_keys/${web.id}/_export`, { format: "pkcs8" })).json.data;
    const origWeb = (await source.client.get("/api/certificates/private_keys?q=web")).json.items[0];
    const b = (await source.client.post(`/api/certificates/private_keys/${origWeb.id}/_export`, { format: "pkcs8" })).json.data;
    expect(a).toBe(b);
  });
});
