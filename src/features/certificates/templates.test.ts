import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { attrs, b64, DAY, NOW, opensslOk } from "../../tests/fixtures/certificates";

let srv: TestServer;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  srv = await startTestServer();
  alice = await srv.createUser();
  bob = await srv.createUser();
});
afterAll(() => srv.stop());

const TPL = "/api/certificates/templates";

async function createTemplate(user: TestUser, name: string, attributes = attrs(), extra: Record<string, unknown> = {}) {
  const res = await user.client.post(TPL, { templateName: name, attributes, ...extra });
  if (res.status !== 201) throw new Error(`create template: ${res.status} ${res.text}`);
  return res.json;
}

describe("certificate templates: attributes", () => {
  test("normalized on create: defaults, empty strings dropped, country upper-cased, sets deduplicated", async () => {
    const tpl = await createTemplate(
      alice,
      "  normalized  ",
      attrs({
        commonName: "svc.local",
        organization: "",
        country: "de",
        keyUsage: ["digitalSignature", "digitalSignature", "keyEncipherment"],
        extendedKeyUsage: [],
        subjectAltNames: ["svc.local", "10.0.0.1", "svc.local"],
        unknownField: "ignored",
      }),
    );
    expect(tpl.name).toBe("normalized");
    expect(tpl.attributes).toEqual({
      commonName: "svc.local",
      country: "DE",
      keyAlgorithm: { keyType: "ecdsa", curve: "secp256r1" },
      signatureAlgorithm: "sha256",
      notValidBefore: NOW - DAY,
      notValidAfter: NOW + 30 * DAY,
      version: 3,
      isCa: false,
      keyUsage: ["digitalSignature", "keyEncipherment"],
      subjectAltNames: ["svc.local", "10.0.0.1"],
    });
    expect(tpl).toMatchObject({ tags: [], tagIds: [] });
    const got = await alice.client.get(`${TPL}/${tpl.id}`);
    expect(got.json).toEqual({ template: tpl });
  });

  test("every rule of §12.3 → 400 naming the field", async () => {
    const bad: [Record<string, unknown>, string][] = [
      [attrs({ commonName: "x".repeat(65) }), "attributes.commonName"],
      [attrs({ organization: "x".repeat(65) }), "attributes.organization"],
      [attrs({ organizationalUnit: "x".repeat(65) }), "attributes.organizationalUnit"],
      [attrs({ locality: "x".repeat(129) }), "attributes.locality"],
      [attrs({ stateOrProvince: "x".repeat(129) }), "attributes.stateOrProvince"],
      [attrs({ commonName: 5 }), "attributes.commonName"],
      [attrs({ country: "DEU" }), "attributes.country"],
      [attrs({ country: "D1" }), "attributes.country"],
      [attrs({ country: "ÄÖ" }), "attributes.country"],
      [attrs({ keyAlgorithm: undefined }), "attributes.keyAlgorithm"],
      [attrs({ keyAlgorithm: { keyType: "rsa", keySize: "512" } }), "attributes.keyAlgorithm.keySize"],
      [attrs({ signatureAlgorithm: undefined }), "attributes.signatureAlgorithm"],
      [attrs({ signatureAlgorithm: "sha224" }), "attributes.signatureAlgorithm"],
      [attrs({ signatureAlgorithm: "md5" }), "attributes.signatureAlgorithm"], // md5 needs RSA
      [attrs({ keyAlgorithm: { keyType: "dsa", keySize: "2048" }, signatureAlgorithm: "sha384" }), "attributes.signatureAlgorithm"],
      [attrs({ keyAlgorithm: { keyType: "dsa", keySize: "2048" }, signatureAlgorithm: "sha512" }), "attributes.signatureAlgorithm"],
      [attrs({ keyAlgorithm: { keyType: "dsa", keySize: "1024" }, signatureAlgorithm: "md5" }), "attributes.signatureAlgorithm"],
      [attrs({ keyAlgorithm: { keyType: "ed25519" }, signatureAlgorithm: "sha256" }), "attributes.signatureAlgorithm"],
      [attrs({ keyAlgorithm: { keyType: "rsa", keySize: "2048" }, signatureAlgorithm: "ed25519" }), "attributes.signatureAlgorithm"],
      [attrs({ notValidBefore: undefined }), "attributes.notValidBefore"],
      [attrs({ notValidAfter: 1.5 }), "attributes.notValidAfter"],
      [attrs({ notValidBefore: NOW, notValidAfter: NOW }), "attributes.notValidAfter"],
      [attrs({ notValidBefore: NOW, notValidAfter: NOW - 1 }), "attributes.notValidAfter"],
      [attrs({ notValidBefore: Date.UTC(1949, 11, 31, 23, 59, 59) / 1000 }), "attributes.notValidBefore"],
      [attrs({ notValidAfter: Date.UTC(10000, 0, 1) / 1000 }), "attributes.notValidAfter"],
      [attrs({ notValidBefore: "0" }), "attributes.notValidBefore"],
      [attrs({ version: 4 }), "attributes.version"],
      [attrs({ version: "3" }), "attributes.version"],
      [attrs({ isCa: "yes" }), "attributes.isCa"],
      [attrs({ keyUsage: ["signing"] }), "attributes.keyUsage[0]"],
      [attrs({ keyUsage: "digitalSignature" }), "attributes.keyUsage"],
      [attrs({ extendedKeyUsage: ["serverAuth"] }), "attributes.extendedKeyUsage[0]"],
      [attrs({ subjectAltNames: ["ok.example", "not valid"] }), "attributes.subjectAltNames[1]"],
      [attrs({ subjectAltNames: ["bad_label.example"] }), "attributes.subjectAltNames[0]"],
      [attrs({ subjectAltNames: ["a..b"] }), "attributes.subjectAltNames[0]"],
      [attrs({ subjectAltNames: [""] }), "attributes.subjectAltNames[0]"],
      [attrs({ subjectAltNames: [7] }), "attributes.subjectAltNames[0]"],
      [attrs({ subjectAltNames: Array.from({ length: 101 }, (_, i) => `h${i}.example`) }), "attributes.subjectAltNames"],
      [attrs({ commonName: "", subjectAltNames: [] }), "attributes"], // no subject field and no SAN
      [attrs({ version: 2, isCa: true }), "attributes.isCa"],
      [attrs({ version: 1, keyUsage: ["digitalSignature"] }), "attributes.keyUsage"],
      [attrs({ version: 2, extendedKeyUsage: ["codeSigning"] }), "attributes.extendedKeyUsage"],
      [attrs({ version: 1, subjectAltNames: ["a.example"] }), "attributes.subjectAltNames"],
    ];
    for (const [attributes, field] of bad) {
      const res = await alice.client.post(TPL, { templateName: "bad", attributes });
      expect({ field, status: res.status, code: res.json?.code }).toEqual({ field, status: 400, code: "INVALID_INPUT" });
      expect(res.json.message).toStartWith(`${field}:`);
    }
    for (const body of [
      { attributes: attrs() },
      { templateName: "", attributes: attrs() },
      { templateName: "x" },
      { templateName: "x", attributes: [] },
    ]) {
      expect((await alice.client.post(TPL, body)).status).toBe(400);
    }
  });

  test("accepted edge values: year bounds, v1/v2 without extensions, SAN kinds, SAN-only subject", async () => {
    const ok = [
      attrs({ notValidBefore: Date.UTC(1950, 0, 1) / 1000, notValidAfter: Date.UTC(9999, 11, 31, 23, 59, 59) / 1000 }),
      attrs({ version: 1, isCa: false, keyUsage: [] }),
      attrs({ version: 2 }),
      attrs({ commonName: "", subjectAltNames: ["*.wild.example", "::1", "192.168.1.1", "admin@example.com", "https://example.com/x", "localhost"] }),
      attrs({ keyAlgorithm: { keyType: "dsa", keySize: "1024" }, signatureAlgorithm: "sha1" }),
      attrs({ keyAlgorithm: { keyType: "rsa", keySize: "8192" }, signatureAlgorithm: "md5" }),
      attrs({ keyAlgorithm: { keyType: "ecdsa", curve: "secp521r1" }, signatureAlgorithm: "sha1" }),
      attrs({ keyAlgorithm: { keyType: "ed25519" }, signatureAlgorithm: "ed25519" }),
    ];
    for (const [i, attributes] of ok.entries()) {
      const res = await alice.client.post(TPL, { templateName: `edge ${i}`, attributes });
      expect({ i, status: res.status, text: res.status === 201 ? "" : res.text }).toEqual({ i, status: 201, text: "" });
    }
  });
});

