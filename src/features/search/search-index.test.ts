// POST /api/search under the isolation rules (supplement §28, issue 29) through real HTTP: content is matched from
// 3 characters on only (script source, responder path, tracker URLs); one search per user at a time (a second
// concurrent one → 429 RATE_LIMITED with Retry-After); hostile content (every trigram of the query present) still
// gives exact answers; a query holding U+0000 is a 400; and the content index follows every write path — create,
// update, delete, import, clone and a user's removal — on the test backend (SQLite: FTS5 triggers; PostgreSQL: GIN
// expression indexes).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { invalid } from "../../platform/core/errors";
import type { SearchRunner } from "./service";
import { ApiClient, startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { onPostgres } from "../../tests/backend";
import { quickUser } from "../../tests/fixtures/user-data";

const OPERATOR = "op@search-index.example";
let srv: TestServer;
let u: TestUser;
let other: TestUser;
let op: TestUser;

const search = (body: unknown, user: TestUser = u) => user.client.post("/api/search", body);
const found = async (query: string, user: TestUser = u) => {
  const res = await search({ query, limit: 100 }, user);
  expect(res.status).toBe(200);
  return res.json as { items: { type: string; id: string; matched: string }[]; total: number };
};
const created = async (user: TestUser, path: string, body: unknown): Promise<string> => {
  const res = await user.client.post(path, body);
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${res.text}`);
  return res.json.id;
};

beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_SCHEDULER_ENABLED: "false", SECBOX_SECURITY_OPERATORS: OPERATOR } });
  u = await quickUser(srv);
  other = await quickUser(srv);
  op = await quickUser(srv, { email: OPERATOR });
});
afterAll(() => srv.stop());

describe("content from 3 characters on (supplement §28)", () => {
  test("a 1- or 2-character query matches names and ids only, never script source, responder path or tracker URL", async () => {
    const ids = {
      script: await created(u, "/api/user/scripts", { name: "first", scriptType: "universal", content: "// see QV9 here\nreturn 1;" }),
      responder: await created(u, "/api/webhooks/responders", { name: "second", location: { pathType: "=", path: "/hooks/qv9" } }),
      page: await created(u, "/api/web_scraping/page_trackers", { name: "third", enabled: false, target: { url: "https://qv9.example/" } }),
      api: await created(u, "/api/web_scraping/api_trackers", {
        name: "fourth",
        enabled: false,
        target: { requests: [{ url: "https://a.example/" }, { url: "https://b.example/qv9" }] },
      }),
    };
    for (const q of ["q", "qv", "Qv", "v9", "9"]) expect({ q, ...(await found(q)) }).toEqual({ q, items: [], total: 0 });
    const three = await found("qV9");
    expect(three.total).toBe(4);
    expect(three.items.map((i) => [i.id, i.matched]).sort()).toEqual(
      Object.values(ids)
        .map((id) => [id, "content"])
        .sort(),
    );
    // Short queries still find names.
    const named = await created(u, "/api/user/tags", { name: "qv" });
    expect((await found("QV")).items.map((i) => [i.id, i.matched])).toEqual([[named, "name"]]);
    for (const [path, id] of [
      ["/api/user/scripts", ids.script],
      ["/api/webhooks/responders", ids.responder],
      ["/api/web_scraping/page_trackers", ids.page],
      ["/api/web_scraping/api_trackers", ids.api],
      ["/api/user/tags", named],
    ] as const) {
      expect((await u.client.delete(`${path}/${id}`)).status).toBe(204);
    }
  });

  test("hostile content (every trigram of the query, never the query) gives exact answers", async () => {
    const hostile = `${"a".repeat(198)}b`.repeat(258);
    const content = hostile.slice(0, 51_200); // the script limit
    const sid = await created(u, "/api/user/scripts", { name: "hostile", scriptType: "universal", content });
    const url = `https://h.example/${hostile.slice(0, 2000)}`;
    const pid = await created(u, "/api/web_scraping/page_trackers", { name: "hostile-page", enabled: false, target: { url } });
    expect(await found(`${"a".repeat(199)}b`)).toEqual({ items: [], total: 0 });
    const hit = await found(`${"A".repeat(198)}B`);
    expect(hit.items.map((i) => [i.id, i.matched]).sort()).toEqual(
      [
        [sid, "content"],
        [pid, "content"],
      ].sort(),
    );
    await u.client.delete(`/api/user/scripts/${sid}`);
    await u.client.delete(`/api/web_scraping/page_trackers/${pid}`);
  });
});

