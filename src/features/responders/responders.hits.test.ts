// Serving responder hits through real HTTP (supplement §11.3–§11.5): host parsing, the path form, matching
// and precedence, every method, default responses, secrets templating and cache invalidation on writes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { quickUser } from "../../tests/fixtures/quick-users";

let srv: TestServer;
let a: TestUser;
let b: TestUser;
/** Spare users, one per describe block. */
let spare: TestUser[];
let port: number;

const BASE = "/api/webhooks/responders";
const CSP = "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads";

beforeAll(async () => {
  srv = await startTestServer();
  port = Number(new URL(srv.url).port);
  const users = await Promise.all(Array.from({ length: 9 }, () => quickUser(srv)));
  [a, b] = [users[0]!, users[1]!];
  spare = users.slice(2);
});
afterAll(() => srv.stop());

let seq = 0;
async function create(user: TestUser, fields: Record<string, unknown>) {
  const res = await user.client.post(BASE, { name: `hit-${++seq}`, ...fields });
  expect(res.status, JSON.stringify(res.json)).toBe(201);
  return res.json;
}

interface HitInit extends RequestInit {
  host?: string;
  prefix?: string;
}
/** A request to the test server carrying a responder Host header (`<prefix>-<handle>.localhost:7070` by default). */
function hit(user: TestUser, path: string, init: HitInit = {}) {
  const host = init.host ?? `${init.prefix ? `${init.prefix}-` : ""}${user.handle}.localhost:7070`;
  return fetch(srv.url + path, { ...init, headers: { host, ...(init.headers as Record<string, string>) }, redirect: "manual" });
}

/** Sends raw HTTP/1.1 bytes and returns the whole response text (the request must say Connection: close). */
async function raw(text: string, waitMs = 300): Promise<string> {
  let out = "";
  let closed: () => void;
  const done = new Promise<void>((r) => (closed = r));
  const sock = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, d) {
        out += Buffer.from(d).toString("latin1");
      },
      close() {
        closed();
      },
      error() {
        closed();
      },
    },
  });
  sock.write(text);
  await Promise.race([done, Bun.sleep(waitMs)]);
  sock.end();
  return out;
}

const statusOf = (rawResponse: string) => Number(rawResponse.split(" ")[1]);
const bodyOf = (rawResponse: string) => rawResponse.slice(rawResponse.indexOf("\r\n\r\n") + 4);

describe("host dispatch (§11.3)", () => {
  beforeAll(async () => {
    await create(a, { location: { pathType: "*", path: "/" }, settings: { body: "plain", headers: [["content-type", "text/plain"]] } });
    await create(a, {
      location: { pathType: "*", path: "/", subdomainPrefix: "shop" },
      settings: { body: "shop", headers: [["content-type", "text/plain"]] },
    });
    await create(a, {
      location: { pathType: "*", path: "/", subdomainPrefix: "my-shop" },
      settings: { body: "my-shop", headers: [["content-type", "text/plain"]] },
    });
  });

  test("<handle>.<domain> with any port, no port, and any case", async () => {
    for (const host of [
      `${a.handle}.localhost:7070`,
      `${a.handle}.localhost`,
      `${a.handle}.localhost:1234`,
      `${a.handle.toUpperCase()}.LocalHost:7070`,
    ]) {
      const res = await hit(a, "/anything", { host });
      expect(res.status, host).toBe(200);
      expect(await res.text()).toBe("plain");
    }
  });

  test("<prefix>-<handle>: the label splits at its LAST dash", async () => {
    expect(await (await hit(a, "/", { prefix: "shop" })).text()).toBe("shop");
    expect(await (await hit(a, "/", { prefix: "SHOP" })).text()).toBe("shop");
    expect(await (await hit(a, "/", { prefix: "my-shop" })).text()).toBe("my-shop");
    // A prefix nobody owns, and an empty prefix: 404 with an empty body.
    for (const prefix of ["nope", "my"]) {
      const res = await hit(a, "/", { prefix });
      expect(res.status).toBe(404);
      expect(await res.text()).toBe("");
    }
    const empty = await hit(a, "/", { host: `-${a.handle}.localhost` });
    expect(empty.status).toBe(404);
    expect(await empty.text()).toBe("");
  });

  test("unknown handle → 404 empty body (not the API's JSON)", async () => {
    for (const host of ["nosuchhandle.localhost:7070", "shop-nosuchhandle.localhost"]) {
      const res = await hit(a, "/", { host });
      expect(res.status).toBe(404);
      expect(await res.text()).toBe("");
      expect(res.headers.get("content-type")).toBeNull();
    }
  });

  test("every path on a responder host belongs to the engine, /api/... included", async () => {
    const res = await hit(a, "/api/status");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("plain");
    const other = await hit(b, "/api/status");
    expect(other.status).toBe(404);
    expect(await other.text()).toBe("");
  });

  test("other hosts are the API: bare domain, deeper names, IP literals", async () => {
    for (const host of ["localhost:7070", `x.${a.handle}.localhost`, "127.0.0.1:7070", "[::1]:7070", `${a.handle}.example.com`]) {
      const res = await hit(a, "/api/status", { host });
      expect(res.status, host).toBe(200);
      expect(((await res.json()) as any).version).toBeString();
    }
  });
});

