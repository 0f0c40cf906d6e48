// The evaluator (`POST /api/web_security/csp/_evaluate`, supplement §13.2) through HTTP: a table of known
// policies with the findings each check must produce (code, severity, directive, value) and must not produce,
// the strict policy of §13.2, stored vs serialized input, errors, and the OpenAPI document.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { newId } from "../../platform/core/ids";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { CHECKS } from "./contract";

const EVAL = "/api/web_security/csp/_evaluate";
const SHA256 = "'sha256-RFWPLDbv2BY+rCkDzsE+0fr8ylGr2R2faWMhq4lfEQc='";

let srv: TestServer;
let a: TestUser;
let b: TestUser;

beforeAll(async () => {
  srv = await startTestServer();
  a = await srv.createUser();
  b = await srv.createUser();
});
afterAll(() => srv.stop());

interface Expect {
  code: string;
  severity: string;
  directive: string;
  value?: string;
}

async function findings(serialized: string): Promise<any[]> {
  const res = await a.client.post(EVAL, { serialized });
  expect({ serialized, status: res.status }).toEqual({ serialized, status: 200 });
  return res.json.findings;
}

const key = (f: Expect) => `${f.code} ${f.severity} ${f.directive} ${f.value ?? "-"}`;
const F = (code: string, severity: string, directive: string, value?: string): Expect =>
  value === undefined ? { code, severity, directive } : { code, severity, directive, value };

