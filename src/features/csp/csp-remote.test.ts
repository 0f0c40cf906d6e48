// CSP import from a live URL (supplement §13.3, §1.1) through HTTP, against a local upstream (Bun.serve on
// loopback) that sets the enforcing header, the report-only header or <meta> tags. Loopback is a private target:
// the positive cases run on a Secbox started with network.allow_private_targets = true, the refusals on one
// with the default (false).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import zlib from "node:zlib";
import { newId } from "../../platform/core/ids";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { waitUntil } from "../../tests/fixtures/wait";

const BASE = "/api/web_security/csp";
const CSP = "content-security-policy";
const CSP_RO = "content-security-policy-report-only";

const html = (head: string, body = "<p>hello</p>") => `<!doctype html><html><head><title>t</title>${head}</head><body>${body}</body></html>`;
const MiB = 1024 * 1024;

// Bodies above the old 10 MiB read cap, and gzip bombs (16 MiB of spaces in a few KiB on the wire).
const HUGE = Buffer.alloc(11 * MiB, 0x61);
const META_HEAD = `<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="script-src 'self'"></head><body>`;
const BOMB = zlib.gzipSync(Buffer.alloc(16 * MiB, 0x20), { level: 9 });
const META_BOMB = zlib.gzipSync(Buffer.concat([Buffer.from(META_HEAD), Buffer.alloc(16 * MiB, 0x20)]), { level: 9 });
/** A policy of about `bytes` characters: many script hosts, as large sites send them (20 KB and more in one header). */
function bigPolicy(bytes: number): { text: string; hosts: string[] } {
  const hosts: string[] = [];
  let text = "default-src 'self'; script-src 'self'";
  for (let i = 0; text.length + 30 < bytes; i++) {
    hosts.push(`https://cdn${i}.example.com`);
    text += ` ${hosts.at(-1)}`;
  }
  return { text, hosts };
}
const POLICY_20K = bigPolicy(20_000);
const POLICY_70K = bigPolicy(70_000);
/** Endless upstream bodies still being sent (decremented when the client goes away). */
let endlessOpen = 0;

/** A body that never ends: `first`, then `chunk` every `everyMs` until the client disconnects. */
function endless(headers: [string, string][], first: string, chunk: Uint8Array, everyMs: number): Response {
  let timer: ReturnType<typeof setInterval> | undefined;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      endlessOpen++;
      controller.enqueue(new TextEncoder().encode(first));
      timer = setInterval(() => {
        try {
          controller.enqueue(chunk);
        } catch {
          clearInterval(timer);
        }
      }, everyMs);
    },
    cancel() {
      clearInterval(timer);
      endlessOpen--;
    },
  });
  return new Response(body, { headers: new Headers(headers) });
}

let upstream: ReturnType<typeof Bun.serve>;
let up: string;
const hits: string[] = [];
const userAgents: string[] = [];

function page(body: string | Uint8Array, headers: [string, string][] = [], status = 200): Response {
  const h = new Headers({ "content-type": "text/html; charset=utf-8" });
  for (const [n, v] of headers) h.append(n, v);
  return new Response(body, { status, headers: h });
}

