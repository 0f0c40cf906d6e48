// The page runs' loopback forward proxy on its own: raw sockets against local upstreams.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { connect, createServer, type Server, type Socket } from "node:net";
import { MAX_EVENT_URL_CHARS, MAX_EVENTS, MAX_LOOKUP_ENTRIES, openProxySession, urlHostKey, type ProxyEvent } from "./proxy";

let http: ReturnType<typeof Bun.serve>;
let echo: Server;
let echoPort = 0;
const upstreamSeen: { method: string; path: string; headers: Record<string, string>; body: string }[] = [];

beforeAll(async () => {
  http = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const u = new URL(req.url);
      upstreamSeen.push({ method: req.method, path: u.pathname + u.search, headers: Object.fromEntries(req.headers), body: await req.text() });
      return new Response(`hello ${u.pathname}`, { headers: { "x-up": "1" } });
    },
  });
  echo = createServer((s) => s.pipe(s));
  await new Promise<void>((r) => echo.listen(0, "127.0.0.1", r));
  echoPort = (echo.address() as { port: number }).port;
});

afterAll(() => {
  http.stop(true);
  echo.close();
});

/** Sends raw bytes to the proxy and collects everything until the proxy closes (or `until` matches). */
function exchange(port: number, data: string, until?: RegExp): Promise<{ text: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: "127.0.0.1", port });
    let text = "";
    const done = () => resolve({ text, socket: s });
    s.on("data", (c) => {
      text += c.toString("latin1");
      if (until?.test(text)) done();
    });
    s.on("end", done);
    s.on("close", done);
    s.on("error", reject);
    s.write(data);
  });
}