/** [policy, findings that must be present, codes that must be absent] */
const TABLE: [string, Expect[], string[]][] = [
  // missing-script-src
  ["object-src 'none'; base-uri 'none'", [F("missing-script-src", "high", "script-src")], []],
  ["default-src 'self'", [], ["missing-script-src", "missing-object-src"]],
  // missing-object-src: absent, or effective value allowing plugins (*, a scheme, a host)
  ["script-src 'self'", [F("missing-object-src", "high", "object-src")], []],
  ["default-src https:; script-src 'self'", [F("missing-object-src", "high", "default-src", "https:")], []],
  // ... once per policy, naming the first offending value
  [
    "script-src 'self'; object-src 'self' https://plugins.example.com data:",
    [F("missing-object-src", "high", "object-src", "https://plugins.example.com")],
    [],
  ],
  ["script-src 'self'; object-src 'self'", [], ["missing-object-src"]],
  ["script-src 'self'; object-src 'none'", [], ["missing-object-src"]],
  // missing-base-uri: high with nonces or hashes, medium otherwise
  ["script-src 'nonce-abcdefgh12'; object-src 'none'", [F("missing-base-uri", "high", "base-uri")], []],
  [`script-src ${SHA256}; object-src 'none'`, [F("missing-base-uri", "high", "base-uri")], []],
  ["script-src 'self'; object-src 'none'", [F("missing-base-uri", "medium", "base-uri")], []],
  ["script-src 'nonce-abcdefgh12'; object-src 'none'; base-uri 'self'", [], ["missing-base-uri", "permissive-base-uri"]],
  // permissive-base-uri (addition)
  ["script-src 'self'; base-uri https:", [F("permissive-base-uri", "high", "base-uri", "https:")], ["missing-base-uri"]],
  ["script-src 'self'; base-uri *", [F("permissive-base-uri", "high", "base-uri", "*")], []],
  // unsafe-inline: neutralised by a nonce, a hash or 'strict-dynamic'
  ["script-src 'self' 'unsafe-inline'", [F("unsafe-inline", "high", "script-src", "'unsafe-inline'")], []],
  ["default-src 'self' 'Unsafe-Inline'", [F("unsafe-inline", "high", "default-src", "'unsafe-inline'")], []],
  ["script-src 'unsafe-inline' 'nonce-abcdefgh12'", [], ["unsafe-inline"]],
  [`script-src 'unsafe-inline' ${SHA256}`, [], ["unsafe-inline"]],
  ["script-src 'unsafe-inline' 'strict-dynamic' 'nonce-abcdefgh12'", [], ["unsafe-inline"]],
  ["script-src 'self'; script-src-attr 'unsafe-inline'", [F("unsafe-inline", "high", "script-src-attr", "'unsafe-inline'")], []],
  ["script-src-elem 'self' 'unsafe-inline'; script-src 'self'", [F("unsafe-inline", "high", "script-src-elem", "'unsafe-inline'")], []],
  ["script-src 'self'; style-src 'unsafe-inline'", [], ["unsafe-inline"]],
  // unsafe-eval
  ["script-src 'self' 'unsafe-eval'", [F("unsafe-eval", "medium", "script-src", "'unsafe-eval'")], []],
  ["script-src 'nonce-abcdefgh12' 'strict-dynamic' 'unsafe-eval'", [F("unsafe-eval", "medium", "script-src", "'unsafe-eval'")], []],
  // wildcard-source
  ["script-src *", [F("wildcard-source", "high", "script-src", "*")], []],
  ["script-src https://*", [F("wildcard-source", "high", "script-src", "https://*")], []],
  ["script-src 'self'; object-src *", [F("wildcard-source", "high", "object-src", "*"), F("missing-object-src", "high", "object-src", "*")], []],
  [
    "script-src 'self'; object-src https://*",
    [F("wildcard-source", "high", "object-src", "https://*"), F("missing-object-src", "high", "object-src", "https://*")],
    [],
  ],
  ["default-src *", [F("wildcard-source", "high", "default-src", "*")], []],
  // The §13.2 table gives the "without 'strict-dynamic'" exception to broad-scheme and plain-url-allowlist only.
  ["script-src 'nonce-abcdefgh12' 'strict-dynamic' *", [F("wildcard-source", "high", "script-src", "*")], ["plain-url-allowlist"]],
  ["script-src http://*", [F("wildcard-source", "high", "script-src", "http://*"), F("insecure-scheme", "high", "script-src", "http://*")], []],
  // insecure-scheme: high in script sources, medium in other fetch directives
  ["script-src http:", [F("insecure-scheme", "high", "script-src", "http:")], []],
  [
    "script-src http://cdn.example.com",
    [
      F("insecure-scheme", "high", "script-src", "http://cdn.example.com"),
      F("plain-url-allowlist", "medium", "script-src", "http://cdn.example.com"),
    ],
    [],
  ],
  // ... info next to 'strict-dynamic' with a nonce or hash (CSP3 browsers ignore scheme and host sources there)
  [
    "script-src 'nonce-abcdefgh12' 'strict-dynamic' http://cdn.example.com",
    [F("insecure-scheme", "info", "script-src", "http://cdn.example.com")],
    ["plain-url-allowlist"],
  ],
  [`script-src ${SHA256} 'strict-dynamic' http:`, [F("insecure-scheme", "info", "script-src", "http:")], []],
  ["script-src 'strict-dynamic' http:", [F("insecure-scheme", "high", "script-src", "http:")], []],
  [
    "script-src 'self'; img-src http://img.example.com; connect-src HTTP:",
    [F("insecure-scheme", "medium", "img-src", "http://img.example.com"), F("insecure-scheme", "medium", "connect-src", "http:")],
    [],
  ],
  ["script-src 'self'; default-src http:", [F("insecure-scheme", "medium", "default-src", "http:")], []],
  // data-scheme
  ["script-src 'self' data:", [F("data-scheme", "high", "script-src", "data:")], []],
  ["script-src 'nonce-abcdefgh12' 'strict-dynamic' data:", [F("data-scheme", "high", "script-src", "data:")], []],
  ["script-src 'self'; img-src data:", [], ["data-scheme"]],
  // broad-scheme
  ["script-src https:", [F("broad-scheme", "high", "script-src", "https:")], []],
  ["script-src 'nonce-abcdefgh12' 'strict-dynamic' https:", [], ["broad-scheme"]],
  ["script-src 'nonce-abcdefgh12' 'strict-dynamic' https: http:", [F("insecure-scheme", "info", "script-src", "http:")], ["broad-scheme"]],
  // plain-url-allowlist, script-bypass-host (addition)
  [
    "script-src 'self' https://cdn.example.com",
    [F("plain-url-allowlist", "medium", "script-src", "https://cdn.example.com")],
    ["script-bypass-host"],
  ],
  ["script-src 'nonce-abcdefgh12' 'strict-dynamic' https://cdn.example.com", [], ["plain-url-allowlist"]],
  // script-src-attr governs inline event handlers: hosts there load nothing, so no allow-list finding
  ["script-src 'self'; script-src-attr https://www.google.com", [], ["plain-url-allowlist", "script-bypass-host"]],
  ["script-src 'self'; script-src-elem https://www.google.com", [F("script-bypass-host", "high", "script-src-elem", "https://www.google.com")], []],
  // A known bypass host is still a host allow-list: both codes.
  [
    "script-src https://www.google.com",
    [
      F("script-bypass-host", "high", "script-src", "https://www.google.com"),
      F("plain-url-allowlist", "medium", "script-src", "https://www.google.com"),
    ],
    [],
  ],
  ["script-src 'nonce-abcdefgh12' 'strict-dynamic' https://www.google.com", [], ["script-bypass-host", "plain-url-allowlist"]],
  [
    "script-src https://www.google.com/recaptcha/",
    [F("plain-url-allowlist", "medium", "script-src", "https://www.google.com/recaptcha/")],
    ["script-bypass-host"],
  ],
  [
    "script-src *.googleapis.com",
    [F("script-bypass-host", "high", "script-src", "*.googleapis.com"), F("plain-url-allowlist", "medium", "script-src", "*.googleapis.com")],
    [],
  ],
  [
    "script-src https://ajax.googleapis.com/ajax/libs/",
    [
      F("script-bypass-host", "high", "script-src", "https://ajax.googleapis.com/ajax/libs/"),
      F("plain-url-allowlist", "medium", "script-src", "https://ajax.googleapis.com/ajax/libs/"),
    ],
    [],
  ],
  [
    "script-src https://www.googletagmanager.com",
    [F("plain-url-allowlist", "medium", "script-src", "https://www.googletagmanager.com")],
    ["script-bypass-host"],
  ],
  [
    "script-src https://www.googletagmanager.com 'unsafe-eval'",
    [
      F("script-bypass-host", "high", "script-src", "https://www.googletagmanager.com"),
      F("plain-url-allowlist", "medium", "script-src", "https://www.googletagmanager.com"),
    ],
    [],
  ],
  // strict-dynamic-without-nonce
  ["script-src 'strict-dynamic'", [F("strict-dynamic-without-nonce", "medium", "script-src", "'strict-dynamic'")], []],
  [`script-src 'strict-dynamic' ${SHA256}`, [], ["strict-dynamic-without-nonce"]],
  // nonce-too-short
  ["script-src 'nonce-abc'", [F("nonce-too-short", "medium", "script-src", "'nonce-abc'")], []],
  ["script-src 'nonce-abcdefg=='", [F("nonce-too-short", "medium", "script-src", "'nonce-abcdefg=='")], []],
  ["style-src 'nonce-xy'", [F("nonce-too-short", "medium", "style-src", "'nonce-xy'")], []],
  ["script-src 'nonce-abcdefgh'", [], ["nonce-too-short"]],
  // invalid-hash
  ["script-src 'sha256-abc='", [F("invalid-hash", "medium", "script-src", "'sha256-abc='")], ["unknown-keyword"]],
  [
    "script-src 'sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk='",
    [F("invalid-hash", "medium", "script-src", "'sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk='")],
    ["unknown-keyword"],
  ],
  ["script-src 'md5-1B2M2Y8AsgTpgAmY7PhCfg=='", [F("invalid-hash", "medium", "script-src", "'md5-1B2M2Y8AsgTpgAmY7PhCfg=='")], []],
  [
    "script-src 'sha256-RFWPLDbv2BY+rCkDzsE+0fr8ylGr2R2faWMhq4lfEQc=='",
    [F("invalid-hash", "medium", "script-src", "'sha256-RFWPLDbv2BY+rCkDzsE+0fr8ylGr2R2faWMhq4lfEQc=='")],
    [],
  ],
  [
    `script-src ${SHA256} 'sha256-RFWPLDbv2BY-rCkDzsE-0fr8ylGr2R2faWMhq4lfEQc' 'sha384-${"A".repeat(64)}' 'sha512-${"B".repeat(86)}=='`,
    [],
    ["invalid-hash"],
  ],
  // unsafe-hashes, wasm-unsafe-eval, inline-speculation-rules
  [`script-src 'unsafe-hashes' ${SHA256}`, [F("unsafe-hashes", "low", "script-src", "'unsafe-hashes'")], []],
  ["script-src 'self' 'wasm-unsafe-eval'", [F("wasm-unsafe-eval", "info", "script-src", "'wasm-unsafe-eval'")], ["unsafe-eval"]],
  [
    "script-src 'self' 'inline-speculation-rules'",
    [F("inline-speculation-rules", "info", "script-src", "'inline-speculation-rules'")],
    ["unknown-keyword"],
  ],
  // missing-frame-ancestors
  ["script-src 'self'", [F("missing-frame-ancestors", "low", "frame-ancestors")], []],
  ["script-src 'self'; frame-ancestors 'none'", [], ["missing-frame-ancestors"]],
  // deprecated-directive, no-reporting
  ["script-src 'self'; report-uri /csp", [F("deprecated-directive", "info", "report-uri")], ["no-reporting"]],
  ["script-src 'self'; report-uri /csp; report-to g", [], ["deprecated-directive", "no-reporting"]],
  ["script-src 'self'; report-to g", [], ["deprecated-directive", "no-reporting"]],
  [
    "script-src 'self'; block-all-mixed-content; plugin-types application/pdf; prefetch-src 'self'",
    [
      F("deprecated-directive", "info", "block-all-mixed-content"),
      F("deprecated-directive", "info", "plugin-types"),
      F("deprecated-directive", "info", "prefetch-src"),
    ],
    ["unknown-directive"],
  ],
  ["script-src 'self'", [F("no-reporting", "info", "report-to")], []],
  // unknown-keyword, unquoted-keyword (addition)
  ["script-src 'self' 'unsafe_inline'", [F("unknown-keyword", "medium", "script-src", "'unsafe_inline'")], ["unsafe-inline"]],
  ["script-src 'nonce-abc$%^&*()'", [F("unknown-keyword", "medium", "script-src", "'nonce-abc$%^&*()'")], []],
  ["trusted-types default 'allow-duplicates' 'bogus'", [F("unknown-keyword", "medium", "trusted-types", "'bogus'")], []],
  ["require-trusted-types-for 'style'", [F("unknown-keyword", "medium", "require-trusted-types-for", "'style'")], []],
  ["require-trusted-types-for 'script'; webrtc 'allow'", [], ["unknown-keyword"]],
  // ... reported as the mistake they are, not as a host allow-list
  [
    "script-src self nonce-abcdefgh12",
    [F("unquoted-keyword", "medium", "script-src", "self"), F("unquoted-keyword", "medium", "script-src", "nonce-abcdefgh12")],
    ["plain-url-allowlist"],
  ],
  // missing-semicolon, unknown-directive, ip-source (additions)
  [
    "script-src 'self' object-src 'none'",
    [F("missing-semicolon", "medium", "script-src", "object-src"), F("missing-object-src", "high", "object-src")],
    [],
  ],
  ["script-src 'self'; foo-src 'self'; img-src: *", [F("unknown-directive", "low", "foo-src"), F("unknown-directive", "low", "img-src:")], []],
  // Object.prototype keys are directive names like any other: unknown, not deprecated.
  [
    "script-src 'self'; constructor x; __proto__ y; tostring z; hasOwnProperty w",
    [
      F("unknown-directive", "low", "constructor"),
      F("unknown-directive", "low", "__proto__"),
      F("unknown-directive", "low", "tostring"),
      F("unknown-directive", "low", "hasownproperty"),
    ],
    ["deprecated-directive"],
  ],
  [
    "script-src 'self'; connect-src 127.0.0.1:8080 https://[::1]",
    [F("ip-source", "info", "connect-src", "127.0.0.1:8080"), F("ip-source", "info", "connect-src", "https://[::1]")],
    [],
  ],
  // unreadable-directive (addition): characters outside printable ASCII make browsers ignore the whole directive
  [
    "script-src 'self' exämple.com; object-src 'none'",
    [F("unreadable-directive", "medium", "script-src"), F("missing-script-src", "high", "script-src")],
    [],
  ],
  // §27: nonce and hash keywords are case-insensitive (Chromium runs a script with nonce 'x' under 'NONCE-x' and
  // ignores 'unsafe-inline' next to it); findings name the canonical form import stores
  [
    "script-src 'NONCE-abcdefgh12' 'unsafe-inline'; object-src 'none'",
    [F("missing-base-uri", "high", "base-uri")],
    ["unsafe-inline", "unknown-keyword"],
  ],
  [
    `script-src ${SHA256.replace("sha256", "SHA256")} 'unsafe-inline'; object-src 'none'`,
    [F("missing-base-uri", "high", "base-uri")],
    ["unsafe-inline", "unknown-keyword", "invalid-hash"],
  ],
  ["script-src 'Nonce-abcdefgh12' 'strict-dynamic'", [], ["strict-dynamic-without-nonce", "unknown-keyword"]],
  ["script-src 'Nonce-abc'", [F("nonce-too-short", "medium", "script-src", "'nonce-abc'")], ["unknown-keyword"]],
  // §27: a source with a query or fragment but no path is invalid and ignored (as Chromium does): it allows nothing
  ["script-src 'self' https://www.google.com?callback=x; object-src 'none'", [], ["script-bypass-host", "plain-url-allowlist"]],
  ["script-src 'self' http://www.google.com#top; object-src 'none'", [], ["script-bypass-host", "plain-url-allowlist", "insecure-scheme"]],
  ["script-src 'self'; img-src http://img.example.com?x=1", [], ["insecure-scheme"]],
  ["script-src 'self'; object-src https://plugins.example.com?x", [], ["missing-object-src"]],
  // ... while after a path only the query is ignored
  ["script-src 'self' https://www.google.com/?callback=x", [F("script-bypass-host", "high", "script-src", "https://www.google.com/?callback=x")], []],
  // insecure-scheme, low: a reporting endpoint over plain HTTP (the reference: "Use HTTPS to send violation reports")
  ["script-src 'self'; report-uri http://reports.example.com/csp", [F("insecure-scheme", "low", "report-uri", "http://reports.example.com/csp")], []],
  [
    "script-src 'self'; report-uri /csp HTTP://r.example.com/csp https://r.example.com/csp",
    [F("insecure-scheme", "low", "report-uri", "HTTP://r.example.com/csp")],
    [],
  ],
  ["script-src 'self'; report-uri /csp https://r.example.com/csp", [], ["insecure-scheme"]],
];