const ROUTES: Record<string, () => Response> = {
  "/enforcing": () => page(html(""), [[CSP, "default-src 'self'; script-src 'self' https://cdn.example.com; unknown-directive x"]]),
  "/report-only": () => page(html(""), [[CSP_RO, "default-src 'none'; report-uri /csp-report"]]),
  "/both": () =>
    page(html(`<meta http-equiv="Content-Security-Policy" content="img-src 'self'">`), [
      [CSP, "default-src 'self'"],
      [CSP_RO, "default-src 'none'"],
    ]),
  "/several-headers": () =>
    page(html(""), [
      [CSP, "default-src 'self'"],
      [CSP, "script-src 'none'"],
    ]),
  "/comma-joined": () => page(html(""), [[CSP, "default-src 'self', img-src https:"]]),
  "/several-mixed": () =>
    page(html(""), [
      [CSP, ", default-src 'self' , img-src https:"],
      [CSP, "script-src 'none'"],
      [CSP_RO, "img-src 'none'"],
      [CSP_RO, "font-src 'none'"],
    ]),
  "/meta-comma": () => page(html(`<meta http-equiv="Content-Security-Policy" content="script-src 'self', object-src 'none'">`)),
  "/meta": () =>
    page(
      html(
        `<META HTTP-EQUIV="content-security-POLICY" CONTENT="default-src &#39;self&#39;; script-src &apos;nonce-abcdefgh12&apos; &#x27;strict-dynamic&#x27;; img-src https://img.example.com/a&amp;b/">`,
      ),
    ),
  "/meta-several": () =>
    page(
      `<!doctype html><html><head>
        <!-- <meta http-equiv="Content-Security-Policy" content="script-src 'commented'"> -->
        <meta http-equiv="Content-Security-Policy" content="default-src 'self'">
        <script>document.write('<meta http-equiv="Content-Security-Policy" content="script-src *">');</script>
        <noscript><meta http-equiv="Content-Security-Policy" content="img-src *"></noscript>
        <template><meta http-equiv="Content-Security-Policy" content="img-src *"></template>
        <meta http-equiv="Content-Security-Policy" content="object-src 'none'; base-uri 'self'">
        <meta http-equiv="refresh" content="default-src x">
        <meta name="Content-Security-Policy" content="style-src x">
      </head><body>
        <meta http-equiv="Content-Security-Policy" content="frame-src 'none'">
      </body></html>`,
    ),
  "/meta-implied-body": () =>
    page(
      `<meta http-equiv="Content-Security-Policy" content="default-src 'self'">Some text<meta http-equiv="Content-Security-Policy" content="img-src *">`,
    ),
  "/meta-none": () => page(html(`<meta charset="utf-8">`)),
  "/meta-late": () => page(html(`<style>/*${"x".repeat(2 * MiB)}*/</style><meta http-equiv="Content-Security-Policy" content="default-src 'self'">`)),
  "/meta-early-big-page": () =>
    page(html(`<meta http-equiv="Content-Security-Policy" content="default-src 'self'">`, `<p>${"y".repeat(3 * MiB)}</p>`)),
  "/header-20k": () => page(html(""), [[CSP, POLICY_20K.text]]),
  "/header-70k": () => page(html(""), [[CSP, POLICY_70K.text]]),
  "/redirect": () => new Response(null, { status: 302, headers: { location: "/enforcing" } }),
  "/redirect-with-csp": () => new Response(null, { status: 301, headers: { location: `/enforcing`, [CSP]: "img-src 'self'" } }),
  "/redirect-chain-3": () => new Response(null, { status: 307, headers: { location: "/redirect-chain-2" } }),
  "/redirect-chain-2": () => new Response(null, { status: 308, headers: { location: "/redirect" } }),
  "/loop": () => new Response(null, { status: 302, headers: { location: "/loop" } }),
  "/not-found-with-csp": () => page("nope", [[CSP, "default-src 'self'"]], 404),
  "/server-error": () => page("boom", [[CSP, "default-src 'self'"]], 500),
  "/no-csp": () => page(html("")),
  "/invalid-csp": () => page(html(""), [[CSP, "foo-src x; report-to a(b"]]),
  "/huge-body": () =>
    page(HUGE, [
      [CSP, "default-src 'self'"],
      [CSP_RO, "img-src 'none'"],
      ["content-type", "text/plain"],
    ]),
  "/huge-meta": () => new Response(Buffer.concat([Buffer.from(META_HEAD), HUGE]), { headers: { "content-type": "text/html" } }),
  "/endless-header": () =>
    endless(
      [
        [CSP, "default-src 'self'"],
        [CSP_RO, "img-src 'none'"],
      ],
      "x",
      new Uint8Array([0x78]),
      200,
    ),
  "/endless-meta": () => endless([["content-type", "text/html"]], META_HEAD, new Uint8Array(256 * 1024).fill(0x62), 5),
  "/bomb-header": () => new Response(BOMB, { headers: { [CSP]: "default-src 'self'", "content-encoding": "gzip" } }),
  "/bomb-meta": () => new Response(META_BOMB, { headers: { "content-type": "text/html", "content-encoding": "gzip" } }),
  "/bomb-no-meta": () => new Response(BOMB, { headers: { "content-type": "text/html", "content-encoding": "gzip" } }),
};