describe("certificate templates: subject field limits count characters (code points), not UTF-16 units", () => {
  const FIELDS: [string, number][] = [
    ["commonName", 64],
    ["organization", 64],
    ["organizationalUnit", 64],
    ["locality", 128],
    ["stateOrProvince", 128],
  ];

  test("max astral characters accepted, echoed, readable and generated; one more → 400", async () => {
    for (const [field, max] of FIELDS) {
      const value = "😀".repeat(max); // 2 UTF-16 units each
      const tpl = await createTemplate(
        alice,
        `astral ${field}`,
        attrs({ [field]: value, keyAlgorithm: { keyType: "ed25519" }, signatureAlgorithm: "ed25519" }),
      );
      expect(tpl.attributes[field]).toBe(value);
      const got = await alice.client.get(`${TPL}/${tpl.id}`);
      expect({ field, status: got.status, value: got.json?.template?.attributes?.[field] }).toEqual({ field, status: 200, value });
      const list = await alice.client.get(`${TPL}?search=${encodeURIComponent(`astral ${field}`)}`);
      expect(list.status).toBe(200);
      const tooLong = await alice.client.post(TPL, { templateName: `too long ${field}`, attributes: attrs({ [field]: `${value}😀` }) });
      expect({ field, status: tooLong.status, code: tooLong.json?.code }).toEqual({ field, status: 400, code: "INVALID_INPUT" });
      expect(tooLong.json.message).toBe(`attributes.${field}: must be at most ${max} characters`);
    }
    // The certificate carries the full value.
    const tpl = await createTemplate(
      alice,
      "astral cn generated",
      attrs({ commonName: "😀".repeat(64), keyAlgorithm: { keyType: "ed25519" }, signatureAlgorithm: "ed25519" }),
    );
    const der = await alice.client.post(`${TPL}/${tpl.id}/_generate`, { format: "der" });
    expect(der.status).toBe(200);
    const subject = opensslOk(["x509", "-inform", "DER", "-noout", "-subject", "-nameopt", "utf8,sep_comma_plus"], b64(der.json.data));
    expect(subject).toContain(`CN=${"😀".repeat(64)}`);
  });

  test("PUT applies the same rule; the OpenAPI schema does not cap them in UTF-16 units", async () => {
    const tpl = await createTemplate(alice, "astral put");
    const ok = await alice.client.put(`${TPL}/${tpl.id}`, { attributes: attrs({ organization: "𝒜".repeat(64) }) });
    expect(ok.status).toBe(204);
    expect((await alice.client.get(`${TPL}/${tpl.id}`)).json.template.attributes.organization).toBe("𝒜".repeat(64));
    const bad = await alice.client.put(`${TPL}/${tpl.id}`, { attributes: attrs({ organization: "𝒜".repeat(65) }) });
    expect(bad.json).toEqual({ code: "INVALID_INPUT", message: "attributes.organization: must be at most 64 characters" });
    const doc = (await srv.anon.get("/api-docs/openapi.json")).json;
    expect(JSON.stringify(doc.components ?? {}) + JSON.stringify(doc.paths[TPL])).not.toContain('"maxLength":64');
  });
});