// Issue 29: a search's cost grows with the user's data, so on SQLite it runs on a work thread (its own read-only
// connection), under the user's share of the work pool, never on the event loop. On PostgreSQL the database does the
// work and the main thread only awaits it.
test("on SQLite a search runs on the work pool, and sees what was just committed", async () => {
  const before = srv.services.work.stats().started;
  const sid = await created(u, "/api/user/scripts", { name: "pooled-search-probe", scriptType: "universal", content: "return 'zebra-on-a-thread';" });
  const hit = await found("zebra-on-a-thread");
  expect(hit.items.map((i) => [i.id, i.matched])).toEqual([[sid, "content"]]);
  expect(srv.services.work.stats().started - before).toBe(onPostgres ? 0 : 1);
  await u.client.delete(`/api/user/scripts/${sid}`);
});

test("a query holding U+0000 is refused with 400 on both backends (never a 500, never a truncated pattern)", async () => {
  for (const query of ["a\u0000b", "abc\u0000", "\u0000"]) {
    const res = await search({ query });
    expect({ query, status: res.status, code: res.json.code }).toEqual({ query, status: 400, code: "INVALID_INPUT" });
    expect(res.json.message).toContain("query");
  }
});

describe("one search per user at a time (supplement §28)", () => {
  test("a second search of the same user while the first runs → 429 RATE_LIMITED with Retry-After; other users are not held", async () => {
    const svc = srv.services.search;
    expect(typeof svc.runner).toBe("function");
    const real: SearchRunner = svc.runner;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const started = new Promise<void>((r) => (entered = r));
    // Holds the first search that reaches the runner (the real one runs after the gate opens).
    svc.runner = async (...args) => {
      svc.runner = real;
      entered();
      await gate;
      return real(...args);
    };
    await created(u, "/api/user/tags", { name: "held-search" });
    const first = search({ query: "held" });
    await started;
    try {
      const second = await search({ query: "held" });
      expect({ status: second.status, code: second.json.code, retryAfter: second.headers.get("retry-after") }).toEqual({
        status: 429,
        code: "RATE_LIMITED",
        retryAfter: "1",
      });
      expect(second.json.message).toContain("search");
      // Another user searches meanwhile.
      expect((await search({ query: "held" }, other)).json).toEqual({ items: [], total: 0 });
      // Bad input is still a 400 (checked before the slot), an empty query still answers at once.
      expect((await search({ query: 5 })).status).toBe(400);
      expect((await search({ query: " " })).json).toEqual({ items: [], total: 0 });
    } finally {
      release();
    }
    const done = await first;
    expect(done.status).toBe(200);
    expect(done.json.total).toBe(1);
    // The slot is free again, also after a search that failed.
    expect((await search({ query: "held" })).json.total).toBe(1);
    svc.runner = async () => {
      svc.runner = real;
      throw invalid("refused by the test");
    };
    expect((await search({ query: "held" })).status).toBe(400);
    expect((await search({ query: "held" })).json.total).toBe(1);
  });
});

