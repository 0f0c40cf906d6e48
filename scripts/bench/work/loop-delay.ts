#!/usr/bin/env bun
// Event-loop delay under heavy requests (issue 29 "Isolation 2"): a real server in this process (SQLite, loopback,
// temporary data directory) and a 1 ms interval timer whose lateness is the probe. Each heavy request is sent by
// `curl` in a process of its own (its upload and download cost nothing on the server's loop) and the probe's samples
// taken while it runs are summarized: p50, p99 and max lateness in ms. A quiet window (no request) comes first, in
// the same run. Every request runs `--runs` times (default 3); the table shows the worst run's figures.
//
//   bun scripts/bench/work/loop-delay.ts [--runs 3] [--only name,name]
//
// Runs on older code too (a scenario answered with 4xx is reported with its status): compare.ts runs every scenario
// on a given older revision and on this checkout, side by side.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";
import { createApp, createServices, listen, startBackground, stopBackground } from "../../../src/app";
import { loadConfig } from "../../../src/config/load";
import { openRuntime } from "../../../src/platform/boot";
import type { SqliteDb } from "../../../src/platform/db/sqlite";
import { createLogger } from "../../../src/platform/log";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { runs: { type: "string", default: "3" }, only: { type: "string", default: "" } },
  strict: true,
});
const RUNS = Number(values.runs);
const ONLY = values.only === "" ? undefined : new Set(values.only.split(","));

const dataDir = mkdtempSync(join(tmpdir(), "secbox-loop-bench-"));
const files = mkdtempSync(join(tmpdir(), "secbox-loop-files-"));
const config = loadConfig({
  file: "",
  env: {
    SECBOX_SERVER_DATA_DIR: dataDir,
    SECBOX_SERVER_LOG_LEVEL: "error",
    SECBOX_SCHEDULER_ENABLED: "false",
    SECBOX_SUBSCRIPTIONS_DEFAULT_TIER: "ultimate",
  },
});
const rt = await openRuntime(config, { log: createLogger("error") });
const services = createServices(rt);
const app = createApp(services);
const server = listen(app, services, "127.0.0.1", 0);
await startBackground(services);
const base = server.url;

// ---- the probe ----
const samples: number[] = [];
let last = performance.now();
const probe = setInterval(() => {
  const now = performance.now();
  samples.push(Math.max(0, now - last - 1));
  last = now;
}, 1);

/** CPU time (ms) the main thread (its id is the process id) has used: /proc/self/task/<pid>/stat utime + stime. */
const TICK_MS = 10;
function mainThreadCpuMs(): number {
  try {
    const stat = require("node:fs").readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8") as string;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return NaN;
  }
}

function summary(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  return { n: s.length, p50: at(0.5), p99: at(0.99), max: s[s.length - 1] ?? 0 };
}

