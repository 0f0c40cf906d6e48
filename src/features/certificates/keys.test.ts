import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { b64, encryptedPkcs8, openssl, opensslOk, scratch } from "../../tests/fixtures/certificates";

let srv: TestServer;
let alice: TestUser;
let bob: TestUser;
const tmp = scratch();

beforeAll(async () => {
  srv = await startTestServer();
  alice = await srv.createUser();
  bob = await srv.createUser();
});
afterAll(async () => {
  await srv.stop();
  tmp.cleanup();
});

const KEYS = "/api/certificates/private_keys";

async function createKey(user: TestUser, body: Record<string, unknown>) {
  const res = await user.client.post(KEYS, body);
  if (res.status !== 201) throw new Error(`create key: ${res.status} ${res.text}`);
  return res.json;
}

async function exportKey(user: TestUser, id: string, body: Record<string, unknown>) {
  return user.client.post(`${KEYS}/${id}/_export`, body);
}

/** `openssl pkey -text` of a PKCS#8 DER / PEM file, with an optional passphrase. */
function pkeyText(data: Uint8Array, der: boolean, pass?: string): string {
  const path = tmp.file(`k-${crypto.randomUUID()}`, data);
  return opensslOk(["pkey", "-in", path, ...(der ? ["-inform", "DER"] : []), "-passin", `pass:${pass ?? ""}`, "-noout", "-text"]);
}

