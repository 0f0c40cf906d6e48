// Test helpers of the user-data feature: users without password hashing, full exports, the comparison of two exports
// "modulo ids and timestamps" (ids become labels by position, references follow them, secret values are decrypted
// with an implementation of §19.2 written here from the spec, not the one under test), and a data set that uses
// every entity type and field, built through the real API (and real responder hits and tracker runs).
import { createDecipheriv, argon2Sync } from "node:crypto";
import { expect } from "bun:test";
import type { Tier } from "../../config/schema";
import { ApiClient, type TestServer, type TestUser } from "../../tests/harness";

let n = 0;

/** An activated user without a password (no argon2 cost), signed in with a real session. */
export async function quickUser(srv: TestServer, opts: { tier?: Tier; email?: string } = {}): Promise<TestUser> {
  const email = opts.email ?? `data-${++n}-${Date.now()}@example.com`;
  const row = await srv.services.users.create({ email, tier: opts.tier, emailProof: "operator" });
  const session = await srv.services.users.createSession(row.id);
  return { id: row.id, email: row.email, handle: row.handle, session, client: new ApiClient(srv.url, { session }) };
}

export const ALL_WITH_HISTORY = {
  tags: { type: "all" },
  scripts: { type: "all" },
  secrets: { type: "all" },
  responders: { type: "all", includeHistory: true },
  certificateTemplates: { type: "all" },
  privateKeys: { type: "all" },
  contentSecurityPolicies: { type: "all" },
  pageTrackers: { type: "all", includeHistory: true },
  apiTrackers: { type: "all", includeHistory: true },
  settings: true,
};

/** Everything of the user, history and (with a passphrase) secret values included. */
export async function fullExport(client: ApiClient, secretsPassphrase?: string): Promise<any> {
  const res = await client.post("/api/user/data/_export", { include: ALL_WITH_HISTORY, ...(secretsPassphrase ? { secretsPassphrase } : {}) });
  expect(res.status).toBe(200);
  return res.json;
}

/** The export text without `exportedAt`: what must not change when an import fails. */
export async function snapshot(client: ApiClient): Promise<string> {
  const res = await client.post("/api/user/data/_export", { include: ALL_WITH_HISTORY });
  expect(res.status).toBe(200);
  return res.text.replace(/"exportedAt":\d+,/, "");
}

/** The key of a file's secretsEncryption, derived as §19.2 says (node:crypto argon2id). */
export function fileKey(file: any, passphrase: string): Buffer {
  const e = file.secretsEncryption;
  expect(e).toMatchObject({ alg: "aes-256-gcm", kdf: "argon2id", kdfParams: { m: 19456, t: 2, p: 1 } });
  const salt = Buffer.from(e.salt, "base64");
  expect(salt.length).toBe(16);
  return argon2Sync("argon2id", { message: Buffer.from(passphrase), nonce: salt, parallelism: 1, tagLength: 32, memory: 19456, passes: 2 });
}

/** base64(nonce 12 ‖ ciphertext ‖ tag 16), AES-256-GCM without additional data. */
export function decryptValue(key: Buffer, b64: string): string {
  const raw = Buffer.from(b64, "base64");
  const d = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
  d.setAuthTag(raw.subarray(raw.length - 16));
  return Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString("utf8");
}

const TYPES = ["tags", "scripts", "secrets", "responders", "certificateTemplates", "privateKeys", "contentSecurityPolicies", "pageTrackers", "apiTrackers"];

/**
 * A file with ids replaced by `<type>#<index>` (entities are in name order), references (tagIds, secret selectors,
 * settings' tag scope) replaced alike, timestamps of entities and history record ids dropped, secret values
 * decrypted. Two files that normalize equal hold the same data.
 */
export function normalize(file: any, passphrase?: string): any {
  const label = new Map<string, string>();
  for (const type of TYPES) (file.data[type] ?? []).forEach((e: any, i: number) => label.set(e.id, `${type}#${i}`));
  const ref = (id: string) => label.get(id) ?? `unknown:${id}`;
  const key = passphrase && file.secretsEncryption ? fileKey(file, passphrase) : undefined;
  const selector = (s: any) => (typeof s === "object" && s !== null ? { selected: s.selected.map(ref).sort() } : s);
  const data: any = {};
  for (const type of TYPES) {
    if (!file.data[type]) continue;
    data[type] = file.data[type].map((e: any) => {
      const { id: _id, createdAt: _c, updatedAt: _u, ...rest } = e;
      const out: any = { ...rest };
      if (out.tagIds) out.tagIds = out.tagIds.map(ref);
      if (type === "responders") {
        out.settings = { ...out.settings, secrets: selector(out.settings.secrets) };
        if (out.history) out.history = out.history.map(({ id: _i, ...r }: any) => r);
      }
      if (type === "pageTrackers" || type === "apiTrackers") out.secrets = selector(out.secrets);
      if (type === "secrets" && out.encryptedValue !== undefined) {
        out.value = key ? decryptValue(key, out.encryptedValue) : "(sealed)";
        delete out.encryptedValue;
      }
      return out;
    });
  }
  if (file.data.settings) {
    data.settings = { ...file.data.settings };
    if (data.settings["common.globalScopeTagIds"]) data.settings["common.globalScopeTagIds"] = data.settings["common.globalScopeTagIds"].map(ref);
  }
  return { format: file.format, version: file.version, data };
}