describe("certificate templates: CRUD", () => {
  test("update replaces attributes, renames, retags; 409 and 404 cases; delete", async () => {
    const tag = (await alice.client.post("/api/user/tags", { name: "homelab" })).json;
    const a = await createTemplate(alice, "crud-a", attrs(), { tagIds: [tag.id] });
    const b = await createTemplate(alice, "crud-b");
    expect(a.tagIds).toEqual([tag.id]);
    const path = `${TPL}/${a.id}`;

    expect((await alice.client.put(path, {})).status).toBe(400);
    expect((await alice.client.put(path, { attributes: attrs({ version: 9 }) })).status).toBe(400);
    expect((await alice.client.put(path, { templateName: "crud-b" })).json.code).toBe("DUPLICATE_NAME");
    expect((await alice.client.post(TPL, { templateName: "crud-b", attributes: attrs() })).status).toBe(409);
    expect((await alice.client.put(`${TPL}/${crypto.randomUUID()}`, { templateName: "z" })).status).toBe(404);
    expect((await alice.client.put(`${TPL}/nope`, { templateName: "z" })).status).toBe(404);

    const replaced = attrs({ commonName: undefined, organization: "Acme", keyAlgorithm: { keyType: "ed25519" }, signatureAlgorithm: "ed25519" });
    expect((await alice.client.put(path, { templateName: "crud-renamed", attributes: replaced })).status).toBe(204);
    const got = (await alice.client.get(path)).json.template;
    expect(got.name).toBe("crud-renamed");
    expect(got.attributes.commonName).toBeUndefined(); // replaced, not merged
    expect(got.attributes.organization).toBe("Acme");
    expect(got.tagIds).toEqual([tag.id]); // tags kept when absent
    expect((await alice.client.put(path, { tagIds: [] })).status).toBe(204);
    expect((await alice.client.get(path)).json.template.tags).toEqual([]);

    const list = await alice.client.get(`${TPL}?q=crud&sort=name&order=desc`);
    expect(list.json.items.map((t: any) => t.name)).toEqual(["crud-renamed", "crud-b"]);
    expect(list.json.total).toBe(2);

    expect((await alice.client.delete(path)).status).toBe(204);
    expect((await alice.client.get(path)).status).toBe(404);
    expect((await alice.client.delete(path)).status).toBe(404);
    expect((await alice.client.get(`${TPL}/${b.id}`)).status).toBe(200);
  });

  test("401 without credentials on user routes; shared routes answer 404, never 401", async () => {
    const tpl = await createTemplate(alice, "auth-check");
    expect((await srv.anon.get(TPL)).status).toBe(401);
    expect((await srv.anon.post(TPL, { templateName: "x", attributes: attrs() })).status).toBe(401);
    expect((await srv.anon.put(`${TPL}/${tpl.id}`, { templateName: "x" })).status).toBe(401);
    expect((await srv.anon.delete(`${TPL}/${tpl.id}`)).status).toBe(401);
    expect((await srv.anon.post(`${TPL}/${tpl.id}/_share`)).status).toBe(401);
    expect((await srv.anon.post(`${TPL}/${tpl.id}/_unshare`)).status).toBe(401);
    expect((await srv.anon.get(`${TPL}/${tpl.id}`)).status).toBe(404);
    expect((await srv.anon.post(`${TPL}/${tpl.id}/_generate`, { format: "der" })).status).toBe(404);
    expect((await srv.anon.get(`${TPL}/${tpl.id}`, { token: "sbx_ak_" + "0".repeat(64) })).status).toBe(404);
  });

  test("two users: bob never sees or touches alice's templates", async () => {
    const tpl = await createTemplate(alice, "private-tpl");
    const path = `${TPL}/${tpl.id}`;
    expect((await bob.client.get(path)).status).toBe(404);
    expect((await bob.client.put(path, { templateName: "mine" })).status).toBe(404);
    expect((await bob.client.delete(path)).status).toBe(404);
    expect((await bob.client.post(`${path}/_generate`, { format: "der" })).status).toBe(404);
    expect((await bob.client.post(`${path}/_share`)).status).toBe(404);
    expect((await bob.client.get(TPL)).json).toEqual({ items: [], total: 0 });
    expect((await bob.client.get(`${TPL}?q=${tpl.id}`)).json.total).toBe(0);
    expect((await alice.client.get(path)).json.template.name).toBe("private-tpl");
  });
});

