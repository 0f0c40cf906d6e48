// The status of the response sent on every tracked record (supplement §27, issue 30 item 7), through real HTTP, the
// real QuickJS pool and the test backend (SQLite, or PostgreSQL with SECBOX_TEST_BACKEND=postgres): static and
// scripted responders, stored response or not, script failures; records of older versions (migration 0017); the
// user-data export and import of history.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { migrate } from "../../platform/db/migrate";
import { MIGRATIONS } from "../../platform/db/migrations";
import { newId } from "../../platform/core/ids";
import { openTestDb } from "../../tests/backend";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { toTrackedRequest } from "./store";
import type { TrackedRow } from "./store";
import { quickUser } from "../../tests/fixtures/quick-users";

const hasSandbox = existsSync(join(import.meta.dir, "../../sandbox/pool.ts"));
const BASE = "/api/webhooks/responders";

let srv: TestServer;
let u: TestUser;
let slow: TestUser;
const root = mkdtempSync(join(tmpdir(), "secbox-status-"));

beforeAll(async () => {
  // standard: 1 s scripts (the 504 below)
  srv = await startTestServer({ env: { SECBOX_SUBSCRIPTIONS_TIERS_STANDARD_SCRIPT_TIMEOUT_SEC: "1" } });
  [u, slow] = await Promise.all([quickUser(srv), quickUser(srv, "standard")]);
});
afterAll(async () => {
  await srv.stop();
  rmSync(root, { recursive: true, force: true });
});

let seq = 0;
async function create(user: TestUser, path: string, settings: Record<string, unknown>, method = "ANY") {
  const res = await user.client.post(BASE, {
    name: `status-${++seq}`,
    method,
    location: { pathType: "=", path },
    settings: { requestsToTrack: 10, ...settings },
  });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json;
}

async function hit(user: TestUser, path: string, init: RequestInit = {}) {
  const res = await fetch(srv.url + path, {
    ...init,
    headers: { host: `${user.handle}.localhost:7070`, ...(init.headers as Record<string, string>) },
  });
  await res.arrayBuffer();
  return res.status;
}

const history = async (user: TestUser, id: string) => {
  const res = await user.client.get(`${BASE}/${id}/_history`);
  expect(res.status).toBe(200);
  return res.json as any[];
};

describe("statusCode on every record", () => {
  test("static responders: the configured status (default 200), also for HEAD; the response itself stays unstored", async () => {
    const plain = await create(u, "/plain", {});
    const created = await create(u, "/created", { statusCode: 201, body: '{"ok":true}' }, "POST");
    const empty = await create(u, "/empty", { statusCode: 204 });
    expect(await hit(u, "/plain")).toBe(200);
    expect(await hit(u, "/plain", { method: "HEAD" })).toBe(200);
    expect(await hit(u, "/created", { method: "POST", body: "{}" })).toBe(201);
    expect(await hit(u, "/empty", { method: "DELETE" })).toBe(204);
    expect((await history(u, plain.id)).map((r) => [r.method, r.statusCode, r.response])).toEqual([
      ["HEAD", 200, undefined],
      ["GET", 200, undefined],
    ]);
    const [rec] = await history(u, created.id);
    expect(rec.statusCode).toBe(201);
    expect(rec.response).toBeUndefined();
    // the key sits after bodySize (before response, when there is one)
    expect(Object.keys(rec).slice(-2)).toEqual(["bodySize", "statusCode"]);
    expect((await history(u, empty.id))[0].statusCode).toBe(204);
  });

  test("the _history window and Try it's record carry it too", async () => {
    const r = await create(u, "/window", { statusCode: 202 });
    await hit(u, "/window");
    await hit(u, "/window");
    const [newest] = (await u.client.get(`${BASE}/${r.id}/_history?limit=1`)).json;
    expect(newest.statusCode).toBe(202);
    const tried = await u.client.post(`${BASE}/${r.id}/_test`, {});
    expect(tried.status).toBe(200);
    expect(tried.json.response.statusCode).toBe(202);
    expect(tried.json.record.statusCode).toBe(202);
  });

  describe.skipIf(!hasSandbox)("scripted responders", () => {
    test("what the script answered (418), the default status (script returns null), and with trackResponse the stored one", async () => {
      const teapot = await create(u, "/teapot", { statusCode: 201, script: "({ statusCode: 418, body: 'short and stout' })" });
      const defaults = await create(u, "/defaults", { statusCode: 201, script: "null" });
      const tracked = await create(u, "/tracked", { script: "({ statusCode: 299, trackResponse: true })" });
      expect(await hit(u, "/teapot")).toBe(418);
      expect(await hit(u, "/defaults")).toBe(201);
      expect(await hit(u, "/tracked")).toBe(299);
      const [t] = await history(u, teapot.id);
      expect(t.statusCode).toBe(418);
      expect(t.response).toBeUndefined();
      expect((await history(u, defaults.id))[0].statusCode).toBe(201);
      const [k] = await history(u, tracked.id);
      expect([k.statusCode, k.response.statusCode]).toEqual([299, 299]);
      expect(Object.keys(k).slice(-3)).toEqual(["bodySize", "statusCode", "response"]);
    });

    test("failures: a script error's 500, a bad return's 500, the time limit's 504", async () => {
      const thrown = await create(u, "/throws", { script: "throw new Error('kaboom')" });
      const bad = await create(u, "/bad", { script: "return 42" });
      const forever = await create(slow, "/forever", { script: "while (true) {}" });
      expect(await hit(u, "/throws")).toBe(500);
      expect(await hit(u, "/bad")).toBe(500);
      expect(await hit(slow, "/forever")).toBe(504);
      for (const [user, r, status] of [
        [u, thrown, 500],
        [u, bad, 500],
        [slow, forever, 504],
      ] as const) {
        const [rec] = await history(user, r.id);
        expect([rec.statusCode, rec.response.statusCode]).toEqual([status, status]);
      }
    });
  });
});

