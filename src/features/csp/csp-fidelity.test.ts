// CSP fidelity (issue 18) through HTTP: an import keeps what browsers keep and says what it dropped (supplement §13.3
// "Warnings"), several policies import as the first with a warning naming how many, and the evaluator's misses
// and noise reported against Google's CSP Evaluator (§13.2). Remote imports of several policies: csp-remote.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";

const BASE = "/api/web_security/csp";
const EVAL = `${BASE}/_evaluate`;

let srv: TestServer;
let a: TestUser;

beforeAll(async () => {
  srv = await startTestServer();
  a = await srv.createUser();
});
afterAll(() => srv.stop());

let seq = 0;
async function importText(text: string) {
  const res = await a.client.post(BASE, { name: `fidelity-${++seq}`, content: { type: "serialized", value: text } });
  expect({ text, status: res.status, message: res.json?.message }).toEqual({ text, status: 201, message: undefined });
  return res.json as { id: string; directives: { name: string; value?: string[] }[]; warnings?: string[] };
}

async function findings(body: Record<string, unknown>): Promise<{ code: string; severity: string; directive: string; value?: string }[]> {
  const res = await a.client.post(EVAL, body);
  expect(res.status).toBe(200);
  return res.json.findings;
}
const keys = (fs: { code: string; severity: string; directive: string; value?: string }[]) =>
  fs.map((f) => `${f.code} ${f.severity} ${f.directive} ${f.value ?? "-"}`);

