// The API tracker pipeline as a pure module: script runner RESULT objects are the test data (the QuickJS sandbox
// is exercised end to end in scripts.test.ts once it exists); requests go to a real upstream through platform/net.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { outboundFetch } from "../../../platform/net/client";
import { startUpstream, type Upstream } from "../../../tests/fixtures/upstream";
import { BodyConversionError, toBodyBytes } from "./body";
import { debugView, headersObject, interpretConfigurator, interpretExtractor, runPipeline, type PipelineEnv } from "./pipeline";
import type { LogEntry, ScriptRunResult, ScriptRunner } from "../../../sandbox/types";
import type { ApiRequest } from "./contract";

let up: Upstream;
beforeAll(() => {
  up = startUpstream();
});
afterAll(() => up.stop());

const ok = (value: unknown, logs: LogEntry[] = []): ScriptRunResult => ({ ok: true, value, logs, durationMs: 1 });
const err = (kind: "timeout" | "memory" | "error" | "queue_full" | "internal", message: string): ScriptRunResult => ({
  ok: false,
  error: { kind, message },
  logs: [],
  durationMs: 1,
});
const text = (b: Uint8Array | undefined) => new TextDecoder().decode(b);

/** A runner that answers with the given results in order and records what it was asked. */
function scripted(results: ScriptRunResult[]): ScriptRunner & { calls: Parameters<ScriptRunner["run"]>[0][] } {
  const calls: Parameters<ScriptRunner["run"]>[0][] = [];
  return {
    calls,
    async run(req) {
      calls.push(req);
      return results.shift() ?? ok(null);
    },
  };
}

const limits = { memoryMib: 10, timeoutMs: 10_000, proxyTimeoutMs: 30_000, maxProxyBodyBytes: 10 * 1024 * 1024 };
const env = (scripts?: ScriptRunner): PipelineEnv => ({ fetch: outboundFetch, scripts, allowPrivate: true, scriptLimits: limits });
const REQ: ApiRequest = { url: "https://example.com/", method: "GET", headers: {}, acceptInvalidCertificates: false };

describe("body auto-conversions", () => {
  test("bytes, number arrays, strings, JSON values", () => {
    expect([...toBodyBytes(new Uint8Array([1, 2]))]).toEqual([1, 2]);
    expect([...toBodyBytes(new Uint16Array([0x0102]).buffer)]).toEqual([2, 1]);
    expect([...toBodyBytes(new Int8Array([-1]))]).toEqual([255]);
    expect([...toBodyBytes([1, 256, 257, -1])]).toEqual([1, 0, 1, 255]);
    expect(toBodyBytes([]).byteLength).toBe(0);
    expect(text(toBodyBytes(["a", 1]))).toBe('["a",1]');
    expect(text(toBodyBytes("héllo"))).toBe("héllo");
    expect(text(toBodyBytes({ version: "1.4.0" }))).toBe('{"version":"1.4.0"}');
    expect(text(toBodyBytes(42))).toBe("42");
    expect(text(toBodyBytes(false))).toBe("false");
    expect(() => toBodyBytes(undefined)).toThrow(BodyConversionError);
    expect(() => toBodyBytes(10n)).toThrow(BodyConversionError);
    expect(() => toBodyBytes("x".repeat(11), 10)).toThrow("exceeds 10 bytes");
  });
});

describe("configurator results", () => {
  test("null/undefined keep the requests; {requests} replaces them, re-validated, bytes bodies allowed", () => {
    expect(interpretConfigurator(ok(null), [REQ], false)).toEqual({ ok: true, value: [REQ] });
    expect(interpretConfigurator(ok(undefined), [REQ], false)).toEqual({ ok: true, value: [REQ] });
    const out = interpretConfigurator(
      ok({
        requests: [
          { url: "https://api.example.com/x", method: "POST", headers: { authorization: "Bearer s3cret" }, body: new Uint8Array([104, 105]) },
        ],
      }),
      [REQ],
      false,
    );
    expect(out).toEqual({
      ok: true,
      value: [
        {
          url: "https://api.example.com/x",
          method: "POST",
          headers: { authorization: "Bearer s3cret" },
          body: new Uint8Array([104, 105]),
          acceptInvalidCertificates: false,
        },
      ],
    });
    const arrayBody = interpretConfigurator(ok({ requests: [{ url: "https://e.com/", body: [104, 105] }] }), [REQ], false);
    expect(arrayBody.ok && text(arrayBody.value[0]!.body as Uint8Array)).toBe("hi");
  });

  test("anything else fails the run with a message", () => {
    const cases: [ScriptRunResult, string][] = [
      [ok("nope"), "Configurator failed: the result must be {requests: [...]} or null"],
      [ok([REQ]), "Configurator failed: the result must be {requests: [...]} or null"],
      [ok({ requests: [] }), "Configurator failed: requests must have 1 to 10 requests"],
      [ok({ requests: [{ url: "ftp://x/" }] }), "Configurator failed: requests[0].url: must be an absolute http or https URL"],
      [
        ok({ requests: [{ url: "https://e.com/", method: "TRACE" }] }),
        "Configurator failed: requests[0].method: must be one of GET, POST, PUT, PATCH, DELETE",
      ],
      [
        ok({ requests: [{ url: "http://127.0.0.1/" }] }),
        "Configurator failed: requests[0].url: URL not allowed (private address) (an operator can allow private targets with network.allow_private_targets)",
      ],
      [err("timeout", "Script timed out"), "Configurator failed: Script timed out"],
      [err("memory", ""), "Configurator failed: Script exceeded its memory limit"],
      [err("error", "ReferenceError: x is not defined"), "Configurator failed: ReferenceError: x is not defined"],
    ];
    for (const [res, message] of cases) expect(interpretConfigurator(res, [REQ], false)).toEqual({ ok: false, error: message });
  });
});

