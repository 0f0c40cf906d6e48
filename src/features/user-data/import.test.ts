// POST /api/user/data/_import_preview and _import (supplement §19.3, §19.4) through real HTTP: totals, conflicts
// (renameAllowed for responder location overlaps), settings, warnings, toDelete; merge and apply; per-item
// selections and resolutions; references remapped; history restored and trimmed; deletions only of what preview
// listed; settings merged or replaced.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { fullExport, hit, quickUser } from "../../tests/fixtures/user-data";

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_SCHEDULER_ENABLED: "false" } });
});
afterAll(() => srv.stop());

const id = (n: number) => `01890000-0000-7000-8000-${String(n).padStart(12, "0")}`;
const file = (data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  format: "secbox-export",
  version: 1,
  exportedAt: 1767225600,
  ...extra,
  data,
});
const responder = (n: number, name: string, path: string, more: Record<string, unknown> = {}) => ({
  id: id(n),
  name,
  location: { pathType: "=", path },
  method: "GET",
  enabled: true,
  settings: { requestsToTrack: 0, statusCode: 200, secrets: "none" },
  ...more,
});
const record = (createdAt: number, path: string) => ({
  id: id(9000 + createdAt),
  createdAt,
  durationMs: 1,
  method: "GET",
  path,
  headers: [["host", "x"]],
  bodySize: 0,
});

async function names(u: TestUser, path: string): Promise<string[]> {
  return (await u.client.get(`${path}?pageSize=100`)).json.items.map((e: any) => e.name).sort();
}

