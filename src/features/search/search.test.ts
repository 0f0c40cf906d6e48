// POST /api/search (supplement §20) through real HTTP: every type, name / id / content matches, ranking and `total`,
// validation, never another user's data, never secret values or key material.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { quickUser } from "../../tests/fixtures/user-data";

let nowMs = 1_767_225_600_000;
const tick = () => (nowMs += 1000);
let srv: TestServer;
let u: TestUser;
let other: TestUser;
const ids: Record<string, string> = {};

const search = (body: unknown, user: TestUser = u) => user.client.post("/api/search", body);

beforeAll(async () => {
  srv = await startTestServer({ clock: { now: () => nowMs }, env: { SECBOX_SCHEDULER_ENABLED: "false" } });
  u = await quickUser(srv);
  other = await quickUser(srv);
  const c = u.client;
  const make = async (key: string, path: string, body: unknown) => {
    tick();
    const res = await c.post(path, body);
    if (res.status !== 201) throw new Error(`${key}: ${res.status} ${res.text}`);
    ids[key] = res.json.id;
  };
  await make("tag", "/api/user/tags", { name: "needle-tag" });
  await make("secret", "/api/user/secrets", { name: "NEEDLE_SECRET", value: "findme-secret-value" });
  await make("script", "/api/user/scripts", { name: "needle script", scriptType: "universal", content: "return 1;" });
  await make("responder", "/api/webhooks/responders", { name: "Needle Responder", location: { pathType: "=", path: "/r" } });
  await make("template", "/api/certificates/templates", {
    templateName: "needle-template",
    attributes: {
      commonName: "x",
      keyAlgorithm: { keyType: "ed25519" },
      signatureAlgorithm: "ed25519",
      notValidBefore: 1767225600,
      notValidAfter: 1798761600,
    },
  });
  await make("key", "/api/certificates/private_keys", { keyName: "needle-key", alg: { keyType: "ed25519" } });
  await make("policy", "/api/web_security/csp", { name: "needle-policy", content: { type: "serialized", value: "default-src 'self'" } });
  await make("page", "/api/web_scraping/page_trackers", { name: "needle-page", enabled: false, target: { url: "https://example.com/" } });
  await make("api", "/api/web_scraping/api_trackers", { name: "needle-api", enabled: false, target: { url: "https://example.com/" } });
  // Content only (names do not contain the words).
  await make("contentScript", "/api/user/scripts", { name: "helper", scriptType: "responder", content: "// uses the MagicWord here\nreturn 2;" });
  await make("contentResponder", "/api/webhooks/responders", { name: "plain", location: { pathType: "*", path: "/Hooks/MagicWord" } });
  await make("contentPage", "/api/web_scraping/page_trackers", {
    name: "status",
    enabled: false,
    target: { url: "https://status.magicword.example/" },
  });
  await make("contentApi", "/api/web_scraping/api_trackers", {
    name: "feed",
    enabled: false,
    target: { requests: [{ url: "https://a.example/one", headers: { "x-magicword": "no" } }, { url: "https://b.example/magicword/two" }] },
  });
  // Another user's things match the same words; none may show up.
  await other.client.post("/api/user/tags", { name: "needle-of-other" });
  await other.client.post("/api/user/scripts", { name: "needle-other", scriptType: "universal", content: "magicword" });
  ids.othersTag = (await other.client.get("/api/user/tags")).json.items[0].id;
});
afterAll(() => srv.stop());

