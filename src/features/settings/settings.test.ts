import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";

let srv: TestServer;
let a: TestUser;

beforeAll(async () => {
  srv = await startTestServer();
  a = await srv.createUser();
});
afterAll(() => srv.stop());

const URL = "/api/user/settings";

describe("settings", () => {
  test("401 without credentials (before any body check)", async () => {
    expect((await srv.anon.get(URL)).status).toBe(401);
    const res = await srv.anon.post(URL, ["not", "an", "object"]);
    expect(res.status).toBe(401);
    expect(res.json.code).toBe("UNAUTHENTICATED");
  });

  test("GET → {} when nothing is stored; POST {} or no body → 200 current", async () => {
    const u = await srv.createUser();
    const res = await u.client.get(URL);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({});
    expect((await u.client.post(URL, {})).json).toEqual({});
    await u.client.post(URL, { "common.uiTheme": "dark" });
    const empty = await u.client.post(URL, {});
    expect(empty.status).toBe(200);
    expect(empty.json).toEqual({ "common.uiTheme": "dark" });
    const noBody = await u.client.request("POST", URL);
    expect(noBody.status).toBe(200);
    expect(noBody.json).toEqual({ "common.uiTheme": "dark" });
  });

  test("every key accepts its valid values; the response is the full merged object", async () => {
    const u = await srv.createUser();
    const first = await u.client.post(URL, { "common.uiTheme": "light", "certificates.doNotShowSelfSignedWarning": true });
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ "common.uiTheme": "light", "certificates.doNotShowSelfSignedWarning": true });

    const all = {
      "common.uiTheme": "system",
      "common.sidebarCollapsed": { nav: true, sections: ["responders", "trackers"] },
      "common.globalScopeTagIds": ["0199aaaa-0000-7000-8000-000000000001", "whatever"],
      "certificates.doNotShowPrivateKeysWarning": false,
      "notifications.unsubscribed": true,
    };
    const second = await u.client.post(URL, all);
    expect(second.status).toBe(200);
    expect(second.json).toEqual({ ...all, "certificates.doNotShowSelfSignedWarning": true });
    expect((await u.client.get(URL)).json).toEqual(second.json);

    for (const theme of ["light", "dark", "system"])
      expect((await u.client.post(URL, { "common.uiTheme": theme })).json["common.uiTheme"]).toBe(theme);
  });

  test("sidebarCollapsed: members optional, unknown members dropped, empty object allowed", async () => {
    const u = await srv.createUser();
    const res = await u.client.post(URL, { "common.sidebarCollapsed": { sections: [], other: 1, nav: null } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ "common.sidebarCollapsed": { sections: [] } });
    expect((await u.client.post(URL, { "common.sidebarCollapsed": {} })).json).toEqual({ "common.sidebarCollapsed": {} });
    expect((await u.client.post(URL, { "common.sidebarCollapsed": { nav: false } })).json).toEqual({ "common.sidebarCollapsed": { nav: false } });
  });

  test("null removes a key; removing everything leaves {}", async () => {
    const u = await srv.createUser();
    await u.client.post(URL, { "common.uiTheme": "dark", "common.globalScopeTagIds": ["x"] });
    const res = await u.client.post(URL, { "common.uiTheme": null });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ "common.globalScopeTagIds": ["x"] });
    // removing an absent key is fine
    expect((await u.client.post(URL, { "certificates.doNotShowSelfSignedWarning": null })).json).toEqual({ "common.globalScopeTagIds": ["x"] });
    expect((await u.client.post(URL, { "common.globalScopeTagIds": null })).json).toEqual({});
    expect((await u.client.get(URL)).json).toEqual({});
  });

  test("unknown key or invalid value → 400 naming the key, nothing applied", async () => {
    const u = await srv.createUser();
    const initial = { "common.uiTheme": "dark", "notifications.unsubscribed": true };
    await u.client.post(URL, initial);
    const cases: [Record<string, unknown>, string][] = [
      [{ "common.bogus": true }, "common.bogus"],
      [{ uiTheme: "dark" }, "uiTheme"],
      [{ "common.uiTheme": "blue" }, "common.uiTheme"],
      [{ "common.uiTheme": 1 }, "common.uiTheme"],
      [{ "common.sidebarCollapsed": "collapsed" }, "common.sidebarCollapsed"],
      [{ "common.sidebarCollapsed": [true] }, "common.sidebarCollapsed"],
      [{ "common.sidebarCollapsed": { nav: "yes" } }, "common.sidebarCollapsed.nav"],
      [{ "common.sidebarCollapsed": { sections: "a" } }, "common.sidebarCollapsed.sections"],
      [{ "common.sidebarCollapsed": { sections: ["a", 2] } }, "common.sidebarCollapsed.sections[1]"],
      [{ "common.globalScopeTagIds": "abc" }, "common.globalScopeTagIds"],
      [{ "common.globalScopeTagIds": [1] }, "common.globalScopeTagIds[0]"],
      [{ "certificates.doNotShowSelfSignedWarning": "true" }, "certificates.doNotShowSelfSignedWarning"],
      [{ "certificates.doNotShowPrivateKeysWarning": 0 }, "certificates.doNotShowPrivateKeysWarning"],
      [{ "notifications.unsubscribed": 1 }, "notifications.unsubscribed"],
      // valid entries next to an invalid one are not applied either
      [{ "common.uiTheme": "light", "notifications.unsubscribed": null, "common.nope": 1 }, "common.nope"],
      [{ "notifications.unsubscribed": false, "certificates.doNotShowSelfSignedWarning": "no" }, "certificates.doNotShowSelfSignedWarning"],
    ];
    for (const [body, key] of cases) {
      const res = await u.client.post(URL, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
      expect(res.json.message.startsWith(`${key}:`)).toBe(true);
    }
    expect((await u.client.get(URL)).json).toEqual(initial);
  });

  test("body must be a JSON object", async () => {
    for (const body of [["common.uiTheme", "dark"], "dark", 5, true, null]) {
      const res = await a.client.post(URL, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
    }
    const badJson = await a.client.request("POST", URL, { raw: "{nope", headers: { "content-type": "application/json" } });
    expect(badJson.status).toBe(400);
    expect(badJson.json.code).toBe("INVALID_JSON");
  });

  test("total stored size ≤ 64 KiB", async () => {
    const u = await srv.createUser();
    const sizeWith = (s: string) => Buffer.byteLength(JSON.stringify({ "common.globalScopeTagIds": [s] }));
    const overhead = sizeWith("");
    const exact = "x".repeat(65_536 - overhead);
    expect(sizeWith(exact)).toBe(65_536);
    const ok = await u.client.post(URL, { "common.globalScopeTagIds": [exact] });
    expect(ok.status).toBe(200);
    // one more byte anywhere is refused, and nothing changes
    const over = await u.client.post(URL, { "certificates.doNotShowSelfSignedWarning": true });
    expect(over.status).toBe(400);
    expect(over.json.message).toContain("65536");
    const multibyte = await u.client.post(URL, { "common.globalScopeTagIds": ["é".repeat(32_768)] }); // 65,536 bytes alone
    expect(multibyte.status).toBe(400);
    expect((await u.client.get(URL)).json).toEqual({ "common.globalScopeTagIds": [exact] });
    // shrinking is always allowed
    expect((await u.client.post(URL, { "common.globalScopeTagIds": null })).json).toEqual({});
  });

  test("settings are per user", async () => {
    const b = await srv.createUser();
    await a.client.post(URL, { "common.uiTheme": "dark" });
    await b.client.post(URL, { "common.uiTheme": "light" });
    expect((await a.client.get(URL)).json["common.uiTheme"]).toBe("dark");
    expect((await b.client.get(URL)).json).toEqual({ "common.uiTheme": "light" });
    const c = await srv.createUser();
    expect((await c.client.get(URL)).json).toEqual({});
  });
});