describe("csp evaluator: the checks of §13.2", () => {
  test("table of known policies: expected findings present, unexpected ones absent", async () => {
    const codesSeen = new Set<string>();
    for (const [policy, present, absent] of TABLE) {
      const got = await findings(policy);
      const keys = got.map((f) => key(f));
      for (const e of present) expect({ policy, finding: key(e), found: keys.includes(key(e)) }).toEqual({ policy, finding: key(e), found: true });
      for (const code of absent) expect({ policy, code, found: got.some((f) => f.code === code) }).toEqual({ policy, code, found: false });
      for (const f of got) {
        codesSeen.add(f.code);
        expect(Object.keys(CHECKS)).toContain(f.code);
        expect(typeof f.message).toBe("string");
        expect(f.message.length).toBeGreaterThan(10);
      }
      for (const e of present) codesSeen.add(e.code);
    }
    // Every check the evaluator knows is exercised by the table.
    expect([...codesSeen].sort()).toEqual(Object.keys(CHECKS).sort());
  });

  test("a finding's shape: {directive, value?, severity, code, message, policyIndex}; most severe first", async () => {
    const got = await findings("script-src 'self' 'unsafe-inline' 'unsafe-eval' 'unsafe-hashes'; report-uri /r");
    for (const f of got) {
      expect(Object.keys(f)).toEqual(
        f.value === undefined
          ? ["directive", "severity", "code", "message", "policyIndex"]
          : ["directive", "value", "severity", "code", "message", "policyIndex"],
      );
      expect(f.policyIndex).toBe(0);
    }
    const ranks = got.map((f) => ["high", "medium", "low", "info"].indexOf(f.severity));
    expect(ranks).toEqual([...ranks].sort((x, y) => x - y));
    expect(got[0]).toMatchObject({ severity: "high" });
    expect(got.at(-1)).toMatchObject({ severity: "info" });
  });

  test("the strict policy of §13.2 has no high or medium finding", async () => {
    const strict = "script-src 'nonce-rAnd0m123' 'strict-dynamic'; object-src 'none'; base-uri 'none'";
    const got = await findings(strict);
    expect(got.filter((f) => f.severity === "high" || f.severity === "medium")).toEqual([]);
    expect(got.map((f) => f.code)).toEqual(["missing-frame-ancestors", "no-reporting"]);
    // Its backward-compatible form (fallbacks ignored by CSP3 browsers) is just as clean with https: ...
    const compat = await findings(
      "script-src 'nonce-rAnd0m123' 'strict-dynamic' 'unsafe-inline' https:; object-src 'none'; base-uri 'none'; frame-ancestors 'self'; report-to csp",
    );
    expect(compat).toEqual([]);
    // ... and with its http: fallback, which only pre-CSP3 browsers use: insecure-scheme is info there (§13.2).
    const withHttp = await findings(
      "script-src 'nonce-rAnd0m123' 'strict-dynamic' 'unsafe-inline' https: http:; object-src 'none'; base-uri 'none'; frame-ancestors 'self'; report-to csp",
    );
    expect(withHttp.map((f) => key(f))).toEqual(["insecure-scheme info script-src http:"]);
  });

  test("a permissive policy collects the high findings", async () => {
    const got = await findings("default-src * 'unsafe-inline' 'unsafe-eval' data: blob:");
    expect(got.filter((f) => f.severity === "high").map((f) => key(f))).toEqual([
      "wildcard-source high default-src *",
      "unsafe-inline high default-src 'unsafe-inline'",
      "data-scheme high default-src data:",
      "missing-object-src high default-src *",
    ]);
  });
});

