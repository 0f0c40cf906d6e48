// "No 500 for any input" (supplement §2: bad input is never a 500), driven by the OpenAPI document (issue 19).
// Every route the app registers — read from the Elysia app itself, so routes added later are covered without
// touching this file — gets malformed and hostile requests with every kind of credential (none, session of a
// user and of an operator, API key, service JWT, share header, garbage ones). Bodies come from the operation's
// schema in the document: a valid sample, then every member at and past its limits and with values of the wrong
// kind. Every answer must be < 500 and conform to the document (a documented status, an error body `{message,
// code}` with a code the operation lists, a success body matching its schema: src/tests/conformance.ts); a
// schema-driven request that is refused must leave the stored data exactly as it was. Deterministic: all garbage
// comes from a PRNG seeded by the route.
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { listTables } from "../platform/db/copy";
import { createApp } from "../app";
import { signJwt } from "../platform/auth/jwt";
import { createConformance } from "./conformance";
import { startTestServer } from "./harness";
import { SchemaValues } from "./schema-values";

const MAX_BODY = 64 * 1024;
const MAX_IMPORT = 96 * 1024;
const JWT_SECRET = "fuzz-secret-".padEnd(40, "z");
const OPERATOR_EMAIL = "op@fuzz.example";
const SERVICE_SUB = "fuzz-bot";
const CONCURRENCY = 8;
/** Schema-driven member variants per route (each runs alone, between two fingerprints of the stored data). */
const SCHEMA_CASES_PER_ROUTE = 24;

const srv = await startTestServer({
  env: {
    SECBOX_SECURITY_OPERATORS: `${OPERATOR_EMAIL},${SERVICE_SUB}`,
    SECBOX_SECURITY_JWT_SECRET: JWT_SECRET,
    SECBOX_SERVER_MAX_BODY_BYTES: String(MAX_BODY),
    SECBOX_SERVER_MAX_IMPORT_BYTES: String(MAX_IMPORT),
  },
});
afterAll(() => srv.stop());

const user = await srv.createUser("user@fuzz.example");
const operator = await srv.createUser(OPERATOR_EMAIL);
const serviceJwt = await signJwt(JWT_SECRET, SERVICE_SUB, 3600, Math.floor(Date.now() / 1000));
const cookieName = srv.config.security.session_cookie;
const apiKey: string = (await user.client.post("/api/user/api_keys", { name: "fuzz" })).json.token;
// A live share of the user's template: the share header is the credential of the shared operations.
const now = Math.floor(Date.now() / 1000);
const template = (
  await user.client.post("/api/certificates/templates", {
    templateName: "fuzz-shared",
    attributes: {
      commonName: "fuzz.example",
      keyAlgorithm: { keyType: "ed25519" },
      signatureAlgorithm: "ed25519",
      notValidBefore: now,
      notValidAfter: now + 86400,
    },
  })
).json;
const shareId: string = (await user.client.post(`/api/certificates/templates/${template.id}/_share`)).json.id;

// The document: what every answer must conform to, and where request bodies come from.
const doc = (await srv.anon.get("/api-docs/openapi.json")).json;
const conformance = createConformance(doc);
// Every URL a generated or example body carries is a closed port on loopback: the server refuses it as a private
// target (400) before any DNS lookup, so no fuzzed tracker run, _debug, _test or _fetch sends anything off this machine.
const LOOPBACK_URL = "http://127.0.0.1:9/";
const values = new SchemaValues(doc, { uri: LOOPBACK_URL });
/** `value` with every http(s) URL string in it replaced by LOOPBACK_URL. */
const loopbackUrls = (value: unknown): unknown =>
  typeof value === "string"
    ? /^https?:\/\//i.test(value)
      ? LOOPBACK_URL
      : value
    : Array.isArray(value)
      ? value.map(loopbackUrls)
      : value && typeof value === "object"
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, loopbackUrls(v)]))
        : value;
const operationOf = (route: Route) => doc.paths[route.path.replace(/:(\w+)/g, "{$1}")]?.[route.method.toLowerCase()];
const bodySchemaOf = (route: Route) => operationOf(route)?.requestBody?.content?.["application/json"]?.schema;

/** What a refused request must not change: every table's rows (sessions, API-key use times, and on PostgreSQL the
 *  live instance registry and the shared rate-limit events, which SQLite keeps in memory, aside). */
