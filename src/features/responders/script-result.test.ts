// ScriptResult semantics (supplement §11.5 steps 2, 3, 6 and the §11.7 error codes), exercised on the pure
// module with runner outputs as data (the shape the sandbox pool returns).
import { describe, expect, test } from "bun:test";
import { convertBody, failureFor, MAX_RESULT_BODY_BYTES, responseFromScript, type ResponseDefaults } from "./script-result";
import type { ScriptRunResult } from "../../sandbox/types";

const enc = new TextEncoder();
const dec = new TextDecoder();
const defaults: ResponseDefaults = {
  statusCode: 201,
  headers: [
    ["content-type", "application/json"],
    ["x-dup", "1"],
    ["x-dup", "2"],
  ],
  body: enc.encode('{"default":true}'),
};
const ok = (value: unknown): ScriptRunResult => ({ ok: true, value, logs: [], durationMs: 1 });
const fail = (kind: "timeout" | "memory" | "error" | "queue_full" | "internal", message: string, code?: string): ScriptRunResult => ({
  ok: false,
  error: { kind, message, ...(code ? { code } : {}) },
  logs: [],
  durationMs: 1,
});

describe("null and partial results", () => {
  test("null and undefined → the defaults unchanged, not failed, response not tracked", () => {
    for (const value of [null, undefined]) {
      const r = responseFromScript(ok(value), defaults);
      expect(r.statusCode).toBe(201);
      expect(r.headers).toEqual(defaults.headers);
      expect(dec.decode(r.body)).toBe('{"default":true}');
      expect(r).toMatchObject({ skipRequest: false, trackResponse: false, failed: false });
    }
  });

  test("an empty object → every field falls back to its default", () => {
    const r = responseFromScript(ok({}), defaults);
    expect(r.statusCode).toBe(201);
    expect(r.headers).toEqual(defaults.headers);
    expect(dec.decode(r.body)).toBe('{"default":true}');
  });

  test("only statusCode → default headers and body kept", () => {
    const r = responseFromScript(ok({ statusCode: 418 }), defaults);
    expect(r.statusCode).toBe(418);
    expect(r.headers).toEqual(defaults.headers);
    expect(dec.decode(r.body)).toBe('{"default":true}');
  });

  test("only body → default status and headers kept", () => {
    const r = responseFromScript(ok({ body: "hi" }), defaults);
    expect(r.statusCode).toBe(201);
    expect(r.headers).toEqual(defaults.headers);
    expect(dec.decode(r.body)).toBe("hi");
  });

  test("null fields count as absent", () => {
    const r = responseFromScript(ok({ statusCode: null, headers: null, body: null }), defaults);
    expect(r.statusCode).toBe(201);
    expect(r.headers).toEqual(defaults.headers);
    expect(dec.decode(r.body)).toBe('{"default":true}');
  });

  test("headers object REPLACES the default list entirely; values are stringified", () => {
    const r = responseFromScript(ok({ headers: { "x-one": "a", "x-num": 5, "x-bool": true } }), defaults);
    expect(r.headers).toEqual([
      ["x-one", "a"],
      ["x-num", "5"],
      ["x-bool", "true"],
    ]);
    const empty = responseFromScript(ok({ headers: {} }), defaults);
    expect(empty.headers).toEqual([]);
  });

  test("a proxy result {statusCode, headers, body: bytes} can be returned unchanged", () => {
    const r = responseFromScript(ok({ statusCode: 202, headers: { "content-type": "text/plain" }, body: enc.encode("upstream") }), defaults);
    expect(r.statusCode).toBe(202);
    expect(r.headers).toEqual([["content-type", "text/plain"]]);
    expect(dec.decode(r.body)).toBe("upstream");
  });
});

describe("skipRequest and trackResponse", () => {
  test("trackResponse true → response stored", () => {
    expect(responseFromScript(ok({ trackResponse: true }), defaults)).toMatchObject({ trackResponse: true, skipRequest: false });
  });
  test("skipRequest true → not tracked", () => {
    expect(responseFromScript(ok({ skipRequest: true }), defaults)).toMatchObject({ skipRequest: true, trackResponse: false });
  });
  test("both true → skipRequest wins and nothing is tracked", () => {
    expect(responseFromScript(ok({ skipRequest: true, trackResponse: true }), defaults)).toMatchObject({ skipRequest: true, trackResponse: false });
  });
  test("non-boolean values do not switch anything on", () => {
    expect(responseFromScript(ok({ skipRequest: "yes", trackResponse: 1 }), defaults)).toMatchObject({ skipRequest: false, trackResponse: false });
  });
});

