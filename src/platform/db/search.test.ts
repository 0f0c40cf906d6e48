// runSearch (platform/db/search.ts) on the test backend's database, without a server or any service: the answers equal
// a plain model of supplement §20/§28 written here (names fold Unicode case, content folds ASCII letters only, from 3
// characters on; ranking and totals), over random data full of the characters that matter (case, non-ASCII, LIKE
// wildcards, JSON escapes, emoji); migration 0016 indexes rows that existed before it; its triggers keep the index in
// step with inserts, updates, moves between users and deletes (SQLite: documents in the user's own rowid range); and
// a search only reads.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openTestDb } from "../../tests/backend";
import type { Db, Param } from "./db";
import { migrate } from "./migrate";
import { MIGRATIONS } from "./migrations";
import { chunkPattern, MIN_CONTENT_CHARS, runSearch, trigrams, type SearchItem, type SearchSpec } from "./search";
import { SEARCH_SPECS, SEARCH_TYPES } from "../../features/search/specs";

const root = mkdtempSync(join(tmpdir(), "secbox-search-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const fresh = () => openTestDb(join(root, `d${++dirs}`));

let seed = 7;
const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
const PIECES = ["ab", "AB", "Ab", "x", "é", "É", "ß", "İ", "k", "K", "%", "_", "\\", '"', " ", "\n", "\t", "😀", "/", "-", "q", "Q", "aB%"];
const text = (n: number) => Array.from({ length: n }, () => pick(PIECES)).join("");
const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

async function addUser(db: Db, id: string) {
  await db.run(
    "INSERT INTO users (id, email, handle, tier, tier_started_at, unsubscribe_token, created_at, updated_at) VALUES (?, ?, ?, 'basic', 0, ?, 0, 0)",
    [id, `${id}@search.test`, id, id],
  );
}

interface Entity {
  type: string;
  id: string;
  user: string;
  name: string;
  updatedAt: number;
  content: string[];
}

/** Inserts one row of `type` with plain SQL (the triggers run as for any write). */
async function insert(db: Db, e: Entity) {
  const at = e.updatedAt;
  switch (e.type) {
    case "tag":
      return db.run("INSERT INTO tags (id, user_id, name, color, created_at, updated_at) VALUES (?, ?, ?, 'default', ?, ?)", [
        e.id,
        e.user,
        e.name,
        at,
        at,
      ]);
    case "script":
      return db.run("INSERT INTO scripts (id, user_id, name, script_type, content, created_at, updated_at) VALUES (?, ?, ?, 'universal', ?, ?, ?)", [
        e.id,
        e.user,
        e.name,
        e.content[0]!,
        at,
        at,
      ]);
    case "responder":
      return db.run(
        `INSERT INTO responders (id, user_id, name, path_type, path, path_lower, subdomain_prefix, method, enabled, requests_to_track, status_code, secrets, created_at, updated_at)
         VALUES (?, ?, ?, '=', ?, ?, '', 'GET', 1, 0, 200, '"none"', ?, ?)`,
        [e.id, e.user, e.name, e.content[0]!, e.content[0]!.toLowerCase(), at, at],
      );
    default: {
      const page = e.type === "pageTracker";
      const target = page
        ? { url: e.content[0], headers: { "x-h": "zzz" } }
        : { requests: e.content.map((url) => ({ url, method: "GET", headers: { "x-h": "zzz" } })) };
      return db.run(
        `INSERT INTO trackers (id, user_id, kind, name, enabled, config, target, notifications, secrets, schedule_anchor, created_at, updated_at)
         VALUES (?, ?, ?, ?, 0, '{}', ?, 0, '"none"', 0, ?, ?)`,
        [e.id, e.user, page ? "page" : "api", e.name, JSON.stringify(target), at, at],
      );
    }
  }
}

/** Supplement §20/§28 as a model: what runSearch must answer. */
function model(all: Entity[], user: string, query: string, types: readonly string[], limit: number) {
  const q = query.trim();
  const lower = q.toLowerCase();
  const rank = { name: 0, id: 1, content: 2 } as const;
  const hits: SearchItem[] = [];
  for (const e of all) {
    if (e.user !== user || !types.includes(e.type)) continue;
    const responderLower = e.type === "responder";
    const matched = e.name.toLowerCase().includes(lower)
      ? "name"
      : e.id === lower
        ? "id"
        : [...q].length >= MIN_CONTENT_CHARS && e.content.some((c) => asciiLower(responderLower ? c.toLowerCase() : c).includes(lower))
          ? "content"
          : undefined;
    if (matched) hits.push({ type: e.type, id: e.id, name: e.name, matched, updatedAt: e.updatedAt });
  }
  hits.sort((a, b) => rank[a.matched] - rank[b.matched] || b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  return { items: hits.slice(0, limit), total: hits.length };
}

const specs = (types: readonly string[]) => types.map((t) => SEARCH_SPECS[t as keyof typeof SEARCH_SPECS]);

describe("trigrams and chunk patterns", () => {
  test("distinct code-point trigrams, spread evenly when there are more than asked", () => {
    expect(trigrams("abcabc")).toEqual(["abc", "bca", "cab"]);
    expect(trigrams("ab")).toEqual([]);
    expect(trigrams("a😀bc")).toEqual(["a😀b", "😀bc"]);
    const many = trigrams("abcdefghijklmnopqrstuvwxyz", 4);
    expect(many).toEqual(["abc", "ijk", "pqr", "xyz"]);
  });

  test("'%abc%def%…%': 3-character chunks, the last takes the rest, LIKE wildcards escaped", () => {
    expect(chunkPattern("abc")).toBe("%abc%");
    expect(chunkPattern("abcde")).toBe("%abcde%");
    expect(chunkPattern("abcdef")).toBe("%abc%def%");
    expect(chunkPattern("abcdefgh")).toBe("%abc%defgh%");
    expect(chunkPattern("a%_\\bcd")).toBe("%a\\%\\_%\\\\bcd%");
    expect(chunkPattern("😀😀😀😀")).toBe("%😀😀😀😀%");
  });
});

describe("runSearch against the model", () => {
  let db: Db;
  let drop: () => Promise<void>;
  const all: Entity[] = [];
  const users = ["u-a", "u-b"];
  const types = ["tag", "script", "responder", "pageTracker", "apiTracker"] as const;

  beforeAll(async () => {
    ({ db, drop } = await fresh());
    await migrate(db);
    for (const u of users) await addUser(db, u);
    let at = 1000;
    for (let i = 0; i < 160; i++) {
      const type = types[i % types.length]!;
      const id = Bun.randomUUIDv7();
      const n = type === "apiTracker" ? 1 + Math.floor(rnd() * 3) : 1;
      const content =
        type === "tag"
          ? []
          : Array.from({ length: n }, () =>
              type === "pageTracker" || type === "apiTracker" ? `https://h.example/${text(6)}` : type === "responder" ? `/${text(5)}` : text(12),
            );
      const e: Entity = { type, id, user: pick(users), name: `${text(3)}${i}`, updatedAt: (at += Math.floor(rnd() * 3)), content };
      all.push(e);
      await insert(db, e);
    }
  });
  afterAll(() => drop());

  test("every answer (items, ranks, order and total) equals the model's, for both users and any type set", async () => {
    const queries = new Set<string>([
      "ab",
      "AB",
      "é",
      "É",
      "%",
      "_",
      "\\",
      '"',
      "😀",
      "k",
      "K",
      " q",
      "h.example",
      "HTTPS://H",
      "ß",
      "İ",
      "x%",
      all[3]!.id,
      all[7]!.id.toUpperCase(),
    ]);
    for (const e of all.slice(0, 60)) {
      const cp = [...(e.content[0] ?? e.name)];
      const from = Math.floor(rnd() * Math.max(1, cp.length - 3));
      const len = 1 + Math.floor(rnd() * 8);
      const piece = cp.slice(from, from + len).join("");
      queries.add(piece);
      queries.add(rnd() < 0.5 ? piece.toUpperCase() : piece.toLowerCase());
      queries.add([...e.name].slice(0, 2).join(""));
    }
    let compared = 0;
    for (const q of queries) {
      if (q.trim() === "") continue;
      for (const u of users) {
        for (const ts of [types, ["script"], ["apiTracker", "responder"]] as const) {
          const limit = q.length % 2 === 0 ? 100 : 3;
          const got = await runSearch(db, u, q, specs(ts), limit);
          expect({ q, u, ts, ...got }).toEqual({ q, u, ts, ...model(all, u, q, ts, limit) });
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(300);
  });

  test("a search only reads: it runs on a Db whose writes, DDL and transactions all throw", async () => {
    const readOnly: Db = {
      ...db,
      dialect: db.dialect,
      topology: db.topology,
      all: (sql: string, params?: Param[]) => db.all(sql, params),
      get: (sql: string, params?: Param[]) => db.get(sql, params),
      run: async () => {
        throw new Error("write");
      },
      exec: async () => {
        throw new Error("exec");
      },
      tx: async () => {
        throw new Error("tx");
      },
    };
    const q = all.find((e) => e.type === "script")!.content[0]!.slice(0, 5);
    expect(await runSearch(readOnly, "u-a", q, specs(SEARCH_TYPES), 20)).toEqual(
      model(
        all,
        "u-a",
        q,
        SEARCH_TYPES.filter((t) => types.includes(t as never)),
        20,
      ),
    );
  });
});

test("long queries: each way of verifying finds exactly the rows that hold the query (on PostgreSQL strpos, strpos over the reversed texts, or a literal regular expression, chosen by the query's ends)", async () => {
  const { db, drop } = await fresh();
  try {
    await migrate(db);
    await addUser(db, "long");
    const contents = [
      `x${"a".repeat(40)}y`,
      "a".repeat(60),
      "ab".repeat(30),
      `q\\%_${"a".repeat(30)}.*+?[`,
      `Z${"a".repeat(20)}B${"a".repeat(20)}`,
      `${"a".repeat(17)}😀É`,
    ];
    const rows = contents.map((c, i): Entity => ({
      type: "script",
      id: Bun.randomUUIDv7(),
      user: "long",
      name: `s${i}`,
      updatedAt: i,
      content: [c],
    }));
    for (const r of rows) await insert(db, r);
    const queries = [
      `${"a".repeat(20)}y`, // last character unique
      `X${"A".repeat(20)}`, // first character unique
      "a".repeat(20), // neither
      `${"a".repeat(10)}b${"a".repeat(10)}`, // neither, a palindrome
      "ab".repeat(10), // neither
      `${"a".repeat(17)}.*+?[`, // regular-expression characters, last unique
      `\\%_${"a".repeat(17)}`, // LIKE characters, first unique
      `${"a".repeat(17)}😀é`, // not ASCII: no folding of É
      `${"a".repeat(17)}😀É`,
    ];
    for (const q of queries) {
      const got = await runSearch(db, "long", q, specs(["script"]), 20);
      expect({ q, ...got }).toEqual({ q, ...model(rows, "long", q, ["script"], 20) });
    }
    expect((await runSearch(db, "long", "a".repeat(20), specs(["script"]), 20)).total).toBe(4);
  } finally {
    await drop();
  }
});

describe("migration 0016 and its triggers", () => {
  test("rows that existed before the migration are indexed by it", async () => {
    const { db, drop } = await fresh();
    try {
      await migrate(
        db,
        MIGRATIONS.filter((m) => m.version < 16),
      );
      await addUser(db, "old");
      const e = (type: string, content: string[]): Entity => ({ type, id: Bun.randomUUIDv7(), user: "old", name: type, updatedAt: 5, content });
      const rows = [
        e("script", ["return 'Heron-5';"]),
        e("responder", ["/heron-5"]),
        e("pageTracker", ["https://heron-5.example/"]),
        e("apiTracker", ["https://a.example/", "https://b.example/HERON-5"]),
      ];
      for (const r of rows) await insert(db, r);
      expect(
        (
          await migrate(
            db,
            MIGRATIONS.filter((m) => m.version <= 16),
          )
        ).applied,
      ).toEqual([16]); // (later ones are not this test's)
      const got = await runSearch(db, "old", "heron-5", specs(SEARCH_TYPES), 20);
      expect(got).toEqual(model(rows, "old", "heron-5", SEARCH_TYPES, 20));
      expect(got.total).toBe(4);
    } finally {
      await drop();
    }
  });

  test("inserts, updates, moves between users and deletes keep the index exact; SQLite documents stay in their user's and table's rowid range", async () => {
    const { db, drop } = await fresh();
    try {
      await migrate(db);
      for (const u of ["a", "b"]) await addUser(db, u);
      const find = async (user: string, q: string) =>
        (await runSearch(db, user, q, specs(["script", "responder", "pageTracker", "apiTracker"]), 20)).items.map((i) => i.id);
      const s: Entity = { type: "script", id: Bun.randomUUIDv7(), user: "a", name: "s", updatedAt: 1, content: ["// puffin-1"] };
      const r: Entity = { type: "responder", id: Bun.randomUUIDv7(), user: "a", name: "r", updatedAt: 2, content: ["/puffin-1"] };
      const t: Entity = { type: "apiTracker", id: Bun.randomUUIDv7(), user: "a", name: "t", updatedAt: 3, content: ["https://x.example/puffin-1"] };
      for (const x of [s, r, t]) await insert(db, x);
      expect((await find("a", "puffin-1")).sort()).toEqual([s.id, r.id, t.id].sort());
      expect(await find("b", "puffin-1")).toEqual([]);

      await db.run("UPDATE scripts SET content = ? WHERE id = ?", ["// gannet-2", s.id]);
      await db.run("UPDATE responders SET path = ?, path_lower = ? WHERE id = ?", ["/Gannet-2", "/gannet-2", r.id]);
      await db.run("UPDATE trackers SET target = ? WHERE id = ?", [
        JSON.stringify({ requests: [{ url: "https://x.example/a" }, { url: "https://x.example/gannet-2" }] }),
        t.id,
      ]);
      // Columns search does not read leave the index as it is.
      await db.run("UPDATE scripts SET name = 's2', updated_at = 9 WHERE id = ?", [s.id]);
      await db.run("UPDATE trackers SET last_ran_at = 5 WHERE id = ?", [t.id]);
      expect(await find("a", "puffin-1")).toEqual([]);
      expect((await find("a", "gannet-2")).sort()).toEqual([s.id, r.id, t.id].sort());

      // A row moved to another user is that user's to find.
      await db.run("UPDATE scripts SET user_id = 'b' WHERE id = ?", [s.id]);
      expect((await find("a", "gannet-2")).sort()).toEqual([r.id, t.id].sort());
      expect(await find("b", "gannet-2")).toEqual([s.id]);

      if (db.dialect === "sqlite") {
        const docs = await db.all<{ entity_id: string; user_id: string }>(
          "SELECT d.entity_id, r.user_id FROM search_docs d JOIN search_ranges r ON d.id >= r.lo AND d.id < r.hi AND r.tbl = d.tbl",
        );
        const owner = new Map([
          [s.id, "b"],
          [r.id, "a"],
          [t.id, "a"],
        ]);
        expect(docs.map((d) => [d.entity_id, d.user_id]).sort()).toEqual([...owner.entries()].sort());
      }

      await db.run("DELETE FROM scripts WHERE id = ?", [s.id]);
      await db.run("DELETE FROM trackers WHERE id = ?", [t.id]);
      expect(await find("b", "gannet-2")).toEqual([]);
      expect(await find("a", "gannet-2")).toEqual([r.id]);
      await db.run("DELETE FROM users WHERE id = 'a'");
      if (db.dialect === "sqlite") {
        expect(await db.all("SELECT * FROM search_docs")).toEqual([]);
        expect(await db.all("SELECT user_id FROM search_users")).toEqual([{ user_id: "b" }]);
      }
    } finally {
      await drop();
    }
  });
});
