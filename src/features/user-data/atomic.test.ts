// All or nothing (issue 21, supplement §19.4): a bad entity, a limit breach, a wrong or missing passphrase or a
// forbidden rename → 400 naming the type and sourceId, and the database unchanged — proven by comparing a full export
// (history included) before and after. Hostile files (oversized, deeply nested, forged ids of other users, repeated
// source ids, scripts over the limit, bad base64, wrong versions) are each a clear 400 or `valid: false`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { fullExport, hit, quickUser, snapshot } from "../../tests/fixtures/user-data";

const MAX_IMPORT = 256 * 1024;
let srv: TestServer;
let u: TestUser;
let other: TestUser;
let valid: any;
let before: string;
let otherBefore: string;

const id = (n: number) => `01890000-0000-7000-8000-${String(n).padStart(12, "0")}`;

beforeAll(async () => {
  srv = await startTestServer({
    env: {
      SECBOX_SCHEDULER_ENABLED: "false",
      SECBOX_SERVER_MAX_IMPORT_BYTES: String(MAX_IMPORT),
      SECBOX_SUBSCRIPTIONS_TIERS_STANDARD_MAX_RESPONDERS: "3",
    },
  });
  // The importing user (standard tier: at most 3 responders) already has data, history included.
  u = await quickUser(srv, { tier: "standard" });
  const tag = (await u.client.post("/api/user/tags", { name: "prod" })).json;
  await u.client.post("/api/user/secrets", { name: "KEEP", value: "v" });
  await u.client.post("/api/webhooks/responders", {
    name: "existing",
    location: { pathType: "=", path: "/e" },
    settings: { requestsToTrack: 2 },
    tagIds: [tag.id],
  });
  await hit(srv, u, "/e", { method: "POST", body: "kept" });
  await u.client.post("/api/user/settings", { "common.uiTheme": "light" });
  other = await quickUser(srv);
  await other.client.post("/api/user/tags", { name: "others" });
  await other.client.post("/api/webhooks/responders", { name: "others", location: { pathType: "=", path: "/o" } });
  // A valid file of another user (tags, secrets with values, responders, history, settings).
  const src = await quickUser(srv);
  await src.client.post("/api/user/tags", { name: "imported-tag" });
  await src.client.post("/api/user/secrets", { name: "IMPORTED", value: "x" });
  await src.client.post("/api/webhooks/responders", { name: "imported", location: { pathType: "=", path: "/i" }, settings: { requestsToTrack: 2 } });
  await hit(srv, src, "/i");
  await src.client.post("/api/user/settings", { "common.uiTheme": "dark" });
  valid = await fullExport(src.client, "the passphrase");
  before = await snapshot(u.client);
  otherBefore = await snapshot(other.client);
});
afterAll(() => srv.stop());

/** Sends an import that must fail with 400 (code, message parts) and leave both users' data as it was. */
async function refused(body: unknown, code: string, ...parts: string[]) {
  const res = await u.client.post("/api/user/data/_import", body);
  expect({ status: res.status, code: res.json?.code }).toEqual({ status: 400, code });
  for (const p of parts) expect(res.json.message).toContain(p);
  expect(await snapshot(u.client)).toBe(before);
  expect(await snapshot(other.client)).toBe(otherBefore);
  return res;
}

const withResponders = (extra: unknown[]) => ({ ...valid, data: { ...valid.data, responders: [...valid.data.responders, ...extra] } });
const responder = (n: number, path: string, settings: Record<string, unknown> = {}) => ({
  id: id(n),
  name: `r${n}`,
  location: { pathType: "=", path },
  settings: { requestsToTrack: 0, statusCode: 200, secrets: "none", ...settings },
});