// ---- users ----
async function user(email: string) {
  const row = await services.users.create({ email, tier: "ultimate", emailProof: "operator" });
  return { id: row.id, handle: row.handle, session: await services.users.createSession(row.id) };
}
const u = await user("bench@example.com");
const cookie = `secbox_session=${u.session}`;

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(base + path, {
    method,
    headers: { cookie, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json };
}

/** POSTs a file's bytes with curl (a separate process); resolves with the status and the response size. */
async function curl(path: string, file: string | undefined, anonymous = false): Promise<{ status: number; bytes: number; ms: number }> {
  const t0 = performance.now();
  const send = file === undefined ? ["-X", "GET"] : ["-X", "POST", "-H", "content-type: application/json", "--data-binary", `@${file}`];
  const p = Bun.spawn(
    ["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", ...send, ...(anonymous ? [] : ["-H", `cookie: ${cookie}`]), base + path],
    { stdout: "pipe" },
  );
  const out = await new Response(p.stdout).text();
  await p.exited;
  const [status, bytes] = out.trim().split(" ").map(Number);
  return { status: status!, bytes: bytes!, ms: performance.now() - t0 };
}

const bodyFile = (name: string, body: unknown) => {
  const path = join(files, name);
  writeFileSync(path, typeof body === "string" ? body : JSON.stringify(body));
  return path;
};
const uuid = () => crypto.randomUUID();

// ---- data ----

/** A file of n tags (160,000 make ~9.5 MiB). */
function tagsFile(n: number) {
  const tags = Array.from({ length: n }, (_, i) => ({ id: uuid(), name: `t${i}` }));
  return { format: "secbox-export", version: 1, exportedAt: 0, data: { tags } };
}
function policiesFile(n: number) {
  const contentSecurityPolicies = Array.from({ length: n }, (_, i) => ({
    id: uuid(),
    name: `policy-${i}`,
    directives: [
      { name: "default-src", value: ["'self'"] },
      { name: "script-src", value: ["'self'", `https://cdn${i}.example.com`] },
    ],
  }));
  return { format: "secbox-export", version: 1, exportedAt: 0, data: { contentSecurityPolicies } };
}
function kdfFile(params: { m: number; t: number; p: number }) {
  // One secret with a well-formed sealed value: the import derives the key before it can tell the passphrase is wrong.
  const secrets = [{ id: uuid(), name: "S1", encryptedValue: randomBytes(40).toString("base64") }];
  return {
    format: "secbox-export",
    version: 1,
    exportedAt: 0,
    secretsEncryption: { alg: "aes-256-gcm", kdf: "argon2id", kdfParams: params, salt: randomBytes(16).toString("base64") },
    data: { secrets },
  };
}

/** EncryptedPrivateKeyInfo (PBES2, PBKDF2-HMAC-SHA256 with `iterations`, AES-256-CBC) of a fresh P-256 key. */
async function encryptedKey(iterations: number, passphrase: string): Promise<Uint8Array> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  const der = new Uint8Array(privateKey.export({ type: "pkcs8", format: "der" }));
  const info = await pkijs.getCrypto(true).encryptEncryptedContentInfo({
    password: new TextEncoder().encode(passphrase).buffer as ArrayBuffer,
    contentEncryptionAlgorithm: { name: "AES-CBC", length: 256 } as any,
    hmacHashAlgorithm: "SHA-256",
    iterationCount: iterations,
    contentToEncrypt: der.buffer as ArrayBuffer,
    contentType: "1.2.840.113549.1.7.1",
  });
  const seq = new asn1js.Sequence({
    value: [info.contentEncryptionAlgorithm.toSchema(), new asn1js.OctetString({ valueHex: info.encryptedContent!.getValue() })],
  });
  return new Uint8Array(seq.toBER(false));
}
async function keyFile(iterations: number) {
  const der = await encryptedKey(iterations, "key passphrase");
  return {
    format: "secbox-export",
    version: 1,
    exportedAt: 0,
    data: {
      privateKeys: [
        {
          id: uuid(),
          name: `key-${iterations}`,
          alg: { keyType: "ecdsa", curve: "secp256r1" },
          encrypted: true,
          pkcs8: Buffer.from(der).toString("base64"),
        },
      ],
    },
  };
}

/** A CSP text of about `bytes` bytes: one script-src with many distinct hosts (one finding or more per host). */
function cspText(bytes: number): string {
  const hosts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const h = `http://h${i}.example.com`;
    hosts.push(h);
    size += h.length + 1;
  }
  return `script-src ${hosts.join(" ")}; object-src 'none'`;
}

/** A responder with `n` records of `bodyBytes` JSON request and response bodies, written with plain SQL. */
function responderWithHistory(n: number, bodyBytes: number): string {
  const raw = (rt.db as SqliteDb).raw;
  const id = Bun.randomUUIDv7();
  const now = Math.floor(Date.now() / 1000);
  const body = new TextEncoder().encode(JSON.stringify({ data: "x".repeat(bodyBytes - 12) }));
  const headers = JSON.stringify([
    ["content-type", "application/json"],
    ["host", "bench.localhost"],
  ]);
  raw.transaction(() => {
    raw
      .prepare(
        `INSERT INTO responders (id, user_id, name, path_type, path, path_lower, subdomain_prefix, method, enabled, requests_to_track, status_code, secrets, created_at, updated_at)
         VALUES (?, ?, ?, '=', '/big', '/big', '', 'POST', 1, ?, 200, '"none"', ?, ?)`,
      )
      .run(id, u.id, "big history", n, now, now);
    const q = raw.prepare(
      `INSERT INTO responder_requests (id, responder_id, created_at, duration_ms, method, path, headers, body, body_size, response_status, response_headers, response_body, response_body_size, response_truncated)
       VALUES (?, ?, ?, 1, 'POST', '/big', ?, ?, ?, 200, ?, ?, ?, 0)`,
    );
    for (let i = 0; i < n; i++) q.run(Bun.randomUUIDv7(), id, now, headers, body, body.byteLength, headers, body, body.byteLength);
  })();
  return id;
}