describe("import keeps what browsers keep (§13.3)", () => {
  test("one bad token drops only that token, the directive stays, and the warning names it", async () => {
    const p = await importText("script-src 'self' 'unsafe_inline'; object-src 'none'");
    expect(p.directives).toEqual([
      { name: "script-src", value: ["'self'"] },
      { name: "object-src", value: ["'none'"] },
    ]);
    expect(p.warnings).toEqual(["script-src: dropped 'unsafe_inline' (unknown keyword)"]);
  });

  test("a sha1 hash, a nonce with '@', a stray comma: each drops alone", async () => {
    const p = await importText("script-src 'self' 'sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=' 'nonce-a@b' https://cdn.example.com; object-src 'none'");
    expect(p.directives).toEqual([
      { name: "script-src", value: ["'self'", "https://cdn.example.com"] },
      { name: "object-src", value: ["'none'"] },
    ]);
    expect(p.warnings).toEqual([
      "script-src: dropped 'sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=' (hash algorithms are sha256, sha384 and sha512)",
      "script-src: dropped 'nonce-a@b' (a nonce must be base64 (A-Z a-z 0-9 + / - _, up to two '='))",
    ]);
    // A comma separates policies (as in a header): the first is imported, with a warning.
    const comma = await importText("script-src 'self' https://a.example.com, https://b.example.com; object-src 'none'");
    expect(comma.directives).toEqual([{ name: "script-src", value: ["'self'", "https://a.example.com"] }]);
    expect(comma.warnings).toEqual(["the text holds 2 policies (separated by ','); only the first was imported, while browsers enforce all of them"]);
  });

  test("a source with ?query or #fragment is kept without it, as browsers read it", async () => {
    const p = await importText("script-src https://www.google.com/?x=1 https://cdn.example.com/lib/#v2; object-src 'none'");
    expect(p.directives[0]).toEqual({ name: "script-src", value: ["https://www.google.com/", "https://cdn.example.com/lib/"] });
    expect(p.warnings).toEqual([
      "script-src: https://www.google.com/?x=1 stored as https://www.google.com/ (browsers ignore a source's query and fragment)",
      "script-src: https://cdn.example.com/lib/#v2 stored as https://cdn.example.com/lib/ (browsers ignore a source's query and fragment)",
    ]);
  });

  test("an empty source list is 'none' (written empty, or nothing valid left); never dropped", async () => {
    const p = await importText("script-src 'self'; object-src; base-uri 'bogus'");
    expect(p.directives).toEqual([
      { name: "script-src", value: ["'self'"] },
      { name: "object-src", value: ["'none'"] },
      { name: "base-uri", value: ["'none'"] },
    ]);
    expect(p.warnings).toEqual([
      "base-uri: dropped 'bogus' (unknown keyword)",
      "base-uri: no valid source left, stored as 'none' (an empty source list matches nothing)",
    ]);
  });

  test("fenced-frame-src and every other CSP3 directive is kept; unknown and retired names are dropped with a warning", async () => {
    const p = await importText(
      "fenced-frame-src https://ads.example; default-src 'self'; foo-src x; block-all-mixed-content; plugin-types application/pdf",
    );
    expect(p.directives).toEqual([
      { name: "fenced-frame-src", value: ["https://ads.example"] },
      { name: "default-src", value: ["'self'"] },
    ]);
    expect(p.warnings).toEqual([
      "foo-src: dropped (unknown directive)",
      "block-all-mixed-content: dropped (deprecated: browsers block mixed content anyway; use upgrade-insecure-requests)",
      "plugin-types: dropped (removed from CSP; use object-src 'none')",
    ]);
  });

  test("repeats, invalid sandbox tokens, extra report-to groups, values of upgrade-insecure-requests: each a warning", async () => {
    const p = await importText(
      "img-src 'self' 'SELF' https:; IMG-SRC *; sandbox allow-scripts allow-everything; report-to a b; upgrade-insecure-requests now; frame-ancestors 'self' 'unsafe-inline'",
    );
    expect(p.directives).toEqual([
      { name: "img-src", value: ["'self'", "https:"] },
      { name: "sandbox", value: ["allow-scripts"] },
      { name: "report-to", value: ["a"] },
      { name: "upgrade-insecure-requests" },
      { name: "frame-ancestors", value: ["'self'"] },
    ]);
    expect(p.warnings).toEqual([
      "img-src: dropped the repeated 'self'",
      "img-src: dropped the repeated directive (browsers use only the first)",
      "sandbox: dropped allow-everything (not a sandbox token)",
      "report-to: dropped b (must be exactly one reporting group name)",
      "upgrade-insecure-requests: dropped now (upgrade-insecure-requests takes no value)",
      "frame-ancestors: dropped 'unsafe-inline' (frame-ancestors accepts only hosts, schemes, 'self' and 'none')",
    ]);
  });

  test("a clean import has no warnings field; PUT with content answers 200 {warnings}, else 204", async () => {
    const clean = await a.client.post(BASE, { name: "clean-import", content: { type: "serialized", value: "default-src 'self'" } });
    expect(clean.status).toBe(201);
    expect("warnings" in clean.json).toBe(false);
    const id = clean.json.id;
    const put = await a.client.put(`${BASE}/${id}`, { content: { type: "serialized", value: "default-src 'self' 'unsafe_inline'" } });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ warnings: ["default-src: dropped 'unsafe_inline' (unknown keyword)"] });
    expect((await a.client.get(`${BASE}/${id}`)).json.policy.directives).toEqual([{ name: "default-src", value: ["'self'"] }]);
    const quiet = await a.client.put(`${BASE}/${id}`, { content: { type: "serialized", value: "default-src 'none'" } });
    expect(quiet.status).toBe(204);
    expect(quiet.text).toBe("");
    expect((await a.client.put(`${BASE}/${id}`, { name: "renamed" })).status).toBe(204);
  });
});