describe("the content index follows every write", () => {
  test("create, update, delete: script source, responder path, page and API tracker URLs", async () => {
    const s = await created(u, "/api/user/scripts", { name: "sync-s", scriptType: "universal", content: "return 'zebra-11';" });
    const r = await created(u, "/api/webhooks/responders", { name: "sync-r", location: { pathType: "=", path: "/zebra-11" } });
    const p = await created(u, "/api/web_scraping/page_trackers", { name: "sync-p", enabled: false, target: { url: "https://zebra-11.example/" } });
    const a = await created(u, "/api/web_scraping/api_trackers", {
      name: "sync-a",
      enabled: false,
      target: { requests: [{ url: "https://x.example/zebra-11" }] },
    });
    expect((await found("zebra-11")).items.map((i) => i.id).sort()).toEqual([s, r, p, a].sort());

    expect((await u.client.put(`/api/user/scripts/${s}`, { content: "return 'lion-22';" })).status).toBe(200);
    expect((await u.client.put(`/api/webhooks/responders/${r}`, { location: { pathType: "=", path: "/Lion-22" } })).status).toBe(200);
    expect((await u.client.put(`/api/web_scraping/page_trackers/${p}`, { target: { url: "https://lion-22.example/" } })).status).toBe(204);
    expect(
      (
        await u.client.put(`/api/web_scraping/api_trackers/${a}`, {
          target: { requests: [{ url: "https://y.example/a" }, { url: "https://y.example/lion-22" }] },
        })
      ).status,
    ).toBe(204);
    expect(await found("zebra-11")).toEqual({ items: [], total: 0 });
    expect((await found("LION-22")).items.map((i) => i.id).sort()).toEqual([s, r, p, a].sort());
    // A rename leaves the content as it is.
    expect((await u.client.put(`/api/user/scripts/${s}`, { name: "sync-s2" })).status).toBe(200);
    expect((await found("lion-22")).total).toBe(4);

    await u.client.delete(`/api/user/scripts/${s}`);
    await u.client.delete(`/api/webhooks/responders/${r}`);
    await u.client.delete(`/api/web_scraping/page_trackers/${p}`);
    await u.client.delete(`/api/web_scraping/api_trackers/${a}`);
    expect(await found("lion-22")).toEqual({ items: [], total: 0 });
  });

  test("import and clone index what they write; a user's removal takes their index entries with them", async () => {
    const src = await quickUser(srv, { email: "src@search-index.example" });
    await created(src, "/api/user/scripts", { name: "imp-s", scriptType: "universal", content: "return 'otter-33';" });
    await created(src, "/api/webhooks/responders", { name: "imp-r", location: { pathType: "=", path: "/otter-33" } });
    await created(src, "/api/web_scraping/api_trackers", {
      name: "imp-a",
      enabled: false,
      target: { requests: [{ url: "https://x.example/otter-33" }] },
    });
    expect((await found("otter-33", src)).total).toBe(3);

    // Import: another user takes the export.
    const file = (
      await src.client.post("/api/user/data/_export", {
        include: { scripts: { type: "all" }, responders: { type: "all" }, apiTrackers: { type: "all" } },
      })
    ).json;
    const dst = await quickUser(srv);
    const imported = await dst.client.post("/api/user/data/_import", { data: file });
    expect(imported.status).toBe(200);
    const mine = await found("OTTER-33", dst);
    expect(mine.items.map((i) => [i.type, i.matched]).sort()).toEqual([
      ["apiTracker", "content"],
      ["responder", "content"],
      ["script", "content"],
    ]);

    // Clone (operator).
    const cloned = await op.client.post("/api/users/_clone", { source: { email: src.email }, destination: { email: "clone@search-index.example" } });
    expect(cloned.status).toBe(200);
    const cloneRow = (await srv.services.users.getRowByEmail("clone@search-index.example"))!;
    const session = await srv.services.users.createSession(cloneRow.id);
    const cloneUser: TestUser = {
      id: cloneRow.id,
      email: cloneRow.email,
      handle: cloneRow.handle,
      session,
      client: new ApiClient(srv.url, { session }),
    };
    expect((await found("otter-33", cloneUser)).total).toBe(3);

    // Removal: the source's rows and, on SQLite, their FTS documents and user number go; the others' stay.
    const db = srv.rt.db;
    const docsOf = async (userId: string) =>
      db.dialect === "sqlite"
        ? Number(
            (await db.get<{ n: number }>(
              `SELECT COUNT(*) AS n FROM search_docs d WHERE d.entity_id IN (SELECT id FROM scripts WHERE user_id = ? UNION ALL SELECT id FROM responders WHERE user_id = ? UNION ALL SELECT id FROM trackers WHERE user_id = ?)`,
              [userId, userId, userId],
            ))!.n,
          )
        : 0;
    const sqlite = db.dialect === "sqlite";
    const before = sqlite ? Number((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM search_docs"))!.n) : 0;
    if (sqlite) expect(await docsOf(src.id)).toBe(3);
    expect((await op.client.delete(`/api/users/${src.id}`)).status).toBe(204);
    if (sqlite) {
      expect(Number((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM search_docs"))!.n)).toBe(before - 3);
      expect(await db.get("SELECT n FROM search_users WHERE user_id = ?", [src.id])).toBeUndefined();
      // Every document belongs to a row that exists, and every searchable row has its document.
      const orphans = await db.get<{ n: number }>(
        `SELECT COUNT(*) AS n FROM search_docs d WHERE NOT EXISTS (SELECT 1 FROM scripts e WHERE d.tbl = 'scripts' AND e.id = d.entity_id)
           AND NOT EXISTS (SELECT 1 FROM responders e WHERE d.tbl = 'responders' AND e.id = d.entity_id)
           AND NOT EXISTS (SELECT 1 FROM trackers e WHERE d.tbl = 'trackers' AND e.id = d.entity_id)`,
      );
      expect(Number(orphans!.n)).toBe(0);
      const rows = await db.get<{ n: number }>(
        "SELECT (SELECT COUNT(*) FROM scripts) + (SELECT COUNT(*) FROM responders) + (SELECT COUNT(*) FROM trackers) AS n",
      );
      expect(Number((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM search_docs"))!.n)).toBe(Number(rows!.n));
    }
    expect((await found("otter-33", dst)).total).toBe(3);
    expect((await found("otter-33", cloneUser)).total).toBe(3);
  });
});