describe("sharing (§12.6)", () => {
  const shareHeader = (id: string) => ({ headers: { "x-user-share-id": id } });

  test("share, anonymous and cross-user access, owner view, revocation", async () => {
    const tag = (await alice.client.post("/api/user/tags", { name: "shared-tag" })).json;
    const tpl = await createTemplate(alice, "shared-tpl", attrs({ commonName: "shared.example" }), { tagIds: [tag.id] });
    const other = await createTemplate(alice, "other-tpl");
    const path = `${TPL}/${tpl.id}`;

    // not shared yet: owner GET has no userShare; the anonymous caller and bob get 404
    expect((await alice.client.get(path)).json.userShare).toBeUndefined();

    const share = await alice.client.post(`${path}/_share`);
    expect(share.status).toBe(200);
    expect(share.json).toEqual({
      id: expect.any(String),
      resource: { type: "certificateTemplate", templateId: tpl.id },
      createdAt: expect.any(Number),
    });
    expect(share.json.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const again = await alice.client.post(`${path}/_share`);
    expect(again.json).toEqual(share.json); // idempotent
    const sid = share.json.id;

    // owner sees tags and the share
    const owner = await alice.client.get(path);
    expect(owner.json.template.tagIds).toEqual([tag.id]);
    expect(owner.json.userShare).toEqual(share.json);

    // anonymous, with the header (and its alias): served as the owner, tags hidden, share included
    const variants: Record<string, string>[] = [
      { "x-user-share-id": sid },
      { "x-secbox-share-id": sid },
      { "x-user-share-id": sid, "x-secbox-share-id": crypto.randomUUID() },
    ];
    for (const headers of variants) {
      const anon = await srv.anon.get(path, { headers });
      expect(anon.status).toBe(200);
      expect(anon.json.template).toMatchObject({ id: tpl.id, name: "shared-tpl", tags: [], tagIds: [] });
      expect(anon.json.template.attributes.commonName).toBe("shared.example");
      expect(anon.json.userShare).toEqual(share.json);
    }
    // invalid credentials are ignored when the share resolves
    expect((await srv.anon.get(path, { ...shareHeader(sid), token: "sbx_ak_" + "1".repeat(64) })).status).toBe(200);

    // another user with the header: same view; without it: 404
    const cross = await bob.client.get(path, shareHeader(sid));
    expect(cross.status).toBe(200);
    expect(cross.json.template.tags).toEqual([]);
    expect((await bob.client.get(path)).status).toBe(404);

    // _generate through the share, anonymously and by bob
    const gen = await srv.anon.post(`${path}/_generate`, { format: "der" }, shareHeader(sid));
    expect(gen.status).toBe(200);
    expect(opensslOk(["x509", "-inform", "DER", "-noout", "-subject"], b64(gen.json.data))).toContain("CN = shared.example");
    expect((await bob.client.post(`${path}/_generate`, { format: "der" }, shareHeader(sid))).status).toBe(200);

    // without the header, with a malformed one, or with the share id of another resource → 404
    expect((await srv.anon.get(path)).status).toBe(404);
    expect((await srv.anon.get(path, shareHeader("not-a-uuid"))).status).toBe(404);
    expect((await srv.anon.get(`${TPL}/${other.id}`, shareHeader(sid))).status).toBe(404);
    expect((await srv.anon.post(`${TPL}/${other.id}/_generate`, { format: "der" }, shareHeader(sid))).status).toBe(404);
    expect((await bob.client.get(`${TPL}/${other.id}`, shareHeader(sid))).status).toBe(404);

    // other operations ignore the share header
    expect((await bob.client.put(path, { templateName: "hijack" }, shareHeader(sid))).status).toBe(404);
    expect((await bob.client.delete(path, shareHeader(sid))).status).toBe(404);
    expect((await srv.anon.put(path, { templateName: "hijack" }, shareHeader(sid))).status).toBe(401);

    // bob cannot unshare it (204, but nothing happens)
    expect((await bob.client.post(`${path}/_unshare`)).status).toBe(204);
    expect((await srv.anon.get(path, shareHeader(sid))).status).toBe(200);

    // unshare: revoked at once; owner GET loses userShare; a new share gets a new id
    expect((await alice.client.post(`${path}/_unshare`)).status).toBe(204);
    expect((await srv.anon.get(path, shareHeader(sid))).status).toBe(404);
    expect((await srv.anon.post(`${path}/_generate`, { format: "der" }, shareHeader(sid))).status).toBe(404);
    expect((await bob.client.get(path, shareHeader(sid))).status).toBe(404);
    expect((await alice.client.get(path)).json.userShare).toBeUndefined();
    expect((await alice.client.post(`${path}/_unshare`)).status).toBe(204); // not shared: still 204
    const reshared = await alice.client.post(`${path}/_share`);
    expect(reshared.json.id).not.toBe(sid);
    expect((await srv.anon.get(path, shareHeader(reshared.json.id))).status).toBe(200);
  });

  test("_unshare answers 204 for unknown, foreign and malformed ids; _share 404s", async () => {
    expect((await alice.client.post(`${TPL}/${crypto.randomUUID()}/_unshare`)).status).toBe(204);
    expect((await alice.client.post(`${TPL}/garbage/_unshare`)).status).toBe(204);
    expect((await alice.client.post(`${TPL}/${crypto.randomUUID()}/_share`)).status).toBe(404);
    expect((await alice.client.post(`${TPL}/garbage/_share`)).status).toBe(404);
  });

  test("deleting a template deletes its share", async () => {
    const tpl = await createTemplate(alice, "to-delete");
    const sid = (await alice.client.post(`${TPL}/${tpl.id}/_share`)).json.id;
    expect((await srv.anon.get(`${TPL}/${tpl.id}`, shareHeader(sid))).status).toBe(200);
    expect((await alice.client.delete(`${TPL}/${tpl.id}`)).status).toBe(204);
    expect((await srv.anon.get(`${TPL}/${tpl.id}`, shareHeader(sid))).status).toBe(404);
    const rows = await srv.rt.db.all("SELECT id FROM shares WHERE resource_id = ?", [tpl.id]);
    expect(rows).toEqual([]);
  });
});