describe("evaluator misses (§13.2)", () => {
  test("a host source with ?query or #fragment after a path is matched against the bypass lists", async () => {
    for (const source of ["https://www.google.com/?x=1", "https://www.google.com/#top", "www.google.com/?callback=x"]) {
      const got = keys(await findings({ serialized: `script-src ${source}; object-src 'none'; base-uri 'none'` }));
      expect({ source, got }).toEqual({ source, got: expect.arrayContaining([`script-bypass-host high script-src ${source}`]) });
    }
    // Without a path the source is invalid and ignored, as Chromium ignores it (§27): no bypass through it.
    for (const source of ["www.google.com?callback=x", "https://www.google.com#top"]) {
      const got = await findings({ serialized: `script-src 'self' ${source}; object-src 'none'; base-uri 'none'` });
      expect({ source, got: got.filter((f: any) => f.value === source) }).toEqual({ source, got: [] });
    }
    // The stored policy (query dropped by the import) is reported the same way.
    const p = await importText("script-src https://www.google.com/?x=1; object-src 'none'; base-uri 'none'");
    expect(keys(await findings({ policyId: p.id }))).toContain("script-bypass-host high script-src https://www.google.com/");
  });

  test("the bypass hosts of the reference lists are known (e.g. *.virtualearth.net, *.mozilla.org)", async () => {
    for (const source of ["*.virtualearth.net", "https://*.mozilla.org", "https://api.map.baidu.com", "suggest.taobao.com/sug", "*.akamaihd.net"]) {
      const got = keys(await findings({ serialized: `script-src 'self' ${source}; object-src 'none'; base-uri 'none'` }));
      expect({ source, got }).toEqual({ source, got: expect.arrayContaining([`script-bypass-host high script-src ${source}`]) });
    }
  });

  test("a hash only in script-src-attr makes missing-base-uri medium, not high", async () => {
    const attr = await findings({
      serialized: "script-src 'self'; script-src-attr 'sha256-RFWPLDbv2BY+rCkDzsE+0fr8ylGr2R2faWMhq4lfEQc='; object-src 'none'",
    });
    expect(keys(attr.filter((f) => f.code === "missing-base-uri"))).toEqual(["missing-base-uri medium base-uri -"]);
    const elem = await findings({ serialized: "script-src 'self'; script-src-elem 'nonce-abcdefgh12'; object-src 'none'" });
    expect(keys(elem.filter((f) => f.code === "missing-base-uri"))).toEqual(["missing-base-uri medium base-uri -"]);
    const main = await findings({ serialized: "script-src 'nonce-abcdefgh12'; object-src 'none'" });
    expect(keys(main.filter((f) => f.code === "missing-base-uri"))).toEqual(["missing-base-uri high base-uri -"]);
  });

  test("_evaluate {serialized} and the stored policy from the same text agree (empty object-src is 'none')", async () => {
    const text = "script-src 'self'; object-src; base-uri 'none'";
    const p = await importText(text);
    const stored = await findings({ policyId: p.id });
    expect(stored.some((f) => f.code === "missing-object-src")).toBe(false);
    expect(await findings({ serialized: text })).toEqual(stored);
  });
});

describe("evaluator noise (§13.2)", () => {
  test("http: next to 'strict-dynamic' with a nonce or hash is info (Google's recommended fallback)", async () => {
    const got = await findings({
      serialized: "script-src 'nonce-rAnd0m123' 'strict-dynamic' 'unsafe-inline' https: http:; object-src 'none'; base-uri 'none'",
    });
    expect(got.filter((f) => f.severity === "high" || f.severity === "medium")).toEqual([]);
    expect(keys(got.filter((f) => f.code === "insecure-scheme"))).toEqual(["insecure-scheme info script-src http:"]);
    // Without a nonce or hash 'strict-dynamic' does nothing for old browsers either: http: stays high.
    const bare = await findings({ serialized: "script-src 'strict-dynamic' http:; object-src 'none'" });
    expect(keys(bare.filter((f) => f.code === "insecure-scheme"))).toEqual(["insecure-scheme high script-src http:"]);
  });

  test("missing-object-src is reported once per policy, naming the first offending value", async () => {
    const hosts = Array.from({ length: 11 }, (_, i) => `https://h${i}.example.com`).join(" ");
    const got = await findings({ serialized: `default-src 'self' ${hosts}; script-src 'nonce-abcdefgh12'; base-uri 'none'` });
    expect(keys(got.filter((f) => f.code === "missing-object-src"))).toEqual(["missing-object-src high default-src https://h0.example.com"]);
  });
});

