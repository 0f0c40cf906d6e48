// Configuration loading (supplement §23.1, §23.2): defaults, file < env < flags, coercion, validation errors.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ConfigError, loadConfig, type LoadOptions } from "./load";
import { ConfigSchema, TIER_DEFAULTS, TIERS } from "./schema";

const dir = mkdtempSync(join(tmpdir(), "secbox-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function file(toml: string): string {
  const path = join(dir, `c${++n}.toml`);
  writeFileSync(path, toml);
  return path;
}

/** Loads with an explicit (empty by default) environment so the test process's SECBOX_* never leak in. */
const load = (opts: LoadOptions = {}) => loadConfig({ env: {}, ...opts });

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

const EXAMPLE = resolve(import.meta.dir, "../../config.example.toml");

describe("defaults", () => {
  test("no file, no env: the documented defaults of §23.1 and §22", () => {
    const cfg = load({ file: file("") });
    expect(cfg.server).toEqual({
      host: "127.0.0.1",
      port: 7070,
      public_url: "http://localhost:7070",
      data_dir: resolve("./data"),
      max_body_bytes: 2_097_152,
      max_import_bytes: 10_485_760,
      trust_proxy: false,
      max_in_flight_per_client: 64,
      log_level: "info",
      min_free_disk_mib: 512,
      work_threads: 0,
    });
    expect(cfg.responders).toEqual({ domain: "localhost", url_style: "subdomain", capture: "batched" });
    expect(cfg.security).toEqual({
      operators: [],
      jwt_secret: "",
      session_cookie: "secbox_session",
      session_ttl: 1_209_600,
      signup: "open",
      master_key: "",
    });
    expect(cfg.smtp).toEqual({
      host: "",
      port: 587,
      secure: false,
      username: "",
      password: "",
      from: "Secbox <secbox@localhost>",
      catch_all: "",
      unsubscribe_mailto: "",
    });
    expect(cfg.certificates).toEqual({ openssl: "openssl" });
    expect(cfg.chromium).toEqual({ executable: "/usr/bin/chromium", max_concurrency: 2, user: "nobody" });
    expect(cfg.network).toEqual({ allow_private_targets: false });
    expect(cfg.scheduler).toEqual({ enabled: true, max_concurrent_api: 8, failure_alert_after: 3 });
    expect(cfg.scripts).toEqual({ workers: 0, queue_limit: 1000, queue_limit_per_user: 250 });
    expect(cfg.subscriptions.default_tier).toBe("ultimate"); // §27: a self-hosted box is not a SaaS plan
    expect(cfg.subscriptions.tiers.basic).toMatchObject({
      min_schedule_interval_sec: 3600,
      max_revisions: 30,
      script_memory_mib: 10,
      script_timeout_sec: 10,
    });
    expect(cfg.subscriptions.tiers.standard).toMatchObject({ min_schedule_interval_sec: 600, script_timeout_sec: 20 });
    expect(cfg.subscriptions.tiers.professional).toMatchObject({ min_schedule_interval_sec: 60, max_requests_to_track: 100, script_memory_mib: 20 });
    expect(cfg.subscriptions.tiers.ultimate).toMatchObject({ min_schedule_interval_sec: 10, max_revisions: 1000, script_memory_mib: 50 });
    // §28: hits per second per handle, 0 = unlimited
    expect(TIERS.map((t) => cfg.subscriptions.tiers[t].max_hits_per_second)).toEqual([200, 200, 1000, 0]);
    for (const tier of TIERS) expect(cfg.subscriptions.tiers[tier]).toEqual(TIER_DEFAULTS[tier]);
    expect(cfg.subscriptions.tiers.ultimate.notification_throttles).toEqual([300, 900, 3600, 21600, 86400]);
  });

  test("./secbox.toml is read when present and no file is named", () => {
    const cwd = mkdtempSync(join(dir, "cwd-"));
    writeFileSync(join(cwd, "secbox.toml"), "[server]\nport = 7111\n");
    const before = process.cwd();
    process.chdir(cwd);
    try {
      expect(load().server.port).toBe(7111);
      expect(load({ file: "" }).server.port).toBe(7111);
      expect(load().server.data_dir).toBe(join(cwd, "data")); // relative data_dir resolved against the cwd
    } finally {
      process.chdir(before);
    }
  });

  test("config.example.toml documents every key with its default and loads to the defaults", async () => {
    const parsed = Bun.TOML.parse(await Bun.file(EXAMPLE).text()) as Record<string, any>;
    // Every key of the schema is present in the example (so it documents the whole surface) ...
    const missing: string[] = [];
    for (const [section, schema] of Object.entries(ConfigSchema.properties)) {
      for (const key of Object.keys((schema as any).properties)) {
        if (section === "subscriptions" && key === "tiers") {
          for (const tier of TIERS)
            for (const k of Object.keys(TIER_DEFAULTS.basic))
              if (parsed.subscriptions?.tiers?.[tier]?.[k] === undefined) missing.push(`subscriptions.tiers.${tier}.${k}`);
        } else if (parsed[section]?.[key] === undefined) missing.push(`${section}.${key}`);
      }
    }
    expect(missing).toEqual([]);
    // ... and loading it gives exactly the built-in defaults.
    expect(load({ file: EXAMPLE })).toEqual(load({ file: file("") }));
  });
});

describe("sources and precedence", () => {
  test("file < env < flags", () => {
    const path = file('[server]\nport = 8001\nhost = "0.0.0.0"\nlog_level = "warn"\n[responders]\ndomain = "hooks.example.com"\n');
    const fromFile = load({ file: path });
    expect(fromFile.server.port).toBe(8001);
    expect(fromFile.server.host).toBe("0.0.0.0");
    expect(fromFile.responders.domain).toBe("hooks.example.com");

    const withEnv = load({ file: path, env: { SECBOX_SERVER_PORT: "8002", SECBOX_SERVER_LOG_LEVEL: "debug" } });
    expect(withEnv.server.port).toBe(8002);
    expect(withEnv.server.log_level).toBe("debug");
    expect(withEnv.server.host).toBe("0.0.0.0"); // untouched by env: file value kept

    const withFlags = load({ file: path, env: { SECBOX_SERVER_PORT: "8002" }, flags: { port: "8003", host: "::1", dataDir: join(dir, "flagdata") } });
    expect(withFlags.server.port).toBe(8003);
    expect(withFlags.server.host).toBe("::1");
    expect(withFlags.server.data_dir).toBe(join(dir, "flagdata"));
    expect(withFlags.server.log_level).toBe("warn");
  });

  test("--config naming a missing file is an error; SECBOX_CONFIG names the file", () => {
    const err = configError(() => load({ file: join(dir, "nope.toml") }));
    expect(err.key).toBe("config");
    expect(err.message).toContain("nope.toml");

    const path = file("[server]\nport = 8100\n");
    expect(load({ env: { SECBOX_CONFIG: path } }).server.port).toBe(8100);
    expect(configError(() => load({ env: { SECBOX_CONFIG: join(dir, "missing.toml") } })).key).toBe("config");
    // --config wins over SECBOX_CONFIG
    expect(load({ file: file("[server]\nport = 8101\n"), env: { SECBOX_CONFIG: path } }).server.port).toBe(8101);
  });

  test("a file that is not TOML is an error", () => {
    expect(configError(() => load({ file: file("[server\nport = ") })).key).toBe("config");
  });

  test("environment coercion: integers, booleans, comma lists, strings", () => {
    const cfg = load({
      file: file(""),
      env: {
        SECBOX_SERVER_MAX_BODY_BYTES: "4096",
        SECBOX_SERVER_TRUST_PROXY: "true",
        SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "1",
        SECBOX_SCHEDULER_ENABLED: "0",
        SECBOX_SMTP_SECURE: "false",
        SECBOX_SECURITY_OPERATORS: "admin@example.com, ci-bot,,",
        SECBOX_SMTP_FROM: "Ops <ops@example.com>",
        SECBOX_RESPONDERS_URL_STYLE: "path",
      },
    });
    expect(cfg.server.max_body_bytes).toBe(4096);
    expect(cfg.server.trust_proxy).toBe(true);
    expect(cfg.network.allow_private_targets).toBe(true);
    expect(cfg.scheduler.enabled).toBe(false);
    expect(cfg.smtp.secure).toBe(false);
    expect(cfg.security.operators).toEqual(["admin@example.com", "ci-bot"]);
    expect(cfg.smtp.from).toBe("Ops <ops@example.com>");
    expect(cfg.responders.url_style).toBe("path");
    expect(load({ env: { SECBOX_SCHEDULER_ENABLED: "TRUE" }, file: file("") }).scheduler.enabled).toBe(true);
  });

  test("tier keys from the environment override one tier and keep the others' defaults", () => {
    const cfg = load({
      file: file("[subscriptions.tiers.basic]\nmax_revisions = 5\nmax_tags = 7\n"),
      env: { SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_REVISIONS: "10", SECBOX_SUBSCRIPTIONS_TIERS_ULTIMATE_NOTIFICATION_THROTTLES: "60,120" },
    });
    expect(cfg.subscriptions.tiers.basic.max_revisions).toBe(10);
    expect(cfg.subscriptions.tiers.basic.max_tags).toBe(7);
    expect(cfg.subscriptions.tiers.basic.script_timeout_sec).toBe(10);
    expect(cfg.subscriptions.tiers.standard.max_revisions).toBe(30);
    expect(cfg.subscriptions.tiers.ultimate.notification_throttles).toEqual([60, 120]);
    expect(load({ file: file(""), env: { SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "professional" } }).subscriptions.default_tier).toBe("professional");
  });

  test("other SECBOX_* names are not overrides", () => {
    const cfg = load({ file: file(""), env: { SECBOX_SECRETS_PASSPHRASE: "x", SECBOX_SOMETHING: "y", SECBOX_: "z", OTHER_SERVER_PORT: "1" } });
    expect(cfg.server.port).toBe(7070);
  });
});

describe("validation errors name the key", () => {
  test("unknown key in the file (top level, section and tier)", () => {
    expect(configError(() => load({ file: file("[server]\nprot = 1\n") })).key).toBe("server.prot");
    expect(configError(() => load({ file: file("[server]\nprot = 1\n") })).reason).toBe("unknown key");
    expect(configError(() => load({ file: file("[nonsense]\na = 1\n") })).key).toBe("nonsense");
    expect(configError(() => load({ file: file("[subscriptions.tiers.basic]\nmax_cats = 1\n") })).key).toBe("subscriptions.tiers.basic.max_cats");
    expect(configError(() => load({ file: file("[subscriptions.tiers.gold]\nmax_tags = 1\n") })).key).toBe("subscriptions.tiers.gold");
  });

  test("unknown key in the environment", () => {
    const err = configError(() => load({ file: file(""), env: { SECBOX_SERVER_PROT: "1" } }));
    expect(err.key).toBe("server.prot");
    expect(err.message).toContain("SECBOX_SERVER_PROT");
    expect(configError(() => load({ file: file(""), env: { SECBOX_SUBSCRIPTIONS_TIERS_GOLD_MAX_TAGS: "1" } })).message).toContain(
      "SECBOX_SUBSCRIPTIONS_TIERS_GOLD_MAX_TAGS",
    );
    expect(configError(() => load({ file: file(""), env: { SECBOX_SUBSCRIPTIONS_TIERS_BASIC_MAX_CATS: "1" } })).key).toBe(
      "subscriptions.tiers.basic.max_cats",
    );
  });

  test("wrong types", () => {
    expect(configError(() => load({ file: file('[server]\nport = "8080"\n') })).key).toBe("server.port");
    expect(configError(() => load({ file: file('[server]\ntrust_proxy = "yes"\n') })).key).toBe("server.trust_proxy");
    expect(configError(() => load({ file: file('[security]\noperators = "a@b.c"\n') })).key).toBe("security.operators");
    expect(configError(() => load({ file: file("[server]\nport = 80.5\n") })).key).toBe("server.port");
    expect(configError(() => load({ file: file('server = "x"\n') })).key).toBe("server");
    const env = configError(() => load({ file: file(""), env: { SECBOX_SERVER_PORT: "eighty" } }));
    expect(env.key).toBe("server.port");
    expect(env.reason).toContain("integer");
    expect(configError(() => load({ file: file(""), env: { SECBOX_SERVER_TRUST_PROXY: "yes" } })).key).toBe("server.trust_proxy");
    expect(configError(() => load({ file: file(""), env: { SECBOX_SUBSCRIPTIONS_TIERS_BASIC_NOTIFICATION_THROTTLES: "60,soon" } })).key).toBe(
      "subscriptions.tiers.basic.notification_throttles",
    );
  });

  test("out-of-range values", () => {
    for (const port of ["0", "65536", "-1"])
      expect(configError(() => load({ file: file(""), env: { SECBOX_SERVER_PORT: port } })).key).toBe("server.port");
    expect(configError(() => load({ file: file(""), flags: { port: "70000" } })).key).toBe("server.port");
    expect(configError(() => load({ file: file("[chromium]\nmax_concurrency = 0\n") })).key).toBe("chromium.max_concurrency");
    expect(configError(() => load({ file: file("[subscriptions.tiers.standard]\nscript_memory_mib = 0\n") })).key).toBe(
      "subscriptions.tiers.standard.script_memory_mib",
    );
  });

  test("unknown enum values", () => {
    expect(configError(() => load({ file: file('[server]\nlog_level = "loud"\n') })).key).toBe("server.log_level");
    expect(configError(() => load({ file: file('[security]\nsignup = "invite"\n') })).key).toBe("security.signup");
    expect(configError(() => load({ file: file(""), env: { SECBOX_RESPONDERS_URL_STYLE: "query" } })).key).toBe("responders.url_style");
    expect(configError(() => load({ file: file(""), env: { SECBOX_RESPONDERS_CAPTURE: "eventually" } })).key).toBe("responders.capture");
    expect(configError(() => load({ file: file('[subscriptions]\ndefault_tier = "gold"\n') })).key).toBe("subscriptions.default_tier");
  });

  test("public_url must be an absolute http(s) URL; a trailing slash is removed", () => {
    for (const bad of ["localhost:7070", "/relative", "ftp://example.com", " "]) {
      const err = configError(() => load({ file: file(""), env: { SECBOX_SERVER_PUBLIC_URL: bad } }));
      expect(err.key).toBe("server.public_url");
    }
    expect(load({ file: file(""), env: { SECBOX_SERVER_PUBLIC_URL: "https://secbox.example.com/" } }).server.public_url).toBe(
      "https://secbox.example.com",
    );
    expect(load({ file: file('[server]\npublic_url = "https://example.com/secbox//"\n') }).server.public_url).toBe("https://example.com/secbox");
  });

  test("public_url: empty (the default) is http://localhost:<effective port>; a configured one is used as is (§27)", () => {
    expect(load({ file: file("") }).server.public_url).toBe("http://localhost:7070");
    expect(load({ file: file("[server]\nport = 9001\n") }).server.public_url).toBe("http://localhost:9001");
    expect(load({ file: file("[server]\nport = 9001\n"), env: { SECBOX_SERVER_PORT: "8080" } }).server.public_url).toBe("http://localhost:8080");
    expect(load({ file: file(""), env: { SECBOX_SERVER_PORT: "8080" }, flags: { port: "35843" } }).server.public_url).toBe("http://localhost:35843");
    expect(load({ file: file('[server]\npublic_url = ""\n'), flags: { port: 8443 } }).server.public_url).toBe("http://localhost:8443");
    // An explicit value wins whatever the port (a reverse proxy in front).
    expect(load({ file: file('[server]\npublic_url = "https://secbox.lan"\n'), flags: { port: "8080" } }).server.public_url).toBe(
      "https://secbox.lan",
    );
    expect(load({ file: file(""), env: { SECBOX_SERVER_PUBLIC_URL: "http://localhost:7070" }, flags: { port: "8080" } }).server.public_url).toBe(
      "http://localhost:7070",
    );
  });

  test("jwt_secret: empty or at least 32 characters", () => {
    expect(configError(() => load({ file: file(""), env: { SECBOX_SECURITY_JWT_SECRET: "short" } })).key).toBe("security.jwt_secret");
    expect(configError(() => load({ file: file(""), env: { SECBOX_SECURITY_JWT_SECRET: "x".repeat(31) } })).key).toBe("security.jwt_secret");
    expect(load({ file: file(""), env: { SECBOX_SECURITY_JWT_SECRET: "x".repeat(32) } }).security.jwt_secret).toBe("x".repeat(32));
  });

  test("master_key: empty or 64 hex characters", () => {
    for (const bad of ["abc", "g".repeat(64), "a".repeat(63), "a".repeat(65)])
      expect(configError(() => load({ file: file(""), env: { SECBOX_SECURITY_MASTER_KEY: bad } })).key).toBe("security.master_key");
    expect(load({ file: file(""), env: { SECBOX_SECURITY_MASTER_KEY: "Ab".repeat(32) } }).security.master_key).toBe("Ab".repeat(32));
  });

  test("session_cookie must be a plain token", () => {
    expect(configError(() => load({ file: file('[security]\nsession_cookie = "a b"\n') })).key).toBe("security.session_cookie");
  });
});
