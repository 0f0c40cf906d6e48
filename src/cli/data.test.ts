// `secbox data export|import` and `secbox users clone` (supplement §19, §23.3), run as real subprocesses on the data
// directory of a server that is running: the server sees what they wrote (imported responders answer, imported
// trackers get their schedule) without a restart.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startTestServer, type TestServer, type TestUser } from "../tests/harness";
import { decryptValue, fileKey, hit, quickUser } from "../tests/fixtures/user-data";

const MAIN = resolve(import.meta.dir, "../main.ts");
const root = mkdtempSync(join(tmpdir(), "secbox-cli-data-"));
const dataDir = join(root, "data");
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SECBOX_")));
let srv: TestServer;
let ana: TestUser;

async function cli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn(["bun", "run", MAIN, ...args, "--data-dir", dataDir], {
    cwd: root,
    env: { ...baseEnv, SECBOX_SERVER_LOG_LEVEL: "error", SECBOX_DATABASE_URL: srv.config.database.url, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** Polls until `fn` returns true (the server notices other processes' commits within ~100 ms; generous for a
 *  loaded machine). */
async function eventually(fn: () => Promise<boolean>, what: string) {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await fn()) return;
    await Bun.sleep(50);
  }
  throw new Error(`not seen within 20 s: ${what}`);
}
const SLOW = 120_000; // each test spawns several CLI processes

beforeAll(async () => {
  srv = await startTestServer({ dataDir, env: { SECBOX_SCHEDULER_ENABLED: "true" } });
  ana = await quickUser(srv, { email: "ana@cli.example" });
  const c = ana.client;
  const tag = (await c.post("/api/user/tags", { name: "prod" })).json;
  await c.post("/api/user/secrets", { name: "TOKEN", value: "from-ana" });
  await c.post("/api/webhooks/responders", {
    name: "hook",
    location: { pathType: "=", path: "/hook" },
    settings: { requestsToTrack: 5, body: "${secrets.TOKEN}", secrets: "all" },
    tagIds: [tag.id],
  });
  for (let i = 0; i < 3; i++) await hit(srv, ana, "/hook", { method: "POST", body: `n=${i}` });
  await c.post("/api/web_scraping/api_trackers", {
    name: "feed",
    target: { url: "https://api.example.com/feed" },
    config: { job: { schedule: "0 0 3 * * *" } },
  });
  writeFileSync(join(root, "pass.txt"), "cli passphrase\n");
});
afterAll(async () => {
  await srv.stop();
  rmSync(root, { recursive: true, force: true });
});

describe("data export / import next to a running server", () => {
  test(
    "export: everything with history; secret values under SECBOX_SECRETS_PASSPHRASE; a 0600 file; stdout without --output",
    async () => {
      const file = join(root, "ana.json");
      const res = await cli(["data", "export", "--email", "ana@cli.example", "--output", file], { SECBOX_SECRETS_PASSPHRASE: "cli passphrase" });
      expect(res).toEqual({ code: 0, stdout: "", stderr: "" });
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const f = JSON.parse(readFileSync(file, "utf8"));
      expect(f.data.responders[0].history.length).toBe(3);
      expect(decryptValue(fileKey(f, "cli passphrase"), f.data.secrets[0].encryptedValue)).toBe("from-ana");
      expect(f.data.apiTrackers[0].revisions).toEqual([]);
      const stdout = await cli(["data", "export", "--email", "ana@cli.example"]);
      expect(stdout.code).toBe(0);
      const g = JSON.parse(stdout.stdout);
      expect(g.secretsEncryption).toBeUndefined();
      expect(g.data.secrets[0].encryptedValue).toBeUndefined();
      expect(g.data.responders[0].history.length).toBe(3);
      // --out and --secrets-passphrase-file are accepted too.
      const alt = await cli([
        "data",
        "export",
        "--email",
        "ana@cli.example",
        "--out",
        join(root, "alt.json"),
        "--secrets-passphrase-file",
        join(root, "pass.txt"),
      ]);
      expect(alt.code).toBe(0);
      const h = JSON.parse(readFileSync(join(root, "alt.json"), "utf8"));
      expect(decryptValue(fileKey(h, "cli passphrase"), h.data.secrets[0].encryptedValue)).toBe("from-ana");
    },
    SLOW,
  );

  test(
    "import: --dry-run prints the preview and changes nothing; then the import; the server serves the result at once",
    async () => {
      const bob = await quickUser(srv, { email: "bob@cli.example" });
      const file = join(root, "ana.json");
      expect((await hit(srv, bob, "/hook", { method: "POST" })).status).toBe(404);
      const dry = await cli(["data", "import", "--email", "bob@cli.example", file, "--dry-run"]);
      expect(dry.code).toBe(0);
      const preview = JSON.parse(dry.stdout);
      expect(preview).toMatchObject({ valid: true, summary: { responders: { total: 1, conflicts: [] } } });
      expect((await bob.client.get("/api/webhooks/responders")).json.total).toBe(0);

      const wrong = await cli(["data", "import", "--email", "bob@cli.example", "--input", file], { SECBOX_SECRETS_PASSPHRASE: "not it at all" });
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toStartWith("error: secretsPassphrase: wrong passphrase");
      const res = await cli(["data", "import", "--email", "bob@cli.example", "--input", file, "--secrets-passphrase-file", join(root, "pass.txt")]);
      expect(res.code).toBe(0);
      expect(JSON.parse(res.stdout).results).toMatchObject({ responders: { imported: 1 }, secrets: { imported: 1 }, apiTrackers: { imported: 1 } });
      // The running server: the responder answers (its cache dropped), the tracker is scheduled.
      await eventually(async () => (await hit(srv, bob, "/hook", { method: "POST" })).status === 200, "the imported responder answering");
      expect(await (await hit(srv, bob, "/hook", { method: "POST" })).text()).toBe("from-ana");
      await eventually(
        async () => typeof (await bob.client.get("/api/web_scraping/api_trackers")).json.items[0]?.scheduledAt === "number",
        "the imported tracker scheduled",
      );
    },
    SLOW,
  );

  test(
    "import --mode apply --on-conflict overwrite; a bad file exits 2",
    async () => {
      const file = join(root, "ana.json");
      const res = await cli(["data", "import", "--email", "ana@cli.example", file, "--mode", "apply", "--on-conflict", "overwrite"], {
        SECBOX_SECRETS_PASSPHRASE: "cli passphrase",
      });
      expect(res.code).toBe(0);
      expect(JSON.parse(res.stdout).results).toMatchObject({ tags: { updated: 1 }, responders: { updated: 1, imported: 0 } });
      writeFileSync(join(root, "bad.json"), '{"format":"secbox-export","version":9,"data":{}}');
      const bad = await cli(["data", "import", "--email", "ana@cli.example", join(root, "bad.json")]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("version: 9 is not supported");
      const badDry = await cli(["data", "import", "--email", "ana@cli.example", join(root, "bad.json"), "--dry-run"]);
      expect(badDry.code).toBe(2);
      expect(JSON.parse(badDry.stdout)).toMatchObject({ valid: false, version: 9 });
      const usage = await cli(["data", "import", "--email", "ana@cli.example", file, "--mode", "replace"]);
      expect(usage).toEqual({ code: 2, stdout: "", stderr: "error: --mode must be one of merge, apply\n" });
    },
    SLOW,
  );

  test(
    "import --mode apply deletes nothing without --delete-missing (stderr lists it); with it, exactly the preview's toDelete (§27)",
    async () => {
      const file = join(root, "ana.json");
      const c = ana.client;
      const stale = (await c.post("/api/user/tags", { name: "stale" })).json;
      const old = (await c.post("/api/webhooks/responders", { name: "old-mock", location: { pathType: "=", path: "/old-mock" }, settings: {} })).json;
      expect(old.id).toBeString();
      const env = { SECBOX_SECRETS_PASSPHRASE: "cli passphrase" };
      const dry = await cli(["data", "import", "--email", "ana@cli.example", file, "--mode", "apply", "--dry-run"], env);
      const toDelete = JSON.parse(dry.stdout).toDelete;
      expect(Object.fromEntries(Object.entries(toDelete).filter(([, list]) => (list as unknown[]).length > 0))).toEqual({
        tags: [{ id: stale.id, name: "stale" }],
        responders: [{ id: old.id, name: "old-mock" }],
      });

      const kept = await cli(["data", "import", "--email", "ana@cli.example", file, "--mode", "apply"], env);
      expect(kept.code).toBe(0);
      // stdout stays the JSON result; what would have been deleted is on stderr.
      const result = JSON.parse(kept.stdout);
      expect(result.results.tags.deleted).toBe(0);
      expect(result.results.responders.deleted).toBe(0);
      expect(kept.stderr).toBe(
        `nothing deleted: 2 entities are not in the file and would have been deleted with --delete-missing:\n  tags: "stale" (${stale.id})\n  responders: "old-mock" (${old.id})\n`,
      );
      expect((await c.get(`/api/user/tags/${stale.id}`)).status).toBe(200);
      expect((await c.get(`/api/webhooks/responders/${old.id}`)).status).toBe(200);

      const usage = await cli(["data", "import", "--email", "ana@cli.example", file, "--delete-missing"], env);
      expect(usage).toEqual({ code: 2, stdout: "", stderr: "error: --delete-missing needs --mode apply (merge never deletes)\n" });

      const deleted = await cli(["data", "import", "--email", "ana@cli.example", file, "--mode", "apply", "--delete-missing"], env);
      expect(deleted.code).toBe(0);
      expect(deleted.stderr).toBe("");
      const after = JSON.parse(deleted.stdout);
      expect(after.results.tags.deleted).toBe(1);
      expect(after.results.responders.deleted).toBe(1);
      expect((await c.get(`/api/user/tags/${stale.id}`)).status).toBe(404);
      expect((await c.get(`/api/webhooks/responders/${old.id}`)).status).toBe(404);
      // Nothing left to delete: no note.
      const again = await cli(["data", "import", "--email", "ana@cli.example", file, "--mode", "apply"], env);
      expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: "" });
    },
    SLOW,
  );

  test(
    "users clone: a CloneResponse; the running server serves the clone",
    async () => {
      const res = await cli(["users", "clone", "--from", "ana@cli.example", "--to", "ana.copy@cli.example"]);
      expect(res.code).toBe(0);
      const out = JSON.parse(res.stdout);
      expect(out).toMatchObject({
        user: { email: "ana.copy@cli.example", isActivated: true },
        recoveryLink: { url: expect.stringContaining("/recover?token=") },
      });
      const copy = { id: out.id, email: out.user.email, handle: out.user.handle, session: "", client: ana.client };
      await eventually(async () => (await hit(srv, copy, "/hook", { method: "POST" })).status === 200, "the cloned responder answering");
      expect(await (await hit(srv, copy, "/hook", { method: "POST" })).text()).toBe("from-ana");
      const again = await cli(["users", "clone", "--from", "ana@cli.example", "--to", "ana.copy@cli.example"]);
      expect(again.code).toBe(1);
      expect(again.stderr).toBe("error: email: already registered\n");
    },
    SLOW,
  );
});
