// U+0000 in stored text (supplement §28.1, issue 29 C). Before, a tracker stored a NUL in its request body on
// PostgreSQL (inside its JSON text, as the escape \u0000) and every later search of that user answered 500, since
// PostgreSQL's JSON functions refuse to read such a document. Now every API body is checked once (platform/http
// body.ts): a NUL anywhere → 400 INVALID_INPUT naming the field, on both backends alike; the import file gets the
// import's own answer; responder hits (and a responder test request's body) still accept any bytes. Data stored
// before is cleaned by migration 14 (platform/db/migrations/trackers-without-nul.ts). Run on SQLite and on PostgreSQL.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type ApiResponse, type TestServer, type TestUser } from "../../tests/harness";
import { trackersWithoutNul } from "../db/migrations/trackers-without-nul";
import { nulProblem } from "./body";

let srv: TestServer;
let user: TestUser;

beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_SCHEDULER_ENABLED: "false" } });
  user = await srv.createUser();
});
afterAll(() => srv.stop());

const N = "a\u0000b";
const refused = (res: ApiResponse, message: string) =>
  expect([res.status, res.json?.code, res.json?.message]).toEqual([400, "INVALID_INPUT", message]);

describe("API bodies refuse U+0000 in any text, naming the first field", () => {
  test("a tracker's request body (the reported case); search keeps answering", async () => {
    const res = await user.client.post("/api/web_scraping/api_trackers", {
      name: "nul-tracker",
      target: { requests: [{ url: "https://example.com/a" }, { url: "https://example.com/b", body: N }] },
    });
    refused(res, "target.requests[1].body: must not contain U+0000");
    const search = await user.client.post("/api/search", { query: "example" });
    expect(search.status).toBe(200);
    expect((await user.client.get("/api/web_scraping/api_trackers")).json.total).toBe(0);
  });

  test("values and member names at any depth, on creates, updates and settings", async () => {
    const c = user.client;
    refused(await c.post("/api/user/scripts", { name: "s", scriptType: "universal", content: `1 // ${N}` }), "content: must not contain U+0000");
    refused(await c.post("/api/user/secrets", { name: "NUL_SECRET", value: N }), "value: must not contain U+0000");
    refused(
      await c.post("/api/webhooks/responders", {
        name: "r",
        location: { pathType: "=", path: "/r" },
        settings: {
          body: "ok",
          headers: [
            ["x-a", "1"],
            ["x-b", N],
          ],
        },
      }),
      "settings.headers[1][1]: must not contain U+0000",
    );
    refused(
      await c.post("/api/web_scraping/page_trackers", { name: "p", target: { url: "https://example.com/", extractor: `return 1 // ${N}` } }),
      "target.extractor: must not contain U+0000",
    );
    refused(
      await c.post("/api/web_scraping/api_trackers", {
        name: "t",
        target: { requests: [{ url: "https://example.com/", headers: { [`x${N}`]: "1" } }] },
      }),
      "target.requests[0].headers: member names must not contain U+0000",
    );
    refused(
      await c.post("/api/user/settings", { "common.sidebarCollapsed": { sections: ["ok", N] } }),
      "common.sidebarCollapsed.sections[1]: must not contain U+0000",
    );
    refused(await c.post("/api/user/tags", { [N]: 1, name: "x" }), "body: member names must not contain U+0000");
    const tag = (await c.post("/api/user/tags", { name: "nul-update" })).json;
    refused(await c.put(`/api/user/tags/${tag.id}`, { name: N }), "name: must not contain U+0000");
    // Bodies that are not stored follow the same rule (one check for every route).
    refused(await c.post("/api/search", { query: N }), "query: must not contain U+0000");
    // Form bodies too (the one-click unsubscribe POST).
    const form = await srv.anon.request("POST", "/api/notifications/unsubscribe", {
      raw: "List-Unsubscribe=One-Click&token=a%00b",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    refused(form, "token: must not contain U+0000");
  });

  test("text that only looks like the escape (a backslash, then u0000) is kept as it is", async () => {
    const content = 'return s.replace(/\\u0000/g, "") // "\\\\u0000"';
    const made = await user.client.post("/api/user/scripts", { name: "escaped", scriptType: "universal", content });
    expect(made.status).toBe(201);
    expect((await user.client.get(`/api/user/scripts/${made.json.id}`)).json.content).toBe(content);
  });

  test("the check comes after credentials (401 first) and after the route (404 first)", async () => {
    const res = await srv.anon.post("/api/user/tags", { name: N });
    expect(res.status).toBe(401);
    expect((await user.client.post("/api/no-such-route", { name: N })).status).toBe(404);
  });
});

describe("the import file answers with the import's own rules", () => {
  const file = (body: string) => ({
    format: "secbox-export",
    version: 1,
    exportedAt: 1767225600,
    data: {
      apiTrackers: [
        {
          id: "01890000-0000-7000-8000-000000000001",
          name: "imported",
          config: { revisions: 3, timeout: 10000 },
          target: { requests: [{ url: "https://example.com/", body }] },
        },
      ],
    },
  });
  const problem = "data.apiTrackers[0].target.requests[0].body: must not contain U+0000";

  test("preview: valid false with the warning; import: 400 naming the field; as an object or as text", async () => {
    for (const data of [file(N), JSON.stringify(file(N))]) {
      const preview = await user.client.post("/api/user/data/_import_preview", { data });
      expect([preview.status, preview.json.valid, preview.json.warnings]).toEqual([200, false, [problem]]);
      refused(await user.client.post("/api/user/data/_import", { data }), problem);
    }
    // The same file without the NUL imports.
    const ok = await user.client.post("/api/user/data/_import", { data: file("plain") });
    expect(ok.status).toBe(200);
  });

  test("the import's other members are checked like any body", async () => {
    refused(
      await user.client.post("/api/user/data/_import", { data: file("plain"), secretsPassphrase: N }),
      "secretsPassphrase: must not contain U+0000",
    );
  });

  test("nulProblem names paths as §2 does", () => {
    expect(nulProblem({ a: [{ b: "x" }, { c: N }] })).toBe("a[1].c: must not contain U+0000");
    expect(nulProblem(N)).toBe("body: must not contain U+0000");
    expect(nulProblem({ data: { x: N }, y: "ok" }, ["data"])).toBeUndefined();
    expect(nulProblem({ ["k".repeat(100)]: { v: N } })).toBe(`${"k".repeat(64)}….v: must not contain U+0000`);
    expect(nulProblem({ a: 1, b: [true, null, "\\u0000"] })).toBeUndefined();
  });
});

describe("responder hits accept any bytes", () => {
  test("a hit with NUL in its body and query is answered and recorded; so is a test request's body", async () => {
    const made = await user.client.post("/api/webhooks/responders", {
      name: "nul-hit",
      location: { pathType: "=", path: "/nul" },
      method: "ANY",
      settings: { requestsToTrack: 10, body: "got it" },
    });
    expect(made.status).toBe(201);
    const bytes = new Uint8Array([0x61, 0x00, 0x62, 0x00]);
    const hit = await fetch(`${srv.url}/nul?x=%00`, { method: "POST", body: bytes, headers: { host: `${user.handle}.localhost:7070` } });
    expect([hit.status, await hit.text()]).toEqual([200, "got it"]);
    const pathForm = await fetch(`${srv.url}/api/webhooks/${user.handle}/nul`, {
      method: "POST",
      body: "\u0000\u0000xyz",
      headers: { "content-type": "application/json" },
    });
    expect([pathForm.status, await pathForm.text()]).toEqual([200, "got it"]);
    const tried = await user.client.post(`/api/webhooks/responders/${made.json.id}/_test`, { method: "POST", body: N });
    expect([tried.status, tried.json.response?.statusCode]).toEqual([200, 200]);
    // Records are written in batches (within ~100 ms).
    let records: { bodySize: number; body?: string }[] = [];
    for (let i = 0; i < 50 && records.length < 3; i++) {
      records = (await user.client.get(`/api/webhooks/responders/${made.json.id}/_history`)).json;
      if (records.length < 3) await Bun.sleep(50);
    }
    expect(records.map((r) => r.bodySize).sort()).toEqual([3, 4, 5]);
    expect(records.some((r) => r.body === Buffer.from(bytes).toString("base64"))).toBe(true);
  });
});

describe("data stored before the rule (migration 14)", () => {
  test("a tracker holding \\u0000 in its JSON text: cleaned to U+FFFD, search and lists answer", async () => {
    const u = await srv.createUser();
    const made = await u.client.post("/api/web_scraping/api_trackers", {
      name: "old-nul",
      target: { requests: [{ url: "https://example.com/old", body: "a-b" }] },
    });
    expect(made.status).toBe(201);
    const page = await u.client.post("/api/web_scraping/page_trackers", {
      name: "old-page",
      target: { url: "https://example.com/page", extractor: "return 1 // x-y" },
    });
    expect(page.status).toBe(201);
    // As an older version stored them: the NUL inside the JSON text (a literal backslash-u0000 beside it stays).
    const db = srv.rt.db;
    const row = await db.get<{ target: string }>("SELECT target FROM trackers WHERE id = ?", [made.json.id]);
    await db.run("UPDATE trackers SET target = ? WHERE id = ?", [row!.target.replace("a-b", "a\\u0000b \\\\u0000 \\\\\\u0000"), made.json.id]);
    const prow = await db.get<{ target: string }>("SELECT target FROM trackers WHERE id = ?", [page.json.id]);
    await db.run("UPDATE trackers SET target = ? WHERE id = ?", [prow!.target.replace("x-y", "x\\u0000y"), page.json.id]);
    expect(JSON.parse((await db.get<{ target: string }>("SELECT target FROM trackers WHERE id = ?", [made.json.id]))!.target).requests[0].body).toBe(
      "a\u0000b \\u0000 \\\u0000",
    );

    await db.tx((tx) => trackersWithoutNul(tx));

    const search = await u.client.post("/api/search", { query: "example" });
    expect([search.status, search.json.total]).toEqual([200, 2]);
    expect((await u.client.get(`/api/web_scraping/api_trackers/${made.json.id}`)).json.target.requests[0].body).toBe("a\ufffdb \\u0000 \\\ufffd");
    expect((await u.client.get(`/api/web_scraping/page_trackers/${page.json.id}`)).json.target.extractor).toBe("return 1 // x\ufffdy");
    expect((await u.client.get("/api/web_scraping/api_trackers")).status).toBe(200);
    // The cleaned tracker can be saved again as it reads.
    const again = (await u.client.get(`/api/web_scraping/api_trackers/${made.json.id}`)).json;
    expect((await u.client.put(`/api/web_scraping/api_trackers/${made.json.id}`, { target: again.target })).status).toBe(204);
  });
});