describe("csp evaluator: input", () => {
  test("policyId evaluates the stored policy; serialized keeps what import would drop", async () => {
    const text = "script-src 'self' 'unsafe-inline'; foo-src x; object-src 'none'";
    const p = (await a.client.post("/api/web_security/csp", { name: "to-evaluate", content: { type: "serialized", value: text } })).json;
    expect(p.directives.map((d: any) => d.name)).toEqual(["script-src", "object-src"]);
    const byId = await a.client.post(EVAL, { policyId: p.id.toUpperCase() });
    expect(byId.status).toBe(200);
    const bySerialized = await findings(text);
    expect(bySerialized.some((f) => f.code === "unknown-directive" && f.directive === "foo-src")).toBe(true);
    expect(byId.json.findings).toEqual(bySerialized.filter((f) => f.code !== "unknown-directive"));
    const viaSerialize = (await a.client.post(`/api/web_security/csp/${p.id}/_serialize`, { source: "enforcingHeader" })).text;
    expect(await findings(viaSerialize)).toEqual(byId.json.findings);
    expect((await a.client.post(EVAL, { policyId: p.id, serialized: null })).json).toEqual(byId.json);
  });

  test("400 for bad bodies, 404 for unknown or another user's policy", async () => {
    const p = (await a.client.post("/api/web_security/csp", { name: "mine", content: { type: "serialized", value: "default-src 'self'" } })).json;
    const bad: Record<string, unknown>[] = [
      {},
      { policyId: null, serialized: null },
      { policyId: p.id, serialized: "default-src 'self'" },
      { policyId: "not-a-uuid" },
      { policyId: 5 },
      { serialized: 5 },
      { serialized: "" },
      { serialized: " ; ;" },
    ];
    for (const body of bad) {
      const res = await a.client.post(EVAL, body);
      expect({ body, status: res.status, code: res.json.code }).toEqual({ body, status: 400, code: "INVALID_INPUT" });
    }
    // looseBody: the service names the mistyped member.
    expect((await a.client.post(EVAL, { policyId: 5 })).json.message).toBe("policyId: must be a UUID");
    expect((await a.client.post(EVAL, { serialized: 5 })).json.message).toBe("serialized: must be a string");
    expect((await a.client.post(EVAL, { policyId: newId() })).status).toBe(404);
    const foreign = await b.client.post(EVAL, { policyId: p.id });
    expect(foreign.status).toBe(404);
    expect(foreign.json.code).toBe("NOT_FOUND");
    expect((await srv.anon.post(EVAL, { policyId: p.id })).status).toBe(401);
  });
});

