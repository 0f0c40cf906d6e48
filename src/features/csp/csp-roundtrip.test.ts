// Round trip over the corpus of testdata/ (supplement §13.3, §13.4), through HTTP: import the text (serialized) →
// `_serialize` enforcingHeader → import again. The second import must give the same directives with no warning
// (stable), and nothing enforceable may be lost on the way: the enforced policy is what real Chromium keeps of the
// text, read from its own parse errors (the page is served with the policy as its Content-Security-Policy header
// and Chromium's console says which directives and sources it ignores). Every directive and source Chromium keeps
// must be in the stored policy, and nothing Chromium ignores may be in it, except the few documented differences
// of §13.1 in CHROMIUM_DIFFERENCES. Every value the import does not keep as written is named in a warning.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { KEYWORDS, SCHEME_SOURCE_RE, SOURCE_LISTS } from "./directives";
import { loadCorpus, type CorpusPolicy } from "./testdata/corpus";

const BASE = "/api/web_security/csp";

/** Where a stored policy differs from what Chromium 156 keeps, on purpose (§13.1). */
const CHROMIUM_DIFFERENCES = {
  /** Directives §13.1 stores though Chromium does not implement them (CSP3 webrtc). */
  storedUnknownToChromium: new Set(["webrtc"]),
  /** Directives Chromium still parses but §13.1 does not store (import warns: retired, or Chromium-only). */
  enforcedNotStored: new Set(["block-all-mixed-content", "treat-as-public-address"]),
};

let srv: TestServer;
let a: TestUser;
let browser: Browser;
/** One page for the whole corpus: each policy is a navigation of it (a new page per policy cost most of the file). */
let page: Page;
/** Console messages of the current navigation (reset before each). */
let messages: string[] = [];
let userDataDir: string;
let site: ReturnType<typeof Bun.serve>;
const served = new Map<string, string>();

beforeAll(async () => {
  srv = await startTestServer();
  a = await srv.createUser();
  site = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const policy = served.get(new URL(req.url).pathname.slice(1)) ?? "";
      return new Response("<!doctype html><title>csp</title><p>page", {
        headers: { "content-type": "text/html", "content-security-policy": policy },
      });
    },
  });
  userDataDir = mkdtempSync(join(tmpdir(), "secbox-csp-chromium-"));
  const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
  browser = await puppeteer.launch({
    executablePath: "/usr/bin/chromium",
    headless: true,
    pipe: true,
    userDataDir,
    args: [
      ...(asRoot ? ["--no-sandbox"] : []),
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-dev-shm-usage",
    ],
    timeout: 60_000,
    protocolTimeout: 120_000,
  });
  page = await browser.newPage();
  page.on("console", (m) => messages.push(m.text()));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  rmSync(userDataDir, { recursive: true, force: true });
  site?.stop(true);
  await srv.stop();
});

/**
 * Chromium's console messages while loading a page served with `policy` as its enforced CSP header. The parse errors
 * are logged when the document commits, before the load event ends goto; DevTools events arrive in order, so once
 * the evaluate after it has answered, every message of this document is in, and none of the previous one is left.
 */
async function chromiumMessages(name: string, policy: string): Promise<string[]> {
  served.set(name, policy);
  messages = [];
  await page.goto(`http://127.0.0.1:${site.port}/${name}`, { waitUntil: "load", timeout: 60_000 });
  await page.evaluate(() => 1);
  const mine = messages;
  messages = [];
  return mine;
}

/**
 * A value as stored: in source lists keywords, schemes and the algorithm of nonces and hashes lower-cased and a
 * query or fragment after a path dropped; sandbox tokens and quoted keywords lower-cased; anything else as written.
 */