describe("all or nothing", () => {
  test("a bad entity after good ones: 400 naming type and sourceId; tags, secrets and settings before it not written", async () => {
    await refused(
      { data: withResponders([responder(1, "/ok"), responder(2, "/bad", { statusCode: 700 })]), secretsPassphrase: "the passphrase" },
      "INVALID_INPUT",
      `responders[${id(2)}]`,
      "settings.statusCode",
    );
  });

  test("a tier limit on a value (requestsToTrack above the tier maximum)", async () => {
    await refused(
      { data: withResponders([responder(3, "/deep", { requestsToTrack: 31 })]), secretsPassphrase: "the passphrase" },
      "INVALID_INPUT",
      `responders[${id(3)}]`,
      "requestsToTrack",
    );
  });

  test("a count limit breached in the middle of the transaction (standard: 3 responders)", async () => {
    const res = await refused(
      { data: withResponders([responder(4, "/a"), responder(5, "/b"), responder(6, "/c")]), secretsPassphrase: "the passphrase" },
      "LIMIT_REACHED",
      `responders[${id(5)}]`,
      "at most 3 responders",
    );
    expect(res.json.message).not.toContain(id(4));
  });

  test("a wrong or missing passphrase: 400 BAD_PASSPHRASE", async () => {
    await refused({ data: valid, secretsPassphrase: "not the passphrase" }, "BAD_PASSPHRASE", "wrong passphrase");
    await refused({ data: valid }, "BAD_PASSPHRASE", "secretsPassphrase");
  });

  test("a forbidden rename (location and method overlap)", async () => {
    await refused(
      {
        data: withResponders([responder(7, "/E")]),
        secretsPassphrase: "the passphrase",
        selections: { responders: [{ sourceId: id(7), action: "import", conflictResolution: "rename" }] },
      },
      "INVALID_INPUT",
      `responders[${id(7)}]`,
      "rename is not allowed",
    );
  });

  test("an overwrite whose location would clash with another stored responder", async () => {
    const w = await quickUser(srv);
    await w.client.post("/api/webhooks/responders", { name: "x", location: { pathType: "=", path: "/x" } });
    await w.client.post("/api/webhooks/responders", { name: "y", location: { pathType: "=", path: "/y" } });
    const wBefore = await snapshot(w.client);
    // "x" from the file overwrites the stored "x" but wants the place of "y".
    const data = { format: "secbox-export", version: 1, data: { responders: [{ ...responder(8, "/y"), name: "x" }] } };
    const preview = await w.client.post("/api/user/data/_import_preview", { data, mode: "apply" });
    expect(preview.json.summary.responders.conflicts).toEqual([{ sourceId: id(8), name: "x", existingId: expect.any(String), renameAllowed: false }]);
    const res = await w.client.post("/api/user/data/_import", { data, mode: "apply" });
    expect({ status: res.status, code: res.json.code }).toEqual({ status: 400, code: "INVALID_INPUT" });
    expect(res.json.message).toContain(`responders[${id(8)}]: location: responder "y" already serves`);
    expect(await snapshot(w.client)).toBe(wBefore);
  });
});