describe("csp evaluator: cost caps (§27) and the work pool (issue 29)", () => {
  /** A policy of about `bytes` bytes: one script-src with distinct plain-HTTP hosts (several findings each). */
  const hostsText = (bytes: number) => {
    const tail = "; object-src 'none'";
    let text = "script-src";
    for (let i = 0; ; i++) {
      const host = ` http://h${i}.example.com`;
      if (text.length + host.length + tail.length > bytes) break;
      text += host;
    }
    return `${text}${tail}`.padEnd(bytes, " ");
  };

  test("a text above 64 KiB → 400 naming serialized; 64 KiB exactly is evaluated", async () => {
    const over = await a.client.post(EVAL, { serialized: hostsText(65_537) });
    expect(over.status).toBe(400);
    expect(over.json.code).toBe("INVALID_INPUT");
    expect(over.json.message).toMatch(/^serialized: .*65536 bytes/);
    // bytes, not characters: 32,769 two-byte characters are 65,538 bytes
    const wide = await a.client.post(EVAL, { serialized: `script-src 'self'; ${"é".repeat(32_769)}` });
    expect(wide.status).toBe(400);
    const max = await a.client.post(EVAL, { serialized: hostsText(65_536) });
    expect(max.status).toBe(200);
    expect(max.json.findings.length).toBeGreaterThan(0);
  });

  test("at most 100 findings, the most severe first, for text and stored policies", async () => {
    const text = hostsText(20_000);
    const res = await a.client.post(EVAL, { serialized: text });
    expect(res.status).toBe(200);
    expect(res.json.findings.length).toBe(100);
    // the cut keeps the head of the severity order
    const rank = { high: 0, medium: 1, low: 2, info: 3 } as Record<string, number>;
    const ranks = res.json.findings.map((f: any) => rank[f.severity]);
    expect(ranks).toEqual([...ranks].sort((x: number, y: number) => x - y));
    expect(res.json.findings[0].severity).toBe("high");
    const hosts = Array.from({ length: 400 }, (_, i) => `http://s${i}.example.com`);
    const created = await a.client.post("/api/web_security/csp", {
      name: `many hosts ${newId()}`,
      content: { type: "directives", value: [{ name: "script-src", value: hosts }] },
    });
    expect(created.status).toBe(201);
    const stored = await a.client.post(EVAL, { policyId: created.json.id });
    expect(stored.status).toBe(200);
    expect(stored.json.findings.length).toBe(100);
  });

  test("a large evaluation runs on a work thread (the pool is used), a small one inline", async () => {
    const before = srv.services.work.stats().started;
    const small = await a.client.post(EVAL, { serialized: "script-src 'self'; object-src 'none'" });
    expect(small.status).toBe(200);
    expect(srv.services.work.stats().started).toBe(before);
    const large = await a.client.post(EVAL, { serialized: hostsText(30_000) });
    expect(large.status).toBe(200);
    expect(srv.services.work.stats().started).toBe(before + 1);
    // the same findings as inline evaluation would give (the first 100)
    const { evaluateInput } = await import("./tasks");
    expect(large.json).toEqual(evaluateInput({ text: hostsText(30_000) }));
  });
});

