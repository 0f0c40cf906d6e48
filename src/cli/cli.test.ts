// The operator CLI (supplement §23.3), run as a real subprocess (`bun run src/main.ts ...`) against a temporary
// data directory: output formats, exit codes, config errors, and commands working next to a running server.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createServices } from "../app";
import { loadConfig } from "../config/load";
import { verifyJwt } from "../platform/auth/jwt";
import { openRuntime } from "../platform/boot";
import { MIGRATIONS } from "../platform/db/migrations";
import { createLogger } from "../platform/log";
import { VERSION } from "../platform/runtime";
import { onPostgres, openDataDirDb, testDatabaseEnv } from "../tests/backend";

const MAIN = resolve(import.meta.dir, "../main.ts");
const root = mkdtempSync(join(tmpdir(), "secbox-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const freshDir = () => join(root, `data${++n}`);
const SECRET = "s".repeat(40);

/** The test process's environment without SECBOX_* (so nothing of the caller's setup leaks into the child). */
const baseEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SECBOX_")));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The database settings of the data directory in `args` (`--data-dir`) on the test backend (tests/backend.ts). */
async function databaseEnv(args: string[]): Promise<Record<string, string>> {
  const i = args.indexOf("--data-dir");
  if (!onPostgres || i < 0) return {};
  mkdirSync(args[i + 1]!, { recursive: true, mode: 0o700 });
  return (await testDatabaseEnv(args[i + 1]!, false)).env;
}

/** Runs the CLI in a scratch working directory (no ./secbox.toml, no .env). */
async function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const proc = Bun.spawn(["bun", "run", MAIN, ...args], {
    cwd: root,
    env: { ...baseEnv, SECBOX_SERVER_LOG_LEVEL: "error", ...(await databaseEnv(args)), ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

const nowSec = () => Math.floor(Date.now() / 1000);

async function freePort(): Promise<number> {
  const s = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = s.port!;
  await s.stop(true);
  return port;
}

/** Reads the data directory in-process (the way a server started on it would see it). */
async function withServices<T>(dataDir: string, fn: (s: ReturnType<typeof createServices>) => Promise<T>): Promise<T> {
  const config = loadConfig({
    file: join(root, "empty.toml"),
    env: { SECBOX_SERVER_DATA_DIR: dataDir, ...(await databaseEnv(["--data-dir", dataDir])) },
  });
  const rt = await openRuntime(config, { log: createLogger("error") });
  try {
    return await fn(createServices(rt));
  } finally {
    await rt.close();
  }
}
writeFileSync(join(root, "empty.toml"), "");

describe("usage, help and exit codes", () => {
  test("--help, version and --version", async () => {
    const [help, version, dashVersion, usersHelp, addHelp, versionHelp] = await Promise.all([
      cli(["--help"]),
      cli(["version"]),
      cli(["--version"]),
      cli(["users", "--help"]),
      cli(["users", "add", "--help"]),
      cli(["version", "--help"]),
    ]);
    expect(help.code).toBe(0);
    for (const c of ["serve", "users", "api-keys", "token", "status", "data", "migrate", "version"]) expect(help.stdout).toContain(`  ${c} `);
    expect(version).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
    expect(dashVersion).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: "" });
    expect(usersHelp.code).toBe(0);
    for (const sub of ["add", "list", "remove", "set-tier", "recover", "clone"]) expect(usersHelp.stdout).toContain(`secbox users ${sub}`);
    expect(addHelp.code).toBe(0);
    expect(addHelp.stdout).toContain("--email E [--password P] [--tier");
    expect(versionHelp.code).toBe(0);
    expect(versionHelp.stdout).toContain("secbox version");
  });

  test("every command and subcommand answers --help with exit 0 without touching a data directory", async () => {
    const dataDir = freshDir();
    const commands = [
      ["serve"],
      ["users", "list"],
      ["users", "remove"],
      ["users", "set-tier"],
      ["users", "recover"],
      ["users", "clone"],
      ["api-keys", "create"],
      ["token"],
      ["status", "set"],
      ["data", "export"],
      ["data", "import"],
      ["migrate"],
    ];
    const runs = await Promise.all(commands.map((c) => cli([...c, "--help", "--data-dir", dataDir])));
    runs.forEach((r, i) => {
      expect({ cmd: commands[i], code: r.code }).toEqual({ cmd: commands[i], code: 0 });
      expect(r.stdout).toContain(`secbox ${commands[i]!.join(" ")}`);
    });
    expect(await Bun.file(join(dataDir, "secbox.db")).exists()).toBe(false);
  });

  test("usage errors exit 2 with `error: <message>` on stderr", async () => {
    const dataDir = freshDir();
    const cases: [string[], string][] = [
      [["frobnicate"], "unknown command 'frobnicate'"],
      [["users"], "'users' needs a subcommand"],
      [["users", "promote"], "unknown subcommand 'users promote'"],
      [["users", "list", "--bogus"], "--bogus"],
      [["users", "add"], "--email is required"],
      [["users", "add", "--email", "not-an-email"], "--email: must be a valid email address"],
      [["users", "add", "--email", "a@example.com", "--tier", "gold"], "--tier must be one of basic, standard, professional, ultimate"],
      [["users", "add", "--email", "a@example.com", "--password", "short"], "password: must be 8 to 1024 characters"],
      [["users", "set-tier", "--email", "a@example.com"], "--tier is required"],
      [["users", "recover", "--email", "a@example.com", "--ttl", "soon"], "--ttl must be a non-negative integer"],
      [["api-keys", "create", "--email", "a@example.com"], "--name is required"],
      [["api-keys", "create", "--email", "a@example.com", "--name", "ci", "--expires-in", "0"], "--expires-in must be a positive integer"],
      [["token"], "--sub is required"],
      [["status", "set", "--level", "sideways"], "--level must be one of available, unavailable"],
      [["status", "set"], "--level is required"],
    ];
    const runs = await Promise.all(cases.map(([args]) => cli([...args, "--data-dir", dataDir])));
    runs.forEach((r, i) => {
      const [args, message] = cases[i]!;
      expect({ args, code: r.code, stdout: r.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(r.stderr.startsWith("error: ")).toBe(true);
      expect(r.stderr).toContain(message);
    });
  });

  test("an invalid configuration prints `config error: <key>: <reason>` and exits 2", async () => {
    const dataDir = freshDir();
    const [badPort, badServePort, missingFile, badFile, unknownEnv] = await Promise.all([
      cli(["users", "list", "--data-dir", dataDir], { SECBOX_SERVER_PORT: "eighty" }),
      cli(["serve", "--data-dir", dataDir], { SECBOX_SERVER_PORT: "70000" }),
      cli(["users", "list", "--config", join(root, "missing.toml")]),
      (async () => {
        const file = join(root, "bad.toml");
        writeFileSync(file, '[server]\ntrust_proxy = "yes"\n');
        return cli(["migrate", "--config", file, "--data-dir", dataDir]);
      })(),
      cli(["migrate", "--data-dir", dataDir], { SECBOX_SECURITY_JWT_SECRETS: "x" }),
    ]);
    expect(badPort.code).toBe(2);
    expect(badPort.stderr).toBe('config error: server.port: must be an integer, got "eighty"\n');
    expect(badServePort.code).toBe(2);
    expect(badServePort.stderr).toStartWith("config error: server.port: ");
    expect(missingFile.code).toBe(2);
    expect(missingFile.stderr).toStartWith("config error: config: file not found");
    expect(badFile.code).toBe(2);
    expect(badFile.stderr).toStartWith("config error: server.trust_proxy: ");
    expect(unknownEnv.code).toBe(2);
    expect(unknownEnv.stderr).toStartWith("config error: security.jwt_secrets: unknown key");
    expect(await Bun.file(join(dataDir, "secbox.db")).exists()).toBe(false);
  });

  test("users clone and data export/import: an unknown user is exit 1, a missing input exit 2", async () => {
    const dataDir = freshDir();
    const [clone, exp, imp, noInput] = await Promise.all([
      cli(["users", "clone", "--from", "a@example.com", "--to", "b@example.com", "--data-dir", dataDir]),
      cli(["data", "export", "--email", "a@example.com", "--data-dir", dataDir]),
      cli(["data", "import", "--email", "a@example.com", "--input", join(root, "empty.toml"), "--data-dir", dataDir]),
      cli(["data", "import", "--email", "a@example.com", "--data-dir", dataDir]),
    ]);
    expect(clone).toEqual({ code: 1, stdout: "", stderr: "error: no user with email a@example.com\n" });
    expect(exp).toEqual({ code: 1, stdout: "", stderr: "error: no user with email a@example.com\n" });
    expect(imp).toEqual({ code: 1, stdout: "", stderr: "error: no user with email a@example.com\n" });
    expect(noInput).toEqual({ code: 2, stdout: "", stderr: "error: --input FILE is required\n" });
  });
});

describe("users", () => {
  test("add, list, set-tier, recover, remove", async () => {
    const dataDir = freshDir();
    const d = ["--data-dir", dataDir];
    const publicUrl = "https://secbox.example.com";
    const env = { SECBOX_SERVER_PUBLIC_URL: `${publicUrl}/`, SECBOX_SECURITY_OPERATORS: "ana@example.com" };

    const before = nowSec();
    const ana = await cli(
      ["users", "add", "--email", " Ana@Example.com ", "--password", "correct horse battery", "--tier", "professional", ...d],
      env,
    );
    expect(ana.code).toBe(0);
    expect(ana.stderr).toBe("");
    const anaUser = JSON.parse(ana.stdout);
    expect(anaUser).toMatchObject({ email: "ana@example.com", isActivated: true, isOperator: true, subscription: { tier: "professional" } });
    expect(anaUser.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(anaUser.handle).toMatch(/^[0-9a-f]{16}$/);
    expect(anaUser.recoveryLink).toBeUndefined();
    expect(anaUser.createdAt).toBeGreaterThanOrEqual(before);

    // Without a password: the user plus a 24 h recovery link.
    const bob = await cli(["users", "add", "--email", "bob@example.com", ...d], env);
    expect(bob.code).toBe(0);
    const bobUser = JSON.parse(bob.stdout);
    expect(bobUser).toMatchObject({ email: "bob@example.com", isActivated: true, isOperator: false, subscription: { tier: "ultimate" } }); // the default tier (§27)
    expect(bobUser.recoveryLink.url).toMatch(new RegExp(`^${publicUrl}/recover\\?token=[A-Za-z0-9_-]{43}$`));
    expect(bobUser.recoveryLink.expiresAt - bobUser.createdAt).toBeGreaterThanOrEqual(86_400 - 2);
    expect(bobUser.recoveryLink.expiresAt - bobUser.createdAt).toBeLessThanOrEqual(86_400 + 2);

    // The same email again is a runtime error; nothing is printed on stdout.
    const dup = await cli(["users", "add", "--email", "BOB@example.com", ...d], env);
    expect(dup.code).toBe(1);
    expect(dup.stdout).toBe("");
    expect(dup.stderr).toStartWith("error: ");

    const list = await cli(["users", "list", ...d], env);
    expect(list.code).toBe(0);
    const users = JSON.parse(list.stdout);
    expect(users.map((u: any) => u.email)).toEqual(["ana@example.com", "bob@example.com"]);
    expect(users[0]).toEqual(anaUser);
    expect(users[1].recoveryLink).toBeUndefined();

    // set-tier prints nothing; the change shows in the list.
    const endsAt = nowSec() + 30 * 86_400;
    const setTier = await cli(["users", "set-tier", "--email", "bob@example.com", "--tier", "ultimate", "--ends-at", String(endsAt), ...d]);
    expect(setTier).toEqual({ code: 0, stdout: "", stderr: "" });
    const pastEnd = await cli(["users", "set-tier", "--email", "bob@example.com", "--tier", "standard", "--ends-at", "1000", ...d]);
    expect(pastEnd.code).toBe(2);
    expect(pastEnd.stderr).toContain("endsAt: must be in the future");
    const unknownTier = await cli(["users", "set-tier", "--email", "nobody@example.com", "--tier", "standard", ...d]);
    expect(unknownTier.code).toBe(1);
    expect(unknownTier.stderr).toBe("error: no user with email nobody@example.com\n");
    const bobAfter = JSON.parse((await cli(["users", "list", ...d])).stdout)[1];
    expect(bobAfter.subscription).toMatchObject({ tier: "ultimate", endsAt });

    // recover prints the URL only; --ttl sets the lifetime; older tokens are voided.
    const link = await cli(["users", "recover", "--email", "bob@example.com", "--ttl", "600", ...d], env);
    expect(link.code).toBe(0);
    expect(link.stdout).toMatch(new RegExp(`^${publicUrl}/recover\\?token=[A-Za-z0-9_-]{43}\\n$`));
    const recoverUnknown = await cli(["users", "recover", "--email", "nobody@example.com", ...d]);
    expect(recoverUnknown.code).toBe(1);
    // The printed token really works: recovering with it sets the password.
    const token = new URL(link.stdout.trim()).searchParams.get("token")!;
    const oldToken = new URL(bobUser.recoveryLink.url).searchParams.get("token")!;
    await withServices(dataDir, async ({ users }) => {
      await expect(users.recover(oldToken, "a new password 123")).rejects.toMatchObject({ code: "INVALID_TOKEN" });
      const recovered = await users.recover(token, "a new password 123");
      expect(recovered.user.email).toBe("bob@example.com");
    });

    // remove prints nothing; an unknown email is exit 1.
    const removed = await cli(["users", "remove", "--email", "Bob@Example.com", ...d]);
    expect(removed).toEqual({ code: 0, stdout: "", stderr: "" });
    const again = await cli(["users", "remove", "--email", "bob@example.com", ...d]);
    expect(again).toEqual({ code: 1, stdout: "", stderr: "error: no user with email bob@example.com\n" });
    const remaining = JSON.parse((await cli(["users", "list", ...d])).stdout);
    expect(remaining.map((u: any) => u.email)).toEqual(["ana@example.com"]);
  });

  test("--config names the file that holds the data directory", async () => {
    const dataDir = freshDir();
    const file = join(root, "with-data-dir.toml");
    writeFileSync(file, `[server]\ndata_dir = "${dataDir}"\n`);
    // (on PostgreSQL the database of that data directory is given explicitly: tests/backend.ts)
    const database = await databaseEnv(["--data-dir", dataDir]);
    expect((await cli(["users", "add", "--email", "cfg@example.com", "--password", "correct horse battery", "--config", file], database)).code).toBe(
      0,
    );
    const list = await cli(["users", "list", "--data-dir", dataDir]);
    expect(JSON.parse(list.stdout).map((u: any) => u.email)).toEqual(["cfg@example.com"]);
    // SECBOX_CONFIG works the same way; --data-dir beats the file.
    expect(JSON.parse((await cli(["users", "list"], { SECBOX_CONFIG: file, ...database })).stdout)).toHaveLength(1);
    expect(JSON.parse((await cli(["users", "list", "--config", file, "--data-dir", freshDir()])).stdout)).toEqual([]);
  });
});

describe("api-keys, token, status, migrate", () => {
  test("api-keys create prints the token only; the key belongs to the user and honours --expires-in", async () => {
    const dataDir = freshDir();
    const d = ["--data-dir", dataDir];
    expect((await cli(["users", "add", "--email", "ci@example.com", "--password", "correct horse battery", ...d])).code).toBe(0);
    const before = nowSec();
    const [plain, expiring, unknown] = await Promise.all([
      cli(["api-keys", "create", "--email", "ci@example.com", "--name", "deploy", ...d]),
      cli(["api-keys", "create", "--email", "ci@example.com", "--name", "nightly", "--expires-in", "3600", ...d]),
      cli(["api-keys", "create", "--email", "ghost@example.com", "--name", "x", ...d]),
    ]);
    const after = nowSec();
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^sbx_ak_[0-9a-f]{64}\n$/);
    expect(expiring.code).toBe(0);
    expect(unknown).toEqual({ code: 1, stdout: "", stderr: "error: no user with email ghost@example.com\n" });
    const dup = await cli(["api-keys", "create", "--email", "ci@example.com", "--name", "deploy", ...d]);
    expect(dup.code).toBe(1);
    expect(dup.stdout).toBe("");

    await withServices(dataDir, async ({ apiKeys, users }) => {
      const user = (await users.getRowByEmail("ci@example.com"))!;
      const keys = await apiKeys.list(user.id);
      expect(keys.map((k) => k.name)).toEqual(["deploy", "nightly"]);
      expect(keys[0]!.expiresAt).toBeNull();
      expect(keys[1]!.expiresAt! - before).toBeGreaterThanOrEqual(3600);
      // 3600 s from the moment the command ran: between our clock before and after it
      expect(keys[1]!.expiresAt! - after).toBeLessThanOrEqual(3600);
      const hash = new Bun.CryptoHasher("sha256").update(plain.stdout.trim()).digest("hex");
      expect((await apiKeys.byApiKeyHash(hash))?.user.email).toBe("ci@example.com");
    });
  });

  test("token mints an HS256 JWT with exp = now + ttl; an empty jwt_secret is exit 1", async () => {
    const before = nowSec();
    const [def, short, noSecret] = await Promise.all([
      cli(["token", "--sub", "ci-bot"], { SECBOX_SECURITY_JWT_SECRET: SECRET }),
      cli(["token", "--sub", "ops@example.com", "--ttl", "120"], { SECBOX_SECURITY_JWT_SECRET: SECRET }),
      cli(["token", "--sub", "ci-bot"]),
    ]);
    expect(def.code).toBe(0);
    const jwt = def.stdout.trim();
    expect(def.stdout).toBe(`${jwt}\n`);
    const header = JSON.parse(Buffer.from(jwt.split(".")[0]!, "base64url").toString());
    const payload = JSON.parse(Buffer.from(jwt.split(".")[1]!, "base64url").toString());
    expect(header.alg).toBe("HS256");
    expect(payload.sub).toBe("ci-bot");
    expect(payload.exp - payload.iat).toBe(3600);
    expect(payload.iat).toBeGreaterThanOrEqual(before);
    expect(await verifyJwt(SECRET, jwt, nowSec())).toBe("ci-bot");
    expect(await verifyJwt("t".repeat(40), jwt, nowSec())).toBeUndefined();

    const shortPayload = JSON.parse(Buffer.from(short.stdout.trim().split(".")[1]!, "base64url").toString());
    expect(shortPayload.exp - shortPayload.iat).toBe(120);
    expect(await verifyJwt(SECRET, short.stdout.trim(), nowSec() + 120 + 61)).toBeUndefined(); // expired (60 s leeway)

    expect(noSecret.code).toBe(1);
    expect(noSecret.stdout).toBe("");
    expect(noSecret.stderr).toStartWith("error: security.jwt_secret is empty");
  });

  test("status set stores the level; migrate prints nothing and records every migration", async () => {
    const dataDir = freshDir();
    const migrated = await cli(["migrate", "--data-dir", dataDir]);
    expect(migrated).toEqual({ code: 0, stdout: "", stderr: "" });
    const db = await openDataDirDb(dataDir);
    expect(await db.all("SELECT version FROM schema_migrations ORDER BY version")).toEqual(MIGRATIONS.map((m) => ({ version: m.version })));
    await db.close();
    expect(await cli(["migrate", "--data-dir", dataDir])).toEqual({ code: 0, stdout: "", stderr: "" });

    expect(await cli(["status", "set", "--level", "unavailable", "--data-dir", dataDir])).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(await withServices(dataDir, async ({ status }) => (await status.get()).level)).toBe("unavailable");
    expect((await cli(["status", "set", "--level", "available", "--data-dir", dataDir])).code).toBe(0);
    expect(await withServices(dataDir, async ({ status }) => (await status.get()).level)).toBe("available");
  });

  test("mail list shows the outbox, filtered by --status", async () => {
    const dataDir = freshDir();
    await withServices(dataDir, async ({ messages }) => {
      await messages.queueOperatorEmail({ recipient: "held@example.com", subject: "kept for later", text: "no SMTP configured" });
    });
    const all = await cli(["mail", "list", "--data-dir", dataDir]);
    expect(all.code).toBe(0);
    const rows = JSON.parse(all.stdout);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ to: "held@example.com", subject: "kept for later", status: "held", attempts: 0 });
    expect(JSON.parse((await cli(["mail", "list", "--status", "sent", "--data-dir", dataDir])).stdout)).toEqual([]);
    expect((await cli(["mail", "list", "--status", "bogus", "--data-dir", dataDir])).code).toBe(2);
  });

  test("a database newer than the binary: migrate and operator commands exit 1 with the reason", async () => {
    const dataDir = freshDir();
    expect((await cli(["migrate", "--data-dir", dataDir])).code).toBe(0);
    const future = MIGRATIONS.at(-1)!.version + 1;
    const db = await openDataDirDb(dataDir);
    await db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'future', 0)", [future]);
    await db.close();
    const [migrate, list] = await Promise.all([cli(["migrate", "--data-dir", dataDir]), cli(["users", "list", "--data-dir", dataDir])]);
    for (const r of [migrate, list]) {
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toStartWith(`error: the database is at schema version ${future}`);
    }
  });

  test("a master key that does not match the database: exit 1 saying so", async () => {
    const dataDir = freshDir();
    expect((await cli(["migrate", "--data-dir", dataDir])).code).toBe(0);
    const r = await cli(["users", "list", "--data-dir", dataDir], { SECBOX_SECURITY_MASTER_KEY: "ab".repeat(32) });
    expect(r.code).toBe(1);
    expect(r.stderr).toStartWith("error: the master key does not match this database");
  });
});

describe("next to a running server", () => {
  /** Starts `secbox serve` on a free port and waits until it answers. */
  async function serve(dataDir: string, env: Record<string, string> = {}) {
    const port = await freePort();
    const proc = Bun.spawn(["bun", "run", MAIN, "serve", "--data-dir", dataDir, "--port", String(port), "--host", "127.0.0.1"], {
      cwd: root,
      env: { ...baseEnv, SECBOX_SERVER_LOG_LEVEL: "error", ...(await databaseEnv(["--data-dir", dataDir])), ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 15_000;
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`serve exited ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
      try {
        if ((await fetch(`${url}/api/status`)).ok) break;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error("serve did not come up");
      await Bun.sleep(50);
    }
    return {
      url,
      port,
      proc,
      async stop() {
        proc.kill("SIGTERM");
        return proc.exited;
      },
    };
  }

  test("users add and api-keys create on the live data directory; the server accepts the key at once", async () => {
    const dataDir = freshDir();
    const srv = await serve(dataDir);
    try {
      const d = ["--data-dir", dataDir];
      const added = await cli(["users", "add", "--email", "live@example.com", "--password", "correct horse battery", ...d]);
      expect(added.code).toBe(0);
      const key = await cli(["api-keys", "create", "--email", "live@example.com", "--name", "live", ...d]);
      expect(key.code).toBe(0);
      const token = key.stdout.trim();

      const self = await fetch(`${srv.url}/api/users/self`, { headers: { authorization: `Bearer ${token}` } });
      expect(self.status).toBe(200);
      expect(((await self.json()) as any).email).toBe("live@example.com");

      // status set is visible to the server immediately
      expect((await cli(["status", "set", "--level", "unavailable", ...d])).code).toBe(0);
      expect(((await (await fetch(`${srv.url}/api/status`)).json()) as any).level).toBe("unavailable");

      // a responder of the user, served (and so cached by the server)
      const { handle } = (await (await fetch(`${srv.url}/api/users/self`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
        handle: string;
      };
      const created = await fetch(`${srv.url}/api/webhooks/responders`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "live", location: { pathType: "=", path: "/live" }, settings: { body: "live" } }),
      });
      expect(created.status).toBe(201);
      expect(await (await fetch(`${srv.url}/api/webhooks/${handle}/live`)).text()).toBe("live");

      // removal revokes the key at once, and the responders stop answering (no stale cache)
      expect((await cli(["users", "remove", "--email", "live@example.com", ...d])).code).toBe(0);
      expect((await fetch(`${srv.url}/api/users/self`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(401);
      await Bun.sleep(300); // the server looks for other processes' commits every 100 ms
      expect((await fetch(`${srv.url}/api/webhooks/${handle}/live`)).status).toBe(404);
    } finally {
      expect(await srv.stop()).toBe(0);
    }
  });

  test("a second serve on a port already in use exits non-zero with a clear message", async () => {
    const busy = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("busy") });
    try {
      const r = await cli(["serve", "--data-dir", freshDir(), "--host", "127.0.0.1", "--port", String(busy.port)]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`cannot listen on 127.0.0.1:${busy.port}`);
      expect(r.stderr).toContain("in use");
    } finally {
      await busy.stop(true);
    }
  });
});