describe("page proxy", () => {
  test("plain HTTP: origin-form upstream request, proxy headers dropped, body forwarded, Connection: close", async () => {
    const p = await openProxySession({ allowPrivate: true });
    upstreamSeen.length = 0;
    const port = http.port as number;
    const { text } = await exchange(
      p.port,
      `POST http://127.0.0.1:${port}/x?q=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nProxy-Connection: keep-alive\r\nProxy-Authorization: Basic Zm9vOmJhcg==\r\nConnection: keep-alive\r\nContent-Length: 5\r\n\r\nabcde`,
    );
    expect(text).toStartWith("HTTP/1.1 200");
    expect(text.toLowerCase()).toContain("connection: close");
    expect(text.toLowerCase()).not.toContain("keep-alive");
    expect(text).toEndWith("hello /x");
    expect(upstreamSeen).toHaveLength(1);
    expect(upstreamSeen[0]).toMatchObject({ method: "POST", path: "/x?q=1", body: "abcde" });
    expect(upstreamSeen[0]?.headers["proxy-authorization"]).toBeUndefined();
    expect(upstreamSeen[0]?.headers["proxy-connection"]).toBeUndefined();
    expect(p.connections).toBe(1);
    await p.close();
  });

  test("CONNECT tunnels bytes both ways to an allowed target; close() cuts open tunnels", async () => {
    const p = await openProxySession({ allowPrivate: true });
    const { text, socket } = await exchange(p.port, `CONNECT 127.0.0.1:${echoPort} HTTP/1.1\r\nHost: 127.0.0.1:${echoPort}\r\n\r\n`, /\r\n\r\n/);
    expect(text).toStartWith("HTTP/1.1 200");
    const echoed = await new Promise<string>((r) => {
      socket.once("data", (c) => r(c.toString()));
      socket.write("ping");
    });
    expect(echoed).toBe("ping");
    const closed = new Promise<void>((r) => socket.once("close", () => r()));
    await p.close();
    await closed;
    expect(socket.destroyed).toBe(true);
  });

  test("private targets refused per session policy, recorded with URL (HTTP) or host:port (CONNECT)", async () => {
    const events: ProxyEvent[] = [];
    const p = await openProxySession({ allowPrivate: false }, (e) => events.push(e));
    upstreamSeen.length = 0;
    const port = http.port as number;
    const plain = await exchange(p.port, `GET http://127.0.0.1:${port}/secret HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    expect(plain.text).toStartWith("HTTP/1.1 403");
    expect(plain.text).toEndWith("URL not allowed (private address)");
    const tunnel = await exchange(p.port, `CONNECT localhost:443 HTTP/1.1\r\nHost: localhost:443\r\n\r\n`);
    expect(tunnel.text).toStartWith("HTTP/1.1 403");
    const meta = await exchange(p.port, `CONNECT [::ffff:169.254.169.254]:80 HTTP/1.1\r\n\r\n`);
    expect(meta.text).toStartWith("HTTP/1.1 403");
    expect(upstreamSeen).toHaveLength(0);
    expect(p.connections).toBe(0);
    expect(events.map((e) => [e.kind, e.host, e.port, e.url])).toEqual([
      ["blocked", "127.0.0.1", port, `http://127.0.0.1:${port}/secret`],
      ["blocked", "localhost", 443, undefined],
      ["blocked", "::ffff:169.254.169.254", 80, undefined],
    ]);
    expect(p.failureFor(`http://127.0.0.1:${port}/secret`)?.message).toBe("URL not allowed (private address)");
    expect(p.failureFor(`http://127.0.0.1:${port}/other`)).toBeUndefined();
    expect(p.failureFor("https://localhost/any/path")?.kind).toBe("blocked");
    expect(p.failureFor("wss://localhost/socket")?.kind).toBe("blocked");
    await p.close();
  });

  test("failures are found whatever the fragment and userinfo; refusals carry the session's marker header", async () => {
    const p = await openProxySession({ allowPrivate: false });
    const port = http.port as number;
    const plain = await exchange(p.port, `GET http://127.0.0.1:${port}/page?q=1 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    expect(plain.text).toStartWith("HTTP/1.1 403");
    for (const url of [
      `http://127.0.0.1:${port}/page?q=1`,
      `http://127.0.0.1:${port}/page?q=1#top`,
      `http://u:p@127.0.0.1:${port}/page?q=1`,
      `http://u@127.0.0.1:${port}/page?q=1#`,
    ]) {
      expect({ url, message: p.failureFor(url)?.message }).toEqual({ url, message: "URL not allowed (private address)" });
    }
    expect(p.failureFor(`http://127.0.0.1:${port}/page?q=2#top`)).toBeUndefined();
    const header = /\r\nX-Secbox-Proxy: (.*)\r\n/i.exec(plain.text)?.[1];
    expect(header).toBe(`refused ${p.marker}`);
    expect(p.isOwnRefusal({ "x-secbox-proxy": header as string })).toBe(true);
    expect(p.isOwnRefusal({ "x-secbox-proxy": "refused" })).toBe(false);
    expect(p.isOwnRefusal({})).toBe(false);
    const other = await openProxySession();
    expect(other.marker).not.toBe(p.marker);
    await Promise.all([p.close(), other.close()]);
  });

  test("records stay bounded when a page loops refused requests with long URLs", async () => {
    let seen = 0;
    let longest = 0;
    const p = await openProxySession({ allowPrivate: false }, (e) => {
      seen++;
      longest = Math.max(longest, e.url?.length ?? 0);
    });
    const port = http.port as number;
    const total = MAX_EVENTS + 100;
    const url = (i: number) => `http://127.0.0.1:${port}/${i}/${"a".repeat(10_000)}`;
    for (let b = 0; b < total; b += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, total - b) }, (_, k) => exchange(p.port, `GET ${url(b + k)} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)),
      );
    }
    expect(seen).toBe(total); // every refusal reaches the listener…
    expect(longest).toBe(MAX_EVENT_URL_CHARS); // …with its URL cut to 2 KiB
    expect(p.events.length).toBe(MAX_EVENTS);
    expect(p.dropped).toBe(100);
    expect(p.events.every((e) => (e.url?.length ?? 0) <= MAX_EVENT_URL_CHARS)).toBe(true);
    // Lookups keep the most recent MAX_LOOKUP_ENTRIES URLs (by their full text, not the cut one).
    expect(MAX_LOOKUP_ENTRIES).toBeLessThan(total);
    let found = 0;
    for (let i = 0; i < total; i++) if (p.failureFor(url(i))) found++;
    expect(found).toBe(MAX_LOOKUP_ENTRIES);
    expect(p.failureFor(url(total - 1))?.kind).toBe("blocked");
    expect(p.failureFor(`${url(total - 1)}#frag`)?.kind).toBe("blocked");
    await p.close();
  });

  test("one resolution per target, and the connection goes to the checked address", async () => {
    const asked: string[] = [];
    const p = await openProxySession({
      allowPrivate: false,
      resolver: async (h) => {
        asked.push(h);
        return ["127.0.0.1"];
      },
      refuseAddress: () => false, // treat the loopback answer as public for this test
    });
    upstreamSeen.length = 0;
    const port = http.port as number;
    const { text } = await exchange(p.port, `GET http://svc.test:${port}/named HTTP/1.1\r\nHost: svc.test:${port}\r\n\r\n`);
    expect(text).toEndWith("hello /named");
    expect(asked).toEqual(["svc.test"]);
    expect(upstreamSeen[0]?.headers.host).toBe(`svc.test:${port}`);
    await p.close();
  });

  test("a session without a policy refuses everything until configured; DNS failures are errors, not blocks", async () => {
    const events: ProxyEvent[] = [];
    const p = await openProxySession();
    const port = http.port as number;
    const before = await exchange(p.port, `GET http://127.0.0.1:${port}/a HTTP/1.1\r\n\r\n`);
    expect(before.text).toStartWith("HTTP/1.1 403");
    p.configure({ allowPrivate: true, resolver: async () => Promise.reject(new Error("NXDOMAIN")) }, (e) => events.push(e));
    const after = await exchange(p.port, `GET http://127.0.0.1:${port}/a HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    expect(after.text).toStartWith("HTTP/1.1 200");
    const nx = await exchange(p.port, `CONNECT nowhere.test:443 HTTP/1.1\r\n\r\n`);
    expect(nx.text).toStartWith("HTTP/1.1 502");
    expect(events).toEqual([{ kind: "error", host: "nowhere.test", port: 443, message: "Failed to connect to upstream: could not resolve host" }]);
    const refusedPort = await exchange(p.port, `CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n`);
    expect(refusedPort.text).toStartWith("HTTP/1.1 502");
    const bad = await exchange(p.port, `GET /relative HTTP/1.1\r\n\r\n`);
    expect(bad.text).toStartWith("HTTP/1.1 400");
    await p.close();
  });

  test("urlHostKey fills default ports and brackets IPv6", () => {
    expect(urlHostKey("https://Example.com/x")).toBe("example.com:443");
    expect(urlHostKey("http://[::1]:8080/")).toBe("[::1]:8080");
    expect(urlHostKey("ws://a.test/")).toBe("a.test:80");
    expect(urlHostKey("data:text/plain,x")).toBeNull();
  });
});