describe("extractor results", () => {
  test("{body} converts; null/undefined = the default extractor", () => {
    expect(interpretExtractor(ok(null))).toEqual({ ok: true, value: undefined });
    expect(interpretExtractor(ok(undefined))).toEqual({ ok: true, value: undefined });
    const cases: [unknown, string][] = [
      [new Uint8Array([104, 105]), "hi"],
      [[104, 105 + 256], "hi"],
      ["text", "text"],
      [{ version: "1.4.0" }, '{"version":"1.4.0"}'],
      [[{ a: 1 }], '[{"a":1}]'],
      [7, "7"],
      [true, "true"],
      [[], ""],
    ];
    for (const [body, expected] of cases) {
      const out = interpretExtractor(ok({ body }));
      expect(out.ok && text(out.value)).toBe(expected);
    }
  });

  test("other results fail with a message", () => {
    for (const [res, message] of [
      [ok("just a string"), "Extractor failed: the result must be {body} or null"],
      [ok(new Uint8Array([1])), "Extractor failed: the result must be {body} or null"],
      [ok({ value: 1 }), "Extractor failed: the result must be {body} or null"],
      [ok({ body: null }), "Extractor failed: the result has no body"],
      [err("queue_full", ""), "Extractor failed: Script queue is full"],
    ] as const) {
      expect(interpretExtractor(res)).toEqual({ ok: false, error: message });
    }
  });
});