// ---- scenarios ----
interface Scenario {
  name: string;
  what: string;
  /** A path, or one decided before each run (with the body file to send instead of `file`, if any). */
  path: string | (() => Promise<string | { path: string; file: string }>);
  /** The body (a file path); undefined = GET. */
  file: string | undefined;
  /** Runs before each run (e.g. removes what the previous run imported). */
  before?: () => Promise<void>;
  /** Sent without credentials. */
  anonymous?: boolean;
}

const scenarios: Scenario[] = [];
/** A scenario, its data built only when it runs (--only). */
async function add(name: string, make: () => Scenario | Omit<Scenario, "name"> | Promise<Omit<Scenario, "name">>) {
  if (!ONLY || ONLY.has(name)) scenarios.push({ ...(await make()), name });
}

const clearPolicies = async () => {
  (rt.db as SqliteDb).raw.run("DELETE FROM content_security_policies WHERE user_id = ?", [u.id]);
};

let tags160k: string | undefined;
const tagsBody = () => (tags160k ??= bodyFile("tags.json", { data: tagsFile(160_000) }));
await add("body-9.5MiB-401", () => ({
  what: "the 9.5 MiB body below without credentials (read, then 401): what receiving it costs",
  path: "/api/user/data/_import_preview",
  file: tagsBody(),
  anonymous: true,
}));
await add("preview-160k-tags", () => ({ what: "_import_preview, 160,000 tags (9.5 MiB)", path: "/api/user/data/_import_preview", file: tagsBody() }));
await add("import-160k-tags", () => ({
  what: "_import, 160,000 tags (9.5 MiB; beyond the tier's 100 tags)",
  path: "/api/user/data/_import",
  file: tagsBody(),
}));
await add("import-20k-policies", () => ({
  what: "_import, 20,000 CSP policies (written)",
  path: "/api/user/data/_import",
  file: bodyFile("policies.json", { data: policiesFile(20_000) }),
  before: clearPolicies,
}));
await add("import-kdf-max", () => ({
  what: "_import, argon2id m=256 MiB t=10 p=16 (the old bounds)",
  path: "/api/user/data/_import",
  file: bodyFile("kdf-max.json", { data: kdfFile({ m: 262_144, t: 10, p: 16 }), secretsPassphrase: "not the passphrase" }),
}));
await add("import-kdf-doc", () => ({
  what: "_import, argon2id m=19,456 KiB t=2 p=1 (documented)",
  path: "/api/user/data/_import",
  file: bodyFile("kdf-doc.json", { data: kdfFile({ m: 19_456, t: 2, p: 1 }), secretsPassphrase: "not the passphrase" }),
}));
for (const iterations of [8_000_000, 1_000_000]) {
  await add(`key-export-${iterations / 1_000_000}M`, async () => {
    let keyId: string | undefined;
    const file = bodyFile(`key-${iterations}.json`, { data: await keyFile(iterations) });
    return {
      what: `private key _export (pem, re-encrypted), stored with ${iterations.toLocaleString("en")} PBKDF2 iterations`,
      path: async () => {
        if (!keyId) {
          await curl("/api/user/data/_import", file);
          const list = await api("GET", "/api/certificates/private_keys?pageSize=100");
          keyId = list.json?.items?.find((k: any) => k.name === `key-${iterations}`)?.id;
          // refused by the import (§28): the row shows that import's answer
          if (!keyId) return { path: "/api/user/data/_import", file };
        }
        return `/api/certificates/private_keys/${keyId}/_export`;
      },
      file: bodyFile(`key-export.json`, { format: "pem", passphrase: "key passphrase", exportPassphrase: "another passphrase" }),
    };
  });
}
await add("csp-evaluate-1.1MB", () => ({
  what: "CSP _evaluate, 1.1 MB text",
  path: "/api/web_security/csp/_evaluate",
  file: bodyFile("csp-big.json", { serialized: cspText(1_100_000) }),
}));
await add("csp-evaluate-64KiB", () => ({
  what: "CSP _evaluate, 64 KiB text",
  path: "/api/web_security/csp/_evaluate",
  file: bodyFile("csp-64k.json", { serialized: cspText(65_000) }),
}));
await add("key-pkcs12", async () => {
  const created = await api("POST", "/api/certificates/private_keys", { keyName: "p12", alg: { keyType: "ecdsa", curve: "secp256r1" } });
  return {
    what: "private key _export as PKCS#12 with a passphrase",
    path: `/api/certificates/private_keys/${created.json?.id}/_export`,
    file: bodyFile("p12.json", { format: "pkcs12", exportPassphrase: "p12 passphrase" }),
  };
});
await add("template-pkcs12", async () => {
  const tpl = await api("POST", "/api/certificates/templates", {
    templateName: "bench",
    attributes: {
      commonName: "bench.example",
      keyAlgorithm: { keyType: "ecdsa", curve: "secp256r1" },
      signatureAlgorithm: "sha256",
      notValidBefore: Math.floor(Date.now() / 1000) - 86_400,
      notValidAfter: Math.floor(Date.now() / 1000) + 30 * 86_400,
    },
  });
  return {
    what: "template _generate as PKCS#12 with a passphrase",
    path: `/api/certificates/templates/${tpl.json?.template?.id ?? tpl.json?.id}/_generate`,
    file: bodyFile("gen.json", { format: "pkcs12", passphrase: "p12 passphrase" }),
  };
});
const HAR_RECORDS = 40;
let historyResponder: string | undefined;
const withHistory = () => (historyResponder ??= responderWithHistory(HAR_RECORDS, 1_000_000));
await add("har-40x1MB", () => ({
  what: `responder _har, ${HAR_RECORDS} records with 1 MB JSON request and response bodies`,
  path: `/api/webhooks/responders/${withHistory()}/_har`,
  file: undefined,
}));
await add("export-history-40x1MB", () => {
  withHistory();
  return {
    what: "_export with that responder's history",
    path: "/api/user/data/_export",
    file: bodyFile("export.json", { include: { responders: { type: "all", includeHistory: true } } }),
  };
});
await add("export-passphrase", async () => {
  for (let i = 0; i < 20; i++) await api("POST", "/api/user/secrets", { name: `S${i}`, value: `value ${i}` });
  return {
    what: "_export of 20 secrets with a passphrase (argon2id)",
    path: "/api/user/data/_export",
    file: bodyFile("export-pass.json", { include: { secrets: { type: "all" } }, secretsPassphrase: "export passphrase" }),
  };
});