/** A request to a responder of `user` on its host (`<prefix>-<handle>.localhost:7070`). */
export function hit(srv: TestServer, user: TestUser, path: string, init: RequestInit & { prefix?: string } = {}) {
  const host = `${init.prefix ? `${init.prefix}-` : ""}${user.handle}.localhost:7070`;
  return fetch(srv.url + path, { ...init, headers: { host, ...(init.headers as Record<string, string>) }, redirect: "manual" });
}

/** Ids of the created entities, for tests that refer to them. */
export interface Dataset {
  tags: string[];
  secrets: string[];
  responders: string[];
  apiTracker: string;
  pageTracker: string;
}

async function created(res: { status: number; json: any; text: string }, what: string): Promise<any> {
  if (res.status !== 201 && res.status !== 200) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res.json;
}

/**
 * Every entity type with every field in use: built through the API, plus real responder hits (history with and
 * without stored responses), API tracker runs against `upstreamUrl` (revisions), and page tracker revisions from
 * a small import (a page run would need Chromium). Needs `network.allow_private_targets` for the upstream.
 */
export async function buildDataset(srv: TestServer, user: TestUser, upstream: { url: string; state: { value: string } }): Promise<Dataset> {
  const c = user.client;
  const t1 = await created(await c.post("/api/user/tags", { name: "prod", color: "danger" }), "tag");
  const t2 = await created(await c.post("/api/user/tags", { name: "api", color: "#a1b2c3" }), "tag");
  const t3 = await created(await c.post("/api/user/tags", { name: "unused" }), "tag");
  const s1 = await created(await c.post("/api/user/secrets", { name: "API_TOKEN", value: "tok-ünïcode-✓", tagIds: [t1.id] }), "secret");
  const s2 = await created(await c.post("/api/user/secrets", { name: "signing-key", value: "k".repeat(300) }), "secret");
  for (const [i, scriptType] of ["responder", "api_configurator", "api_extractor", "page_extractor", "universal"].entries()) {
    await created(await c.post("/api/user/scripts", { name: `script ${scriptType}`, scriptType, content: `// ${scriptType}\nreturn ${i};`, tagIds: i === 0 ? [t1.id, t2.id] : [] }), "script");
  }
  const r1 = await created(
    await c.post("/api/webhooks/responders", {
      name: "orders-mock",
      location: { pathType: "*", path: "/orders", subdomainPrefix: "shop" },
      method: "POST",
      enabled: true,
      settings: {
        requestsToTrack: 5,
        statusCode: 201,
        headers: [
          ["content-type", "application/json"],
          ["x-dup", "1"],
          ["x-dup", "2"],
        ],
        body: '{"ok":true,"token":"${secrets.API_TOKEN}"}',
        secrets: { selected: [s1.id] },
        notifications: { enabled: true, throttleSeconds: 900 },
      },
      tagIds: [t1.id, t2.id],
    }),
    "responder",
  );
  const r2 = await created(
    await c.post("/api/webhooks/responders", {
      name: "echo",
      location: { pathType: "=", path: "/echo" },
      settings: {
        requestsToTrack: 3,
        script: "({statusCode: 202, headers: {'x-echo': context.method}, body: {q: context.query, secrets: Object.keys(context.secrets)}, trackResponse: true})",
        secrets: "all",
      },
    }),
    "responder",
  );
  const r3 = await created(await c.post("/api/webhooks/responders", { name: "legacy", location: { pathType: "^", path: "/old" }, method: "GET", enabled: false }), "responder");
  for (let i = 0; i < 7; i++) expect((await hit(srv, user, `/orders/${i}?n=${i}`, { method: "POST", body: `{"i":${i}}`, prefix: "shop" })).status).toBe(201);
  expect((await hit(srv, user, "/echo?a=1&b=two", { method: "PUT", body: new Uint8Array([0, 255, 1]) })).status).toBe(202);
  await c.post("/api/certificates/templates", {
    templateName: "homelab",
    attributes: {
      commonName: "nas.home.arpa",
      organization: "Home",
      organizationalUnit: "Lab",
      locality: "Graz",
      stateOrProvince: "Styria",
      country: "at",
      keyAlgorithm: { keyType: "ecdsa", curve: "secp384r1" },
      signatureAlgorithm: "sha384",
      notValidBefore: 1767225600,
      notValidAfter: 1798761600,
      version: 3,
      isCa: true,
      keyUsage: ["digitalSignature", "keyCertificateSigning"],
      extendedKeyUsage: ["tlsWebServerAuthentication"],
      subjectAltNames: ["nas.home.arpa", "192.168.1.10", "*.lab.home.arpa"],
    },
    tagIds: [t2.id],
  }).then((r) => created(r, "template"));
  await c.post("/api/certificates/templates", { templateName: "v1 plain", attributes: { commonName: "x", keyAlgorithm: { keyType: "ed25519" }, signatureAlgorithm: "ed25519", notValidBefore: 1767225600, notValidAfter: 1798761600, version: 1 } }).then((r) => created(r, "template"));
  await c.post("/api/certificates/private_keys", { keyName: "web", alg: { keyType: "ecdsa", curve: "secp256r1" }, tagIds: [t1.id] }).then((r) => created(r, "key"));
  await c.post("/api/certificates/private_keys", { keyName: "signer", alg: { keyType: "ed25519" }, passphrase: "key passphrase" }).then((r) => created(r, "key"));
  await c.post("/api/certificates/private_keys", { keyName: "legacy rsa", alg: { keyType: "rsa", keySize: "1024" } }).then((r) => created(r, "key"));
  await c.post("/api/web_security/csp", {
    name: "site",
    content: { type: "serialized", value: "default-src 'self'; script-src 'nonce-abcdefgh' 'strict-dynamic'; object-src 'none'; sandbox allow-forms; upgrade-insecure-requests; report-to grp" },
    tagIds: [t2.id],
  }).then((r) => created(r, "policy"));
  const api = await created(
    await c.post("/api/web_scraping/api_trackers", {
      name: "release-feed",
      enabled: false,
      config: { revisions: 4, timeout: 5000, job: { schedule: "0 17 9 * * *", retryStrategy: { type: "constant", interval: 300000, maxAttempts: 3 } } },
      target: {
        requests: [
          { url: `${upstream.url}/value`, method: "GET", headers: { accept: "application/json" }, acceptStatuses: [200, 203] },
          { url: `${upstream.url}/echo`, method: "POST", headers: { "content-type": "text/plain" }, body: "ping", acceptInvalidCertificates: true },
        ],
        configurator: "({requests: context.requests})",
        extractor: "({body: context.responses[0].body})",
      },
      notifications: true,
      secrets: { selected: [s1.id, s2.id] },
      tagIds: [t1.id],
    }),
    "api tracker",
  );
  for (const v of ['{"v":1}', '{"v":2}', '{"v":3}']) {
    upstream.state.value = v;
    expect((await c.post(`/api/web_scraping/api_trackers/${api.id}/_history`, { refresh: true })).status).toBe(200);
  }
  const revs = (await c.post(`/api/web_scraping/api_trackers/${api.id}/_history`, {})).json;
  expect(revs.length).toBe(3);
  const page = await created(
    await c.post("/api/web_scraping/page_trackers", {
      name: "status-page",
      enabled: false,
      config: { revisions: 2, timeout: 20000, job: { schedule: "0 0 */6 * * *" } },
      target: {
        url: "https://status.example.com/",
        extractor: "document.title",
        waitFor: { selector: "#status", delayMs: 500 },
        userAgent: "Secbox-test",
        headers: { "accept-language": "de" },
        acceptInvalidCertificates: true,
        resources: true,
      },
      notifications: false,
      secrets: "all",
      tagIds: [t2.id],
    }),
    "page tracker",
  );
  // Page tracker revisions (a run needs Chromium): a small import into this user, with overwrite.
  const withRevisions = {
    format: "secbox-export",
    version: 1,
    data: {
      pageTrackers: [
        {
          id: page.id,
          name: "status-page",
          enabled: false,
          config: { revisions: 2, timeout: 20000, job: { schedule: "0 0 */6 * * *" } },
          target: page.target,
          notifications: false,
          secrets: "none",
          revisions: [
            { createdAt: 1767225900, body: Buffer.from("All systems go").toString("base64") },
            { createdAt: 1767225800, body: Buffer.from('{"title":"Degraded"}').toString("base64") },
            { createdAt: 1767225700, body: Buffer.from("trimmed away").toString("base64") },
          ],
        },
      ],
    },
  };
  const imp = await c.post("/api/user/data/_import", { data: withRevisions, mode: "apply", importSettings: false });
  expect(imp.status).toBe(200);
  expect(imp.json.results.pageTrackers).toEqual({ imported: 0, updated: 1, skipped: 0, deleted: 0 });
  // …and its selector and tags back as the data set wants them.
  expect((await c.put(`/api/web_scraping/page_trackers/${page.id}`, { secrets: "all", tagIds: [t2.id] })).status).toBe(204);
  expect(
    (
      await c.post("/api/user/settings", {
        "common.uiTheme": "dark",
        "common.sidebarCollapsed": { nav: true, sections: ["trackers"] },
        "common.globalScopeTagIds": [t1.id, t3.id],
        "certificates.doNotShowSelfSignedWarning": true,
        "certificates.doNotShowPrivateKeysWarning": false,
        "notifications.unsubscribed": false,
      })
    ).status,
  ).toBe(200);
  return { tags: [t1.id, t2.id, t3.id], secrets: [s1.id, s2.id], responders: [r1.id, r2.id, r3.id], apiTracker: api.id, pageTracker: page.id };
}
