// The attacks of scripts/bench/fairness/run.ts, one per finding of issue 29 A (and the issue-17 ones), as the attacker
// would run them: what the attacker sets up through the API (as itself), then the requests its process sends in a
// loop. Each attack must keep working whatever the server answers: an attack the server now refuses (400 at
// import, 429 for a second concurrent search, 503 at the per-source cap) counts as the attacker being refused,
// never as a crash of the benchmark.
import { createPrivateKey, generateKeyPairSync, randomBytes, randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";

/** The victim's requests: its responders (static, scripted: plain, KV, timer), `/api/status`, a sign-in, and
 *  `fresh`: the static responder on a new connection each time (a first visit: it goes through the listen queue). */
export type Probe = "static" | "plain" | "kv" | "timer" | "status" | "signin" | "fresh";

export interface Account {
  email: string;
  password: string;
  cookie: string;
  handle: string;
  /** Host header of the account's responders. */
  host: string;
}

export interface Ctx {
  base: string;
  port: number;
  victim: Account;
  evil: Account;
  /** A directory for request bodies too large for the attacker's argument file. */
  tmp: string;
  /** A call of the API as `user` (from the benchmark's own address, before the attack). */
  api(user: Account, method: string, path: string, body?: unknown): Promise<{ status: number; json: any; text: string }>;
  /** Notes the setup makes for the report (e.g. "the import of the key was refused: 400"). */
  note(text: string): void;
}

export interface LoadReq {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  bodyFile?: string;
}
export interface LoadGroup {
  /** What the group does, for the report. */
  what: string;
  requests: LoadReq[];
  concurrency: number;
  /** A new connection per request (`Connection: close`), as `ab` does; default keep-alive. */
  newConnections?: boolean;
}

export interface Attack {
  /** Selects it on the command line (`--attacks a,d`: by group letter or id). */
  id: string;
  group: string;
  label: string;
  /** The attacker's tier (set with `secbox users set-tier` after its sign-up); default basic. */
  evilTier?: "basic" | "standard" | "professional" | "ultimate";
  /** The victim's requests measured, in turn. */
  probes: Probe[];
  setup(ctx: Ctx): Promise<void>;
  load(ctx: Ctx): LoadGroup[] | Promise<LoadGroup[]>;
}

const json = (cookie: string) => ({ "content-type": "application/json", cookie });
const post = (a: Account, path: string, body: unknown): LoadReq => ({ method: "POST", path, headers: json(a.cookie), body: JSON.stringify(body) });
const hitOf = (a: Account, path: string): LoadReq => ({ path, headers: { host: a.host } });

async function must(ctx: Ctx, user: Account, method: string, path: string, body: unknown, ok: number[] = [200, 201]) {
  const r = await ctx.api(user, method, path, body);
  if (!ok.includes(r.status)) throw new Error(`${method} ${path}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.json;
}

export async function responder(ctx: Ctx, user: Account, name: string, path: string, script: string | null) {
  await must(ctx, user, "POST", "/api/webhooks/responders", {
    name,
    location: { pathType: "=", path },
    method: "GET",
    settings: script === null ? { body: "ok" } : { script },
  });
}

// ---- (a) search ----

/** 100 scripts of 51,200 bytes (the tier's count and the size limit): one string literal of "a"s, the worst case
 *  for `LIKE '%aaa…ab%'`. */
async function bigScripts(ctx: Ctx) {
  const content = `'${"a".repeat(51_198)}'`;
  for (let i = 0; i < 100; i++) await must(ctx, ctx.evil, "POST", "/api/user/scripts", { name: `big-${i}`, scriptType: "universal", content });
}
/** 100 disabled API trackers, each with 10 requests to URLs of 2,048 characters (loopback, never run). */
async function longUrlTrackers(ctx: Ctx) {
  const url = (i: number, j: number) => `http://127.0.0.1:9/${i}/${j}/`.padEnd(2048, "a");
  for (let i = 0; i < 100; i++)
    await must(ctx, ctx.evil, "POST", "/api/web_scraping/api_trackers", {
      name: `long-${i}`,
      enabled: false,
      target: { requests: Array.from({ length: 10 }, (_, j) => ({ url: url(i, j) })) },
    });
}
const SEARCH_QUERY = `${"a".repeat(199)}b`;

// ---- (b) imports ----

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const now = () => Math.floor(Date.now() / 1000);
const exportFile = (data: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  format: "secbox-export",
  version: 1,
  exportedAt: now(),
  ...extra,
  data,
});

/** `{data, mode}` of ~9.6 MiB: a file of 160,000 tags (`{id, name}`; under `server.max_import_bytes`, 10 MiB). */
function tagsImportBody(): string {
  const tags = Array.from({ length: 160_000 }, (_, i) => ({ id: randomUUID(), name: `t${i}` }));
  return JSON.stringify({ data: exportFile({ tags }), mode: "merge" });
}

/** An import with secret values whose key derivation asks argon2id for m = 256 MiB, t = 10, p = 16. */
function argon2ImportBody(): string {
  const t = now();
  const file = exportFile(
    { secrets: [{ id: randomUUID(), name: "S1", tagIds: [], createdAt: t, updatedAt: t, encryptedValue: b64(randomBytes(12 + 16 + 8)) }] },
    { secretsEncryption: { alg: "aes-256-gcm", kdf: "argon2id", kdfParams: { m: 262_144, t: 10, p: 16 }, salt: b64(randomBytes(16)) } },
  );
  return JSON.stringify({ data: file, mode: "merge", secretsPassphrase: "the attacker's passphrase" });
}

/** EncryptedPrivateKeyInfo (PBES2, PBKDF2-HMAC-SHA256 with `iterations`, AES-256-CBC) of a fresh P-256 key. */
async function encryptedKey(iterations: number, passphrase: string): Promise<Uint8Array> {
  const { privateKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const der = new Uint8Array(createPrivateKey(privateKey.export({ type: "pkcs8", format: "pem" })).export({ type: "pkcs8", format: "der" }));
  const info = await pkijs.getCrypto(true).encryptEncryptedContentInfo({
    password: new TextEncoder().encode(passphrase).slice().buffer,
    contentEncryptionAlgorithm: { name: "AES-CBC", length: 256 } as any,
    hmacHashAlgorithm: "SHA-256",
    iterationCount: iterations,
    contentToEncrypt: der.slice().buffer,
    contentType: "1.2.840.113549.1.7.1",
  });
  const content = new asn1js.OctetString({ valueHex: new Uint8Array(info.encryptedContent!.getValue()).slice().buffer });
  return new Uint8Array(new asn1js.Sequence({ value: [info.contentEncryptionAlgorithm.toSchema(), content] }).toBER(false));
}
const KEY_PASSPHRASE = "attacker key passphrase";
let slowKey: Promise<Uint8Array> | undefined; // made once per benchmark (8,000,000 iterations take seconds)
const slowKeyImport = async () => {
  const t = now();
  const pkcs8 = await (slowKey ??= encryptedKey(8_000_000, KEY_PASSPHRASE));
  return {
    data: exportFile({
      privateKeys: [
        {
          id: randomUUID(),
          name: "slow-key",
          alg: { keyType: "ecdsa", curve: "secp256r1" },
          encrypted: true,
          pkcs8: b64(pkcs8),
          tagIds: [],
          createdAt: t,
          updatedAt: t,
        },
      ],
    }),
    mode: "merge",
  };
};

// ---- (c) crash scripts ----

const CRASH_SCRIPTS = {
  textdecoder: "new TextDecoder().decode(new ArrayBuffer(6 * 1024 * 1024)); ({ statusCode: 200, body: 'survived' })",
  coredecode: "Sandbox.core.decode(new Uint8Array(6 * 1024 * 1024)); ({ statusCode: 200, body: 'survived' })",
  atob: "atob('QUFB'.repeat(8 * 1024 * 1024 / 4)); ({ statusCode: 200, body: 'survived' })",
};

// ---- (d) flood, (e) storage, issue 17 ----

/** ~1 ms of CPU per hit on this machine. */
const FLOOD_SCRIPT = "let s = 0; for (let i = 0; i < 10000; i++) s += i; ({ statusCode: 200, body: String(s) })";
/** Eight 1 MiB values (the KV value limit) under new keys per hit. */
const KV_WRITER =
  "const v = 'x'.repeat(1048576 - 8); for (let i = 0; i < 8; i++) await Secbox.kv.set(`${Date.now()}-${Math.random()}-${i}`, v); return { statusCode: 200, body: 'stored' }";
const LOOP = "while (true) {}";

export function floodAttack(id: string, tier: "basic" | "ultimate", connections: number, newConnections = false): Attack {
  const how = newConnections ? `${connections} clients, a new connection per hit` : `${connections} connections`;
  return {
    id,
    group: "d",
    label: `(d) flood: ${how} on 99 responders, attacker on ${tier}${tier === "basic" ? " (200 hits/s per handle)" : " (no hit rate: per-source caps only)"}`,
    evilTier: tier,
    probes: ["static", "plain", "status", "fresh"],
    async setup(ctx) {
      for (let i = 0; i < 99; i++) await responder(ctx, ctx.evil, `flood-${i}`, `/f${i}`, FLOOD_SCRIPT);
    },
    load: (ctx) => [
      {
        what: `${how}, hits on 99 scripted responders`,
        concurrency: connections,
        newConnections,
        requests: Array.from({ length: 99 }, (_, i) => hitOf(ctx.evil, `/f${i}`)),
      },
    ],
  };
}

export function attacks(floodConnections: number): Attack[] {
  return [
    {
      id: "search-scripts",
      group: "a",
      label: "(a) search: 100 scripts of 51,200 bytes, `a`×199+`b` in a loop",
      probes: ["static", "plain", "status", "fresh"],
      setup: bigScripts,
      load: (ctx) => [
        {
          what: "POST /api/search, 2 at once",
          concurrency: 2,
          requests: [post(ctx.evil, "/api/search", { query: SEARCH_QUERY, types: ["script"] })],
        },
      ],
    },
    {
      id: "search-trackers",
      group: "a",
      label: "(a) search: the same plus 100 API trackers with 10 URLs of 2,048 chars",
      probes: ["static", "plain", "status", "fresh"],
      async setup(ctx) {
        await bigScripts(ctx);
        await longUrlTrackers(ctx);
      },
      load: (ctx) => [
        {
          what: "POST /api/search (scripts, API trackers), 2 at once",
          concurrency: 2,
          requests: [post(ctx.evil, "/api/search", { query: SEARCH_QUERY, types: ["script", "apiTracker"] })],
        },
      ],
    },
    {
      id: "import-tags",
      group: "b",
      label: "(b) import: 9.5 MiB file of 160,000 tags, preview and import in a loop",
      probes: ["static", "plain", "status", "fresh"],
      async setup(ctx) {
        const file = join(ctx.tmp, "tags-import.json");
        writeFileSync(file, tagsImportBody());
        ctx.note(`tags import body: ${(Bun.file(file).size / 1048576).toFixed(2)} MiB`);
      },
      load: (ctx) => {
        const file = join(ctx.tmp, "tags-import.json");
        const headers = json(ctx.evil.cookie);
        return [
          {
            what: "_import_preview",
            concurrency: 1,
            requests: [{ method: "POST", path: "/api/user/data/_import_preview", headers, bodyFile: file }],
          },
          { what: "_import", concurrency: 1, requests: [{ method: "POST", path: "/api/user/data/_import", headers, bodyFile: file }] },
        ];
      },
    },
    {
      id: "import-argon2",
      group: "b",
      label: "(b) import: argon2id m = 256 MiB, t = 10, p = 16 in the file, 6 at once, while the victim signs in",
      probes: ["signin", "static", "plain", "status", "fresh"],
      async setup() {},
      load: (ctx) => [
        {
          what: "_import with secrets, 6 at once",
          concurrency: 6,
          requests: [post(ctx.evil, "/api/user/data/_import", JSON.parse(argon2ImportBody()))],
        },
      ],
    },
    {
      id: "import-pbkdf2",
      group: "b",
      label: "(b) private key encrypted with 8,000,000 PBKDF2 iterations, then `_export` in a loop",
      probes: ["static", "plain", "status", "fresh"],
      async setup(ctx) {
        const r = await ctx.api(ctx.evil, "POST", "/api/user/data/_import", await slowKeyImport());
        if (r.status !== 200)
          ctx.note(`import of the 8,000,000-iteration key refused: ${r.status} ${r.json?.code ?? ""} (the load then repeats the import)`);
      },
      async load(ctx) {
        const keys = (await ctx.api(ctx.evil, "GET", "/api/certificates/private_keys")).json?.items ?? [];
        const key = keys.find((k: { name: string }) => k.name === "slow-key");
        if (key === undefined)
          return [
            {
              what: "_import of the key (refused at setup), 2 at once",
              concurrency: 2,
              requests: [post(ctx.evil, "/api/user/data/_import", await slowKeyImport())],
            },
          ];
        return [
          {
            what: "_export of the key (PEM), 2 at once",
            concurrency: 2,
            requests: [post(ctx.evil, `/api/certificates/private_keys/${key.id}/_export`, { format: "pem", passphrase: KEY_PASSPHRASE })],
          },
        ];
      },
    },
    {
      id: "crash",
      group: "c",
      label: "(c) crash scripts: TextDecoder of 6 MiB, Sandbox.core.decode of 6 MiB, atob of 8 MiB, 10 hits at once each",
      probes: ["plain", "kv", "timer", "static", "status", "fresh"],
      async setup(ctx) {
        for (const [name, script] of Object.entries(CRASH_SCRIPTS)) await responder(ctx, ctx.evil, name, `/${name}`, script);
      },
      load: (ctx) =>
        Object.keys(CRASH_SCRIPTS).map((name) => ({ what: `/${name}, 10 at once`, concurrency: 10, requests: [hitOf(ctx.evil, `/${name}`)] })),
    },
    floodAttack("flood-basic", "basic", floodConnections),
    floodAttack("flood-ultimate", "ultimate", floodConnections),
    floodAttack("flood-churn", "basic", floodConnections, true),
    {
      id: "storage",
      group: "e",
      label: "(e) storage: KV writes of 1 MiB values as fast as it can (6 responders, 10 hits at once each)",
      probes: ["static", "plain", "status", "fresh"],
      async setup(ctx) {
        for (let i = 0; i < 6; i++) await responder(ctx, ctx.evil, `kv-${i}`, `/kv${i}`, KV_WRITER);
      },
      // 60 connections: within the per-source cap (64), so that the cap does not stand in for a storage limit
      load: (ctx) => Array.from({ length: 6 }, (_, i) => ({ what: `/kv${i}, 10 at once`, concurrency: 10, requests: [hitOf(ctx.evil, `/kv${i}`)] })),
    },
    // issue 17's attacks, kept as regression checks
    {
      id: "loops",
      group: "f",
      label: "(f) issue 17: 10 hits at once (the in-flight limit) on a `while (true) {}` responder",
      probes: ["plain", "kv", "timer", "static", "status", "fresh"],
      setup: (ctx) => responder(ctx, ctx.evil, "loop", "/loop", LOOP),
      load: (ctx) => [{ what: "/loop, 10 at once", concurrency: 10, requests: [hitOf(ctx.evil, "/loop")] }],
    },
  ];
}
