// Sandbox.core.ops.op_proxy_request (supplement §11.7) from real scripts through platform/net's outboundFetch
// against a real HTTP server on loopback.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { createLogger } from "../platform/log";
import { ScriptPool } from "./pool";
import { SettleOrder } from "../tests/fixtures/wait";
import type { ScriptLimits, ScriptRunResult } from "./types";

const log = createLogger("error");
const LIMITS: ScriptLimits = { memoryMib: 20, timeoutMs: 5000, proxyTimeoutMs: 30_000, maxProxyBodyBytes: 10 * 1024 * 1024 };
let server: ReturnType<typeof Bun.serve>;
let base: string;
let pool: ScriptPool;
let closedPort: number;

beforeAll(async () => {
  server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const url = new URL(req.url);
      switch (url.pathname) {
        case "/echo": {
          const body = new Uint8Array(await req.arrayBuffer());
          return Response.json(
            { method: req.method, headers: Object.fromEntries(req.headers), body: Array.from(body), query: url.search },
            { headers: { "x-multi": "1", "set-cookie": "a=1" } },
          );
        }
        case "/multi": {
          const h = new Headers();
          h.append("x-rep", "one");
          h.append("x-rep", "two");
          h.append("X-Upper", "v");
          return new Response("ok", { status: 201, headers: h });
        }
        case "/gzip":
          return new Response(gzipSync(Buffer.from("hello compressed world")), {
            headers: { "content-encoding": "gzip", "content-type": "text/plain" },
          });
        case "/slow":
          await Bun.sleep(3000);
          return new Response("late");
        case "/big":
          return new Response(new Uint8Array(64 * 1024));
        case "/status/418":
          return new Response("teapot", { status: 418 });
        default:
          return new Response("not found", { status: 404 });
      }
    },
  });
  base = `http://127.0.0.1:${server.port}`;
  const tmp = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  closedPort = tmp.port!;
  tmp.stop(true);
  pool = new ScriptPool({ workers: 2, queueLimit: 100, allowPrivate: true, log });
  await pool.ready();
});
afterAll(async () => {
  await pool.close();
  server.stop(true);
});

const run = (source: string, limits: Partial<ScriptLimits> = {}, p = pool) => p.run({ source, context: { base }, limits: { ...LIMITS, ...limits } });

async function value(source: string, limits: Partial<ScriptLimits> = {}): Promise<unknown> {
  const r = await run(source, limits);
  if (!r.ok) throw new Error(`script failed: ${JSON.stringify(r.error)}`);
  return r.value;
}

function failed(r: ScriptRunResult) {
  if (r.ok) throw new Error(`expected a failure, got ${JSON.stringify(r.value)}`);
  return r.error;
}