// ---- run ----
const rows: string[] = [];
const fmt = (n: number) => (n < 10 ? n.toFixed(1) : n.toFixed(0));
await Bun.sleep(500);
samples.length = 0;
await Bun.sleep(1000);
const quiet = summary(samples);
rows.push(`| quiet (no request, 1 s) | | ${fmt(quiet.p50)} | ${fmt(quiet.p99)} | ${fmt(quiet.max)} | | |`);
for (const s of scenarios) {
  let worst: { p50: number; p99: number; max: number; n: number } | undefined;
  const statuses: string[] = [];
  let ms = 0;
  let bytes = 0;
  let cpu = 0;
  for (let r = 0; r < RUNS; r++) {
    await s.before?.();
    const target = typeof s.path === "string" ? s.path : await s.path();
    const [path, body] = typeof target === "string" ? [target, s.file] : [target.path, target.file];
    await Bun.sleep(200);
    samples.length = 0;
    const cpu0 = mainThreadCpuMs();
    const res = await curl(path, body, s.anonymous);
    cpu = Math.max(cpu, mainThreadCpuMs() - cpu0);
    const sum = summary(samples);
    if (process.env.BENCH_VERBOSE)
      console.error(
        `  ${s.name} run ${r + 1}: ${res.status} max ${fmt(sum.max)} ms, main CPU ${fmt(mainThreadCpuMs() - cpu0)} ms, ${fmt(res.ms)} ms`,
      );
    statuses.push(String(res.status));
    ms = Math.max(ms, res.ms);
    bytes = res.bytes;
    if (!worst || sum.max > worst.max) worst = sum;
  }
  const st = [...new Set(statuses)].join("/");
  rows.push(
    `| ${s.name}: ${s.what} | ${st} | ${fmt(worst!.p50)} | ${fmt(worst!.p99)} | ${fmt(worst!.max)} | ${fmt(cpu)} | ${fmt(ms)} ms, ${(bytes / 1024).toFixed(0)} KiB |`,
  );
  console.error(rows[rows.length - 1]);
}

clearInterval(probe);
console.log("| request | status | loop lateness p50 ms | p99 ms | max ms | main-thread CPU ms | slowest run, response |");
console.log("|---|---|---:|---:|---:|---:|---|");
for (const r of rows) console.log(r);
await server.stop();
await stopBackground(services);
await rt.close();
rmSync(dataDir, { recursive: true, force: true });
rmSync(files, { recursive: true, force: true });
process.exit(0);
