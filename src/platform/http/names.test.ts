// Names and emails refuse control characters and unpaired UTF-16 surrogates (issue 17 item 7): the shared
// normaliser (platform/core/validate) checked through a representative set of entity types over HTTP. Before,
// a lone surrogate was stored as U+FFFD (reads differed from the create response) and NUL/CR/LF went through.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { hasForbiddenChars } from "../core/validate";

let srv: TestServer;
let user: TestUser;

beforeAll(async () => {
  srv = await startTestServer();
  user = await srv.createUser();
});
afterAll(() => srv.stop());

const day = 86_400;
const now = Math.floor(Date.now() / 1000);

/** [label, path, name field, body without the name] */
const ENTITIES: [string, string, string, Record<string, unknown>][] = [
  ["tag", "/api/user/tags", "name", {}],
  ["script", "/api/user/scripts", "name", { scriptType: "universal", content: "1" }],
  ["API key", "/api/user/api_keys", "name", {}],
  ["responder", "/api/webhooks/responders", "name", { location: { pathType: "*", path: "/" }, settings: { body: "x" } }],
  ["policy", "/api/web_security/csp", "name", { content: { type: "serialized", value: "default-src 'self'" } }],
  ["private key", "/api/certificates/private_keys", "keyName", { alg: { keyType: "ed25519" } }],
  [
    "certificate template",
    "/api/certificates/templates",
    "templateName",
    {
      attributes: {
        commonName: "t.example",
        keyAlgorithm: { keyType: "ecdsa", curve: "secp256r1" },
        signatureAlgorithm: "sha256",
        notValidBefore: now - day,
        notValidAfter: now + 30 * day,
      },
    },
  ],
  ["page tracker", "/api/web_scraping/page_trackers", "name", { target: { url: "https://example.com/" } }],
];

// NUL, TAB, LF, CR, ESC, DEL, C1 (NEL, CSI), a lone high and a lone low surrogate, inside the name.
// Bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) and zero-width characters (U+200B–U+200D,
// U+2060, U+FEFF): a name that reads differently from what it is (supplement §28.1).
const INVISIBLE = [
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  "\u200b",
  "\u200c",
  "\u200d",
  "\u2060",
  "\ufeff",
];
const BAD = ["a\u0000b", "a\tb", "a\nb", "a\rb", "a\u001b[31mb", "a\u007fb", "a\u0085b", "a\u009bb", "a\ud800b", "a\udc00b", "a\ud83d"];