let open: TestServer; // allow_private_targets = true
let closed: TestServer; // default: private targets refused
let a: TestUser;
let c: TestUser;

beforeAll(async () => {
  upstream = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const path = new URL(req.url).pathname;
      hits.push(path);
      userAgents.push(req.headers.get("user-agent") ?? "");
      return (ROUTES[path] ?? (() => new Response("missing", { status: 404 })))();
    },
  });
  up = `http://127.0.0.1:${upstream.port}`;
  open = await startTestServer({ env: { SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true" } });
  closed = await startTestServer();
  a = await open.createUser();
  c = await closed.createUser();
});
afterAll(async () => {
  await open.stop();
  await closed.stop();
  upstream.stop(true);
});

let seq = 0;
const remote = (url: string, source: string, followRedirects?: unknown) => ({
  type: "remote",
  value: followRedirects === undefined ? { url, source } : { url, source, followRedirects },
});
const importRemote = (user: TestUser, url: string, source: string, followRedirects?: unknown) =>
  user.client.post(BASE, { name: `remote-${++seq}`, content: remote(url, source, followRedirects) });

async function importedWithWarnings(url: string, source: string, followRedirects?: unknown) {
  const res = await importRemote(a, url, source, followRedirects);
  expect({ url, source, status: res.status, message: res.json?.message }).toEqual({ url, source, status: 201, message: undefined });
  return res.json as { directives: unknown[]; warnings?: string[] };
}
const imported = async (url: string, source: string, followRedirects?: unknown) =>
  (await importedWithWarnings(url, source, followRedirects)).directives;

async function failure(user: TestUser, url: string, source: string, followRedirects?: unknown) {
  const res = await importRemote(user, url, source, followRedirects);
  expect(res.status).toBe(400);
  return res.json as { code: string; message: string };
}

describe("csp remote import: sources", () => {
  test("enforcingHeader reads Content-Security-Policy (then parsed as serialized: unknown directives dropped, with a warning)", async () => {
    expect(await importedWithWarnings(`${up}/enforcing`, "enforcingHeader")).toMatchObject({
      directives: [
        { name: "default-src", value: ["'self'"] },
        { name: "script-src", value: ["'self'", "https://cdn.example.com"] },
      ],
      warnings: ["unknown-directive: dropped (unknown directive)"],
    });
    expect(userAgents.at(-1)).toStartWith("Secbox/");
  });

  test("reportOnlyHeader reads Content-Security-Policy-Report-Only", async () => {
    expect(await imported(`${up}/report-only`, "reportOnlyHeader")).toEqual([
      { name: "default-src", value: ["'none'"] },
      { name: "report-uri", value: ["/csp-report"] },
    ]);
  });

  test("each source reads only its own delivery", async () => {
    expect(await imported(`${up}/both`, "enforcingHeader")).toEqual([{ name: "default-src", value: ["'self'"] }]);
    expect(await imported(`${up}/both`, "reportOnlyHeader")).toEqual([{ name: "default-src", value: ["'none'"] }]);
    expect(await imported(`${up}/both`, "meta")).toEqual([{ name: "img-src", value: ["'self'"] }]);
    expect((await failure(a, `${up}/report-only`, "enforcingHeader")).code).toBe("UPSTREAM_FAILED");
    expect((await failure(a, `${up}/enforcing`, "reportOnlyHeader")).code).toBe("UPSTREAM_FAILED");
    expect((await failure(a, `${up}/enforcing`, "meta")).code).toBe("UPSTREAM_FAILED");
  });

  test("several policies → the first, with a warning naming how many were sent (header lines, comma-joined, meta tags)", async () => {
    const several = (n: number, how: string) =>
      `the response holds ${n} policies (${how}); only the first was imported, while browsers enforce all of them`;
    const HEADERS = "Content-Security-Policy header lines and comma-separated policies";
    expect(await importedWithWarnings(`${up}/several-headers`, "enforcingHeader")).toMatchObject({
      directives: [{ name: "default-src", value: ["'self'"] }],
      warnings: [several(2, HEADERS)],
    });
    expect(await importedWithWarnings(`${up}/comma-joined`, "enforcingHeader")).toMatchObject({
      directives: [{ name: "default-src", value: ["'self'"] }],
      warnings: [several(2, HEADERS)],
    });
    // Empty members of a comma list are no policies; every header line counts.
    expect(await importedWithWarnings(`${up}/several-mixed`, "enforcingHeader")).toMatchObject({
      directives: [{ name: "default-src", value: ["'self'"] }],
      warnings: [several(3, HEADERS)],
    });
    expect(await importedWithWarnings(`${up}/several-mixed`, "reportOnlyHeader")).toMatchObject({
      directives: [{ name: "img-src", value: ["'none'"] }],
      warnings: [several(2, "Content-Security-Policy-Report-Only header lines and comma-separated policies")],
    });
    expect(await importedWithWarnings(`${up}/meta-comma`, "meta")).toMatchObject({
      directives: [{ name: "script-src", value: ["'self'"] }],
      warnings: [several(2, '<meta http-equiv="Content-Security-Policy"> tags and comma-separated policies')],
    });
    // One policy: no warnings field at all.
    expect("warnings" in (await importedWithWarnings(`${up}/report-only`, "reportOnlyHeader"))).toBe(false);
  });

  test("meta: http-equiv matched case-insensitively, entities decoded", async () => {
    expect(await imported(`${up}/meta`, "meta")).toEqual([
      { name: "default-src", value: ["'self'"] },
      { name: "script-src", value: ["'nonce-abcdefgh12'", "'strict-dynamic'"] },
      { name: "img-src", value: ["https://img.example.com/a&b/"] },
    ]);
  });

  test("meta: the first head tag is imported; comments, scripts, noscript, template, name= and body tags are not policies", async () => {
    expect(await importedWithWarnings(`${up}/meta-several`, "meta")).toEqual(
      expect.objectContaining({
        directives: [{ name: "default-src", value: ["'self'"] }],
        warnings: [
          'the response holds 2 policies (<meta http-equiv="Content-Security-Policy"> tags and comma-separated policies); only the first was imported, while browsers enforce all of them',
        ],
      }),
    );
    // Text starts the (implied) body: a later meta is outside the head.
    expect(await imported(`${up}/meta-implied-body`, "meta")).toEqual([{ name: "default-src", value: ["'self'"] }]);
  });

  test("meta: only the first 2 MiB of HTML are read", async () => {
    expect((await failure(a, `${up}/meta-late`, "meta")).code).toBe("UPSTREAM_FAILED");
    expect(await imported(`${up}/meta-early-big-page`, "meta")).toEqual([{ name: "default-src", value: ["'self'"] }]);
  });

  test("no policy found, or nothing valid in it → 400", async () => {
    const none = await failure(a, `${up}/meta-none`, "meta");
    expect(none.code).toBe("UPSTREAM_FAILED");
    expect(none.message).toContain("content.value.url");
    expect((await failure(a, `${up}/no-csp`, "enforcingHeader")).code).toBe("UPSTREAM_FAILED");
    expect((await failure(a, `${up}/no-csp`, "reportOnlyHeader")).code).toBe("UPSTREAM_FAILED");
    expect((await failure(a, `${up}/invalid-csp`, "enforcingHeader")).code).toBe("INVALID_INPUT");
  });
});

describe("csp remote import: big, endless and compressed bodies", () => {
  test("header sources do not read the body: an 11 MiB page imports", async () => {
    expect(await imported(`${up}/huge-body`, "enforcingHeader")).toEqual([{ name: "default-src", value: ["'self'"] }]);
    expect(await imported(`${up}/huge-body`, "reportOnlyHeader")).toEqual([{ name: "img-src", value: ["'none'"] }]);
  });

  test("header sources do not wait for a slow, endless body", async () => {
    // (waiting for the body would end in the import's 10 s timeout: an error, not these directives)
    expect(await imported(`${up}/endless-header`, "enforcingHeader")).toEqual([{ name: "default-src", value: ["'self'"] }]);
    expect(await imported(`${up}/endless-header`, "reportOnlyHeader")).toEqual([{ name: "img-src", value: ["'none'"] }]);
    await waitUntil(() => endlessOpen === 0, "the endless connection to be dropped"); // the upstream stopped sending
  });

  test("meta reads the first 2 MiB of an 11 MiB or endless page and stops there", async () => {
    expect(await imported(`${up}/huge-meta`, "meta")).toEqual([{ name: "script-src", value: ["'self'"] }]);
    expect(await imported(`${up}/endless-meta`, "meta")).toEqual([{ name: "script-src", value: ["'self'"] }]);
    for (let i = 0; i < 100 && endlessOpen > 0; i++) await Bun.sleep(20);
    expect(endlessOpen).toBe(0);
  });

  test("gzip bombs: header sources ignore the body; meta decodes at most 2 MiB", async () => {
    const before = process.memoryUsage().rss;
    expect(await imported(`${up}/bomb-header`, "enforcingHeader")).toEqual([{ name: "default-src", value: ["'self'"] }]);
    expect(await imported(`${up}/bomb-meta`, "meta")).toEqual([{ name: "script-src", value: ["'self'"] }]);
    const none = await failure(a, `${up}/bomb-no-meta`, "meta");
    expect(none.code).toBe("UPSTREAM_FAILED");
    expect(none.message).toContain("no <meta");
    expect(process.memoryUsage().rss - before).toBeLessThan(128 * MiB);
  });
});

describe("csp remote import: large headers (issue 30)", () => {
  test("a 20 KB policy header imports whole (response heads up to 64 KiB); a 70 KB one → 400 UPSTREAM_FAILED 'header too large'", async () => {
    expect(POLICY_20K.text.length).toBeGreaterThan(19_900);
    expect(await imported(`${up}/header-20k`, "enforcingHeader")).toEqual([
      { name: "default-src", value: ["'self'"] },
      { name: "script-src", value: ["'self'", ...POLICY_20K.hosts] },
    ]);
    const over = await failure(a, `${up}/header-70k`, "enforcingHeader");
    expect(over).toEqual({ code: "UPSTREAM_FAILED", message: "content.value.url: Upstream response header too large (more than 64 KiB)" });
  });
});

describe("csp remote import: redirects and upstream failures", () => {
  test("redirects are followed by default and with followRedirects: true (up to 10)", async () => {
    const expected = [
      { name: "default-src", value: ["'self'"] },
      { name: "script-src", value: ["'self'", "https://cdn.example.com"] },
    ];
    expect(await imported(`${up}/redirect`, "enforcingHeader")).toEqual(expected);
    expect(await imported(`${up}/redirect-chain-3`, "enforcingHeader", true)).toEqual(expected);
    expect(await imported(`${up}/redirect`, "enforcingHeader", null)).toEqual(expected);
    const loop = await failure(a, `${up}/loop`, "enforcingHeader");
    expect(loop.code).toBe("UPSTREAM_FAILED");
    expect(loop.message).toContain("redirect");
  });

  test("followRedirects: false reads the redirect response itself", async () => {
    const before = hits.length;
    expect((await failure(a, `${up}/redirect`, "enforcingHeader", false)).code).toBe("UPSTREAM_FAILED");
    expect(hits.slice(before)).toEqual(["/redirect"]);
    expect(await imported(`${up}/redirect-with-csp`, "enforcingHeader", false)).toEqual([{ name: "img-src", value: ["'self'"] }]);
  });

  test("status ≥ 400 → 400 UPSTREAM_FAILED even with a policy; connection failure too", async () => {
    const nf = await failure(a, `${up}/not-found-with-csp`, "enforcingHeader");
    expect(nf).toEqual({ code: "UPSTREAM_FAILED", message: expect.stringContaining("404") });
    expect((await failure(a, `${up}/server-error`, "enforcingHeader")).code).toBe("UPSTREAM_FAILED");
    // A closed port on loopback.
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const deadPort = probe.port;
    probe.stop(true);
    expect((await failure(a, `http://127.0.0.1:${deadPort}/`, "enforcingHeader")).code).toBe("UPSTREAM_FAILED");
  });

  test("invalid remote values → 400 INVALID_INPUT naming the field, nothing fetched", async () => {
    const before = hits.length;
    const cases: [unknown, string][] = [
      [{ source: "meta" }, "content.value.url"],
      [{ url: "", source: "meta" }, "content.value.url"],
      [{ url: "not a url", source: "meta" }, "content.value.url"],
      [{ url: "ftp://example.com/", source: "meta" }, "content.value.url"],
      [{ url: "file:///etc/passwd", source: "meta" }, "content.value.url"],
      [{ url: `${up}/enforcing`, source: "body" }, "content.value.source"],
      [{ url: `${up}/enforcing` }, "content.value.source"],
      [{ url: `${up}/enforcing`, source: "meta", followRedirects: "yes" }, "content.value.followRedirects"],
      [[`${up}/enforcing`], "content.value"],
    ];
    for (const [value, field] of cases) {
      const res = await a.client.post(BASE, { name: "bad-remote", content: { type: "remote", value } });
      expect({ value, status: res.status, code: res.json.code }).toEqual({ value, status: 400, code: "INVALID_INPUT" });
      expect(res.json.message).toStartWith(`${field}:`);
    }
    expect(hits.length).toBe(before);
  });
});

describe("csp remote import: private targets", () => {
  test("refused without network.allow_private_targets → 400 TARGET_NOT_ALLOWED, nothing fetched", async () => {
    const before = hits.length;
    for (const url of [
      `${up}/enforcing`,
      `http://localhost:${upstream.port}/enforcing`,
      `http://[::1]:${upstream.port}/`,
      "http://169.254.169.254/latest/meta-data/",
      "http://10.0.0.1/",
    ]) {
      const res = await importRemote(c, url, "enforcingHeader");
      expect({ url, status: res.status, code: res.json.code }).toEqual({ url, status: 400, code: "TARGET_NOT_ALLOWED" });
      // §27: the refusal says how to allow it.
      expect(res.json.message).toBe(
        "content.value.url: URL not allowed (private address) (an operator can allow private targets with network.allow_private_targets)",
      );
    }
    expect(hits.length).toBe(before);
    expect((await c.client.get(BASE)).json.total).toBe(0);
  });

  test("the same URL imports where private targets are allowed", async () => {
    expect(await imported(`${up}/enforcing`, "enforcingHeader")).toHaveLength(2);
  });
});

describe("csp remote import: update", () => {
  test("PUT with remote content replaces the directives; unknown id → 404 without fetching", async () => {
    const p = (await a.client.post(BASE, { name: "to-update", content: { type: "serialized", value: "img-src *" } })).json;
    expect((await a.client.put(`${BASE}/${p.id}`, { content: remote(`${up}/report-only`, "reportOnlyHeader") })).status).toBe(204);
    expect((await a.client.get(`${BASE}/${p.id}`)).json.policy.directives).toEqual([
      { name: "default-src", value: ["'none'"] },
      { name: "report-uri", value: ["/csp-report"] },
    ]);
    // Something dropped: 200 {warnings} (§13.3).
    const warned = await a.client.put(`${BASE}/${p.id}`, { content: remote(`${up}/enforcing`, "enforcingHeader") });
    expect(warned.status).toBe(200);
    expect(warned.json).toEqual({ warnings: ["unknown-directive: dropped (unknown directive)"] });
    expect((await a.client.get(`${BASE}/${p.id}`)).json.policy.directives).toHaveLength(2);
    expect((await a.client.put(`${BASE}/${p.id}`, { content: remote(`${up}/report-only`, "reportOnlyHeader") })).status).toBe(204);
    const before = hits.length;
    expect((await a.client.put(`${BASE}/${newId()}`, { content: remote(`${up}/enforcing`, "enforcingHeader") })).status).toBe(404);
    expect(hits.length).toBe(before);
    const failed = await a.client.put(`${BASE}/${p.id}`, { content: remote(`${up}/no-csp`, "enforcingHeader") });
    expect(failed.json.code).toBe("UPSTREAM_FAILED");
    expect((await a.client.get(`${BASE}/${p.id}`)).json.policy.directives).toHaveLength(2);
    expect((await c.client.put(`${BASE}/${newId()}`, { content: remote(`${up}/enforcing`, "enforcingHeader") })).json.code).toBe(
      "TARGET_NOT_ALLOWED",
    );
  });
});