describe("records of older versions", () => {
  test("migration 0017: a stored response's status is kept as the record's; without one it stays unknown", async () => {
    const { db, drop } = await openTestDb(join(root, "migrate"));
    try {
      await migrate(db, MIGRATIONS.slice(0, 16));
      const user = newId();
      const responder = newId();
      await db.run(
        "INSERT INTO users (id, email, handle, tier, tier_started_at, unsubscribe_token, created_at, updated_at) VALUES (?, 'old@example.com', 'oldhandle', 'basic', 0, ?, 0, 0)",
        [user, newId()],
      );
      await db.run(
        `INSERT INTO responders (id, user_id, name, path_type, path, path_lower, method, enabled, requests_to_track, status_code, secrets, created_at, updated_at)
         VALUES (?, ?, 'old', '=', '/o', '/o', 'ANY', 1, 10, 201, '"none"', 0, 0)`,
        [responder, user],
      );
      const insert = (id: string, status: number | null) =>
        db.run(
          `INSERT INTO responder_requests (id, responder_id, created_at, duration_ms, method, path, headers, body_size, response_status, response_headers, response_body_size, response_truncated)
           VALUES (?, ?, 1767225600, 1, 'GET', '/o', '[]', 0, ?, ?, ?, ?)`,
          [id, responder, status, status === null ? null : "[]", status === null ? null : 0, status === null ? null : 0],
        );
      const [a, b] = [newId(), newId()];
      await insert(a, 418);
      await insert(b, null);
      expect((await migrate(db)).applied).toEqual(MIGRATIONS.slice(16).map((m) => m.version));
      const rows = await db.all<TrackedRow>("SELECT * FROM responder_requests ORDER BY id");
      expect(rows.map((r) => [r.id, r.status_code === null ? null : Number(r.status_code)])).toEqual([
        [a, 418],
        [b, null],
      ]);
      const records = rows.map((r) =>
        toTrackedRequest({
          ...r,
          status_code: r.status_code === null ? null : Number(r.status_code),
          response_status: r.response_status === null ? null : Number(r.response_status),
        }),
      );
      expect(records.map((r) => r.statusCode)).toEqual([418, undefined]);
      expect(records.map((r) => "statusCode" in r)).toEqual([true, false]);
    } finally {
      await drop();
    }
  });

  test("the API leaves statusCode out of a record whose status is unknown", async () => {
    const r = await create(u, "/legacy", { statusCode: 201 });
    await hit(u, "/legacy");
    await srv.services.responders.flushCaptures();
    await srv.rt.db.run("UPDATE responder_requests SET status_code = NULL WHERE responder_id = ?", [r.id]);
    const [rec] = await history(u, r.id);
    expect(rec.statusCode).toBeUndefined();
    expect("statusCode" in rec).toBe(false);
  });
});

describe("export and import", () => {
  const file = (history: unknown[]) => ({
    format: "secbox-export",
    version: 1,
    exportedAt: 1767225600,
    data: {
      responders: [
        {
          id: newId(),
          name: `imported-${++seq}`,
          location: { pathType: "=", path: `/imp-${seq}` },
          method: "GET",
          enabled: true,
          settings: { requestsToTrack: 10, statusCode: 200, secrets: "none" },
          history,
        },
      ],
    },
  });
  const rec = (createdAt: number, more: Record<string, unknown> = {}) => ({
    id: newId(),
    createdAt,
    durationMs: 1,
    method: "GET",
    path: "/p",
    headers: [["host", "x"]],
    bodySize: 0,
    ...more,
  });

  test("exported records carry statusCode; an import restores it, or takes the stored response's when the file has none", async () => {
    const r = await create(u, "/exported", { statusCode: 203 });
    await hit(u, "/exported");
    const exported = (await u.client.post("/api/user/data/_export", { include: { responders: { type: "all", includeHistory: true } } })).json;
    const mine = exported.data.responders.find((x: any) => x.id === r.id);
    expect(mine.history.map((h: any) => h.statusCode)).toEqual([203]);

    const other = await quickUser(srv);
    const data = file([
      rec(1767225603, { statusCode: 201 }),
      rec(1767225602, { response: { statusCode: 502, headers: [], bodySize: 0, truncated: false } }),
      rec(1767225601),
    ]);
    const res = await other.client.post("/api/user/data/_import", { data });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const [imported] = (await other.client.get(BASE)).json.items;
    expect((await history(other, imported.id)).map((h) => h.statusCode)).toEqual([201, 502, undefined]);

    const bad = await other.client.post("/api/user/data/_import", { data: file([rec(1767225600, { statusCode: 42 })]) });
    expect(bad.status).toBe(400);
    expect(bad.json.message).toContain("history[0].statusCode");
  });
});
