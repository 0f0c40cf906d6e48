// The HAR export written entry by entry (issue 29): `chunks()` gives exactly the text JSON.stringify gives, and a
// large history (1 MB bodies) is written while other requests keep being answered (the event loop is given back
// between entries). Real HTTP against a server in this process; orderings and counts, no timing thresholds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { buildHar, RENDER_BYTES } from "./har";
import { respondersStore } from "./store";
import { onPostgres } from "../../tests/backend";
import type { TrackedRow } from "./store";
import { quickUser } from "../../tests/fixtures/quick-users";

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ env: { SECBOX_SCHEDULER_ENABLED: "false" } });
});
afterAll(() => srv.stop());

const row = (i: number, body: Uint8Array | null, response: Uint8Array | null): TrackedRow =>
  ({
    id: `01890000-0000-7000-8000-${String(i).padStart(12, "0")}`,
    responder_id: "r",
    created_at: 1_767_225_600 + i,
    created_at_ms: null,
    duration_ms: i,
    client_address: "203.0.113.7",
    method: "POST",
    path: `/p/${i}`,
    raw_query: i % 2 ? "a=1&b=%20" : null,
    headers: JSON.stringify([["content-type", i % 2 ? "application/json" : "application/octet-stream"]]),
    body,
    body_size: body?.byteLength ?? 0,
    response_status: response ? 200 : null,
    response_headers: response ? JSON.stringify([["content-type", "text/plain"]]) : null,
    response_body: response,
    response_body_size: response?.byteLength ?? null,
    response_truncated: response ? 0 : null,
  }) as TrackedRow;

describe("HAR written entry by entry", () => {
  test("chunks() join to JSON.stringify of the document (empty, text and binary bodies, untracked responses), also rendered on the pool", async () => {
    const rows = () => [
      row(1, new TextEncoder().encode('{"x":"é"}'), new TextEncoder().encode("ok")),
      row(2, new Uint8Array([0, 255, 7]), null),
      row(3, null, new Uint8Array(0)),
    ];
    for (const list of [[], rows()]) {
      const whole = JSON.stringify(buildHar(list, { baseUrl: "https://h.example", version: "1" }));
      // on the event loop, and rendered on the server's work pool
      for (const pool of [undefined, { work: srv.services.work, owner: "har-test" }]) {
        const parts: Uint8Array[] = [];
        // a document is written once (its rows are released as they go): a fresh one each time
        for await (const chunk of buildHar(list.length === 0 ? [] : rows(), { baseUrl: "https://h.example", version: "1" }).chunks(pool))
          parts.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
        const streamed = new TextDecoder().decode(Buffer.concat(parts));
        expect(streamed).toBe(whole);
        expect(JSON.parse(streamed).log.entries.length).toBe(list.length);
      }
    }
  });

  test("other requests are answered while a HAR of 24 records with 1 MB bodies is written", async () => {
    const u: TestUser = await quickUser(srv, "ultimate");
    const created = await u.client.post("/api/webhooks/responders", {
      name: "big",
      location: { pathType: "=", path: "/big" },
      method: "POST",
      settings: { requestsToTrack: 24, statusCode: 200 },
    });
    expect(created.status).toBe(201);
    const body = JSON.stringify({ data: "x".repeat(1_000_000) });
    for (let i = 0; i < 24; i++) {
      const res = await fetch(`${srv.url}/big`, {
        method: "POST",
        body,
        headers: { host: `${u.handle}.localhost:7070`, "content-type": "application/json" },
      });
      expect(res.status).toBe(200);
    }
    // pages of about 1 MB of stored records: one record per page here, each read (SQLite) and rendered on the pool
    await srv.services.responders.flushCaptures();
    // the owner's tasks only: the pool also runs upkeep (the WAL checkpoints after the captures' commits, on SQLite)
    const started = srv.services.work.stats().startedBy[u.id] ?? 0;
    const pages: number[] = [];
    for (let after: string | null = null; ;) {
      const page = await respondersStore.historyPageForward(srv.rt.db, created.json.id, after, RENDER_BYTES);
      if (page.length === 0) break;
      pages.push(page.length);
      after = page.at(-1)!.id;
    }
    expect(pages).toEqual(Array(24).fill(1));
    const watcher = await quickUser(srv);
    let settled = false;
    const har = u.client.get(`/api/webhooks/responders/${created.json.id}/_har`).finally(() => (settled = true));
    let answered = 0;
    while (!settled) {
      const res = await watcher.client.get("/api/status");
      if (!settled && res.status === 200) answered++;
    }
    const res = await har;
    expect(res.status).toBe(200);
    expect(res.json.log.entries.length).toBe(24);
    expect(res.json.log.entries[0].request.postData.text).toBe(body);
    expect(answered).toBeGreaterThanOrEqual(3);
    // one task a page; on SQLite the thread reads the pages itself, and one more finds none left
    expect((srv.services.work.stats().startedBy[u.id] ?? 0) - started).toBe(onPostgres ? 24 : 25);
  });
});