describe("search", () => {
  test("401 without credentials", async () => {
    expect((await srv.anon.post("/api/search", { query: "x" })).status).toBe(401);
  });

  test("every type by name (case-insensitive); newest first within the name group; total", async () => {
    const res = await search({ query: "NEEDLE" });
    expect(res.status).toBe(200);
    expect(res.json.total).toBe(9);
    expect(res.json.items.map((i: any) => i.type)).toEqual([
      "apiTracker",
      "pageTracker",
      "contentSecurityPolicy",
      "privateKey",
      "certificateTemplate",
      "responder",
      "script",
      "secret",
      "tag",
    ]);
    expect(res.json.items[0]).toEqual({ type: "apiTracker", id: ids.api, name: "needle-api", matched: "name", updatedAt: expect.any(Number) });
    const updated = res.json.items.map((i: any) => i.updatedAt);
    expect([...updated].sort((a, b) => b - a)).toEqual(updated);
  });

  test("content: script source, responder path, page tracker URL, any API tracker request URL — not headers", async () => {
    const res = await search({ query: "magicword" });
    expect(res.json.total).toBe(4);
    expect(res.json.items.map((i: any) => [i.type, i.id, i.matched])).toEqual([
      ["apiTracker", ids.contentApi, "content"],
      ["pageTracker", ids.contentPage, "content"],
      ["responder", ids.contentResponder, "content"],
      ["script", ids.contentScript, "content"],
    ]);
  });

  test("an id matches when equal to the query (any case); ranked after names, before content", async () => {
    const byId = await search({ query: ids.responder!.toUpperCase() });
    expect(byId.json).toEqual({
      items: [{ type: "responder", id: ids.responder, name: "Needle Responder", matched: "id", updatedAt: expect.any(Number) }],
      total: 1,
    });
    expect((await search({ query: ids.responder!.slice(0, 13) })).json.total).toBe(0);
    // A script named with another entity's id, and content holding it: name first, then id, then content.
    tick();
    const named = (await u.client.post("/api/user/scripts", { name: `about ${ids.key}`, scriptType: "universal", content: "x" })).json.id;
    tick();
    const content = (await u.client.post("/api/user/scripts", { name: "refers", scriptType: "universal", content: `see ${ids.key}` })).json.id;
    const res = await search({ query: ids.key });
    expect(res.json.items.map((i: any) => [i.id, i.matched])).toEqual([
      [named, "name"],
      [ids.key, "id"],
      [content, "content"],
    ]);
    expect(res.json.total).toBe(3);
    await u.client.delete(`/api/user/scripts/${named}`);
    await u.client.delete(`/api/user/scripts/${content}`);
  });

  test("never another user's data; never secret values or key material", async () => {
    expect((await search({ query: "other" })).json).toEqual({ items: [], total: 0 });
    expect((await search({ query: ids.othersTag })).json).toEqual({ items: [], total: 0 });
    expect((await search({ query: "findme-secret-value" })).json).toEqual({ items: [], total: 0 });
    expect((await search({ query: "PRIVATE KEY" })).json.total).toBe(0);
    const theirs = await search({ query: "needle" }, other);
    expect(theirs.json.items.map((i: any) => i.name).sort()).toEqual(["needle-of-other", "needle-other"]);
  });

  test("types, limit (total counts everything), empty query, literal % and _", async () => {
    const res = await search({ query: "needle", types: ["tag", "secret", "tag"], limit: 1 });
    expect(res.json.total).toBe(2);
    expect(res.json.items.map((i: any) => i.type)).toEqual(["secret"]);
    expect((await search({ query: "needle", types: [] })).json.total).toBe(9);
    expect((await search({ query: "   " })).json).toEqual({ items: [], total: 0 });
    for (let i = 0; i < 3; i++) await u.client.post("/api/user/tags", { name: `50%_off-${i}` });
    await u.client.post("/api/user/tags", { name: "50x_off" });
    expect((await search({ query: "%_" })).json.total).toBe(3);
    expect((await search({ query: "e", limit: 500 })).json.items.length).toBeLessThanOrEqual(100);
  });

  test("names compare with Unicode case folding", async () => {
    tick();
    const id = (await u.client.post("/api/user/tags", { name: "ärger-bericht" })).json.id;
    tick();
    const resp = (
      await u.client.post("/api/webhooks/responders", { name: "ÄRGER-Hook", location: { pathType: "=", path: "/ärger".replace("ä", "%C3%A4") } })
    ).json.id;
    const res = await search({ query: "ÄrGeR" });
    expect(res.json.items.map((i: any) => i.id)).toEqual([resp, id]);
    expect(res.json.total).toBe(2);
  });

  test("400 for a bad request", async () => {
    const cases: [unknown, string][] = [
      [{}, "query"],
      [{ query: 5 }, "query"],
      [{ query: "x".repeat(201) }, "query"],
      [{ query: "x", types: ["widget"] }, "types[0]"],
      [{ query: "x", types: "tag" }, "types"],
      [{ query: "x", limit: 0 }, "limit"],
      [{ query: "x", limit: 2.5 }, "limit"],
      [{ query: "x", limit: "10" }, "limit"],
    ];
    for (const [body, field] of cases) {
      const res = await search(body);
      expect({ body, status: res.status, code: res.json?.code }).toEqual({ body, status: 400, code: "INVALID_INPUT" });
      expect(res.json.message).toContain(field);
    }
    expect((await search({ query: ` ${"y".repeat(200)} ` })).status).toBe(200);
  });
});
