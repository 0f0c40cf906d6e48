// POST /api/user/data/_export (supplement §19.1, §19.2) through real HTTP: the file format, selections, tags that
// come along, secret values only under a passphrase (read back with an independent §19.2 implementation), private
// keys as PKCS#8, streaming and the file name, and another user's data never included.
import { createPrivateKey } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { decryptValue, fileKey, hit, quickUser } from "../../tests/fixtures/user-data";

let srv: TestServer;
let alice: TestUser;
let bob: TestUser;
const ids: Record<string, string> = {};

beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_SCHEDULER_ENABLED: "false" } });
  alice = await quickUser(srv);
  bob = await quickUser(srv);
  const c = alice.client;
  ids.prod = (await c.post("/api/user/tags", { name: "prod", color: "danger" })).json.id;
  ids.lonely = (await c.post("/api/user/tags", { name: "lonely" })).json.id;
  ids.scope = (await c.post("/api/user/tags", { name: "scope" })).json.id;
  ids.secret = (await c.post("/api/user/secrets", { name: "TOKEN", value: "s3cr3t-✓" })).json.id;
  ids.script = (await c.post("/api/user/scripts", { name: "lib", scriptType: "universal", content: "return 1;", tagIds: [ids.prod] })).json.id;
  ids.r1 = (
    await c.post("/api/webhooks/responders", { name: "r1", location: { pathType: "=", path: "/a" }, settings: { requestsToTrack: 3 } })
  ).json.id;
  ids.r2 = (await c.post("/api/webhooks/responders", { name: "r2", location: { pathType: "=", path: "/b" }, tagIds: [ids.prod] })).json.id;
  ids.key = (await c.post("/api/certificates/private_keys", { keyName: "web", alg: { keyType: "ecdsa", curve: "secp256r1" } })).json.id;
  await c.post("/api/user/settings", { "common.uiTheme": "dark", "common.globalScopeTagIds": [ids.scope] });
  for (let i = 0; i < 4; i++) await hit(srv, alice, "/a", { method: "POST", body: `hit ${i}` });
  // Bob's data must never show up in Alice's file.
  await bob.client.post("/api/user/tags", { name: "bobs-tag" });
  await bob.client.post("/api/webhooks/responders", { name: "bobs", location: { pathType: "=", path: "/a" } });
});
afterAll(() => srv.stop());

const exportOf = async (body?: unknown) => {
  const res = await alice.client.post("/api/user/data/_export", body);
  return res;
};