function norm(directive: string, v: string): string {
  const lower = v.toLowerCase();
  if (!SOURCE_LISTS.has(directive)) return directive === "sandbox" || v.startsWith("'") ? lower : v;
  if (KEYWORDS.has(lower) || SCHEME_SOURCE_RE.test(v)) return lower;
  const m = /^'(nonce|sha256|sha384|sha512)-(.*)'$/i.exec(v);
  if (m) return `'${m[1]!.toLowerCase()}-${m[2]}'`;
  return v.replace(/^([^?#]*\/[^?#]*)[?#].*$/, "$1");
}

interface Enforced {
  /** Directive → the sources Chromium keeps (as written), for each directive Chromium enforces. */
  kept: Map<string, string[]>;
  /** Directive → tokens Chromium ignores. */
  ignoredTokens: Map<string, Set<string>>;
  /** Directives Chromium ignores whole (unknown, repeated, invalid characters). */
  ignoredDirectives: Set<string>;
  /** 'none' next to other sources: ignored by Chromium, harmless to keep. */
  noneIgnored: Set<string>;
}

/** What Chromium enforces of a one-policy text, from its parse errors (messages of Chromium 156). */
function enforcedByChromium(policy: string, messages: string[]): Enforced {
  const ignoredTokens = new Map<string, Set<string>>();
  const ignoredDirectives = new Set<string>();
  const noneIgnored = new Set<string>();
  const dropToken = (d: string, t: string) => ignoredTokens.set(d, (ignoredTokens.get(d) ?? new Set()).add(t));
  const directives: { name: string; value: string[] }[] = [];
  for (const part of policy.split(";")) {
    const [name, ...value] = part.trim().split(/[\t\n\f\r ]+/);
    if (name) directives.push({ name: name.toLowerCase(), value });
  }
  const unexplained: string[] = [];
  for (const m of messages) {
    let r: RegExpExecArray | null;
    if ((r = /directive '([^']+)' contains an invalid source: '(.*)'\. It will be ignored\./.exec(m))) dropToken(r[1]!, r[2]!);
    else if ((r = /directive '([^']+)' does not support the source expression '(.*)'$/.exec(m))) dropToken(r[1]!, r[2]!);
    else if ((r = /directive '([^']+)' contains '(.*)' as a source expression that is permitted only for/.exec(m))) dropToken(r[1]!, r[2]!);
    else if ((r = /directive '([^']+)' contains the keyword 'none' alongside/.exec(m))) noneIgnored.add(r[1]!);
    else if ((r = /^Unrecognized Content-Security-Policy directive '([^']+)'\.$/.exec(m))) ignoredDirectives.add(r[1]!.toLowerCase());
    else if ((r = /^The Content-Security-Policy directive '([^']+)' has been removed from the specification/.exec(m)))
      ignoredDirectives.add(r[1]!.toLowerCase());
    else if ((r = /^The value for the Content-Security-Policy directive '([^']+)' contains one or more invalid characters/.exec(m)))
      ignoredDirectives.add(r[1]!.toLowerCase());
    else if ((r = /^The Content-Security-Policy directive name '([^']+)' contains one or more invalid characters/.exec(m)))
      ignoredDirectives.add(r[1]!.toLowerCase());
    else if ((r = /^Ignoring duplicate Content-Security-Policy directive '([^']+)'\.$/.exec(m)))
      continue; // repeats: only the first counts below
    else if (/directive 'report-to' contains more than one endpoint/.test(m)) {
      for (const t of directives.find((d) => d.name === "report-to")!.value.slice(1)) dropToken("report-to", t);
    } else if ((r = /directive '([^']+)' should be empty, but was delivered with a value of '(.*)'\./.exec(m)))
      for (const t of r[2]!.split(/\s+/)) dropToken(r[1]!, t);
    else if ((r = /'sandbox' Content Security Policy directive: '(.*)' is an invalid sandbox flag/.exec(m))) dropToken("sandbox", r[1]!);
    else if ((r = /directive 'trusted_types' contains an invalid policy: '(.*)'\. It will be ignored/.exec(m))) dropToken("trusted-types", r[1]!);
    else if ((r = /^Invalid expression in 'require-trusted-types-for' Content Security Policy directive: (.*)\.\n?$/.exec(m)))
      dropToken("require-trusted-types-for", r[1]!);
    else if ((r = /directive 'report-uri' specifies an invalid endpoint '(.*)'\. It will be ignored/.exec(m))) dropToken("report-uri", r[1]!);
    else if (
      /contains a source with an invalid path: .* will be ignored\./.test(m) ||
      /Did you want to add it as a directive and forget a semicolon\?/.test(m)
    )
      continue; // kept (query dropped) / kept
    else if (/'require-trusted-types-for' Content Security Policy directive is empty/.test(m)) continue;
    else if (/^\[Report Only\]|^Refused to|violates the following Content Security Policy/.test(m))
      continue; // enforcement, not parsing
    else unexplained.push(m);
  }
  expect(unexplained).toEqual([]);
  const kept = new Map<string, string[]>();
  const seen = new Set<string>();
  for (const { name, value } of directives) {
    if (seen.has(name)) continue; // a repeat: Chromium keeps the first
    seen.add(name);
    if (ignoredDirectives.has(name)) continue;
    const dropped = ignoredTokens.get(name) ?? new Set();
    kept.set(
      name,
      value.filter((t) => !dropped.has(t)),
    );
  }
  return { kept, ignoredTokens, ignoredDirectives, noneIgnored };
}

let seq = 0;
async function importText(text: string) {
  const res = await a.client.post(BASE, { name: `rt-${++seq}`, content: { type: "serialized", value: text } });
  expect({ text, status: res.status, message: res.json?.message }).toEqual({ text, status: 201, message: undefined });
  return res.json as { id: string; directives: { name: string; value?: string[] }[]; warnings?: string[] };
}

describe("csp round trip over the corpus", () => {
  test("import → _serialize → import is stable, and keeps every directive and source Chromium enforces (and nothing it ignores)", async () => {
    const corpus: CorpusPolicy[] = loadCorpus();
    expect(corpus.length).toBeGreaterThanOrEqual(60);
    let warned = 0;
    for (const { name, policy } of corpus) {
      const first = await importText(policy);
      const text = (await a.client.post(`${BASE}/${first.id}/_serialize`, { source: "enforcingHeader" })).text;
      const second = await importText(text);
      expect({ name, directives: second.directives, warnings: second.warnings }).toEqual({ name, directives: first.directives, warnings: undefined });
      if (first.warnings) warned++;

      const stored = new Map(first.directives.map((d) => [d.name, d.value ?? []]));
      // Nothing silently lost: a directive or value not stored as written is named in a warning.
      const warnings = first.warnings ?? [];
      const seen = new Set<string>();
      for (const part of policy.split(";")) {
        const [raw, ...tokens] = part.trim().split(/[\t\n\f\r ]+/);
        if (!raw) continue;
        const directive = raw.toLowerCase();
        const about = warnings.filter((w) => w.startsWith(`${directive}:`));
        if (seen.has(directive) || !stored.has(directive)) {
          expect({ name, directive, warned: about.length > 0 }).toEqual({ name, directive, warned: true });
          seen.add(directive);
          continue;
        }
        seen.add(directive);
        for (const t of tokens) {
          if (stored.get(directive)!.includes(t)) continue;
          expect({
            name,
            directive,
            token: t,
            warned: about.some((w) => w.includes(t)) || stored.get(directive)!.includes(norm(directive, t)),
          }).toEqual({ name, directive, token: t, warned: true });
        }
      }
      const enforced = enforcedByChromium(policy, await chromiumMessages(name, policy));
      // Directive sets: stored = enforced by Chromium, up to the documented differences.
      const enforcedNames = [...enforced.kept.keys()].filter((n) => !CHROMIUM_DIFFERENCES.enforcedNotStored.has(n));
      const storedNames = [...stored.keys()].filter((n) => !CHROMIUM_DIFFERENCES.storedUnknownToChromium.has(n));
      expect({ name, directives: storedNames.sort() }).toEqual({ name, directives: enforcedNames.sort() });
      // Sources: every token Chromium keeps survives (in its stored form); no token Chromium ignores does.
      for (const [directive, tokens] of enforced.kept) {
        if (!stored.has(directive)) continue;
        const values = stored.get(directive)!;
        const expected = [...new Set(tokens.map((t) => norm(directive, t)))].filter((t) => !(t === "'none'" && enforced.noneIgnored.has(directive)));
        const lost = expected.filter((t) => !values.includes(t));
        expect({ name, directive, lost }).toEqual({ name, directive, lost: [] });
        const ignored = [...(enforced.ignoredTokens.get(directive) ?? [])].map((t) => norm(directive, t)).filter((t) => values.includes(t));
        expect({ name, directive, keptIgnored: ignored }).toEqual({ name, directive, keptIgnored: [] });
      }
    }
    // The corpus exercises the warnings (bad tokens, retired directives, queries).
    expect(warned).toBeGreaterThanOrEqual(10);
  }, 300_000);
});