describe("csp evaluator: several policies (§27)", () => {
  const at = (got: any[], i: number) => got.filter((f) => f.policyIndex === i).map((f) => key(f));

  test("a comma-joined text: every policy is evaluated, each finding names its policyIndex", async () => {
    const res = await a.client.post(EVAL, {
      serialized: "script-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none', object-src *, img-src http:",
    });
    expect(res.status).toBe(200);
    expect(res.json.policyCount).toBe(3);
    const got = res.json.findings;
    expect(at(got, 0)).toContain("unsafe-inline high script-src 'unsafe-inline'");
    expect(at(got, 0)).not.toContain("missing-script-src high script-src -");
    expect(at(got, 1)).toEqual(
      expect.arrayContaining(["missing-script-src high script-src -", "wildcard-source high object-src *", "missing-object-src high object-src *"]),
    );
    expect(at(got, 1)).not.toContain("unsafe-inline high script-src 'unsafe-inline'");
    expect(at(got, 2)).toEqual(
      expect.arrayContaining([
        "missing-script-src high script-src -",
        "missing-object-src high object-src -",
        "insecure-scheme medium img-src http:",
      ]),
    );
    expect(new Set(got.map((f: any) => f.policyIndex))).toEqual(new Set([0, 1, 2]));
    // Sorted by severity over all policies; policy order kept within a severity.
    const rank = { high: 0, medium: 1, low: 2, info: 3 } as Record<string, number>;
    const order = got.map((f: any) => rank[f.severity]! * 100 + f.policyIndex);
    expect(order).toEqual([...order].sort((x: number, y: number) => x - y));
  });

  test("one policy (text or stored): policyIndex 0, policyCount 1; empty members of the comma list are no policies", async () => {
    const one = await a.client.post(EVAL, { serialized: " , script-src 'self', ;, " });
    expect(one.status).toBe(200);
    expect(one.json.policyCount).toBe(1);
    expect(one.json.findings.every((f: any) => f.policyIndex === 0)).toBe(true);
    const p = (await a.client.post("/api/web_security/csp", { name: `one ${newId()}`, content: { type: "serialized", value: "script-src 'self'" } }))
      .json;
    const stored = await a.client.post(EVAL, { policyId: p.id });
    expect(stored.json.policyCount).toBe(1);
    expect(stored.json.findings.every((f: any) => f.policyIndex === 0)).toBe(true);
  });

  test("the cap of 100 findings is per policy; more than 20 policies → 400", async () => {
    const many = (prefix: string) => `script-src ${Array.from({ length: 150 }, (_, i) => `http://${prefix}${i}.example.com`).join(" ")}`;
    const res = await a.client.post(EVAL, { serialized: `${many("a")}, ${many("b")}` });
    expect(res.status).toBe(200);
    expect(res.json.policyCount).toBe(2);
    expect(res.json.findings.filter((f: any) => f.policyIndex === 0).length).toBe(100);
    expect(res.json.findings.filter((f: any) => f.policyIndex === 1).length).toBe(100);
    const twenty = await a.client.post(EVAL, { serialized: Array.from({ length: 20 }, () => "script-src 'self'").join(", ") });
    expect(twenty.status).toBe(200);
    expect(twenty.json.policyCount).toBe(20);
    const over = await a.client.post(EVAL, { serialized: Array.from({ length: 21 }, () => "script-src 'self'").join(", ") });
    expect(over.status).toBe(400);
    expect(over.json).toMatchObject({ code: "INVALID_INPUT", message: "serialized: at most 20 policies (separated by ','); the text holds 21" });
  });
});