const ALGS: [Record<string, string>, RegExp][] = [
  [{ keyType: "rsa", keySize: "1024" }, /Private-Key: \(1024 bit/],
  [{ keyType: "rsa", keySize: "2048" }, /Private-Key: \(2048 bit/],
  [{ keyType: "dsa", keySize: "1024" }, /Private-Key: \(1024 bit\)[\s\S]*P:/],
  [{ keyType: "dsa", keySize: "2048" }, /Private-Key: \(2048 bit\)[\s\S]*P:/],
  [{ keyType: "ecdsa", curve: "secp256r1" }, /NIST CURVE: P-256/],
  [{ keyType: "ecdsa", curve: "secp384r1" }, /NIST CURVE: P-384/],
  [{ keyType: "ecdsa", curve: "secp521r1" }, /NIST CURVE: P-521/],
  [{ keyType: "ed25519" }, /ED25519 Private-Key/],
];

describe("private keys: every algorithm × export format, checked by openssl", () => {
  for (const [alg, pattern] of ALGS) {
    const label = Object.values(alg).join("-");
    test(
      label,
      async () => {
        const name = `key ${label}/ü`;
        const key = await createKey(alice, { keyName: name, alg, passphrase: "stored secret" });
        expect(key).toMatchObject({ name, alg, encrypted: true, tags: [], tagIds: [] });
        expect(JSON.stringify(key)).not.toContain("PRIVATE");
        const safe = `key_${label}__`;

        // pem, unprotected and protected
        const pem = await exportKey(alice, key.id, { format: "pem", passphrase: "stored secret" });
        expect(pem.status).toBe(200);
        expect(pem.json).toMatchObject({ format: "pem", fileName: `${safe}.pem`, mimeType: "application/x-pem-file" });
        const pemText = Buffer.from(b64(pem.json.data)).toString();
        expect(pemText).toStartWith("-----BEGIN PRIVATE KEY-----");
        expect(pkeyText(b64(pem.json.data), false)).toMatch(pattern);
        const encPem = await exportKey(alice, key.id, { format: "pem", passphrase: "stored secret", exportPassphrase: "out pass" });
        expect(Buffer.from(b64(encPem.json.data)).toString()).toStartWith("-----BEGIN ENCRYPTED PRIVATE KEY-----");
        expect(pkeyText(b64(encPem.json.data), false, "out pass")).toMatch(pattern);
        expect(openssl(["pkey", "-in", tmp.file("wrong.pem", b64(encPem.json.data)), "-passin", "pass:nope", "-noout"]).code).not.toBe(0);

        // pkcs8 DER, unprotected and protected (PBES2 / PBKDF2-HMAC-SHA256 / 100,000 / AES-256-CBC)
        const p8 = await exportKey(alice, key.id, { format: "pkcs8", passphrase: "stored secret" });
        expect(p8.json).toMatchObject({ format: "pkcs8", fileName: `${safe}.p8`, mimeType: "application/pkcs8" });
        expect(pkeyText(b64(p8.json.data), true)).toMatch(pattern);
        const encP8 = await exportKey(alice, key.id, { format: "pkcs8", passphrase: "stored secret", exportPassphrase: "out pass" });
        expect(pkeyText(b64(encP8.json.data), true, "out pass")).toMatch(pattern);
        const params = opensslOk(["asn1parse", "-inform", "DER"], b64(encP8.json.data));
        expect(params).toContain(":PBES2");
        expect(params).toContain(":hmacWithSHA256");
        expect(params).toContain(":aes-256-cbc");
        expect(params).toContain(":0186A0"); // 100,000 iterations
        expect(
          openssl(["pkey", "-inform", "DER", "-in", tmp.file("wrong.p8", b64(encP8.json.data)), "-passin", "pass:nope", "-noout"]).code,
        ).not.toBe(0);

        // pkcs12 with the key only, friendly name = key name, password = exportPassphrase or empty
        const p12 = await exportKey(alice, key.id, { format: "pkcs12", passphrase: "stored secret", exportPassphrase: "pfx pass" });
        expect(p12.json).toMatchObject({ format: "pkcs12", fileName: `${safe}.pfx`, mimeType: "application/x-pkcs12" });
        const pfx = tmp.file("k.pfx", b64(p12.json.data));
        const info = opensslOk(["pkcs12", "-in", pfx, "-info", "-nodes", "-passin", "pass:pfx pass"]);
        expect(info).toContain("-----BEGIN PRIVATE KEY-----");
        expect(info).not.toContain("BEGIN CERTIFICATE");
        expect(info).toContain("Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC");
        expect(openssl(["pkcs12", "-in", pfx, "-info", "-nodes", "-passin", "pass:wrong"]).code).not.toBe(0);
        const emptyPw = await exportKey(alice, key.id, { format: "pkcs12", passphrase: "stored secret" });
        const pfx2 = tmp.file("k2.pfx", b64(emptyPw.json.data));
        const key2 = opensslOk(["pkcs12", "-in", pfx2, "-nodes", "-passin", "pass:"]);
        expect(key2).toContain(`friendlyName: key ${label}/`);
        expect(pkeyText(new TextEncoder().encode(key2.slice(key2.indexOf("-----BEGIN PRIVATE KEY-----"))), false)).toMatch(pattern);
      },
      30_000,
    );
  }
});

describe("private keys: passphrases", () => {
  test("export of an encrypted key needs its passphrase; unencrypted keys ignore it", async () => {
    const key = await createKey(alice, { keyName: "locked", alg: { keyType: "ed25519" }, passphrase: "right" });
    const missing = await exportKey(alice, key.id, { format: "pem" });
    expect(missing.status).toBe(400);
    expect(missing.json.code).toBe("BAD_PASSPHRASE");
    const wrong = await exportKey(alice, key.id, { format: "pem", passphrase: "wrong" });
    expect(wrong.status).toBe(400);
    expect(wrong.json.code).toBe("BAD_PASSPHRASE");

    const open = await createKey(alice, { keyName: "open", alg: { keyType: "ed25519" } });
    expect(open.encrypted).toBe(false);
    const ignored = await exportKey(alice, open.id, { format: "pem", passphrase: "whatever" });
    expect(ignored.status).toBe(200);
  });

  test("set, change and remove a passphrase", async () => {
    const key = await createKey(alice, { keyName: "cycle", alg: { keyType: "ecdsa", curve: "secp256r1" } });
    const first = Buffer.from(b64((await exportKey(alice, key.id, { format: "pkcs8" })).json.data));
    const path = `${KEYS}/${key.id}`;

    // set (unencrypted key: no current passphrase needed)
    expect((await alice.client.put(path, { newPassphrase: "one" })).status).toBe(204);
    expect((await alice.client.get(path)).json.encrypted).toBe(true);
    expect((await exportKey(alice, key.id, { format: "pkcs8" })).json.code).toBe("BAD_PASSPHRASE");

    // change: current one required and checked
    const noCurrent = await alice.client.put(path, { newPassphrase: "two" });
    expect(noCurrent.status).toBe(400);
    expect(noCurrent.json.code).toBe("BAD_PASSPHRASE");
    const wrongCurrent = await alice.client.put(path, { passphrase: "zero", newPassphrase: "two" });
    expect(wrongCurrent.json.code).toBe("BAD_PASSPHRASE");
    const same = await alice.client.put(path, { passphrase: "one", newPassphrase: "one" });
    expect(same.status).toBe(400);
    expect(same.json.code).toBe("INVALID_INPUT");
    expect((await alice.client.put(path, { passphrase: "one", newPassphrase: "two" })).status).toBe(204);
    expect((await exportKey(alice, key.id, { format: "pkcs8", passphrase: "one" })).json.code).toBe("BAD_PASSPHRASE");
    const viaTwo = Buffer.from(b64((await exportKey(alice, key.id, { format: "pkcs8", passphrase: "two" })).json.data));
    expect(viaTwo.equals(first)).toBe(true); // same key material throughout

    // remove with null
    expect((await alice.client.put(path, { newPassphrase: null })).json.code).toBe("BAD_PASSPHRASE");
    expect((await alice.client.put(path, { passphrase: "two", newPassphrase: null })).status).toBe(204);
    const after = await alice.client.get(path);
    expect(after.json.encrypted).toBe(false);
    expect(Buffer.from(b64((await exportKey(alice, key.id, { format: "pkcs8" })).json.data)).equals(first)).toBe(true);

    // nothing to change
    expect((await alice.client.put(path, {})).status).toBe(400);
    expect((await alice.client.put(path, { newPassphrase: null })).status).toBe(400);
    expect((await alice.client.put(path, { passphrase: "x" })).status).toBe(400);
  });

  test("the stored blob is sealed: the database holds no PKCS#8 in clear", async () => {
    const key = await createKey(alice, { keyName: "sealed", alg: { keyType: "ed25519" } });
    const der = b64((await exportKey(alice, key.id, { format: "pkcs8" })).json.data);
    const row = await srv.rt.db.get<{ key_enc: Uint8Array }>("SELECT key_enc FROM private_keys WHERE id = ?", [key.id]);
    expect(Buffer.from(row!.key_enc).includes(Buffer.from(der.subarray(der.length - 32)))).toBe(false);
  });
});

describe("private keys: CRUD and validation", () => {
  test("create validation", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ alg: { keyType: "ed25519" } }, "keyName"],
      [{ keyName: "  ", alg: { keyType: "ed25519" } }, "keyName"],
      [{ keyName: "x".repeat(101), alg: { keyType: "ed25519" } }, "keyName"],
      [{ keyName: "k" }, "alg"],
      [{ keyName: "k", alg: "rsa" }, "alg"],
      [{ keyName: "k", alg: { keyType: "elgamal" } }, "alg.keyType"],
      [{ keyName: "k", alg: { keyType: "rsa", keySize: 2048 } }, "alg.keySize"],
      [{ keyName: "k", alg: { keyType: "rsa", keySize: "3072" } }, "alg.keySize"],
      [{ keyName: "k", alg: { keyType: "dsa", keySize: "4096" } }, "alg.keySize"],
      [{ keyName: "k", alg: { keyType: "ecdsa", curve: "secp256k1" } }, "alg.curve"],
      [{ keyName: "k", alg: { keyType: "ed25519" }, passphrase: "" }, "passphrase"],
      [{ keyName: "k", alg: { keyType: "ed25519" }, passphrase: "p".repeat(1025) }, "passphrase"],
      [{ keyName: "k", alg: { keyType: "ed25519" }, passphrase: 5 }, "passphrase"],
      [{ keyName: "k", alg: { keyType: "ed25519" }, tagIds: [crypto.randomUUID()] }, "tagIds"],
    ];
    for (const [body, field] of cases) {
      const res = await alice.client.post(KEYS, body);
      expect({ body, status: res.status, code: res.json?.code }).toEqual({ body, status: 400, code: "INVALID_INPUT" });
      expect(res.json.message).toStartWith(field);
    }
    expect((await srv.anon.post(KEYS, { keyName: "k", alg: { keyType: "ed25519" } })).status).toBe(401);
  });

  test("get, list query, tags, rename, duplicate names, delete", async () => {
    const tag = (await alice.client.post("/api/user/tags", { name: "prod" })).json;
    const a = await createKey(alice, { keyName: "  Zeta  ", alg: { keyType: "ed25519" }, tagIds: [tag.id] });
    expect(a.name).toBe("Zeta");
    expect(a.tags).toEqual([{ id: tag.id, name: "prod", color: tag.color }]);
    const b = await createKey(alice, { keyName: "alpha-list", alg: { keyType: "ecdsa", curve: "secp384r1" } });
    const dup = await alice.client.post(KEYS, { keyName: "Zeta", alg: { keyType: "ed25519" } });
    expect(dup.status).toBe(409);
    expect(dup.json.code).toBe("DUPLICATE_NAME");

    const got = await alice.client.get(`${KEYS}/${a.id}`);
    expect(got.json).toEqual(a);
    expect((await alice.client.get(`${KEYS}/not-a-uuid`)).status).toBe(404);
    expect((await alice.client.get(`${KEYS}/${crypto.randomUUID()}`)).status).toBe(404);

    const tagged = await alice.client.get(`${KEYS}?tags=${tag.id}`);
    expect(tagged.json.items.map((k: any) => k.id)).toEqual([a.id]);
    const q = await alice.client.get(`${KEYS}?q=ALPHA-L`);
    expect(q.json).toEqual({ items: [b], total: 1 });
    const paged = await alice.client.get(`${KEYS}?pageSize=1&sort=createdAt&order=desc`);
    expect(paged.json.items).toHaveLength(1);
    expect(paged.json.total).toBeGreaterThanOrEqual(2);

    expect((await alice.client.put(`${KEYS}/${b.id}`, { keyName: "Zeta" })).status).toBe(409);
    expect((await alice.client.put(`${KEYS}/${b.id}`, { keyName: "beta", tagIds: [tag.id] })).status).toBe(204);
    const renamed = (await alice.client.get(`${KEYS}/${b.id}`)).json;
    expect(renamed).toMatchObject({ name: "beta", tagIds: [tag.id], encrypted: false });
    expect(renamed.updatedAt).toBeGreaterThanOrEqual(b.updatedAt);

    expect((await alice.client.delete(`${KEYS}/${b.id}`)).status).toBe(204);
    expect((await alice.client.get(`${KEYS}/${b.id}`)).status).toBe(404);
    expect((await alice.client.delete(`${KEYS}/${b.id}`)).status).toBe(404);
    expect((await alice.client.get(`${KEYS}?tags=${tag.id}`)).json.items.map((k: any) => k.id)).toEqual([a.id]);
  });

  test("export validation", async () => {
    const key = await createKey(alice, { keyName: "exp-val", alg: { keyType: "ed25519" } });
    for (const body of [{}, { format: "der" }, { format: "pem", exportPassphrase: "" }, { format: 1 }]) {
      const res = await exportKey(alice, key.id, body);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
    }
    expect((await exportKey(alice, crypto.randomUUID(), { format: "pem" })).status).toBe(404);
  });

  test("export fileName: one `_` per character outside [A-Za-z0-9._-], astral characters included (§12.2)", async () => {
    const cases: [string, string][] = [
      ["a😀b", "a_b"],
      ["𝒳𝒴-key_1.x", "__-key_1.x"],
      ["ü é/😀😀", "______"],
    ];
    for (const [name, safe] of cases) {
      const key = await createKey(alice, { keyName: name, alg: { keyType: "ed25519" } });
      for (const [format, ext] of [
        ["pem", "pem"],
        ["pkcs8", "p8"],
        ["pkcs12", "pfx"],
      ]) {
        const res = await exportKey(alice, key.id, { format });
        expect({ name, format, status: res.status, fileName: res.json.fileName }).toEqual({ name, format, status: 200, fileName: `${safe}.${ext}` });
      }
    }
  });

  test("two users: bob never sees or touches alice's keys", async () => {
    const key = await createKey(alice, { keyName: "alice-only", alg: { keyType: "ed25519" } });
    expect((await bob.client.get(`${KEYS}/${key.id}`)).status).toBe(404);
    expect((await bob.client.put(`${KEYS}/${key.id}`, { keyName: "mine" })).status).toBe(404);
    expect((await bob.client.post(`${KEYS}/${key.id}/_export`, { format: "pem" })).status).toBe(404);
    expect((await bob.client.delete(`${KEYS}/${key.id}`)).status).toBe(404);
    const list = await bob.client.get(KEYS);
    expect(list.json).toEqual({ items: [], total: 0 });
    expect((await bob.client.get(`${KEYS}?q=${key.id}`)).json.total).toBe(0);
    // bob may use the same name
    expect((await bob.client.post(KEYS, { keyName: "alice-only", alg: { keyType: "ed25519" } })).status).toBe(201);
    expect((await alice.client.get(`${KEYS}/${key.id}`)).json.name).toBe("alice-only");
  });
});