describe("preview", () => {
  test("totals, conflicts (name; responder location overlap → renameAllowed false), settings, warnings", async () => {
    const u = await quickUser(srv);
    await u.client.post("/api/user/tags", { name: "prod" });
    const existing = (
      await u.client.post("/api/webhooks/responders", { name: "orders", location: { pathType: "=", path: "/orders" }, method: "ANY" })
    ).json;
    const other = (await u.client.post("/api/webhooks/responders", { name: "other", location: { pathType: "=", path: "/taken" } })).json;
    await u.client.post("/api/user/settings", { "common.uiTheme": "light" });
    const data = file({
      tags: [
        { id: id(1), name: "PROD", color: "default" },
        { id: id(2), name: "new" },
      ],
      secrets: [{ id: id(3), name: "S1" }],
      responders: [responder(10, "orders", "/elsewhere"), responder(11, "fresh", "/TAKEN", { tagIds: [id(99)] }), responder(12, "orders2", "/free")],
      settings: { "common.uiTheme": "dark", "future.key": 1 },
      unknownMember: [],
    });
    const res = await u.client.post("/api/user/data/_import_preview", { data, mode: "merge" });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      valid: true,
      version: 1,
      summary: {
        tags: { total: 2, conflicts: [{ sourceId: id(1), name: "prod", existingId: expect.any(String), renameAllowed: true }] },
        secrets: { total: 1, conflicts: [] },
        responders: {
          total: 3,
          conflicts: [
            { sourceId: id(10), name: "orders", existingId: existing.id, renameAllowed: true },
            { sourceId: id(11), name: "fresh", existingId: other.id, renameAllowed: false },
          ],
        },
        settings: { included: true, hasExisting: true },
      },
      warnings: expect.arrayContaining([
        "data.unknownMember: unknown member ignored",
        "secrets: file has no secret values",
        `responders[${id(11)}]: tag ${id(99)} is not in the file; it is dropped`,
        "settings.future.key: unknown setting ignored",
      ]),
    });
    expect(res.json.toDelete).toBeUndefined();
  });

  test("apply mode lists toDelete: stored entities of each type in the file whose name no file entity has", async () => {
    const u = await quickUser(srv);
    const keep = (await u.client.post("/api/user/tags", { name: "keep" })).json;
    const old = (await u.client.post("/api/user/tags", { name: "old" })).json;
    await u.client.post("/api/user/scripts", { name: "untouched type", scriptType: "universal", content: "1" });
    const res = await u.client.post("/api/user/data/_import_preview", { data: file({ tags: [{ id: id(1), name: "keep" }] }), mode: "apply" });
    expect(res.json.toDelete).toEqual({ tags: [{ id: old.id, name: "old" }] });
    expect(res.json.summary.tags.conflicts[0].existingId).toBe(keep.id);
  });

  test("an invalid file is 200 {valid: false, summary: {}, warnings} saying what is wrong, never a 500", async () => {
    const u = await quickUser(srv);
    const cases: [unknown, string][] = [
      [undefined, "data: is required"],
      ["not json {", "data: not valid JSON"],
      [{ format: "other", version: 1, data: {} }, 'format: must be "secbox-export"'],
      [file({}, { version: 2 }), "version: 2 is not supported"],
      [file({ tags: {} }), "data.tags: must be an array"],
      [file({ tags: [{ id: "x", name: "a" }] }), "tags[0].id: must be a UUID"],
      [
        file({
          tags: [
            { id: id(1), name: "a" },
            { id: id(1), name: "b" },
          ],
        }),
        `tags[${id(1)}]: the id appears more than once`,
      ],
      [
        file({
          tags: [
            { id: id(1), name: "a" },
            { id: id(2), name: " A " },
          ],
        }),
        `tags[${id(2)}]: name "a" is also used by tags[${id(1)}]`,
      ],
      [
        file({ scripts: [{ id: id(1), name: "s", scriptType: "universal", content: "x".repeat(51_201) }] }),
        `scripts[${id(1)}]: content: must be 1 to 51200`,
      ],
      [
        file({ responders: [responder(1, "a", "/a"), responder(2, "b", "/A")] }),
        `responders[${id(2)}]: location and method overlap responder ${id(1)}`,
      ],
      [file({ responders: [responder(1, "a", "/a", { settings: { statusCode: 99 } })] }), `responders[${id(1)}]: settings.statusCode`],
      [
        file(
          { secrets: [{ id: id(1), name: "S", encryptedValue: "AAAA" }] },
          { secretsEncryption: { alg: "aes-256-gcm", kdf: "argon2id", kdfParams: { m: 19456, t: 2, p: 1 }, salt: "AAAAAAAAAAAAAAAAAAAAAA==" } },
        ),
        `secrets[${id(1)}]: encryptedValue`,
      ],
      [file({ secrets: [{ id: id(1), name: "S", encryptedValue: "A".repeat(40) }] }), "secretsEncryption: is required"],
      [
        file(
          {},
          { secretsEncryption: { alg: "aes-256-gcm", kdf: "argon2id", kdfParams: { m: 4_000_000, t: 2, p: 1 }, salt: "AAAAAAAAAAAAAAAAAAAAAA==" } },
        ),
        "secretsEncryption.kdfParams.m",
      ],
      [file({ settings: { "common.uiTheme": "neon" } }), "settings.common.uiTheme"],
    ];
    for (const [data, message] of cases) {
      const res = await u.client.post("/api/user/data/_import_preview", data === undefined ? {} : { data });
      expect({ message, status: res.status, valid: res.json?.valid }).toEqual({ message, status: 200, valid: false });
      expect(res.json.summary).toEqual({});
      expect(res.json.warnings.join("\n")).toContain(message);
    }
    const v2 = await u.client.post("/api/user/data/_import_preview", { data: file({}, { version: 2 }) });
    expect(v2.json.version).toBe(2);
  });

  test("400 for a bad mode; 401 without credentials", async () => {
    const u = await quickUser(srv);
    expect((await u.client.post("/api/user/data/_import_preview", { data: file({}), mode: "replace" })).json.code).toBe("INVALID_INPUT");
    expect((await srv.anon.post("/api/user/data/_import_preview", { data: file({}) })).status).toBe(401);
    expect((await srv.anon.post("/api/user/data/_import", { data: file({}) })).status).toBe(401);
  });
});