const VOLATILE_TABLES = new Set(["sessions", "schema_migrations", "instances", "rate_events"]);
async function fingerprint(): Promise<string> {
  const hash = createHash("sha256");
  for (const name of await listTables(srv.rt.db)) {
    if (VOLATILE_TABLES.has(name)) continue;
    const rows = await srv.rt.db.all<Record<string, unknown>>(`SELECT * FROM "${name}"`);
    const lines = rows.map((row) => {
      if (name === "api_keys") delete row.last_used_at;
      return (
        name + JSON.stringify(row, (_, v) => (typeof v === "bigint" ? String(v) : v instanceof Uint8Array ? Buffer.from(v).toString("base64") : v))
      );
    });
    for (const line of lines.sort()) hash.update(line);
  }
  return hash.digest("hex");
}

interface Route {
  method: string;
  path: string;
  hooks?: { body?: any; query?: any };
}

// The app the server runs, built again from the same services: its route table is the list to cover.
const routes: Route[] = (createApp(srv.services).routes as Route[])
  .filter((r) => r.method !== "OPTIONS")
  .sort((a, b) => (a.path + a.method).localeCompare(b.path + b.method));

// ---------------------------------------------------------------------------------------------------------------
// Deterministic randomness

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const seedOf = (s: string) => [...s].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0, 2166136261);