describe("op_proxy_request", () => {
  test("resolves to {statusCode, headers, body} that can be returned unchanged", async () => {
    const v = (await value("Sandbox.core.ops.op_proxy_request({ url: context.base + '/multi' })")) as {
      statusCode: number;
      headers: Record<string, string>;
      body: Uint8Array;
    };
    expect(v.statusCode).toBe(201);
    expect(v.body).toBeInstanceOf(Uint8Array);
    expect(new TextDecoder().decode(v.body)).toBe("ok");
    // lower-case names, repeats joined with ", "
    expect(v.headers["x-rep"]).toBe("one, two");
    expect(v.headers["x-upper"]).toBe("v");
    expect(Object.keys(v.headers).every((k) => k === k.toLowerCase())).toBe(true);
    expect(v.headers.connection).toBeUndefined();
    expect(v.headers["keep-alive"]).toBeUndefined();
  });

  test("sends method (upper-cased), headers and every body form", async () => {
    const echo = async (opts: string) => {
      const v = (await value(
        `const r = await Deno.core.ops.op_proxy_request({ url: context.base + '/echo?q=1', ${opts} }); return JSON.parse(Deno.core.decode(r.body))`,
      )) as {
        method: string;
        headers: Record<string, string>;
        body: number[];
        query: string;
      };
      return v;
    };
    let v = await echo("method: 'post', headers: { 'X-Token': 'abc', 'x-num': 5 }, body: new Uint8Array([1, 2, 255])");
    expect(v.method).toBe("POST");
    expect(v.headers["x-token"]).toBe("abc");
    expect(v.headers["x-num"]).toBe("5");
    expect(v.body).toEqual([1, 2, 255]);
    expect(v.query).toBe("?q=1");
    expect((await echo("method: 'PUT', body: 'héllo'")).body).toEqual([104, 195, 169, 108, 108, 111]);
    expect((await echo("method: 'PUT', body: [1, 2, 258]")).body).toEqual([1, 2, 2]);
    expect((await echo("method: 'PUT', body: new Uint8Array([7, 8]).buffer")).body).toEqual([7, 8]);
    expect((await echo("method: 'PATCH', body: new Uint8Array([9, 8, 7]).subarray(1)")).body).toEqual([8, 7]);
    v = await echo("");
    expect(v.method).toBe("GET");
    expect(v.body).toEqual([]);
  });

  test("non-2xx statuses resolve; the result passes through as a script result", async () => {
    const v = (await value("Sandbox.core.ops.op_proxy_request({ url: context.base + '/status/418' })")) as { statusCode: number; body: Uint8Array };
    expect(v.statusCode).toBe(418);
    expect(new TextDecoder().decode(v.body)).toBe("teapot");
  });

  test("gzip bodies are decompressed, the original encoding and length kept in x-original-* headers", async () => {
    const v = (await value(
      "const r = await Sandbox.core.ops.op_proxy_request({ url: context.base + '/gzip' }); return { text: Sandbox.core.decode(r.body), headers: r.headers }",
    )) as {
      text: string;
      headers: Record<string, string>;
    };
    expect(v.text).toBe("hello compressed world");
    expect(v.headers["x-original-content-encoding"]).toBe("gzip");
    expect(v.headers["content-encoding"]).toBeUndefined();
    expect(Number(v.headers["x-original-content-length"])).toBe(gzipSync(Buffer.from("hello compressed world")).length);
    const raw = (await value(
      "const r = await Sandbox.core.ops.op_proxy_request({ url: context.base + '/gzip', decompress: false }); return r.headers['content-encoding']",
    )) as string;
    expect(raw).toBe("gzip");
  });

  test("errors are thrown into the script as Error with a §11.7 code", async () => {
    const code = async (opts: string, limits: Partial<ScriptLimits> = {}) =>
      (await value(
        `try { await Sandbox.core.ops.op_proxy_request(${opts}); return 'no error' } catch (e) { return [e instanceof Error, e.code, e.message] }`,
        limits,
      )) as [boolean, string, string];
    let [isError, c, msg] = await code("{ url: 'ftp://example.com/' }");
    expect(isError).toBe(true);
    expect(c).toBe("E_INVALID");
    expect(msg).toStartWith("Invalid URL");
    [, c, msg] = await code("{ url: context.base, method: 'BAD METHOD' }");
    expect([c, msg]).toEqual(["E_INVALID", "Invalid HTTP method"]);
    [, c, msg] = await code("{ url: context.base, headers: { 'bad header': 'x' } }");
    expect(c).toBe("E_INVALID");
    expect(msg).toStartWith("Invalid header");
    [, c, msg] = await code("{ url: context.base, headers: { a: { nested: 1 } } }");
    expect(c).toBe("E_INVALID");
    [, c, msg] = await code("{ url: context.base, body: { not: 'bytes' } }");
    expect(c).toBe("E_INVALID");
    [, c, msg] = await code("'not an object'");
    expect(c).toBe("E_INVALID");
    [, c, msg] = await code(`{ url: 'http://127.0.0.1:${closedPort}/' }`);
    expect(c).toBe("E_CONNECT");
    expect(msg).toStartWith("Failed to connect to upstream");
    [, c, msg] = await code("{ url: context.base + '/slow', timeout: 200 }");
    expect([c, msg]).toEqual(["E_TIMEOUT", "Upstream request timed out"]);
    [, c, msg] = await code("{ url: context.base + '/big' }", { maxProxyBodyBytes: 1000 });
    expect(c).toBe("E_TOO_LARGE");
    expect(msg).toStartWith("Upstream response body too large");
  });

  test("uncaught proxy errors fail the run with the code (responders map it to 502/504/413)", async () => {
    const e = failed(await run("await Sandbox.core.ops.op_proxy_request({ url: context.base + '/slow', timeout: 100 })"));
    expect(e).toMatchObject({ kind: "error", code: "E_TIMEOUT", message: "Upstream request timed out" });
  });

  test("private targets are refused unless network.allow_private_targets", async () => {
    const strict = new ScriptPool({ workers: 1, queueLimit: 10, allowPrivate: false, log });
    try {
      await strict.ready();
      const e = failed(await run("await Sandbox.core.ops.op_proxy_request({ url: context.base + '/echo' })", {}, strict));
      expect(e.code).toBe("E_BLOCKED");
      expect(e.message).toStartWith("URL not allowed (private address)");
    } finally {
      await strict.close();
    }
  });

  test("the proxy timeout is clamped to the script's remaining time, so the wait counts against it", async () => {
    // At its own deadline: before the same script with a deadline 4 times as far, started beside it (/slow answers
    // after 3 s)
    const order = new SettleOrder();
    const src = "return await Sandbox.core.ops.op_proxy_request({ url: context.base + '/slow', timeout: 60000 })";
    const [r, later] = await Promise.all([order.push("400 ms", run(src, { timeoutMs: 400 })), order.push("1600 ms", run(src, { timeoutMs: 1600 }))]);
    for (const e of [failed(r), failed(later)]) expect(e.kind === "timeout" || e.code === "E_TIMEOUT").toBe(true);
    expect(order.of).toEqual(["400 ms", "1600 ms"]);
  });

  test("several requests in flight at once from one script", async () => {
    const v = await value(
      "const rs = await Promise.all([1, 2, 3].map((i) => Sandbox.core.ops.op_proxy_request({ url: context.base + '/echo', method: 'POST', body: String(i) }))); return rs.map((r) => JSON.parse(Sandbox.core.decode(r.body)).body[0])",
    );
    expect(v).toEqual([49, 50, 51]);
  });

  test("at most 32 operations in flight per execution", async () => {
    const v = await value(
      "const rs = await Promise.allSettled(Array.from({ length: 40 }, () => Sandbox.core.ops.op_proxy_request({ url: context.base + '/multi' }))); return [rs.filter((r) => r.status === 'fulfilled').length, rs.find((r) => r.status === 'rejected')?.reason.message]",
    );
    expect(v).toEqual([32, "Too many operations in flight (at most 32)"]);
  });

  test("absent when the caller disables it (API trackers)", async () => {
    const r = await pool.run({ source: "typeof Sandbox.core.ops.op_proxy_request", context: {}, limits: LIMITS, proxy: false });
    expect(r.ok && r.value).toBe("undefined");
  });
});