describe("export", () => {
  test("401 without credentials", async () => {
    expect((await srv.anon.post("/api/user/data/_export", {})).status).toBe(401);
  });

  test("no include: everything without history, settings included; the §19.2 envelope; file name and streaming", async () => {
    const res = await exportOf();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toStartWith("application/json");
    expect(res.headers.get("content-disposition")).toMatch(/^attachment; filename="secbox-export-\d{8}-\d{6}\.json"$/);
    // Streamed: no Content-Length, the body arrives in chunks.
    expect(res.headers.get("content-length")).toBeNull();
    const f = res.json;
    expect(f.format).toBe("secbox-export");
    expect(f.version).toBe(1);
    expect(Number.isInteger(f.exportedAt)).toBe(true);
    expect(f.secretsEncryption).toBeUndefined();
    expect(Object.keys(f.data)).toEqual([
      "tags",
      "scripts",
      "secrets",
      "responders",
      "certificateTemplates",
      "privateKeys",
      "contentSecurityPolicies",
      "pageTrackers",
      "apiTrackers",
      "settings",
    ]);
    expect(f.data.tags.map((t: any) => t.name)).toEqual(["lonely", "prod", "scope"]);
    expect(f.data.secrets).toEqual([{ id: ids.secret, name: "TOKEN", tagIds: [], createdAt: expect.any(Number), updatedAt: expect.any(Number) }]);
    const r2 = f.data.responders.find((r: any) => r.id === ids.r2);
    expect(r2).toEqual({
      id: ids.r2,
      name: "r2",
      location: { pathType: "=", path: "/b" },
      method: "ANY",
      enabled: true,
      settings: { requestsToTrack: 0, statusCode: 200, secrets: "none" },
      tagIds: [ids.prod],
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
    });
    expect(f.data.responders.every((r: any) => r.history === undefined && r.url === undefined && r.tags === undefined)).toBe(true);
    expect(f.data.settings).toEqual({ "common.uiTheme": "dark", "common.globalScopeTagIds": [ids.scope] });
    expect(JSON.stringify(f)).not.toContain("bobs");
  });

  test("a selection: only the listed ids; tags referenced by them come along; absent types are absent", async () => {
    const f = (
      await exportOf({
        include: { scripts: { type: "selected", ids: [ids.script] }, responders: { type: "selected", ids: [ids.r1!.toUpperCase()] } },
      })
    ).json;
    expect(Object.keys(f.data)).toEqual(["tags", "scripts", "responders"]);
    expect(f.data.scripts.map((s: any) => s.id)).toEqual([ids.script]);
    expect(f.data.scripts[0].content).toBe("return 1;");
    expect(f.data.responders.map((r: any) => r.id)).toEqual([ids.r1]);
    expect(f.data.tags.map((t: any) => t.id)).toEqual([ids.prod]);
    // settings: true brings the tags of the global scope.
    const g = (await exportOf({ include: { settings: true, tags: { type: "selected", ids: [ids.lonely] } } })).json;
    expect(g.data.tags.map((t: any) => t.name)).toEqual(["lonely", "scope"]);
  });

  test("includeHistory: records newest first in the §11.10 shape", async () => {
    const f = (await exportOf({ include: { responders: { type: "selected", ids: [ids.r1], includeHistory: true } } })).json;
    const h = f.data.responders[0].history;
    expect(h.length).toBe(3);
    expect(h.map((r: any) => Buffer.from(r.body, "base64").toString())).toEqual(["hit 3", "hit 2", "hit 1"]);
    expect(h[0]).toMatchObject({ id: expect.any(String), method: "POST", path: "/a", bodySize: 5, headers: expect.any(Array) });
  });

  test("secret values only under a passphrase: argon2id + AES-256-GCM exactly as §19.2 says", async () => {
    const f = (await exportOf({ include: { secrets: { type: "all" } }, secretsPassphrase: "correct horse" })).json;
    expect(f.secretsEncryption).toEqual({ alg: "aes-256-gcm", kdf: "argon2id", kdfParams: { m: 19456, t: 2, p: 1 }, salt: expect.any(String) });
    const key = fileKey(f, "correct horse");
    expect(decryptValue(key, f.data.secrets[0].encryptedValue)).toBe("s3cr3t-✓");
    expect(() => decryptValue(fileKey(f, "wrong horse"), f.data.secrets[0].encryptedValue)).toThrow();
    // Fresh salt and nonce per export.
    const g = (await exportOf({ include: { secrets: { type: "all" } }, secretsPassphrase: "correct horse" })).json;
    expect(g.secretsEncryption.salt).not.toBe(f.secretsEncryption.salt);
  });

  test("private keys as PKCS#8 DER (base64) that node:crypto reads", async () => {
    const f = (await exportOf({ include: { privateKeys: { type: "all" } } })).json;
    const k = f.data.privateKeys[0];
    expect(k).toMatchObject({ id: ids.key, name: "web", alg: { keyType: "ecdsa", curve: "secp256r1" }, encrypted: false, tagIds: [] });
    const key = createPrivateKey({ key: Buffer.from(k.pkcs8, "base64"), format: "der", type: "pkcs8" });
    expect(key.asymmetricKeyType).toBe("ec");
    expect(key.asymmetricKeyDetails?.namedCurve).toBe("prime256v1");
  });

  test("400 on a bad request: unknown or foreign ids, short passphrase, bad shapes", async () => {
    const bobsTag = (await bob.client.get("/api/user/tags")).json.items[0].id;
    const cases: [unknown, string][] = [
      [{ include: { tags: { type: "selected", ids: [bobsTag] } } }, "include.tags.ids[0]"],
      [{ include: { responders: { type: "selected", ids: ["01890000-0000-7000-8000-000000000000"] } } }, "include.responders.ids[0]"],
      [{ include: { responders: { type: "some" } } }, "include.responders.type"],
      [{ include: { tags: { type: "selected", ids: ["nope"] } } }, "include.tags.ids"],
      [{ include: { tags: { type: "all", includeHistory: true } } }, "include.tags.includeHistory"],
      [{ include: { settings: "yes" } }, "include.settings"],
      [{ include: [] }, "include"],
      [{ secretsPassphrase: "short" }, "secretsPassphrase"],
      [{ secretsPassphrase: 12345678 }, "secretsPassphrase"],
    ];
    for (const [body, field] of cases) {
      const res = await exportOf(body);
      expect({ body, status: res.status, code: res.json?.code }).toEqual({ body, status: 400, code: "INVALID_INPUT" });
      expect(res.json.message).toContain(field);
    }
  });

  test("a large history streams out page by page and parses as one file", async () => {
    const u = await quickUser(srv, { tier: "ultimate" });
    const r = (
      await u.client.post("/api/webhooks/responders", { name: "big", location: { pathType: "*", path: "/" }, settings: { requestsToTrack: 400 } })
    ).json;
    const body = "x".repeat(2000);
    // 10 at a time: the tier's max_concurrent_hits (more in flight would be refused with 429 on a slow machine)
    for (let i = 0; i < 400; i += 10) {
      const statuses = await Promise.all(
        Array.from({ length: 10 }, async (_, k) => (await hit(srv, u, `/p${i + k}`, { method: "POST", body })).status),
      );
      expect(statuses.every((s) => s === 200)).toBe(true);
    }
    const res = await fetch(`${srv.url}/api/user/data/_export`, {
      method: "POST",
      headers: { cookie: `secbox_session=${u.session}`, "content-type": "application/json" },
      body: JSON.stringify({ include: { responders: { type: "all", includeHistory: true } } }),
    });
    let chunks = 0;
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of res.body!) {
      chunks++;
      text += decoder.decode(chunk, { stream: true });
    }
    expect(chunks).toBeGreaterThan(1);
    const f = JSON.parse(text);
    expect(f.data.responders[0].id).toBe(r.id);
    expect(f.data.responders[0].history.length).toBe(400);
    expect(new Set(f.data.responders[0].history.map((h: any) => h.path)).size).toBe(400);
  });
});