describe("path form /api/webhooks/<handle>[/<rest>] (§11.3)", () => {
  test("serves the unprefixed responders with the sandbox CSP; bare handle is path /", async () => {
    const u = spare[0]!;
    await create(u, { location: { pathType: "=", path: "/" }, settings: { body: "root", headers: [["content-type", "text/plain"]] } });
    await create(u, { location: { pathType: "=", path: "/In/Hook" }, settings: { body: "in", headers: [["content-type", "text/plain"]] } });
    await create(u, { location: { pathType: "=", path: "/pre", subdomainPrefix: "only" }, settings: { body: "prefixed" } });
    for (const path of [`/api/webhooks/${u.handle}`, `/api/webhooks/${u.handle}/`, `/api/webhooks/${u.handle}?x=1`]) {
      const res = await fetch(srv.url + path);
      expect(res.status, path).toBe(200);
      expect(await res.text()).toBe("root");
      expect(res.headers.get("content-security-policy")).toBe(CSP);
    }
    const sub = await fetch(`${srv.url}/api/webhooks/${u.handle.toUpperCase()}/in/hook/`);
    expect(await sub.text()).toBe("in");
    expect(sub.headers.get("content-security-policy")).toBe(CSP);
    // Prefixed responders are reachable only by host.
    const pre = await fetch(`${srv.url}/api/webhooks/${u.handle}/pre`);
    expect(pre.status).toBe(404);
    expect(pre.headers.get("content-security-policy")).toBe(CSP);
    expect(await pre.text()).toBe("");
    expect(await (await hit(u, "/pre", { prefix: "only" })).text()).toBe("prefixed");
    // The host form carries no CSP of its own.
    expect((await hit(u, "/In/Hook")).headers.get("content-security-policy")).toBeNull();
  });

  test("a visitor's Secbox session cookie never reaches the responder: not recorded, not in the script's context", async () => {
    const owner = await quickUser(srv);
    const visitor = await quickUser(srv);
    const cookieName = srv.config.security.session_cookie;
    const tracked = await create(owner, { location: { pathType: "=", path: "/trap" }, settings: { requestsToTrack: 5, body: "hi" } });
    await create(owner, {
      location: { pathType: "=", path: "/echo" },
      settings: { script: "({ body: context.headers.cookie ?? '(none)', headers: { 'content-type': 'text/plain' } })" },
    });
    // what the visitor's browser sends along on a top-level visit of the API origin
    const cookie = `theme=dark; ${cookieName}=${visitor.session}; lang=en`;
    expect((await fetch(`${srv.url}/api/webhooks/${owner.handle}/trap`, { headers: { cookie } })).status).toBe(200);
    expect((await fetch(`${srv.url}/api/webhooks/${owner.handle}/trap`, { headers: { cookie: `${cookieName}=${visitor.session}` } })).status).toBe(
      200,
    );
    const history = await owner.client.get(`${BASE}/${tracked.id}/_history`);
    expect(history.json.length).toBe(2);
    const recorded = history.json.map((rec: { headers: [string, string][] }) => rec.headers.find(([n]) => n === "cookie")?.[1] ?? null);
    expect(recorded.sort()).toEqual(["theme=dark; lang=en", null].sort());
    expect(JSON.stringify(history.json)).not.toContain(visitor.session);
    expect(JSON.stringify((await owner.client.get(`${BASE}/${tracked.id}/_har`)).json)).not.toContain(visitor.session);
    const echo = await fetch(`${srv.url}/api/webhooks/${owner.handle}/echo`, { headers: { cookie } });
    expect(await echo.text()).toBe("theme=dark; lang=en");
    // the host form is another origin: its cookies are the responder's own and stay as sent
    expect(await (await hit(owner, "/echo", { headers: { cookie } })).text()).toBe(cookie);
  });

  test("a Set-Cookie that would plant a session cookie is dropped, nameless forms included (§11.5 step 4)", async () => {
    const u = await quickUser(srv);
    const name = srv.config.security.session_cookie;
    await create(u, {
      location: { pathType: "=", path: "/plant" },
      settings: {
        headers: [
          ["set-cookie", `${name}=x; Path=/`],
          ["set-cookie", `=${name}=y; Path=/api; Max-Age=86400`],
          ["set-cookie", ` = ${name} =z`],
          ["set-cookie", `${name}`],
          ["set-cookie", "keep=1; Path=/"],
          ["set-cookie", `=other=2`],
        ],
      },
    });
    const host = await hit(u, "/plant");
    expect(host.status).toBe(200);
    expect(host.headers.getSetCookie()).toEqual(["keep=1; Path=/", "=other=2"]);
    // the path form (the API's origin) sets no cookies at all
    const path = await fetch(`${srv.url}/api/webhooks/${u.handle}/plant`);
    expect(path.status).toBe(200);
    expect(path.headers.getSetCookie()).toEqual([]);
  });

  test("unknown handle → 404 empty with CSP; `responders` is the management API, never a handle", async () => {
    const res = await fetch(`${srv.url}/api/webhooks/nosuchhandle/x`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("");
    expect(res.headers.get("content-security-policy")).toBe(CSP);
    const api = await fetch(`${srv.url}/api/webhooks/responders`);
    expect(api.status).toBe(401);
    expect(((await api.json()) as any).code).toBe("UNAUTHENTICATED");
    const apiSlash = await fetch(`${srv.url}/api/webhooks/responders/_stats`);
    expect(apiSlash.status).toBe(401);
    const empty = await fetch(`${srv.url}/api/webhooks/`);
    expect(empty.status).toBe(404);
    expect(((await empty.json()) as any).code).toBe("NOT_FOUND");
  });
});

describe("matching and precedence (§11.4)", () => {
  let u: TestUser;
  beforeAll(async () => {
    u = spare[1]!;
    const r = (pathType: string, path: string, body: string, extra: Record<string, unknown> = {}) =>
      create(u, { location: { pathType, path }, ...extra, settings: { body, headers: [["content-type", "text/plain"]] } });
    await r("=", "/exact", "exact");
    await r("*", "/star", "star");
    await r("^", "/pre", "caret");
    // Equal length: = beats * beats ^.
    await r("=", "/same", "same=");
    await r("*", "/same", "same*");
    await r("^", "/same", "same^");
    // Longest stored path wins over type.
    await r("^", "/long", "long^");
    await r("*", "/long/er", "longer*");
    // Winner disabled → 404, no fallback to the shorter match.
    await r("^", "/dis", "dis^");
    await r("=", "/disabled", "disabled=", { enabled: false });
    // Method-specific and catch-all.
    await r("=", "/verb", "verb-get", { method: "GET" });
    await r("=", "/verb", "verb-post", { method: "POST" });
    await r("=", "/Mixed/Case", "mixed");
    await r("=", "/enc%2Fpath", "encoded");
  });

  const expectBody = async (path: string, body: string | null, init: HitInit = {}) => {
    const res = await hit(u, path, init);
    if (body === null) {
      expect(res.status, path).toBe(404);
      expect(await res.text()).toBe("");
    } else {
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toBe(body);
    }
  };

  test("= matches the path only (trailing / ignored, case ignored, query ignored)", async () => {
    await expectBody("/exact", "exact");
    await expectBody("/exact/", "exact");
    await expectBody("/EXACT?x=1", "exact");
    await expectBody("/exact/sub", null);
    await expectBody("/exactly", null);
  });

  test("* matches the path and sub-paths, not longer names", async () => {
    await expectBody("/star", "star");
    await expectBody("/star/", "star");
    await expectBody("/star/a/b", "star");
    await expectBody("/starry", null);
  });

  test("^ is a plain string prefix", async () => {
    await expectBody("/pre", "caret");
    await expectBody("/prefix", "caret");
    await expectBody("/pre/x", "caret");
    await expectBody("/pr", null);
  });

  test("equal length: = beats * beats ^", async () => {
    await expectBody("/same", "same=");
    await expectBody("/same/x", "same*");
    await expectBody("/samex", "same^");
  });

  test("the longest stored path wins", async () => {
    await expectBody("/long/er/x", "longer*");
    await expectBody("/long/e", "long^");
  });

  test("a disabled winner → 404 without fallback", async () => {
    await expectBody("/disabled", null);
    await expectBody("/disx", "dis^");
  });

  test("method-specific responders and stored case / percent-encoding", async () => {
    await expectBody("/verb", "verb-get");
    await expectBody("/verb", "verb-post", { method: "POST" });
    await expectBody("/verb", null, { method: "PUT" });
    await expectBody("/mixed/case", "mixed");
    await expectBody("/ENC%2fPATH", "encoded");
    await expectBody("/enc/path", null);
  });

  test("no candidate at all → 404 empty", async () => {
    await expectBody("/nothing-here", null);
  });
});

describe("methods (§11.4 step 2, §11.5 step 4)", () => {
  let u: TestUser;
  beforeAll(async () => {
    u = spare[2]!;
    await create(u, {
      location: { pathType: "=", path: "/any" },
      method: "ANY",
      settings: { body: "any-body", headers: [["content-type", "text/plain"]] },
    });
    for (const m of ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE"])
      await create(u, {
        location: { pathType: "=", path: `/only-${m.toLowerCase()}` },
        method: m,
        settings: { body: `only-${m}`, headers: [["content-type", "text/plain"]] },
      });
    await create(u, { location: { pathType: "=", path: "/get-only" }, method: "GET", settings: { body: "get-only" } });
  });

  test("ANY answers every method fetch can send; HEAD gets headers and Content-Length, no body", async () => {
    for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      const res = await hit(u, "/any", { method });
      expect(res.status, method).toBe(200);
      expect(await res.text(), method).toBe("any-body");
    }
    const head = await raw(`HEAD /any HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
    expect(statusOf(head)).toBe(200);
    expect(head.toLowerCase()).toContain("content-length: 8\r\n");
    expect(head.toLowerCase()).toContain("content-type: text/plain\r\n");
    expect(bodyOf(head)).toBe("");
  });

  test("TRACE and CONNECT (origin-form) reach the engine (raw HTTP)", async () => {
    for (const m of ["TRACE", "CONNECT"]) {
      const any = await raw(`${m} /any HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
      expect(statusOf(any), m).toBe(200);
      expect(bodyOf(any)).toBe("any-body");
      const only = await raw(`${m} /only-${m.toLowerCase()} HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
      expect(bodyOf(only)).toBe(`only-${m}`);
    }
  });

  test("CONNECT in authority form (CONNECT host:port) is served as path /", async () => {
    await create(u, {
      location: { pathType: "=", path: "/" },
      method: "CONNECT",
      settings: { body: "tunnel?", headers: [["content-type", "text/plain"]] },
    });
    const res = await raw(`CONNECT ${u.handle}.localhost:443 HTTP/1.1\r\nHost: ${u.handle}.localhost:443\r\nConnection: close\r\n\r\n`);
    expect(statusOf(res)).toBe(200);
    expect(bodyOf(res)).toBe("tunnel?");
  });

  test("each method-specific responder answers only its method", async () => {
    for (const m of ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]) {
      const ok = await hit(u, `/only-${m.toLowerCase()}`, { method: m });
      expect(ok.status, m).toBe(200);
      expect(await ok.text()).toBe(`only-${m}`);
      const other = await hit(u, `/only-${m.toLowerCase()}`, { method: m === "GET" ? "POST" : "GET" });
      expect(other.status, m).toBe(404);
    }
    const head = await raw(`HEAD /only-head HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
    expect(statusOf(head)).toBe(200);
    expect(head.toLowerCase()).toContain("content-length: 9\r\n");
  });

  test("HEAD matches only HEAD and ANY responders, never GET ones", async () => {
    const head = await raw(`HEAD /get-only HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
    expect(statusOf(head)).toBe(404);
    expect((await hit(u, "/get-only")).status).toBe(200);
  });

  test("a method outside the nine (WebDAV PROPFIND) → 404 even on ANY", async () => {
    const res = await raw(`PROPFIND /any HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
    expect(statusOf(res)).toBe(404);
    expect(bodyOf(res)).toBe("");
  });
});

describe("default responses (§11.5 steps 1 and 4)", () => {
  let u: TestUser;
  beforeAll(async () => {
    u = spare[3]!;
  });

  test("status, ordered duplicate headers, body; no Content-Type added when none is configured", async () => {
    await create(u, {
      location: { pathType: "=", path: "/dups" },
      settings: {
        statusCode: 418,
        headers: [
          ["X-Dup", "1"],
          ["set-cookie", "a=1"],
          ["x-dup", "2"],
          ["set-cookie", "b=2"],
          ["connection", "close"],
          ["transfer-encoding", "chunked"],
          ["keep-alive", "timeout=5"],
          ["upgrade", "h2c"],
          ["set-cookie", "secbox_session=stolen"],
          ["content-length", "999"],
        ],
        body: "teapot",
      },
    });
    const res = await hit(u, "/dups");
    expect(res.status).toBe(418);
    expect(await res.text()).toBe("teapot");
    expect(res.headers.get("x-dup")).toBe("1, 2");
    expect(res.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(res.headers.get("content-type")).toBeNull();
    expect(res.headers.get("keep-alive")).toBeNull();
    expect(res.headers.get("upgrade")).toBeNull();
    expect(res.headers.get("date")).toBeString();
    // The prebuilt header set is shared by every hit: a second hit is identical (nothing leaked into it).
    const again = await hit(u, "/dups");
    expect([...again.headers].filter(([n]) => n !== "date")).toEqual([...res.headers].filter(([n]) => n !== "date"));
    const viaPath = await fetch(`${srv.url}/api/webhooks/${u.handle}/dups`);
    expect(viaPath.headers.get("content-security-policy")).toBe(CSP);
    expect((await hit(u, "/dups")).headers.get("content-security-policy")).toBeNull();
    // On the wire: the produced order, repeats of set-cookie as separate lines, a Content-Length of 6.
    const wire = await raw(`GET /dups HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
    const lines = wire
      .slice(0, wire.indexOf("\r\n\r\n"))
      .split("\r\n")
      .map((l) => l.toLowerCase());
    expect(lines.filter((l) => l.startsWith("set-cookie:"))).toEqual(["set-cookie: a=1", "set-cookie: b=2"]);
    expect(lines.filter((l) => l.startsWith("content-length:"))).toEqual(["content-length: 6"]);
    expect(lines.some((l) => l.startsWith("content-type:"))).toBe(false);
    expect(bodyOf(wire)).toBe("teapot");
  });

  test("a configured Content-Type is sent as given; empty body, 204 and 304 carry no body", async () => {
    await create(u, {
      location: { pathType: "=", path: "/json" },
      settings: { headers: [["Content-Type", "application/json"]], body: '{"ok":true}' },
    });
    await create(u, { location: { pathType: "=", path: "/empty" }, settings: { statusCode: 202 } });
    await create(u, { location: { pathType: "=", path: "/nc" }, settings: { statusCode: 204, body: "ignored" } });
    await create(u, { location: { pathType: "=", path: "/nm" }, settings: { statusCode: 304, body: "ignored" } });
    const json = await hit(u, "/json");
    expect(json.headers.get("content-type")).toBe("application/json");
    expect(await json.json()).toEqual({ ok: true });
    const empty = await hit(u, "/empty");
    expect(empty.status).toBe(202);
    expect(await empty.text()).toBe("");
    for (const [path, status] of [
      ["/nc", 204],
      ["/nm", 304],
    ] as const) {
      const wire = await raw(`GET ${path} HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
      expect(statusOf(wire)).toBe(status);
      expect(bodyOf(wire)).toBe("");
    }
  });

  test("non-ASCII header values go out as UTF-8 bytes and never affect the user's other responders", async () => {
    await create(u, { location: { pathType: "=", path: "/utf-h" }, settings: { headers: [["x-u", "日本 é"]], body: "hi" } });
    await create(u, { location: { pathType: "=", path: "/utf-other" }, settings: { body: "other" } });
    const wire = await raw(`GET /utf-h HTTP/1.1\r\nHost: ${u.handle}.localhost\r\nConnection: close\r\n\r\n`);
    expect(statusOf(wire)).toBe(200);
    const line = wire.split("\r\n").find((l) => l.toLowerCase().startsWith("x-u:"))!;
    expect(Buffer.from(line, "latin1").toString("utf8")).toBe("x-u: 日本 é");
    expect(bodyOf(wire)).toBe("hi");
    expect(await (await hit(u, "/utf-other")).text()).toBe("other");
    expect((await hit(u, "/utf-none")).status).toBe(404);
  });

  test("binary-safe large body without a type arrives intact", async () => {
    const big = "x".repeat(300_000);
    await create(u, { location: { pathType: "=", path: "/big" }, settings: { body: big } });
    const res = await hit(u, "/big");
    expect(res.headers.get("content-type")).toBeNull();
    expect(await res.text()).toBe(big);
  });

  test("${secrets.NAME} is substituted in body and header values only when the selector exposes NAME", async () => {
    const one = (await u.client.post("/api/user/secrets", { name: "TOKEN_ONE", value: "s3cr3t-1" })).json.id;
    await u.client.post("/api/user/secrets", { name: "TOKEN_TWO", value: "s3cr3t-2" });
    const settings = (secrets: unknown) => ({
      secrets,
      headers: [
        ["content-type", "text/plain"],
        ["x-auth", "Bearer ${secrets.TOKEN_ONE}"],
      ],
      body: "one=${secrets.TOKEN_ONE} two=${secrets.TOKEN_TWO} missing=${secrets.NOPE} raw=$" + "{secrets.}",
    });
    await create(u, { location: { pathType: "=", path: "/tpl-all" }, settings: settings("all") });
    await create(u, { location: { pathType: "=", path: "/tpl-none" }, settings: settings("none") });
    await create(u, { location: { pathType: "=", path: "/tpl-one" }, settings: settings({ selected: [one] }) });

    const all = await hit(u, "/tpl-all");
    expect(await all.text()).toBe("one=s3cr3t-1 two=s3cr3t-2 missing=${secrets.NOPE} raw=${secrets.}");
    expect(all.headers.get("x-auth")).toBe("Bearer s3cr3t-1");
    const none = await hit(u, "/tpl-none");
    expect(await none.text()).toBe("one=${secrets.TOKEN_ONE} two=${secrets.TOKEN_TWO} missing=${secrets.NOPE} raw=${secrets.}");
    expect(none.headers.get("x-auth")).toBe("Bearer ${secrets.TOKEN_ONE}");
    const sel = await hit(u, "/tpl-one");
    expect(await sel.text()).toBe("one=s3cr3t-1 two=${secrets.TOKEN_TWO} missing=${secrets.NOPE} raw=${secrets.}");

    // A new secret value is used at once (values are never cached with the responder).
    await u.client.put(`/api/user/secrets/${one}`, { value: "rotated" });
    expect(await (await hit(u, "/tpl-one")).text()).toStartWith("one=rotated ");
    // Another user's secret of the same name is never used.
    await b.client.post("/api/user/secrets", { name: "TOKEN_TWO", value: "b-value" });
    expect(await (await hit(u, "/tpl-all")).text()).toContain("two=s3cr3t-2");
  });
});

describe("writes take effect at once (per-handle cache invalidation)", () => {
  test("update body, disable, re-enable, delete", async () => {
    const u = spare[4]!;
    const r = await create(u, { location: { pathType: "=", path: "/live" }, settings: { body: "v1", headers: [["content-type", "text/plain"]] } });
    expect(await (await hit(u, "/live")).text()).toBe("v1");
    await u.client.put(`${BASE}/${r.id}`, { settings: { body: "v2", headers: [["content-type", "text/plain"]] } });
    expect(await (await hit(u, "/live")).text()).toBe("v2");
    await u.client.put(`${BASE}/${r.id}`, { enabled: false });
    expect((await hit(u, "/live")).status).toBe(404);
    await u.client.put(`${BASE}/${r.id}`, { enabled: true, location: { pathType: "=", path: "/moved" } });
    expect((await hit(u, "/live")).status).toBe(404);
    expect(await (await hit(u, "/moved")).text()).toBe("v2");
    await u.client.delete(`${BASE}/${r.id}`);
    expect((await hit(u, "/moved")).status).toBe(404);
  });
});

describe("cross-user isolation", () => {
  test("each handle serves only its owner's responders; B's changes never affect A", async () => {
    const [x, y] = [spare[5]!, spare[6]!];
    await create(x, { location: { pathType: "=", path: "/same" }, settings: { body: "from-x", headers: [["content-type", "text/plain"]] } });
    const ry = await create(y, {
      location: { pathType: "=", path: "/same" },
      settings: { body: "from-y", headers: [["content-type", "text/plain"]] },
    });
    expect(await (await hit(x, "/same")).text()).toBe("from-x");
    expect(await (await hit(y, "/same")).text()).toBe("from-y");
    expect(await (await fetch(`${srv.url}/api/webhooks/${y.handle}/same`)).text()).toBe("from-y");
    await y.client.delete(`${BASE}/${ry.id}`);
    expect((await hit(y, "/same")).status).toBe(404);
    expect(await (await hit(x, "/same")).text()).toBe("from-x");
  });
});