describe("hostile files", () => {
  test("oversized: 413 above server.max_import_bytes, nothing read", async () => {
    const big = { data: { ...valid, padding: "x".repeat(MAX_IMPORT) } };
    const res = await u.client.post("/api/user/data/_import", big);
    expect(res.status).toBe(413);
    expect(res.json.code).toBe("PAYLOAD_TOO_LARGE");
    expect((await u.client.post("/api/user/data/_import_preview", big)).status).toBe(413);
    // The data routes take more than other routes (2 MiB default there; here 256 KiB is the import limit).
    expect((await u.client.post("/api/user/data/_import_preview", { data: { ...valid, padding: "x".repeat(100_000) } })).status).toBe(200);
    expect(await snapshot(u.client)).toBe(before);
  });

  test("deeply nested: 400 for the body, and valid: false for a nested file sent as text", async () => {
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    const res = await u.client.request("POST", "/api/user/data/_import", {
      raw: `{"data":${deep}}`,
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    const asText = await u.client.post("/api/user/data/_import_preview", { data: deep });
    expect(asText.json).toMatchObject({ valid: false });
    expect(asText.json.warnings[0]).toContain("nested");
    await refused({ data: deep }, "INVALID_INPUT", "nested");
  });

  test("forged ids of another user: references to them are dropped, deletions and selections of them refused", async () => {
    const theirTag = (await other.client.get("/api/user/tags")).json.items[0].id;
    const theirResponder = (await other.client.get("/api/webhooks/responders")).json.items[0].id;
    // An entity claiming another user's id as its own and as a tag: imported under a new id, the tag link dropped.
    const v = await quickUser(srv);
    const forged = { format: "secbox-export", version: 1, data: { responders: [{ ...responder(1, "/f"), id: theirResponder, tagIds: [theirTag] }] } };
    const res = await v.client.post("/api/user/data/_import", { data: forged });
    expect(res.status).toBe(200);
    expect(res.json.warnings).toContain(`responders[${theirResponder}]: tag ${theirTag} was not imported; it is dropped`);
    const mine = (await v.client.get("/api/webhooks/responders")).json.items[0];
    expect(mine.id).not.toBe(theirResponder);
    expect(mine.tagIds).toEqual([]);
    expect(await snapshot(other.client)).toBe(otherBefore);
    await refused(
      { data: { ...valid, data: { responders: valid.data.responders } }, mode: "apply", applyDeletions: { responders: [theirResponder] } },
      "INVALID_INPUT",
      "applyDeletions.responders[0]",
    );
    await refused(
      { data: valid, selections: { responders: [{ sourceId: theirResponder, action: "import" }] } },
      "INVALID_INPUT",
      "selections.responders[0].sourceId",
    );
  });

  test("repeated source ids, scripts over the size limit, bad base64, wrong versions: 400 naming the problem", async () => {
    const base = (data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ format: "secbox-export", version: 1, ...extra, data });
    await refused(
      {
        data: base({
          tags: [
            { id: id(1), name: "a" },
            { id: id(1).toUpperCase(), name: "b" },
          ],
        }),
      },
      "INVALID_INPUT",
      `tags[${id(1)}]: the id appears more than once`,
    );
    await refused(
      { data: base({ scripts: [{ id: id(2), name: "big", scriptType: "responder", content: "x".repeat(51_201) }] }) },
      "INVALID_INPUT",
      `scripts[${id(2)}]: content`,
    );
    await refused(
      {
        data: base({
          responders: [
            {
              ...responder(3, "/h", { requestsToTrack: 2 }),
              history: [{ createdAt: 1, durationMs: 1, method: "GET", path: "/", headers: [], body: "not base64!", bodySize: 3 }],
            },
          ],
        }),
      },
      "INVALID_INPUT",
      `responders[${id(3)}]: history[0].body`,
    );
    await refused(
      { data: base({ privateKeys: [{ id: id(4), name: "k", alg: { keyType: "ed25519" }, encrypted: false, pkcs8: "%%%" }] }) },
      "INVALID_INPUT",
      `privateKeys[${id(4)}]: pkcs8`,
    );
    await refused(
      {
        data: base({
          privateKeys: [{ id: id(5), name: "k", alg: { keyType: "ed25519" }, encrypted: false, pkcs8: Buffer.from("not a key").toString("base64") }],
        }),
      },
      "INVALID_INPUT",
      `privateKeys[${id(5)}]: pkcs8: is not DER`,
    );
    await refused(
      { data: base({ apiTrackers: [{ id: id(6), name: "t", target: { url: "https://example.com" }, revisions: [{ createdAt: 1, body: "A" }] }] }) },
      "INVALID_INPUT",
      `apiTrackers[${id(6)}]: revisions[0].body`,
    );
    await refused({ data: base({}, { version: 0 }) }, "INVALID_INPUT", "version: 0 is not supported");
    await refused({ data: base({}, { version: "1" }) }, "INVALID_INPUT", "version: must be an integer");
    await refused({ data: { ...base({}), format: "secbox-export-v2" } }, "INVALID_INPUT", "format");
    await refused(
      { data: base({ tags: [{ id: id(7), name: "t", tagIds: [] }], secrets: "all" }) },
      "INVALID_INPUT",
      "data.secrets: must be an array",
    );
  });

  test("a key of another algorithm than its alg, and a tracker aimed at a private address, are refused", async () => {
    const pkcs8 = (await fullExport(u.client)).data.privateKeys;
    expect(pkcs8).toEqual([]);
    const gen = await u.client.post("/api/certificates/private_keys", { keyName: "probe", alg: { keyType: "ed25519" } });
    const key = (await fullExport(u.client)).data.privateKeys[0];
    await u.client.delete(`/api/certificates/private_keys/${gen.json.id}`);
    before = await snapshot(u.client);
    await refused(
      { data: { format: "secbox-export", version: 1, data: { privateKeys: [{ ...key, alg: { keyType: "ecdsa", curve: "secp256r1" } }] } } },
      "INVALID_INPUT",
      "pkcs8: holds a key of another algorithm",
    );
    await refused(
      {
        data: {
          format: "secbox-export",
          version: 1,
          data: { apiTrackers: [{ id: id(8), name: "t", target: { url: "http://169.254.169.254/latest" } }] },
        },
      },
      "TARGET_NOT_ALLOWED",
      `apiTrackers[${id(8)}]`,
    );
  });

  test("the preview of every refused file says valid: false with the same reason", async () => {
    const res = await u.client.post("/api/user/data/_import_preview", { data: withResponders([responder(2, "/bad", { statusCode: 700 })]) });
    expect(res.json.valid).toBe(false);
    expect(res.json.warnings[0]).toContain(`responders[${id(2)}]: settings.statusCode`);
  });
});
