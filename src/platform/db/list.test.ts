// The common list query (supplement §1) through real list endpoints: `q` and the name sort ignore case for every
// letter, not only ASCII (SQLite's lower() folds ASCII only), with exact totals and paging; `page` / `pageSize`
// accept any digit string (pageSize capped at 100, a huge page is just past the end).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";

let nowMs = 1_767_225_600_000;
let srv: TestServer;
let a: TestUser;
const ids: Record<string, string> = {};
let tagId: string;

// Creation order (createdAt) differs from name order.
const NAMES = ["Zebra", "Ärger Script", "apfel", "ärger zwei", "Öl", "ÄRGERLICH"];

beforeAll(async () => {
  srv = await startTestServer({ clock: { now: () => nowMs } });
  a = await srv.createUser();
  tagId = (await a.client.post("/api/user/tags", { name: "marked" })).json.id;
  for (const name of NAMES) {
    nowMs += 1000;
    const scriptType = name === "Öl" ? "page_extractor" : "responder";
    const tagIds = name === "ärger zwei" || name === "Öl" ? [tagId] : [];
    const res = await a.client.post("/api/user/scripts", { name, scriptType, content: "return 1;", tagIds });
    expect(res.status).toBe(201);
    ids[name] = res.json.id;
  }
});
afterAll(() => srv.stop());

async function list(user: TestUser, qs: string) {
  const res = await user.client.get(`/api/user/scripts${qs}`);
  expect([qs, res.status]).toEqual([qs, 200]);
  return { names: (res.json.items as { name: string }[]).map((i) => i.name), total: res.json.total as number, items: res.json.items as any[] };
}
const q = (s: string) => `q=${encodeURIComponent(s)}`;