type Rng = () => number;
type ReqBody = NonNullable<RequestInit["body"]>;
const randomBytes = (rng: Rng, n: number) => Uint8Array.from({ length: n }, () => Math.floor(rng() * 256));
const randomHex = (rng: Rng, n: number) => Array.from({ length: n }, () => "0123456789abcdef"[Math.floor(rng() * 16)]).join("");
const randomUuid = (rng: Rng) => {
  const h = randomHex(rng, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-7${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
};

// ---------------------------------------------------------------------------------------------------------------
// Credentials

/** `n` numbers the requests of a route, so the garbage kinds rotate through their variants. */
type Credential = { name: string; headers: (n: number) => Record<string, string> };

const GARBAGE_AUTH = [
  "Bearer garbage",
  `Bearer sbx_ak_${"0".repeat(64)}`,
  `Bearer sbx_ak_${"G".repeat(64)}`,
  "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJvcEBmdXp6LmV4YW1wbGUifQ.",
  "Bearer a.b.c",
  "Basic Zm9vOmJhcg==",
  "Bearer",
  "Bearer " + "x".repeat(10_000),
];
const GARBAGE_COOKIES = ["%%%", "\u00ff\u00fe", "x".repeat(5000), "a=b=c", '"quoted"', ""];

/** Session credentials are re-issued per route: a fuzzed sign-out or password change must not blind the routes after it. */
async function credentialsForRoute(): Promise<Credential[]> {
  const userSession = await srv.services.users.createSession(user.id);
  const operatorSession = await srv.services.users.createSession(operator.id);
  return [
    { name: "none", headers: () => ({}) },
    { name: "user session", headers: () => ({ cookie: `${cookieName}=${userSession}` }) },
    { name: "operator session", headers: () => ({ cookie: `${cookieName}=${operatorSession}` }) },
    { name: "service JWT", headers: () => ({ authorization: `Bearer ${serviceJwt}` }) },
    { name: "API key", headers: () => ({ authorization: `Bearer ${apiKey}` }) },
    { name: "share header", headers: () => ({ "x-user-share-id": shareId }) },
    { name: "garbage bearer", headers: (n) => ({ authorization: GARBAGE_AUTH[n % GARBAGE_AUTH.length]! }) },
    { name: "garbage cookie", headers: (n) => ({ cookie: `${cookieName}=${GARBAGE_COOKIES[n % GARBAGE_COOKIES.length]}` }) },
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// Inputs

const INVALID_IDS = [
  "not-a-uuid",
  "0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f4",
  "0193b2c4-7e1a-7c3d-9a61-2f0c1d2e3f4g",
  "0193B2C4-7E1A-7C3D-9A61-2F0C1D2E3F40Z",
  "'; DROP TABLE users;--",
  "..%2F..%2Fetc%2Fpasswd",
  "%00",
  "%ZZ",
  "ünïcödé",
  "x".repeat(3000),
  "-1",
  "1e999",
  "null",
];

const weirdValues = (rng: Rng): unknown[] => [
  "x".repeat(40_000),
  "",
  "   ",
  null,
  0,
  -1,
  1.5,
  2 ** 53 + 1,
  1e308,
  -1e308,
  true,
  [],
  [null, 1, "a", {}],
  Array.from({ length: 500 }, () => randomUuid(rng)),
  {},
  { $gt: "", __proto__: { polluted: true } },
  "'; DROP TABLE users;--",
  "../../../../etc/passwd",
  "\u0000\u0001\u001f",
  "\ud800",
  "😀".repeat(2000),
  "<script>alert(1)</script>",
  "not-a-uuid",
  randomUuid(rng),
  new TextDecoder().decode(randomBytes(rng, 64)),
];

const DEEP_MARKER = "\u0001deep-value-marker";
const DEEP_VALUE = "[".repeat(5000) + "]".repeat(5000);

interface RawCase {
  label: string;
  body?: ReqBody;
  contentType?: string;
}

function rawBodies(rng: Rng): RawCase[] {
  const deepArray = "[".repeat(3000) + "]".repeat(3000);
  const deepObject = '{"a":'.repeat(1500) + "1" + "}".repeat(1500);
  return [
    { label: "malformed JSON", body: '{"a":', contentType: "application/json" },
    { label: "malformed JSON 2", body: "{'single': 'quotes'}", contentType: "application/json" },
    { label: "JSON array", body: "[1,2,3]", contentType: "application/json" },
    { label: "JSON string", body: '"just a string"', contentType: "application/json" },
    { label: "JSON number", body: "42", contentType: "application/json" },
    { label: "JSON huge number", body: "1e999", contentType: "application/json" },
    { label: "JSON negative zero", body: "-0", contentType: "application/json" },
    { label: "JSON null", body: "null", contentType: "application/json" },
    { label: "JSON true", body: "true", contentType: "application/json" },
    { label: "deep array", body: deepArray, contentType: "application/json" },
    { label: "deep object", body: deepObject, contentType: "application/json" },
    {
      label: "garbage object",
      body: '{"__proto__":{"admin":true},"constructor":{"prototype":{"x":1}},"":[],"\\u0000":"\\ud800","a":{"b":[{"c":null}]}}',
      contentType: "application/json",
    },
    { label: "random bytes as JSON", body: randomBytes(rng, 512), contentType: "application/json" },
    { label: "random bytes", body: randomBytes(rng, 512), contentType: "application/octet-stream" },
    { label: "text/plain", body: "{}", contentType: "text/plain" },
    { label: "form", body: "a=1&b=%ZZ&c", contentType: "application/x-www-form-urlencoded" },
    { label: "multipart, bad boundary", body: '{"a":1}', contentType: "multipart/form-data; boundary=nope" },
    { label: "xml", body: "<a>1</a>", contentType: "application/xml" },
    { label: "garbage content type", body: "{}", contentType: ";;;/=;" },
    { label: "json with charset junk", body: "{}", contentType: "application/json; charset=klingon" },
    { label: "empty body, JSON type", body: "", contentType: "application/json" },
    { label: "empty body, no type" },
    { label: "JSON without type", body: "{}" },
  ];
}

const GARBAGE_QUERIES = [
  "?page=-1&pageSize=abc",
  "?page=1e999&pageSize=-5",
  "?page=1.5&pageSize=99999999999999999999",
  "?page=1&page=2&pageSize[]=3",
  "?sort=__proto__&order=sideways",
  `?q=${"x".repeat(5000)}`,
  "?q=%25%5F%27%22%5C",
  "?tags=,,,zz,%00&globalTags=not-a-uuid",
  "?%ZZ=1&a=%E0%A4%A",
  "?email=&token=&context=bogus",
  "?email=%00@%00&token=" + "t".repeat(3000),
];

/** Member paths to fuzz: the operation's body members in the document (one level of nesting too), else common ones. */
function fieldsOf(schema: any): string[][] {
  const paths: string[][] = [];
  for (const [k, v] of Object.entries(values.members(schema))) {
    paths.push([k]);
    for (const sub of Object.keys(values.members(v))) paths.push([k, sub]);
  }
  if (paths.length === 0) for (const k of ["name", "value", "email", "key"]) paths.push([k]);
  return paths;
}

/** A body the document's schema accepts: the operation's example when it has one, else generated. */
function sampleOf(route: Route): Record<string, unknown> {
  const example = operationOf(route)?.requestBody?.content?.["application/json"]?.example;
  if (example) return loopbackUrls(example) as Record<string, unknown>;
  const v = bodySchemaOf(route) ? values.valid(bodySchemaOf(route)) : {};
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** The schema of a member path inside a body schema. */
function memberSchema(schema: any, path: string[]): any {
  let at = schema;
  for (const k of path) at = values.members(at)[k];
  return at;
}

function withField(base: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  const copy: Record<string, any> = structuredClone(base);
  let at = copy;
  for (const k of path.slice(0, -1)) {
    if (!at[k] || typeof at[k] !== "object" || Array.isArray(at[k])) at[k] = {};
    at = at[k];
  }
  at[path[path.length - 1]!] = value;
  return copy;
}

/** Path with every `:param` replaced; `*_id`/`id` params get `id`, the others a harmless word. */
function fillPath(path: string, id: string, other = "fuzz"): string {
  return path
    .replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(/(^|_)id$/i.test(name) ? id : other).replace(/%25/g, "%"))
    .replace(/\*/g, "fuzz/x");
}
const idParams = (path: string) => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!).filter((n) => /(^|_)id$/i.test(n));

// ---------------------------------------------------------------------------------------------------------------
// Running and checking

interface Case {
  label: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: ReqBody | ReadableStream;
  /** Extra check on the answer; returns a problem or undefined. */
  expect?: (status: number, json: any) => string | undefined;
  /** Schema-driven: run alone, and when refused the stored data must be unchanged. */
  unchanged?: boolean;
  /** The answer's status, once run. */
  status?: number;
}

const isApiPath = (p: string) => p === "/api" || p.startsWith("/api/");
const hasBody = (m: string) => m !== "GET" && m !== "HEAD";

async function run(c: Case): Promise<string | undefined> {
  let res: Response;
  try {
    res = await fetch(srv.url + c.path, { method: c.method, headers: c.headers, body: c.body as ReqBody, redirect: "manual" });
  } catch (err) {
    return `${c.label}: request failed: ${(err as Error).message}`;
  }
  const text = await res.text();
  c.status = res.status;
  const where = `${c.method} ${c.path.slice(0, 120)} [${c.label}] → ${res.status}`;
  if (res.status >= 500) return `${where}: ${text.slice(0, 200)}`;
  let json: any;
  if (res.status >= 400 && isApiPath(c.path.split("?")[0]!)) {
    try {
      json = JSON.parse(text);
    } catch {
      return `${where}: error body is not JSON: ${text.slice(0, 120)}`;
    }
    if (typeof json?.message !== "string" || json.message === "") return `${where}: error body without message: ${text.slice(0, 120)}`;
    if (typeof json?.code !== "string" || json.code === "") return `${where}: error body without code: ${text.slice(0, 120)}`;
    if (!(res.headers.get("content-type") ?? "").includes("application/json"))
      return `${where}: error content-type ${res.headers.get("content-type")}`;
  }
  if (isApiPath(c.path.split("?")[0]!)) {
    try {
      conformance.check(c.method, srv.url + c.path, res.status, res.headers.get("content-type") ?? "", text);
    } catch (err) {
      return `${where}: ${(err as Error).message.slice(0, 600)}`;
    }
  }
  const extra = c.expect?.(res.status, json ?? safeParse(text));
  return extra ? `${where}: ${extra}` : undefined;
}

function safeParse(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function runAll(cases: Case[]): Promise<string[]> {
  const problems: string[] = [];
  const parallel = cases.filter((c) => !c.unchanged);
  let next = 0;
  const worker = async () => {
    while (next < parallel.length) {
      const p = await run(parallel[next++]!);
      if (p) problems.push(p);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  // Schema-driven cases one at a time: a refused request must leave every stored row as it was.
  for (const c of cases.filter((c) => c.unchanged)) {
    const before = await fingerprint();
    const p = await run(c);
    if (p) problems.push(p);
    else if (c.status! >= 400 && (await fingerprint()) !== before)
      problems.push(`${c.method} ${c.path} [${c.label}] → ${c.status}: refused, but stored data changed`);
  }
  return problems;
}

function oversized(limit: number, rng: Rng): { fixed: Uint8Array; stream: () => ReadableStream } {
  const fixed = new TextEncoder().encode(JSON.stringify({ name: "x".repeat(limit + 16) }));
  const chunk = new TextEncoder().encode(randomHex(rng, 16 * 1024));
  return {
    fixed,
    stream: () => {
      let sent = 0;
      return new ReadableStream({
        pull(ctrl) {
          if (sent > limit + chunk.length) return ctrl.close();
          sent += chunk.length;
          ctrl.enqueue(chunk);
        },
      });
    },
  };
}

/** Sends the schema-shaped sample (checked like every case); true when the credential gets past authentication. */
async function passes(method: string, path: string, cred: Credential, sample: unknown, problems: string[]): Promise<boolean> {
  const body = hasBody(method) ? JSON.stringify(sample) : undefined;
  const headers = { ...cred.headers(0), ...(body ? { "content-type": "application/json" } : {}) };
  let status = 0;
  const problem = await run({ label: `${cred.name}, sample body`, method, path, headers, body, expect: (s) => void (status = s) });
  if (problem) problems.push(problem);
  return status !== 401 && status !== 403;
}

/** `k` distinct items picked by the PRNG, in their original order. */
function pick<T>(rng: Rng, items: T[], k: number): T[] {
  const idx = items.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [idx[i], idx[j]] = [idx[j]!, idx[i]!];
  }
  return idx
    .slice(0, k)
    .sort((a, b) => a - b)
    .map((i) => items[i]!);
}

/**
 * The requests for one route. Each credential first sends a schema-shaped sample to learn whether it gets past
 * authentication. Credentials that do (garbage ones aside, which count as none there) get every garbage query,
 * malformed path id and raw body; the others, which stop at 401/403 before any body rule, get a PRNG-picked few
 * of each. Every credential gets both oversized bodies (413 comes before authentication). Field-by-field fuzzing
 * of the declared body runs in full for the first credential that gets past authentication and with a few
 * PRNG-picked values for the other ones.
 */
async function casesFor(route: Route, problems: string[]): Promise<Case[]> {
  const rng = mulberry32(seedOf(`${route.method} ${route.path}`));
  const method = route.method === "ALL" ? "POST" : route.method;
  const path = fillPath(route.path, randomUuid(rng));
  const cases: Case[] = [];
  const isApi = isApiPath(route.path);
  const bodySchema = bodySchemaOf(route);
  const sample = sampleOf(route);
  const limit = route.path.startsWith("/api/user/data") ? MAX_IMPORT : MAX_BODY;
  const big = oversized(limit, rng);
  const ids = idParams(route.path);
  const queries = [
    ...GARBAGE_QUERIES,
    ...((operationOf(route)?.parameters ?? []) as { name: string; in: string }[])
      .filter((p) => p.in === "query")
      .slice(0, 6)
      .flatMap(({ name: field }) =>
        ["", "-1", "1e999", "%ZZ", "x".repeat(2000), "[object Object]"].map((v) => `?${encodeURIComponent(field!)}=${v}`),
      ),
  ];
  const badIds = ids.length ? [...INVALID_IDS, randomUuid(rng)] : [];
  let fieldFuzzDone = false;

  for (const cred of await credentialsForRoute()) {
    const through = await passes(method, path, cred, sample, problems);
    const full = through && !cred.name.startsWith("garbage");
    let n = 1;
    const add = (label: string, extra: Partial<Case> = {}, contentType?: string) =>
      cases.push({
        label: `${cred.name}, ${label}`,
        method,
        path,
        headers: { ...cred.headers(n++), ...(contentType ? { "content-type": contentType } : {}) },
        ...extra,
      });

    // Queries: garbage list parameters and the route's own query fields with weird values.
    for (const q of full ? queries : pick(rng, queries, 3)) add(`query ${q.slice(0, 40)}`, { path: path + q });

    // Invalid ids in path parameters: never anything but 401/403/404 (400 where a body is checked first).
    // `_unshare` is the exception: 204 for any id, so share existence cannot be probed (supplement §12.3).
    const anyIdOk = route.path.endsWith("/_unshare");
    for (const bad of full ? badIds : pick(rng, badIds, 3)) {
      add(
        `path id ${bad.slice(0, 20)}`,
        {
          path: fillPath(route.path, bad),
          body: hasBody(method) ? JSON.stringify(sample) : undefined,
          expect: (status, json) => {
            if (anyIdOk) return [204, 401, 403].includes(status) ? undefined : "expected 204 (or 401/403 by credentials)";
            const allowed = hasBody(method) ? [400, 401, 403, 404] : [401, 403, 404];
            if (!allowed.includes(status)) return `expected one of ${allowed}`;
            if (cred.name === "operator session" && !hasBody(method) && (status !== 404 || json?.code !== "NOT_FOUND"))
              return "expected 404 NOT_FOUND for an operator";
            return undefined;
          },
        },
        hasBody(method) ? "application/json" : undefined,
      );
    }

    if (!hasBody(method)) continue;

    const raws = rawBodies(rng);
    for (const raw of full ? raws : pick(rng, raws, 4)) add(raw.label, { body: raw.body }, raw.contentType);

    // Over the body limit: 413 whether Content-Length says so or the body just keeps coming (chunked).
    const tooLarge = (status: number, json: any) =>
      isApi && (status !== 413 || json?.code !== "PAYLOAD_TOO_LARGE") ? "expected 413 PAYLOAD_TOO_LARGE" : undefined;
    add("body over the limit", { body: big.fixed, expect: tooLarge }, "application/json");
    add("chunked body over the limit", { body: big.stream(), expect: tooLarge }, "application/json");

    // Fields: each declared field set to weird values on top of a schema-shaped sample, and to a value nested
    // thousands of levels deep (Elysia's validation error recursion used to overflow the stack: 500).
    if (!full) continue;
    for (const field of fieldsOf(bodySchema)) {
      const deep = JSON.stringify(withField(sample, field, DEEP_MARKER)).replace(JSON.stringify(DEEP_MARKER), DEEP_VALUE);
      add(`${field.join(".")}=<5000 levels deep>`, { body: deep }, "application/json");
      const values = weirdValues(rng);
      for (const v of fieldFuzzDone ? pick(rng, values, 3) : values)
        add(`${field.join(".")}=${JSON.stringify(v)?.slice(0, 24)}`, { body: JSON.stringify(withField(sample, field, v)) }, "application/json");
    }
    // Schema-driven: each member of the document's body schema at and past its limits, with wrong types, null,
    // values outside its enum or pattern (SchemaValues.variants), on top of the valid sample; a PRNG-picked set
    // per route, run one at a time with the stored-data check.
    if (!fieldFuzzDone && bodySchema) {
      const variants = fieldsOf(bodySchema).flatMap((field) =>
        values.variants(memberSchema(bodySchema, field), rng).map(([label, value]) => ({ field, label, value })),
      );
      for (const v of pick(rng, variants, SCHEMA_CASES_PER_ROUTE))
        add(`${v.field.join(".")}: ${v.label}`, { body: JSON.stringify(withField(sample, v.field, v.value)), unchanged: true }, "application/json");
    }
    fieldFuzzDone = true;
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------------------------

describe("fuzz: no input gives a 500", () => {
  test("the route table is read from the app", () => {
    const keys = routes.map((r) => `${r.method} ${r.path}`);
    expect(keys).toContain("GET /api/status");
    expect(keys).toContain("POST /api/status");
    expect(keys).toContain("GET /api-docs/openapi.json");
  });

  test("unknown routes and methods answer a JSON 404, even with a body over the limit (404 comes before 413)", async () => {
    const tooBig = "x".repeat(MAX_IMPORT + 1);
    const problems = await runAll(
      ["/api/nope", "/api/user/nope/1", "/api/status/extra", "/api/%ZZ", `/api/${"a/".repeat(200)}`].flatMap((p) =>
        ["GET", "POST", "PUT", "DELETE", "PATCH"].flatMap((method) =>
          (hasBody(method) ? [undefined, tooBig] : [undefined]).map((body) => ({
            label: body ? "unknown, body over the limit" : "unknown",
            method,
            path: p,
            headers: body ? { "content-type": "application/json" } : ({} as Record<string, string>),
            body,
            expect: (status: number, json: any) => (status !== 404 || json?.code !== "NOT_FOUND" ? "expected 404 NOT_FOUND" : undefined),
          })),
        ),
      ),
    );
    expect(problems).toEqual([]);
  });

  for (const route of routes) {
    test(`${route.method} ${route.path}`, async () => {
      const problems: string[] = [];
      const cases = await casesFor(route, problems);
      problems.push(...(await runAll(cases)));
      expect(problems).toEqual([]);
      // The server is still healthy afterwards.
      expect((await fetch(`${srv.url}/api/status`)).status).toBe(200);
      // (A route's budget follows its work: a valid page-tracker _debug or _test request is a real Chromium run, two
      // at a time, and such a route gets a few hundred cases; 30 s was too little on a loaded machine.)
    }, 120_000);
  }
});