describe("runPipeline", () => {
  test("configurator → requests in order → extractor, with the contexts the contract names", async () => {
    up.state.value = '{"v":1}';
    const runner = scripted([
      ok({ requests: [{ url: `${up.url}/echo`, method: "POST", headers: { "x-sig": "abc" }, body: "signed" }, { url: `${up.url}/value` }] }),
      ok({ body: { extracted: true } }),
    ]);
    const out = await runPipeline(env(runner), {
      target: { requests: [{ ...REQ, url: `${up.url}/value` }], configurator: "cfg", extractor: "ext" },
      timeoutMs: 5000,
      secrets: { TOKEN: "t0k" },
      previousContent: { old: 1 },
    });
    expect(out.error).toBeUndefined();
    expect(text(out.value)).toBe('{"extracted":true}');
    expect(out.phases.map((p) => [p.phase, p.status])).toEqual([
      ["configurator", "success"],
      ["request", "success"],
      ["extractor", "success"],
    ]);
    const [cfg, ext] = runner.calls;
    expect(cfg!.source).toBe("cfg");
    expect(cfg!.limits).toEqual(limits);
    expect(cfg!.proxy).toBe(false); // no op_proxy_request in tracker scripts (supplement §11.6)
    expect(cfg!.context).toEqual({
      requests: [{ ...REQ, url: `${up.url}/value` }],
      previousContent: { old: 1 },
      params: { secrets: { TOKEN: "t0k" } },
    });
    const ctx = ext!.context as {
      responses: { status: number; headers: Record<string, string>; body: Uint8Array }[];
      previousContent: unknown;
      params: unknown;
    };
    expect(ctx.responses).toHaveLength(2);
    expect(JSON.parse(text(ctx.responses[0]!.body))).toMatchObject({ method: "POST", body: "signed", headers: { "x-sig": "abc" } });
    expect(ctx.responses[1]).toMatchObject({ status: 200, headers: { "content-type": "application/json" } });
    expect(ctx.responses[1]!.body).toBeInstanceOf(Uint8Array);
    expect(ctx.previousContent).toEqual({ old: 1 });
    expect(ctx.params).toEqual({ secrets: { TOKEN: "t0k" } });
  });

  test("without previous content the key is absent; without an extractor the last body is the value", async () => {
    up.state.value = "last";
    const runner = scripted([ok(null)]);
    const out = await runPipeline(env(runner), {
      target: {
        requests: [
          { ...REQ, url: `${up.url}/count` },
          { ...REQ, url: `${up.url}/value` },
        ],
        configurator: "cfg",
      },
      timeoutMs: 5000,
      secrets: {},
    });
    expect(text(out.value)).toBe("last");
    expect("previousContent" in (runner.calls[0]!.context as object)).toBe(false);
    expect(out.phases[2]).toEqual({ phase: "extractor", durationMs: 0, status: "skipped" });
  });

  test("a failing stage stops the later ones; the trace says where", async () => {
    const runner = scripted([ok({ requests: [{ url: `${up.url}/status/500` }] }), ok({ body: "never" })]);
    const out = await runPipeline(env(runner), {
      target: { requests: [{ ...REQ, url: `${up.url}/value` }], configurator: "cfg", extractor: "ext" },
      timeoutMs: 5000,
      secrets: { TOKEN: "t0k" },
      trace: true,
    });
    expect(out.error).toBe("Request 1 returned status 500 (expected 2xx)");
    expect(out.value).toBeUndefined();
    expect(runner.calls).toHaveLength(1);
    expect(out.phases.map((p) => p.status)).toEqual(["success", "failure", "skipped"]);
    expect(out.trace!.configurator).toMatchObject({ error: null, params: { params: { secrets: { TOKEN: "********" } } } });
    expect(out.trace!.requests).toHaveLength(1);
    expect(out.trace!.requests[0]!.response).toMatchObject({ status: 500, error: "Request 1 returned status 500 (expected 2xx)" });
    expect(out.trace!.extractor).toBeNull();
    expect(out.trace!.result).toBeNull();

    const failingExtractor = scripted([err("timeout", "Script timed out")]);
    const ex = await runPipeline(env(failingExtractor), {
      target: { requests: [{ ...REQ, url: `${up.url}/value` }], extractor: "ext" },
      timeoutMs: 5000,
      secrets: {},
      trace: true,
    });
    expect(ex.error).toBe("Extractor failed: Script timed out");
    expect(ex.trace!.extractor!.error).toBe("Extractor failed: Script timed out");
  });

  test("debug trace: secrets masked, byte arrays as base64, script logs, result as data", async () => {
    up.state.value = '{"a":1}';
    const runner = scripted([
      ok({ requests: [{ url: `${up.url}/value`, headers: { authorization: "Bearer t0k" }, body: new Uint8Array([1, 2, 3]) }] }, [
        { level: "info", message: "signing" },
      ]),
      ok({ body: new Uint8Array([0x7b, 0x7d]) }, [{ level: "log", message: "plain" }]),
    ]);
    const out = await runPipeline(env(runner), {
      target: { requests: [{ ...REQ, url: `${up.url}/value` }], configurator: "cfg", extractor: "ext" },
      timeoutMs: 5000,
      secrets: { TOKEN: "t0k" },
      trace: true,
    });
    const tr = out.trace!;
    expect(tr.configurator!.result).toEqual({ requests: [{ url: `${up.url}/value`, headers: { authorization: "Bearer t0k" }, body: "AQID" }] });
    expect(tr.configurator!.logs).toEqual([{ level: "info", message: "signing" }]);
    expect((tr.requests[0]!.request as { body?: string }).body).toBe("\u0001\u0002\u0003");
    const params = tr.extractor!.params as any;
    expect(params.params).toEqual({ secrets: { TOKEN: "********" } });
    expect(params.responses[0].body).toBe(Buffer.from('{"a":1}').toString("base64"));
    expect(tr.extractor!.result).toEqual({ body: "e30=" });
    expect(tr.extractor!.logs).toEqual([{ level: "log", message: "plain" }]);
    expect(tr.result).toEqual({ body: {} });
    expect(tr.elapsedMs).toBeGreaterThanOrEqual(0);
  });

  test("helpers: header folding and debug views", () => {
    expect(
      headersObject([
        ["Set-Cookie", "a=1"],
        ["set-cookie", "b=2"],
        ["Connection", "close"],
        ["X-Original-Content-Encoding", "gzip"],
      ]),
    ).toEqual({ "set-cookie": "a=1, b=2", "x-original-content-encoding": "gzip" });
    expect(debugView({ a: [new Uint8Array([255])], n: 1, s: "x" })).toEqual({ a: ["/w=="], n: 1, s: "x" });
  });
});