describe("settings service (for mail and unsubscribe)", () => {
  test("isUnsubscribed follows notifications.unsubscribed; false or null re-enables", async () => {
    const svc = srv.services.settings;
    const u = await srv.createUser();
    expect(await svc.isUnsubscribed(u.id)).toBe(false);
    await u.client.post(URL, { "notifications.unsubscribed": true });
    expect(await svc.isUnsubscribed(u.id)).toBe(true);
    await u.client.post(URL, { "notifications.unsubscribed": false });
    expect(await svc.isUnsubscribed(u.id)).toBe(false);
    await u.client.post(URL, { "notifications.unsubscribed": true });
    await u.client.post(URL, { "notifications.unsubscribed": null });
    expect(await svc.isUnsubscribed(u.id)).toBe(false);
    expect(await svc.get(u.id)).toEqual({});
  });

  test("setUnsubscribed keeps other settings, shows in GET, and works even at the size limit", async () => {
    const svc = srv.services.settings;
    const u = await srv.createUser();
    await u.client.post(URL, { "common.uiTheme": "dark" });
    await svc.setUnsubscribed(u.id, true);
    expect(await svc.isUnsubscribed(u.id)).toBe(true);
    expect((await u.client.get(URL)).json).toEqual({ "common.uiTheme": "dark", "notifications.unsubscribed": true });
    await svc.setUnsubscribed(u.id, false);
    expect(await svc.isUnsubscribed(u.id)).toBe(false);
    expect((await svc.get(u.id))["common.uiTheme"]).toBe("dark");

    // Fill to exactly 64 KiB: the user may not add more, but an unsubscribe link must still work.
    const full = await srv.createUser();
    const overhead = Buffer.byteLength(JSON.stringify({ "common.globalScopeTagIds": [""] }));
    expect((await full.client.post(URL, { "common.globalScopeTagIds": ["x".repeat(65_536 - overhead)] })).status).toBe(200);
    expect((await full.client.post(URL, { "notifications.unsubscribed": true })).status).toBe(400);
    await svc.setUnsubscribed(full.id, true);
    expect(await svc.isUnsubscribed(full.id)).toBe(true);
    // other users are unaffected
    expect(await svc.isUnsubscribed(u.id)).toBe(false);
  });

  test("stored settings read back as the known keys only; a row that is not JSON reads as {} and is overwritten", async () => {
    const u = await srv.createUser();
    const now = Math.floor(Date.now() / 1000);
    await srv.rt.db.run("INSERT INTO user_settings (user_id, data, updated_at) VALUES (?, ?, ?)", [
      u.id,
      JSON.stringify({ "common.uiTheme": "dark", "legacy.key": 1, "certificates.doNotShowSelfSignedWarning": null }),
      now,
    ]);
    expect((await u.client.get(URL)).json).toEqual({ "common.uiTheme": "dark" });
    await srv.rt.db.run("UPDATE user_settings SET data = ? WHERE user_id = ?", ["{not json", u.id]);
    expect((await u.client.get(URL)).json).toEqual({});
    expect((await u.client.post(URL, { "common.uiTheme": "light" })).json).toEqual({ "common.uiTheme": "light" });
    const row = await srv.rt.db.get<{ data: string }>("SELECT data FROM user_settings WHERE user_id = ?", [u.id]);
    expect(JSON.parse(row!.data)).toEqual({ "common.uiTheme": "light" });
    // Removing the last key removes the row.
    await u.client.post(URL, { "common.uiTheme": null });
    expect(await srv.rt.db.get("SELECT data FROM user_settings WHERE user_id = ?", [u.id])).toBeUndefined();
  });
});