describe("csp: create from serialized text", () => {
  test("parsed per §13.3: names lower-cased, unknown directives and invalid values dropped, first repeat kept, every drop a warning", async () => {
    const text =
      "  DEFAULT-SRC 'self'  ;foo-src x; script-src 'unsafe_inline' https://ok.example; img-src * data:;IMG-SRC 'none';" +
      " upgrade-insecure-requests;webrtc 'maybe'; block-all-mixed-content ; object-src;sandbox;\tstyle-src\t'self'\f'unsafe-inline' 'self';" +
      " report-to a b; report-uri /r; trusted-types; font-src exämple.com;;";
    const p = await importText(text);
    expect(p.directives).toEqual([
      { name: "default-src", value: ["'self'"] },
      { name: "script-src", value: ["https://ok.example"] },
      { name: "img-src", value: ["*", "data:"] },
      { name: "upgrade-insecure-requests" },
      { name: "object-src", value: ["'none'"] },
      { name: "sandbox", value: [] },
      { name: "style-src", value: ["'self'", "'unsafe-inline'"] },
      { name: "report-to", value: ["a"] },
      { name: "report-uri", value: ["/r"] },
      { name: "trusted-types", value: [] },
    ]);
    expect(p.warnings).toEqual([
      "foo-src: dropped (unknown directive)",
      "script-src: dropped 'unsafe_inline' (unknown keyword)",
      "img-src: dropped the repeated directive (browsers use only the first)",
      "webrtc: dropped 'maybe' (must be 'allow' or 'block')",
      "webrtc: dropped (must be exactly one of 'allow', 'block'; nothing valid left)",
      "block-all-mixed-content: dropped (deprecated: browsers block mixed content anyway; use upgrade-insecure-requests)",
      "style-src: dropped the repeated 'self'",
      "report-to: dropped b (must be exactly one reporting group name)",
      "font-src: dropped (characters outside printable ASCII; browsers ignore the whole directive)",
    ]);
    // The stored policy (GET) carries no warnings: they belong to the import's answer.
    expect((await a.client.get(`${BASE}/${p.id}`)).json.policy).toEqual((({ warnings: _, ...rest }) => rest)(p));
  });

  test("nothing valid left → 400 INVALID_INPUT", async () => {
    for (const text of [
      "",
      "   ",
      ";;;",
      ",",
      "foo-src 'self'; bar",
      "webrtc 'maybe'; report-to a(b",
      "défault-src 'self'",
      "img-src exämple.com",
      "foo, default-src 'self'",
    ]) {
      const res = await a.client.post(BASE, { name: "empty", content: { type: "serialized", value: text } });
      expect({ text, status: res.status, code: res.json.code }).toEqual({ text, status: 400, code: "INVALID_INPUT" });
      expect(res.json.message).toStartWith("content.value:");
    }
    // Written empty, or emptied by invalid values, a source list is 'none', not nothing.
    expect((await importText("default-src")).directives).toEqual([{ name: "default-src", value: ["'none'"] }]);
    expect((await importText("script-src 'nope'; upgrade-insecure-requests now")).directives).toEqual([
      { name: "script-src", value: ["'none'"] },
      { name: "upgrade-insecure-requests" },
    ]);
  });

  test("warnings are capped at 100, the rest counted", async () => {
    const bad = await importText(`img-src ${Array.from({ length: 150 }, (_, i) => `'bad${i}'`).join(" ")} 'self'`);
    expect(bad.directives).toEqual([{ name: "img-src", value: ["'self'"] }]);
    const warnings = bad.warnings ?? [];
    expect(warnings).toHaveLength(101);
    expect(warnings[0]).toBe("img-src: dropped 'bad0' (unknown keyword)");
    expect(warnings[100]).toBe("… and 50 more warnings");
  });
});