describe("DSA without openssl", () => {
  test("400 ALGORITHM_UNAVAILABLE and status features.dsa = false", async () => {
    const other = await startTestServer({ env: { SECBOX_CERTIFICATES_OPENSSL: "" } });
    try {
      const user = await other.createUser();
      const res = await user.client.post(KEYS, { keyName: "d", alg: { keyType: "dsa", keySize: "1024" } });
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("ALGORITHM_UNAVAILABLE");
      expect((await other.anon.get("/api/status")).json.features.dsa).toBe(false);
      const tpl = await user.client.post("/api/certificates/templates", {
        templateName: "d",
        attributes: {
          commonName: "x",
          keyAlgorithm: { keyType: "dsa", keySize: "2048" },
          signatureAlgorithm: "sha256",
          notValidBefore: 0,
          notValidAfter: 100,
        },
      });
      expect(tpl.json.code).toBe("ALGORITHM_UNAVAILABLE");
      // other algorithms still work
      expect((await user.client.post(KEYS, { keyName: "e", alg: { keyType: "ed25519" } })).status).toBe(201);
    } finally {
      await other.stop();
    }
    expect((await srv.anon.get("/api/status")).json.features.dsa).toBe(true);
  });
});

describe("PBKDF2 bound of keys handed to us (§28)", () => {
  const P256 = { keyType: "ecdsa", curve: "secp256r1" };
  const plainKey = async () => {
    const { generateKeyPairSync } = await import("node:crypto");
    return new Uint8Array(generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey.export({ type: "pkcs8", format: "der" }));
  };
  /** A key stored before the bound existed (written through the import's own insert, which checks nothing). */
  async function storedKey(user: TestUser, der: Uint8Array): Promise<string> {
    const id = crypto.randomUUID();
    const now = Math.floor(Date.now() / 1000);
    await srv.services.certificates.keys.importInsert(
      srv.rt.db,
      user.id,
      id,
      { name: `legacy ${id}`, alg: P256 as any, encrypted: true, der },
      now,
      now,
    );
    return id;
  }

  test("a stored key asking for 8,000,000 iterations: _export and a passphrase change → 400 naming the passphrase, before any derivation", async () => {
    const id = await storedKey(alice, await encryptedPkcs8(await plainKey(), "right", 8_000_000, true));
    const exported = await exportKey(alice, id, { format: "pem", passphrase: "right" });
    expect(exported.status).toBe(400);
    // not BAD_PASSPHRASE: the (fake) ciphertext was never reached
    expect(exported.json.code).toBe("INVALID_INPUT");
    expect(exported.json.message).toMatch(/^passphrase: .*8,000,000 PBKDF2 iterations; at most 1,000,000/);
    const changed = await alice.client.put(`${KEYS}/${id}`, { passphrase: "right", newPassphrase: "other passphrase" });
    expect(changed.status).toBe(400);
    expect(changed.json.code).toBe("INVALID_INPUT");
  });

  test("1,000,000 iterations is within the bound: the stored key opens and re-encrypts", async () => {
    const der = await plainKey();
    const id = await storedKey(alice, await encryptedPkcs8(der, "right", 1_000_000));
    const wrong = await exportKey(alice, id, { format: "pkcs8", passphrase: "wrong" });
    expect(wrong.json.code).toBe("BAD_PASSPHRASE");
    const res = await exportKey(alice, id, { format: "pkcs8", passphrase: "right" });
    expect(res.status).toBe(200);
    expect(Buffer.from(b64(res.json.data)).equals(Buffer.from(der))).toBe(true);
  });
});
