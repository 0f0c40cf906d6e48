// Imports under issue 29 ("Isolation 2", supplement §28): cost caps at the edge (argon2id parameters of a file,
// PBKDF2 iterations of an encrypted key), one preview or import per user at a time, and the event loop answering
// other requests while a large preview or import runs (the file is read and checked on a work thread, the
// transaction gives the loop back every few ms). Real HTTP against a server in this process: a request finishing
// while the import runs shows the loop was free (orderings and counts, no timing thresholds).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { argon2Sync, createCipheriv, generateKeyPairSync, randomBytes } from "node:crypto";
import { connect } from "node:net";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { encryptedPkcs8 } from "../../tests/fixtures/certificates";
import { decryptValue, fileKey, hit, quickUser } from "../../tests/fixtures/user-data";

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_SCHEDULER_ENABLED: "false" } });
});
afterAll(() => srv.stop());

const PREVIEW = "/api/user/data/_import_preview";
const IMPORT = "/api/user/data/_import";
const file = (data: Record<string, any>, extra: Record<string, unknown> = {}) => ({
  format: "secbox-export",
  version: 1,
  exportedAt: 1767225600,
  ...extra,
  data,
});
const uuid = () => crypto.randomUUID();

/** A file with one secret sealed under argon2id with `params` (as §19.2, any parameters). */
function sealedFile(params: { m: number; t: number; p: number }, passphrase: string, value: string) {
  const salt = randomBytes(16);
  const key = argon2Sync("argon2id", {
    message: Buffer.from(passphrase),
    nonce: salt,
    parallelism: params.p,
    tagLength: 32,
    memory: params.m,
    passes: params.t,
  });
  const nonce = randomBytes(12);
  const c = createCipheriv("aes-256-gcm", key, nonce);
  const sealed = Buffer.concat([nonce, c.update(value, "utf8"), c.final(), c.getAuthTag()]).toString("base64");
  return file(
    { secrets: [{ id: uuid(), name: `S_${uuid().slice(0, 8)}`, encryptedValue: sealed }] },
    { secretsEncryption: { alg: "aes-256-gcm", kdf: "argon2id", kdfParams: params, salt: salt.toString("base64") } },
  );
}

/** The same header as sealedFile but a value that no passphrase opens (nothing to derive for the test). */
function unsealableFile(params: { m: number; t: number; p: number }) {
  return file(
    { secrets: [{ id: uuid(), name: "S1", encryptedValue: randomBytes(40).toString("base64") }] },
    {
      secretsEncryption: { alg: "aes-256-gcm", kdf: "argon2id", kdfParams: params, salt: randomBytes(16).toString("base64") },
    },
  );
}

describe("cost caps at the edge (§28)", () => {
  test("argon2id parameters beyond twice the documented ones, or more than one lane: _import 400 INVALID_INPUT before any derivation; preview {valid: false}", async () => {
    const u = await quickUser(srv);
    for (const params of [
      { m: 38_913, t: 2, p: 1 },
      { m: 19_456, t: 5, p: 1 },
      { m: 19_456, t: 2, p: 2 },
      { m: 262_144, t: 10, p: 16 },
    ]) {
      const data = unsealableFile(params);
      const res = await u.client.post(IMPORT, { data, secretsPassphrase: "not the passphrase" });
      // a derivation would have ended in BAD_PASSPHRASE (the value opens with no key)
      expect({ params, status: res.status, code: res.json.code }).toEqual({ params, status: 400, code: "INVALID_INPUT" });
      expect(res.json.message).toContain("secretsEncryption.kdfParams");
      const preview = await u.client.post(PREVIEW, { data });
      expect(preview.status).toBe(200);
      expect(preview.json.valid).toBe(false);
      expect(preview.json.warnings.some((w: string) => w.startsWith("secretsEncryption.kdfParams"))).toBe(true);
    }
  });

  test("twice the documented parameters (m = 38,912 KiB, t = 4, p = 1) still import, the value opened on a work thread", async () => {
    const u = await quickUser(srv);
    const data = sealedFile({ m: 38_912, t: 4, p: 1 }, "the passphrase", "the value");
    const wrong = await u.client.post(IMPORT, { data, secretsPassphrase: "another one" });
    expect(wrong.json.code).toBe("BAD_PASSPHRASE");
    const res = await u.client.post(IMPORT, { data, secretsPassphrase: "the passphrase" });
    expect(res.status).toBe(200);
    expect(res.json.results.secrets.imported).toBe(1);
    // the stored value, read back through an export sealed with the documented parameters
    const exported = await u.client.post("/api/user/data/_export", { include: { secrets: { type: "all" } }, secretsPassphrase: "export passphrase" });
    const secret = exported.json.data.secrets.find((s: any) => s.name === data.data.secrets[0]!.name);
    expect(decryptValue(fileKey(exported.json, "export passphrase"), secret.encryptedValue)).toBe("the value");
  });

  test("an encrypted private key with more than 1,000,000 PBKDF2 iterations: _import 400 naming its pkcs8; preview {valid: false}; 1,000,000 imports", async () => {
    const u = await quickUser(srv);
    const der = new Uint8Array(generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "der" }));
    const keyFile = async (iterations: number) => {
      const id = uuid();
      const pkcs8 = Buffer.from(await encryptedPkcs8(der, "pw", iterations, true)).toString("base64");
      return {
        id,
        data: file({ privateKeys: [{ id, name: `key ${iterations}`, alg: { keyType: "ecdsa", curve: "secp256r1" }, encrypted: true, pkcs8 }] }),
      };
    };
    const over = await keyFile(1_000_001);
    const res = await u.client.post(IMPORT, { data: over.data });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("INVALID_INPUT");
    expect(res.json.message).toContain(`privateKeys[${over.id}]: pkcs8: uses 1,000,001 PBKDF2 iterations; at most 1,000,000`);
    const preview = await u.client.post(PREVIEW, { data: over.data });
    expect(preview.json.valid).toBe(false);
    expect(preview.json.warnings.some((w: string) => w.includes("PBKDF2 iterations"))).toBe(true);
    const max = await keyFile(1_000_000);
    expect((await u.client.post(IMPORT, { data: max.data })).status).toBe(200);
  });
});