describe("names", () => {
  test("every entity type: control characters and unpaired surrogates → 400 INVALID_INPUT naming the field, nothing stored", async () => {
    for (const [label, path, field, body] of ENTITIES) {
      for (const bad of BAD) {
        const res = await user.client.post(path, { ...body, [field]: bad });
        expect([label, JSON.stringify(bad), res.status, res.json?.code]).toEqual([label, JSON.stringify(bad), 400, "INVALID_INPUT"]);
        expect(res.json.message).toStartWith(`${field}:`);
      }
      // Ordinary Unicode (an emoji as a surrogate pair, accents) is fine and reads back exactly; surrounding
      // whitespace, newlines included, is trimmed as before.
      const good = `\n Ünïcode 😀 ${label} \t`;
      const made = await user.client.post(path, { ...body, [field]: good });
      expect([label, made.status]).toEqual([label, 201]);
      const expected = label === "tag" ? good.trim().toLowerCase() : good.trim();
      expect([label, made.json.name]).toEqual([label, expected]);
      // The read equals the create response.
      const read =
        label === "API key"
          ? (await user.client.get(path)).json.find((k: { id: string }) => k.id === made.json.id)
          : (await user.client.get(`${path}/${made.json.id}`)).json;
      // (shared-operation GETs wrap the object: {policy} / {template})
      expect([label, read.name ?? read.policy?.name ?? read.template?.name]).toEqual([label, expected]);
    }
    // Nothing with a bad name was stored (tags as the witness: only the good one exists).
    expect((await user.client.get("/api/user/tags")).json.items.map((t: { name: string }) => t.name)).toEqual(["ünïcode 😀 tag"]);
  });

  test("updates are checked too (tag, script, API key)", async () => {
    const tag = (await user.client.post("/api/user/tags", { name: "renamable" })).json;
    const res = await user.client.put(`/api/user/tags/${tag.id}`, { name: "re\u0000named" });
    expect([res.status, res.json.code]).toEqual([400, "INVALID_INPUT"]);
    const script = (await user.client.post("/api/user/scripts", { name: "s1", scriptType: "universal", content: "1" })).json;
    expect((await user.client.put(`/api/user/scripts/${script.id}`, { name: "s\ud800" })).status).toBe(400);
    const key = (await user.client.post("/api/user/api_keys", { name: "k1" })).json;
    expect((await user.client.put(`/api/user/api_keys/${key.id}`, { name: "k\r\n1" })).status).toBe(400);
    expect((await user.client.get(`/api/user/tags/${tag.id}`)).json.name).toBe("renamable");
  });

  test("every entity type: bidi controls and zero-width characters → 400 INVALID_INPUT naming the field (issue 29 C)", async () => {
    for (const [label, path, field, body] of ENTITIES) {
      for (const bad of INVISIBLE) {
        const res = await user.client.post(path, { ...body, [field]: `evil${bad}gpj.exe` });
        expect([label, JSON.stringify(bad), res.status, res.json?.code]).toEqual([label, JSON.stringify(bad), 400, "INVALID_INPUT"]);
        expect(res.json.message).toBe(`${field}: must not contain bidirectional controls or zero-width characters`);
      }
    }
    // Updates and imports go through the same rule.
    const tag = (await user.client.post("/api/user/tags", { name: "plain-tag" })).json;
    expect((await user.client.put(`/api/user/tags/${tag.id}`, { name: "a\u202eb" })).status).toBe(400);
    const script = (await user.client.post("/api/user/scripts", { name: "plain-script", scriptType: "universal", content: "1" })).json;
    expect((await user.client.put(`/api/user/scripts/${script.id}`, { name: "a\u200bb" })).status).toBe(400);
    const file = {
      format: "secbox-export",
      version: 1,
      exportedAt: now,
      data: { tags: [{ id: "0193aaaa-aaaa-7aaa-8aaa-aaaaaaaaaaaa", name: "x\u2066y", color: "default", createdAt: now, updatedAt: now }] },
    };
    const imported = await user.client.post("/api/user/data/_import", { data: file });
    expect([imported.status, imported.json.code]).toEqual([400, "INVALID_INPUT"]);
  });

  test("the HAR download's file name drops bidi controls and zero-width characters of names stored before the rule", async () => {
    const made = await user.client.post("/api/webhooks/responders", {
      name: "har-name",
      location: { pathType: "=", path: "/har-name" },
      settings: { body: "x" },
    });
    expect(made.status).toBe(201);
    await srv.rt.db.run("UPDATE responders SET name = ? WHERE id = ?", ["invoice\u202eexe.\u200bhar-\u2067x", made.json.id]);
    const res = await user.client.get(`/api/webhooks/responders/${made.json.id}/_har`);
    expect(res.status).toBe(200);
    const disposition = res.headers.get("content-disposition")!;
    expect(disposition).toBe(`attachment; filename="invoiceexe.har-x-history.har"; filename*=UTF-8''invoiceexe.har-x-history.har`);
  });

  test("secrets keep their stricter pattern (controls were already refused)", async () => {
    for (const bad of ["A\u0000B", "A\nB", "A\ud800"])
      expect((await user.client.post("/api/user/secrets", { name: bad, value: "v" })).status).toBe(400);
  });
});

describe("emails", () => {
  test("sign-up, forgot and the notification email refuse C1 controls, NUL and unpaired surrogates", async () => {
    for (const bad of ["a\u0085b@example.com", "a\u009b@example.com", "a\ud800@example.com", "a@exam\udfffple.com", "a\u0000@example.com"]) {
      for (const [path, body] of [
        ["/api/auth/signup", { email: bad, password: "correct horse battery" }],
        ["/api/auth/forgot", { email: bad }],
      ] as const) {
        const res = await srv.anon.post(path, body);
        expect([path, JSON.stringify(bad), res.status, res.json?.code]).toEqual([path, JSON.stringify(bad), 400, "INVALID_INPUT"]);
      }
      const dest = await user.client.put("/api/user/notification_email", { email: bad });
      expect([dest.status, dest.json.code]).toEqual([400, "INVALID_INPUT"]);
    }
    expect((await srv.anon.post("/api/auth/signup", { email: "ünï@example.com", password: "correct horse battery" })).status).toBe(200);
  });
});

test("hasForbiddenChars: Unicode Cc and unpaired surrogates only", () => {
  for (const ok of ["plain", "ünï", "😀", "a b", "\u00a0nbsp", "\u200bzero-width", "日本"]) expect([ok, hasForbiddenChars(ok)]).toEqual([ok, false]);
  for (const bad of ["\u0000", "\u001f", "\u007f", "\u0080", "\u009f", "\ud800", "\udfff", "\ude00\ud83d"])
    expect([bad, hasForbiddenChars(bad)]).toEqual([bad, true]);
});