describe("bad results → 500 plain-text failure, tracked", () => {
  const cases: [string, unknown, string][] = [
    ["a number", 42, "Script failed: Script must return an object or null"],
    ["a string", "hello", "Script failed: Script must return an object or null"],
    ["a boolean", true, "Script failed: Script must return an object or null"],
    ["an array", [1, 2], "Script failed: Script must return an object or null"],
    ["bytes", enc.encode("x"), "Script failed: Script must return an object or null"],
    ["statusCode 199", { statusCode: 199 }, "Script failed: statusCode must be an integer from 200 to 599"],
    ["statusCode 600", { statusCode: 600 }, "Script failed: statusCode must be an integer from 200 to 599"],
    ["statusCode 200.5", { statusCode: 200.5 }, "Script failed: statusCode must be an integer from 200 to 599"],
    ["statusCode as text", { statusCode: "200" }, "Script failed: statusCode must be an integer from 200 to 599"],
    ["headers as array", { headers: [["a", "b"]] }, "Script failed: headers must be an object of header names to values"],
    ["header with bad name", { headers: { "bad name": "x" } }, 'Script failed: Invalid header name "bad name"'],
    ["header value with CRLF", { headers: { "x-a": "1\r\nx-b: 2" } }, "Script failed: Invalid value for header x-a"],
  ];
  for (const [label, value, message] of cases) {
    test(label, () => {
      const r = responseFromScript(ok(value), defaults);
      expect(r.statusCode).toBe(500);
      expect(r.failed).toBe(true);
      expect(r.trackResponse).toBe(true);
      expect(r.skipRequest).toBe(false);
      expect(r.headers).toEqual([["content-type", "text/plain; charset=utf-8"]]);
      expect(dec.decode(r.body)).toBe(message);
    });
  }

  test("a result body over 10 MiB → 500", () => {
    const r = responseFromScript(ok({ body: new Uint8Array(MAX_RESULT_BODY_BYTES + 1) }), defaults);
    expect(r.statusCode).toBe(500);
    expect(dec.decode(r.body)).toContain("Script failed: body exceeds");
  });

  test("a body that cannot be serialized (BigInt) → 500", () => {
    const r = responseFromScript(ok({ body: { n: 1n } }), defaults);
    expect(r.statusCode).toBe(500);
    expect(dec.decode(r.body)).toStartWith("Script failed: body cannot be serialized");
  });
});

describe("body conversion (§11.5 step 3)", () => {
  const bytes = (v: unknown) => [...convertBody(v)];
  test("Uint8Array, ArrayBuffer, other typed arrays and DataView → their bytes", () => {
    expect(bytes(new Uint8Array([1, 2, 255]))).toEqual([1, 2, 255]);
    expect(bytes(new Uint8Array([9, 8, 7]).buffer)).toEqual([9, 8, 7]);
    expect(bytes(new Uint16Array([0x0201]))).toEqual([1, 2]); // little-endian memory
    const view = new Uint8Array([0, 1, 2, 3, 4]).subarray(1, 3);
    expect(bytes(view)).toEqual([1, 2]);
    expect(bytes(new DataView(new Uint8Array([5, 6]).buffer))).toEqual([5, 6]);
  });
  test("array whose first element is a number → bytes, each & 255", () => {
    expect(bytes([72, 105, 256 + 33, -1])).toEqual([72, 105, 33, 255]);
  });
  test("empty array → empty body", () => {
    expect(bytes([])).toEqual([]);
  });
  test("string → UTF-8", () => {
    expect(bytes("é€")).toEqual([...enc.encode("é€")]);
  });
  test("other arrays, objects, numbers, booleans → JSON text", () => {
    expect(dec.decode(convertBody(["a", 1]))).toBe('["a",1]');
    expect(dec.decode(convertBody({ ok: true, n: [1] }))).toBe('{"ok":true,"n":[1]}');
    expect(dec.decode(convertBody(12.5))).toBe("12.5");
    expect(dec.decode(convertBody(false))).toBe("false");
  });
  test("through responseFromScript: number body 0 and boolean false are bodies, not absent", () => {
    expect(dec.decode(responseFromScript(ok({ body: 0 }), defaults).body)).toBe("0");
    expect(dec.decode(responseFromScript(ok({ body: false }), defaults).body)).toBe("false");
    expect(dec.decode(responseFromScript(ok({ body: "" }), defaults).body)).toBe("");
  });
});

describe("failures (§11.5 step 6, §11.7 codes)", () => {
  const check = (out: ScriptRunResult, status: number, body: string, extra: [string, string][] = []) => {
    const r = responseFromScript(out, defaults);
    expect(r.statusCode).toBe(status);
    expect(dec.decode(r.body)).toBe(body);
    expect(r.headers).toEqual([["content-type", "text/plain; charset=utf-8"], ...extra]);
    expect(r).toMatchObject({ failed: true, trackResponse: true, skipRequest: false });
  };
  test("script time limit → 504 Script timed out", () => check(fail("timeout", "interrupted"), 504, "Script timed out"));
  test("queue full → 503 with Retry-After: 1", () => check(fail("queue_full", "queue"), 503, "Script queue is full", [["retry-after", "1"]]));
  test("memory limit → 500", () => check(fail("memory", "out of memory"), 500, "Script failed: out of memory"));
  test("a throw → 500 with its message", () => check(fail("error", "boom"), 500, "Script failed: boom"));
  test("a syntax error → 500", () => check(fail("error", "SyntaxError: unexpected token"), 500, "Script failed: SyntaxError: unexpected token"));
  test("internal → 500", () => check(fail("internal", "worker died"), 500, "Script failed: worker died"));
  test("E_TIMEOUT → 504 with the proxy message", () =>
    check(fail("error", "Upstream request timed out after 100 ms", "E_TIMEOUT"), 504, "Upstream request timed out after 100 ms"));
  test("E_BLOCKED → 502", () => check(fail("error", "URL not allowed (private address)", "E_BLOCKED"), 502, "URL not allowed (private address)"));
  test("E_CONNECT → 502", () => check(fail("error", "Failed to connect to upstream", "E_CONNECT"), 502, "Failed to connect to upstream"));
  test("E_UPSTREAM → 502", () => check(fail("error", "Failed to decompress", "E_UPSTREAM"), 502, "Failed to decompress"));
  test("E_TOO_LARGE → 413", () => check(fail("error", "Upstream response body too large", "E_TOO_LARGE"), 413, "Upstream response body too large"));
  test("E_INVALID → 500 Script failed", () => check(fail("error", "Invalid URL", "E_INVALID"), 500, "Script failed: Invalid URL"));
  test("messages are cut at 1,000 characters", () => {
    const r = failureFor({ kind: "error", message: "x".repeat(5000) });
    expect(dec.decode(r.body)).toHaveLength(1000);
  });
});