describe("csp evaluator: OpenAPI", () => {
  test("_evaluate is documented with its request and response schemas", async () => {
    const doc = (await srv.anon.get("/api-docs/openapi.json")).json;
    const op = doc.paths["/api/web_security/csp/_evaluate"]?.post;
    expect(op).toBeDefined();
    expect(op.tags).toEqual(["web_security"]);
    // Named schemas, referenced from the operation (components.schemas).
    const named = (schema: { $ref: string }) => doc.components.schemas[schema.$ref.split("/").pop()!];
    const req = named(op.requestBody.content["application/json"].schema);
    expect(Object.keys(req.properties).sort()).toEqual(["policyId", "serialized"]);
    const res = named(op.responses["200"].content["application/json"].schema);
    const finding = res.properties.findings.items;
    expect(Object.keys(finding.properties).sort()).toEqual(["code", "directive", "message", "policyIndex", "severity", "value"]);
    expect(finding.required.sort()).toEqual(["code", "directive", "message", "policyIndex", "severity"]);
    expect(res.required.sort()).toEqual(["findings", "policyCount"]);
    expect(JSON.stringify(finding.properties.severity)).toContain("medium");
    for (const path of [
      "/api/web_security/csp",
      "/api/web_security/csp/{policy_id}",
      "/api/web_security/csp/{policy_id}/_serialize",
      "/api/web_security/csp/{policy_id}/_share",
      "/api/web_security/csp/{policy_id}/_unshare",
    ])
      expect(doc.paths[path]).toBeDefined();
  });
});