/** A file of n tags (160,000 make ~9.5 MiB: seconds of parsing and checking). */
const manyTags = (n: number) => file({ tags: Array.from({ length: n }, (_, i) => ({ id: uuid(), name: `t${i}` })) });

/** Sends GET /api/status one after another until `done` settles; how many were answered before it did. */
async function answeredMeanwhile(u: TestUser, done: Promise<unknown>): Promise<number> {
  let settled = false;
  void done.finally(() => (settled = true));
  let answered = 0;
  while (!settled) {
    const res = await u.client.get("/api/status");
    if (!settled && res.status === 200) answered++;
  }
  return answered;
}

describe("one at a time, and the loop stays free (issue 29)", () => {
  test("a second preview or import of the same user while one runs → 429 with Retry-After; another user's goes through", async () => {
    const u = await quickUser(srv);
    const other = await quickUser(srv);
    const text = JSON.stringify({ data: manyTags(160_000) });
    const first = u.client.request("POST", PREVIEW, { raw: text, headers: { "content-type": "application/json" } });
    // the first one's analysis is running on a work thread
    while (!srv.services.work.stats().running[u.id]) await Bun.sleep(5);
    for (const path of [PREVIEW, IMPORT]) {
      const second = await u.client.post(path, { data: file({ tags: [{ id: uuid(), name: "x" }] }) });
      expect({ path, status: second.status, code: second.json.code }).toEqual({ path, status: 429, code: "RATE_LIMITED" });
      expect(Number(second.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    const others = await other.client.post(PREVIEW, { data: file({ tags: [{ id: uuid(), name: "x" }] }) });
    expect(others.status).toBe(200);
    const res = await first;
    expect(res.status).toBe(200);
    expect(res.json.summary.tags.total).toBe(160_000);
    // done: the user may import again
    expect((await u.client.post(PREVIEW, { data: file({ tags: [{ id: uuid(), name: "x" }] }) })).status).toBe(200);
  });

  test("while one runs, a second upload of the same user is answered 429 before its body is read (here: before it is even sent)", async () => {
    const u = await quickUser(srv);
    const first = u.client.request("POST", PREVIEW, {
      raw: JSON.stringify({ data: manyTags(160_000) }),
      headers: { "content-type": "application/json" },
    });
    while (!srv.services.work.stats().running[u.id]) await Bun.sleep(5);
    const { port, hostname } = new URL(srv.url);
    const sock = connect({ host: hostname, port: Number(port) });
    const head = await new Promise<string>((resolve, reject) => {
      let got = "";
      sock.on("data", (d) => {
        got += d.toString("latin1");
        if (got.includes("\r\n\r\n")) resolve(got.split("\r\n")[0]!);
      });
      sock.on("error", reject);
      sock.on("close", () => resolve(got.split("\r\n")[0] ?? "closed"));
      // 9 MiB announced, 1 KiB sent: the rest never comes
      sock.write(
        `POST ${PREVIEW} HTTP/1.1\r\nhost: ${hostname}:${port}\r\ncontent-type: application/json\r\ncookie: secbox_session=${u.session}\r\ncontent-length: ${9 << 20}\r\n\r\n${"{".padEnd(1024, " ")}`,
      );
      setTimeout(() => resolve("no answer within 20 s"), 20_000);
    });
    sock.destroy();
    expect(head).toBe("HTTP/1.1 429 Too Many Requests");
    expect((await first).status).toBe(200);
  });

  test("other requests are answered while a 9.5 MiB preview is read and checked, and while an import of 20,000 policies writes", async () => {
    const u = await quickUser(srv);
    const watcher = await quickUser(srv);
    const text = JSON.stringify({ data: manyTags(160_000) });
    const preview = u.client.request("POST", PREVIEW, { raw: text, headers: { "content-type": "application/json" } });
    expect(await answeredMeanwhile(watcher, preview)).toBeGreaterThanOrEqual(5);
    expect((await preview).status).toBe(200);

    const policies = Array.from({ length: 20_000 }, (_, i) => ({
      id: uuid(),
      name: `p${i}`,
      directives: [{ name: "default-src", value: ["'self'"] }],
    }));
    const imported = u.client.post(IMPORT, { data: file({ contentSecurityPolicies: policies }) });
    expect(await answeredMeanwhile(watcher, imported)).toBeGreaterThanOrEqual(5);
    const res = await imported;
    expect(res.status).toBe(200);
    expect(res.json.results.contentSecurityPolicies.imported).toBe(20_000);
  });

  test("a 9.5 MiB preview's body is neither decoded nor cloned on the event loop: its bytes move to the work thread", async () => {
    const u = await quickUser(srv);
    const text = JSON.stringify({ data: manyTags(160_000) });
    const MiB = 1 << 20;
    // this thread's (the server's event loop's) decodes of a MiB or more, and what it posts to threads
    const decode = TextDecoder.prototype.decode;
    const post = Worker.prototype.postMessage;
    let bigDecodes = 0;
    const posts: { bigString: boolean; moved: number }[] = [];
    TextDecoder.prototype.decode = function (this: TextDecoder, input?: any, options?: any) {
      if (input && input.byteLength >= MiB) bigDecodes++;
      return decode.call(this, input, options);
    };
    Worker.prototype.postMessage = function (this: Worker, msg: any, transfer?: any) {
      const input = msg?.t === "run" ? msg.input : undefined;
      if (input?.request) {
        const list: ArrayBuffer[] = Array.isArray(transfer) ? transfer : (transfer?.transfer ?? []);
        posts.push({
          bigString: typeof input.request.text === "string" && input.request.text.length >= MiB,
          moved: list.reduce((n, b) => n + b.byteLength, 0),
        });
      }
      return post.call(this, msg, transfer);
    } as typeof Worker.prototype.postMessage;
    let res;
    try {
      res = await u.client.request("POST", PREVIEW, { raw: text, headers: { "content-type": "application/json" } });
    } finally {
      TextDecoder.prototype.decode = decode;
      Worker.prototype.postMessage = post;
    }
    expect(res.status).toBe(200);
    expect(res.json.summary.tags.total).toBe(160_000);
    expect(bigDecodes).toBe(0);
    expect(posts).toEqual([{ bigString: false, moved: Buffer.byteLength(text) }]);
  });

  test("other requests are answered while an export with 40 records of 1 MB bodies streams", async () => {
    const u = await quickUser(srv, { tier: "ultimate" });
    const watcher = await quickUser(srv);
    const created = await u.client.post("/api/webhooks/responders", {
      name: "big",
      location: { pathType: "=", path: "/big" },
      method: "POST",
      settings: { requestsToTrack: 40, statusCode: 200 },
    });
    expect(created.status).toBe(201);
    const body = JSON.stringify({ data: "x".repeat(1_000_000) });
    for (let i = 0; i < 40; i++)
      expect((await hit(srv, u, "/big", { method: "POST", body, headers: { "content-type": "application/json" } })).status).toBe(200);
    const exported = u.client.post("/api/user/data/_export", { include: { responders: { type: "all", includeHistory: true } } });
    expect(await answeredMeanwhile(watcher, exported)).toBeGreaterThanOrEqual(6);
    const res = await exported;
    expect(res.status).toBe(200);
    expect(res.json.data.responders[0].history.length).toBe(40);
  });

  test("an import beyond a tier count limit fails on the work thread (nothing reaches the transaction), naming the first entity over it", async () => {
    const u = await quickUser(srv);
    const data = manyTags(1000);
    const res = await u.client.post(IMPORT, { data });
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("LIMIT_REACHED");
    expect(res.json.message).toBe(`tags[${data.data.tags[100]!.id}]: at most 100 tags allowed on the ${srv.config.subscriptions.default_tier} tier`);
    expect((await u.client.get("/api/user/tags?pageSize=100")).json.total).toBe(0);
  });
});
