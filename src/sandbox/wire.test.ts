// The text form of run jobs and results (wire.ts): what goes in comes out, byte arrays included, and batches
// keep their messages apart.
import { describe, expect, test } from "bun:test";
import { batch, decodeDone, decodeRun, encodeDone, encodeRun, isWire, pack, packedBytes, unbatch } from "./wire";

const header = {
  id: 7,
  cell: 1,
  token: 8,
  source: "context.body\n// line 2",
  memoryBytes: 1024,
  timeoutMs: 50,
  stackBytes: 4096,
  kv: true,
  proxy: false,
  owner: "user-1",
};

describe("run jobs", () => {
  test("a context without byte arrays is one string; the header and the JSON text come back as sent", () => {
    const context = { method: "GET", headers: { "x-a": "line\nbreak" }, query: { q: ["1", "2"] }, nul: "a\u0000b" };
    const msg = encodeRun(header, pack(context));
    expect(typeof msg).toBe("string");
    const { header: h, context: c } = decodeRun(msg);
    expect(h).toEqual({ ...header, paths: [] });
    expect(JSON.parse(c.json)).toEqual(context);
    expect(c.bytes).toEqual([]);
  });

  test("byte arrays leave the text (null in their place, paths listed) and travel beside it; the caller's value is untouched", () => {
    const body = new Uint8Array([1, 2, 3]);
    const context = { body, list: [new Uint8Array([4]).buffer, { deep: new Int16Array([5]) }], ["__proto__"]: "x", empty: new Uint8Array(0) };
    const packed = pack(context);
    expect(packed.paths).toEqual([["body"], ["list", 0], ["list", 1, "deep"], ["empty"]]);
    expect(packedBytes(packed)).toBe(3 + 1 + 2);
    expect(JSON.parse(packed.json)).toEqual({ body: null, list: [null, { deep: null }], ["__proto__"]: "x", empty: null });
    expect(context.body).toBe(body);
    const msg = encodeRun(header, packed);
    expect(Array.isArray(msg)).toBe(true);
    const { header: h, context: c } = decodeRun(msg);
    expect(h.paths).toEqual(packed.paths);
    expect(c.bytes.map((b) => Array.from(b))).toEqual([[1, 2, 3], [4], [5, 0], []]);
  });

  test("only empty byte arrays: still one string, the empty arrays made again on arrival", () => {
    const msg = encodeRun(header, pack({ body: new Uint8Array(0) }));
    expect(typeof msg).toBe("string");
    const { context } = decodeRun(msg);
    expect(context.bytes).toHaveLength(1);
    expect(context.bytes[0]).toBeInstanceOf(Uint8Array);
    expect(context.bytes[0]!.byteLength).toBe(0);
  });

  test("a context that is itself a byte array; values JSON cannot hold throw", () => {
    const packed = pack(new Uint8Array([9]));
    expect(packed).toMatchObject({ json: "null", paths: [[]] });
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => pack(cyclic)).toThrow();
    expect(() => pack({ n: 1n })).toThrow();
  });
});

describe("results", () => {
  test("a value's placeholders become the byte arrays sent beside it; their buffers are transferred", () => {
    const key = "k-123";
    const json = JSON.stringify({ body: { [key]: 0 }, more: [{ [key]: 1 }], other: { [key]: 5 }, text: "ok" });
    const bytes = [new Uint8Array([1]), new Uint8Array([2, 3])];
    const { data, transfer } = encodeDone({ id: 1, ok: true, logs: [], durationMs: 0.1, heapBytes: 10, key, bytes: 2 }, json, bytes);
    expect(transfer).toEqual(bytes.map((b) => b.buffer));
    const { header, value } = decodeDone(data) as { header: { id: number }; value: Record<string, unknown> };
    expect(header.id).toBe(1);
    expect(Array.from(value.body as Uint8Array)).toEqual([1]);
    expect(Array.from((value.more as Uint8Array[])[0]!)).toEqual([2, 3]);
    // an index past the byte arrays stays an object
    expect(value.other).toEqual({ [key]: 5 });
    expect(value.text).toBe("ok");
  });

  test("no value (undefined or a failure) and plain values", () => {
    const failure = {
      id: 2,
      ok: false,
      error: { kind: "error" as const, message: "boom" },
      logs: [{ level: "log" as const, message: "x" }],
      durationMs: 1,
      heapBytes: 1,
    };
    expect(decodeDone(encodeDone(failure, undefined, []).data)).toEqual({ header: failure, value: undefined });
    expect(decodeDone(encodeDone({ ...failure, ok: true, error: undefined }, '"a\\nb"', []).data).value).toBe("a\nb");
  });
});

describe("batches", () => {
  test("one message is sent as is; several travel as one and come apart in order", () => {
    const a = encodeRun(header, pack({ n: 1 }));
    const b = encodeRun({ ...header, id: 8 }, pack({ body: new Uint8Array([1]) }));
    expect(batch([a])).toBe(a);
    const both = batch([a, b]);
    expect(isWire(both)).toBe(true);
    const parts = unbatch(both);
    expect(parts).toHaveLength(2);
    expect(decodeRun(parts[0]!).header.id).toBe(7);
    expect(Array.from(decodeRun(parts[1]!).context.bytes[0]!)).toEqual([1]);
    expect(unbatch(b)).toEqual([b]);
    expect(isWire({ t: "park", id: 1 })).toBe(false);
  });
});