describe("import", () => {
  test("merge renames conflicts (' (2)'), skips what cannot be renamed, and remaps references", async () => {
    const u = await quickUser(srv);
    const prod = (await u.client.post("/api/user/tags", { name: "prod" })).json;
    await u.client.post("/api/user/tags", { name: "prod (2)" });
    const tok = (await u.client.post("/api/user/secrets", { name: "TOKEN", value: "mine" })).json;
    const mine = (await u.client.post("/api/webhooks/responders", { name: "mine", location: { pathType: "=", path: "/taken" } })).json;
    const data = file({
      tags: [
        { id: id(1), name: "prod", color: "danger" },
        { id: id(2), name: "fresh" },
      ],
      secrets: [{ id: id(3), name: "TOKEN" }],
      responders: [
        responder(10, "mine", "/free", { tagIds: [id(1), id(2)], settings: { requestsToTrack: 0, statusCode: 200, secrets: { selected: [id(3)] } } }),
        responder(11, "blocked", "/taken", { tagIds: [id(2)] }),
      ],
    });
    const res = await u.client.post("/api/user/data/_import", { data });
    expect(res.json.message).toBeUndefined();
    expect(res.status).toBe(200);
    expect(res.json.results).toEqual({
      tags: { imported: 2, updated: 0, skipped: 0, deleted: 0 },
      secrets: { imported: 0, updated: 0, skipped: 1, deleted: 0 },
      responders: { imported: 1, updated: 0, skipped: 1, deleted: 0 },
      settings: { imported: false },
    });
    expect(res.json.warnings).toContain(`secrets[${id(3)}]: the file has no value for secret "TOKEN"; it is skipped`);
    expect(await names(u, "/api/user/tags")).toEqual(["fresh", "prod", "prod (2)", "prod (3)"]);
    const created = (await u.client.get("/api/webhooks/responders?q=mine (2)")).json.items[0];
    expect(created.name).toBe("mine (2)");
    // The skipped secret with a conflict: references point at the stored one.
    expect(created.settings.secrets).toEqual({ selected: [tok.id] });
    const tagNames = created.tags.map((t: any) => t.name).sort();
    expect(tagNames).toEqual(["fresh", "prod (3)"]);
    expect(created.tagIds).not.toContain(prod.id);
    expect((await u.client.get(`/api/webhooks/responders/${mine.id}`)).json.location.path).toBe("/taken");
  });

  test("selections: only listed sourceIds with action import; per-item rename / overwrite / skip", async () => {
    const u = await quickUser(srv);
    const a = (await u.client.post("/api/user/scripts", { name: "a", scriptType: "universal", content: "old a" })).json;
    await u.client.post("/api/user/scripts", { name: "b", scriptType: "universal", content: "old b" });
    await u.client.post("/api/user/scripts", { name: "c", scriptType: "universal", content: "old c" });
    const script = (n: number, name: string) => ({ id: id(n), name, scriptType: "api_extractor", content: `new ${name}` });
    const data = file({ scripts: [script(1, "a"), script(2, "b"), script(3, "c"), script(4, "d"), script(5, "e")] });
    const res = await u.client.post("/api/user/data/_import", {
      data,
      selections: {
        scripts: [
          { sourceId: id(1), action: "import", conflictResolution: "overwrite" },
          { sourceId: id(2), action: "import", conflictResolution: "rename" },
          { sourceId: id(3), action: "import", conflictResolution: "skip" },
          { sourceId: id(4), action: "import" },
          { sourceId: id(5), action: "skip" },
        ],
      },
    });
    expect(res.status).toBe(200);
    expect(res.json.results.scripts).toEqual({ imported: 2, updated: 1, skipped: 2, deleted: 0 });
    expect(await names(u, "/api/user/scripts")).toEqual(["a", "b", "b (2)", "c", "d"]);
    const overwritten = (await u.client.get(`/api/user/scripts/${a.id}`)).json;
    expect(overwritten).toMatchObject({ id: a.id, content: "new a", scriptType: "api_extractor" });
  });

  test("apply: overwrite keeps the id; deletions only of ids preview listed (others → 400, nothing changed)", async () => {
    const u = await quickUser(srv);
    const keep = (await u.client.post("/api/user/tags", { name: "keep", color: "primary" })).json;
    const gone = (await u.client.post("/api/user/tags", { name: "gone" })).json;
    const stays = (await u.client.post("/api/user/tags", { name: "stays" })).json;
    const other = await quickUser(srv);
    const foreign = (await other.client.post("/api/user/tags", { name: "gone" })).json;
    const data = file({ tags: [{ id: id(1), name: "keep", color: "danger" }] });
    const preview = (await u.client.post("/api/user/data/_import_preview", { data, mode: "apply" })).json;
    expect(preview.toDelete.tags.map((t: any) => t.id).sort()).toEqual([gone.id, stays.id].sort());
    for (const bad of [foreign.id, keep.id]) {
      const res = await u.client.post("/api/user/data/_import", { data, mode: "apply", applyDeletions: { tags: [gone.id, bad] } });
      expect(res.status).toBe(400);
      expect(res.json.message).toContain("applyDeletions.tags[1]");
    }
    expect((await other.client.get(`/api/user/tags/${foreign.id}`)).status).toBe(200);
    expect(await names(u, "/api/user/tags")).toEqual(["gone", "keep", "stays"]);
    const merge = await u.client.post("/api/user/data/_import", { data, applyDeletions: { tags: [gone.id] } });
    expect(merge.json.message).toContain("only in apply mode");
    const res = await u.client.post("/api/user/data/_import", { data, mode: "apply", applyDeletions: { tags: [gone.id] } });
    expect(res.status).toBe(200);
    expect(res.json.results.tags).toEqual({ imported: 0, updated: 1, skipped: 0, deleted: 1 });
    expect((await u.client.get(`/api/user/tags/${keep.id}`)).json.color).toBe("danger");
    expect(await names(u, "/api/user/tags")).toEqual(["keep", "stays"]);
  });

  test("history restored with original times, trimmed to requestsToTrack; overwrite replaces it only when the file has some", async () => {
    const u = await quickUser(srv);
    const history = [3, 5, 1, 4, 2].map((t) => record(1767225600 + t, `/p${t}`));
    const data = file({ responders: [responder(1, "hooks", "/h", { settings: { requestsToTrack: 3, statusCode: 200, secrets: "none" }, history })] });
    expect((await u.client.post("/api/user/data/_import", { data })).status).toBe(200);
    const r = (await u.client.get("/api/webhooks/responders")).json.items[0];
    const h = (await u.client.get(`/api/webhooks/responders/${r.id}/_history`)).json;
    expect(h.map((x: any) => [x.path, x.createdAt])).toEqual([
      ["/p5", 1767225605],
      ["/p4", 1767225604],
      ["/p3", 1767225603],
    ]);
    expect(h.every((x: any) => !x.id.startsWith("01890000"))).toBe(true);
    // A new hit goes on top, the oldest restored one is evicted.
    await hit(srv, u, "/h");
    await srv.services.responders.flushCaptures();
    expect((await u.client.get(`/api/webhooks/responders/${r.id}/_history`)).json.map((x: any) => x.path)).toEqual(["/h", "/p5", "/p4"]);
    // Overwrite without history in the file keeps the stored records.
    const noHistory = file({ responders: [responder(1, "hooks", "/h", { settings: { requestsToTrack: 2, statusCode: 204, secrets: "none" } })] });
    expect((await u.client.post("/api/user/data/_import", { data: noHistory, mode: "apply" })).json.results.responders.updated).toBe(1);
    const after = (await u.client.get(`/api/webhooks/responders/${r.id}/_history`)).json.map((x: any) => x.path);
    expect(after).toEqual(["/h", "/p5"]);
    expect((await u.client.get(`/api/webhooks/responders/${r.id}`)).json.settings.statusCode).toBe(204);
    // …with history in the file, it replaces them.
    const replaced = file({
      responders: [
        responder(1, "hooks", "/h", { settings: { requestsToTrack: 2, statusCode: 204, secrets: "none" }, history: [record(1767225000, "/only")] }),
      ],
    });
    expect((await u.client.post("/api/user/data/_import", { data: replaced, mode: "apply" })).status).toBe(200);
    expect((await u.client.get(`/api/webhooks/responders/${r.id}/_history`)).json.map((x: any) => x.path)).toEqual(["/only"]);
  });

  test("tracker revisions restored, newest kept up to config.revisions; the tracker is scheduled after the commit", async () => {
    const s2 = await startTestServer({ env: { SECBOX_SCHEDULER_ENABLED: "true" } });
    try {
      const u = await quickUser(s2);
      const revs = [1, 2, 3, 4].map((t) => ({ createdAt: 1767225600 + t, body: Buffer.from(`rev ${t}`).toString("base64") }));
      const tracker = {
        id: id(1),
        name: "feed",
        enabled: true,
        config: { revisions: 2, timeout: 10000, job: { schedule: "0 0 * * * *" } },
        target: { requests: [{ url: "https://api.example.com/feed" }] },
        notifications: false,
        secrets: "none",
        revisions: revs,
      };
      expect((await u.client.post("/api/user/data/_import", { data: file({ apiTrackers: [tracker] }) })).status).toBe(200);
      const t = (await u.client.get("/api/web_scraping/api_trackers")).json.items[0];
      expect(typeof t.scheduledAt).toBe("number");
      const h = (await u.client.post(`/api/web_scraping/api_trackers/${t.id}/_history`, {})).json;
      expect(h.map((r: any) => [r.data, r.createdAt])).toEqual([
        ["rev 4", 1767225604],
        ["rev 3", 1767225603],
      ]);
    } finally {
      await s2.stop();
    }
  });

  test("settings: merge merges keys, apply replaces them, importSettings: false leaves them; tag scope remapped", async () => {
    const u = await quickUser(srv);
    await u.client.post("/api/user/settings", { "common.uiTheme": "light", "certificates.doNotShowSelfSignedWarning": true });
    const data = file({ tags: [{ id: id(1), name: "scoped" }], settings: { "common.uiTheme": "dark", "common.globalScopeTagIds": [id(1), id(77)] } });
    const off = await u.client.post("/api/user/data/_import", { data, importSettings: false });
    expect(off.json.results.settings).toEqual({ imported: false });
    expect((await u.client.get("/api/user/settings")).json["common.uiTheme"]).toBe("light");
    const merged = await u.client.post("/api/user/data/_import", {
      data,
      selections: { tags: [{ sourceId: id(1), action: "import", conflictResolution: "skip" }] },
    });
    expect(merged.json.warnings).toContain(`settings.common.globalScopeTagIds: tag "${id(77)}" was not imported; it is dropped`);
    const scoped = (await u.client.get("/api/user/tags?q=scoped")).json.items[0];
    expect((await u.client.get("/api/user/settings")).json).toEqual({
      "common.uiTheme": "dark",
      "common.globalScopeTagIds": [scoped.id],
      "certificates.doNotShowSelfSignedWarning": true,
    });
    await u.client.post("/api/user/data/_import", { data, mode: "apply", selections: { tags: [] } });
    expect((await u.client.get("/api/user/settings")).json).toEqual({ "common.uiTheme": "dark", "common.globalScopeTagIds": [scoped.id] });
  });

  test("secrets with values: imported under the right passphrase, re-encrypted under the server key; renamed with _2", async () => {
    const src = await quickUser(srv);
    await src.client.post("/api/user/secrets", { name: "DB_PASSWORD", value: "hunter2" });
    await src.client.post("/api/webhooks/responders", {
      name: "s",
      location: { pathType: "=", path: "/s" },
      settings: { body: "${secrets.DB_PASSWORD}", secrets: "all" },
    });
    const exported = await fullExport(src.client, "export passphrase");
    const u = await quickUser(srv);
    const res = await u.client.post("/api/user/data/_import", { data: exported, secretsPassphrase: "export passphrase" });
    expect(res.json.results.secrets.imported).toBe(1);
    expect(await (await hit(srv, u, "/s")).text()).toBe("hunter2");
    // Imported again: the secret is renamed with "_2" (the responder's location cannot be renamed: skipped).
    const again = await u.client.post("/api/user/data/_import", { data: exported, secretsPassphrase: "export passphrase" });
    expect(again.json.results).toMatchObject({ secrets: { imported: 1 }, responders: { imported: 0, skipped: 1 } });
    expect(await names(u, "/api/user/secrets")).toEqual(["DB_PASSWORD", "DB_PASSWORD_2"]);
    // Leaving secrets out through selections needs no passphrase.
    const v = await quickUser(srv);
    const without = await v.client.post("/api/user/data/_import", { data: exported, selections: { secrets: [] } });
    expect(without.status).toBe(200);
    expect(without.json.results.secrets).toEqual({ imported: 0, updated: 0, skipped: 1, deleted: 0 });
  });

  test("the file may be sent as text", async () => {
    const u = await quickUser(srv);
    const res = await u.client.post("/api/user/data/_import", { data: JSON.stringify(file({ tags: [{ id: id(1), name: "from-text" }] })) });
    expect(res.status).toBe(200);
    expect(await names(u, "/api/user/tags")).toEqual(["from-text"]);
  });
});