describe("q and name sort with non-ASCII names", () => {
  test("q matches ignoring case for non-ASCII letters too", async () => {
    const all = ["Ärger Script", "ärger zwei", "ÄRGERLICH"];
    for (const s of ["Ärger", "ärger", "ÄRGER", "ÄrGeR", "rger", "RGER"]) expect(await list(a, `?${q(s)}`)).toMatchObject({ names: all, total: 3 });
    expect(await list(a, `?${q("Ärger Script")}`)).toMatchObject({ names: ["Ärger Script"], total: 1 });
    expect(await list(a, `?${q("öL")}`)).toMatchObject({ names: ["Öl"], total: 1 });
    expect(await list(a, `?${q("zebra")}`)).toMatchObject({ names: ["Zebra"], total: 1 });
    expect(await list(a, `?${q(ids["Öl"]!)}`)).toMatchObject({ names: ["Öl"], total: 1 });
    expect(await list(a, `?${q("ärgern")}`)).toMatchObject({ names: [], total: 0 });
    // % and _ stay literal on this path too.
    expect(await list(a, `?${q("ä_ger")}`)).toMatchObject({ names: [], total: 0 });
  });

  test("names sort ignoring case for every letter; ties and direction as in SQL", async () => {
    const asc = ["apfel", "Zebra", "Ärger Script", "ärger zwei", "ÄRGERLICH", "Öl"];
    expect(await list(a, "")).toMatchObject({ names: asc, total: 6 });
    expect((await list(a, "?order=desc")).names).toEqual([...asc].reverse());
    expect((await list(a, "?sort=bogus")).names).toEqual(asc);
  });

  test("totals and paging stay exact", async () => {
    expect(await list(a, `?${q("ärger")}&pageSize=2`)).toMatchObject({ names: ["Ärger Script", "ärger zwei"], total: 3 });
    expect(await list(a, `?${q("ärger")}&pageSize=2&page=1`)).toMatchObject({ names: ["ÄRGERLICH"], total: 3 });
    expect(await list(a, `?${q("ärger")}&pageSize=2&page=2`)).toMatchObject({ names: [], total: 3 });
    expect(await list(a, `?${q("ärger")}&pageSize=0`)).toMatchObject({ names: [], total: 3 });
    expect(await list(a, "?pageSize=4&page=1")).toMatchObject({ names: ["ÄRGERLICH", "Öl"], total: 6 });
  });

  test("other sort keys, tags, globalTags and the store's own filter combine with a non-ASCII q", async () => {
    expect((await list(a, `?${q("Ärger")}&sort=createdAt`)).names).toEqual(["Ärger Script", "ärger zwei", "ÄRGERLICH"]);
    expect((await list(a, `?${q("Ärger")}&sort=createdAt&order=desc`)).names).toEqual(["ÄRGERLICH", "ärger zwei", "Ärger Script"]);
    // page_extractor before responder; ties by id (creation order).
    expect((await list(a, `?${q("l")}&sort=scriptType`)).names).toEqual(["Öl", "apfel", "ÄRGERLICH"]);
    expect(await list(a, `?${q("ÄRGER")}&tags=${tagId}`)).toMatchObject({ names: ["ärger zwei"], total: 1 });
    expect(await list(a, `?${q("ö")}&globalTags=${tagId}`)).toMatchObject({ names: ["Öl"], total: 1 });
    expect(await list(a, `?tags=${tagId}`)).toMatchObject({ names: ["ärger zwei", "Öl"], total: 2 });
    expect(await list(a, `?context=page_tracker&${q("Ö")}`)).toMatchObject({ names: ["Öl"], total: 1 });
    expect(await list(a, `?context=responder&${q("Ö")}`)).toMatchObject({ names: [], total: 0 });
  });

  test("items are the same full summaries on either path", async () => {
    const viaJs = (await list(a, `?${q("Ö")}`)).items[0];
    const viaSql = (await list(a, `?sort=createdAt&${q("Öl")}`)).items[0];
    expect(viaJs).toEqual(viaSql);
    expect(viaJs).toMatchObject({ id: ids["Öl"], name: "Öl", scriptType: "page_extractor", tagIds: [tagId] });
    expect(Object.keys(viaJs).sort()).toEqual(Object.keys((await list(a, "?pageSize=1")).items[0]).sort());
  });

  test("two users: B never sees A's scripts, with or without non-ASCII", async () => {
    const b = await srv.createUser();
    expect(await list(b, `?${q("ärger")}`)).toMatchObject({ names: [], total: 0 });
    expect((await b.client.post("/api/user/scripts", { name: "ÄRGER von B", scriptType: "responder", content: "1" })).status).toBe(201);
    expect(await list(b, `?${q("ärger")}`)).toMatchObject({ names: ["ÄRGER von B"], total: 1 });
    expect(await list(b, `?${q(ids["Öl"]!)}`)).toMatchObject({ names: [], total: 0 });
    expect(await list(b, "")).toMatchObject({ names: ["ÄRGER von B"], total: 1 });
    expect((await b.client.get(`/api/user/scripts/${ids["Öl"]}`)).status).toBe(404);
  });
});

describe("page and pageSize", () => {
  test("pageSize of any size is capped at 100; a huge page is past the end, never an error", async () => {
    for (const size of ["1000000000", "99999999999999999999", "9".repeat(400)])
      expect(await list(a, `?pageSize=${size}`)).toMatchObject({ total: 6 });
    expect((await list(a, "?pageSize=1000000000")).names).toHaveLength(6);
    for (const page of ["1000000000", "99999999999999999999", "9".repeat(400)]) {
      expect(await list(a, `?page=${page}`)).toMatchObject({ names: [], total: 6 });
      expect(await list(a, `?page=${page}&pageSize=${page}`)).toMatchObject({ names: [], total: 6 });
      expect(await list(a, `?page=${page}&${q("ärger")}`)).toMatchObject({ names: [], total: 3 });
    }
    for (const qs of ["?page=-1", "?pageSize=-5", "?page=1e3", "?pageSize=abc", "?page=1.5", "?pageSize=0x10"]) {
      const res = await a.client.get(`/api/user/scripts${qs}`);
      expect([qs, res.status, res.json.code]).toEqual([qs, 400, "INVALID_INPUT"]);
    }
  });
});
