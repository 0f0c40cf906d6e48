// The two messages of every execution, a run job (pool → worker) and its result (worker → pool), travel as JSON
// text: Bun's structured clone of a small object costs ~8 µs on each side of a message, a string ~1.5 µs, and the
// text is what both ends need anyway (QuickJS parses the context from JSON text and serializes its result to JSON
// text). A message is one string, `header JSON` + "\n" + `value JSON` (JSON.stringify never emits a raw line
// break), or an array [that string, ...byte arrays] when the value holds non-empty byte arrays; several of them
// may travel in one batch (see batch()). Every other message (init, park, wake, op, op-result, poisoned) is a plain
// object; a string or array is always one of these two, or a batch of them.
import type { ExecHeader, Packed, Path, RunHeader } from "./protocol";

const isBytes = (x: unknown): x is ArrayBuffer | ArrayBufferView => x instanceof ArrayBuffer || ArrayBuffer.isView(x);
const asU8 = (x: ArrayBuffer | ArrayBufferView): Uint8Array =>
  x instanceof Uint8Array ? x : x instanceof ArrayBuffer ? new Uint8Array(x) : new Uint8Array(x.buffer, x.byteOffset, x.byteLength);

/** Finds the byte arrays; `path` is the current one, copied only for a find. */
function collect(v: unknown, path: Path, out: Packed, depth: number): void {
  if (v === null || typeof v !== "object" || depth > 64) return;
  if (isBytes(v)) {
    out.paths.push(path.slice());
    out.bytes.push(asU8(v));
    return;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      path.push(i);
      collect(v[i], path, out, depth + 1);
      path.pop();
    }
    return;
  }
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    path.push(k);
    collect((v as Record<string, unknown>)[k], path, out, depth + 1);
    path.pop();
  }
}

/** `value` with null at each path: the containers on the paths copied, everything else shared. */
function withoutBytes(value: unknown, paths: Path[]): unknown {
  if (paths.some((p) => p.length === 0)) return null;
  const copies = new Map<object, Record<string | number, unknown>>();
  const copy = (o: object): Record<string | number, unknown> => {
    let c = copies.get(o);
    if (c === undefined) copies.set(o, (c = (Array.isArray(o) ? o.slice() : { ...o }) as Record<string | number, unknown>));
    return c;
  };
  const root = copy(value as object);
  for (const path of paths) {
    let container = root;
    for (let i = 0; i < path.length - 1; i++) {
      const next = container[path[i]!] as object;
      const c = copy(next);
      container[path[i]!] = c;
      container = c;
    }
    container[path[path.length - 1]!] = null;
  }
  return root;
}

/** JSON text of `value` (JSON values and byte arrays; JSON.stringify's rules otherwise). Throws on values JSON
 *  cannot hold (BigInt, cycles). */
export function pack(value: unknown): Packed {
  const out: Packed = { json: "", paths: [], bytes: [] };
  collect(value, [], out, 0);
  out.json = JSON.stringify(out.bytes.length === 0 ? value : withoutBytes(value, out.paths)) ?? "null";
  return out;
}

/** Byte size of a packed value's byte arrays. */
export const packedBytes = (p: Packed): number => p.bytes.reduce((n, b) => n + b.byteLength, 0);

function encode(header: object, json: string, bytes: Uint8Array[]): string | unknown[] {
  const text = `${JSON.stringify(header)}\n${json}`;
  return bytes.some((b) => b.byteLength > 0) ? [text, ...bytes] : text;
}

function decode(data: string | unknown[], count: number): { head: string; json: string; bytes: Uint8Array[] } {
  const text = typeof data === "string" ? data : (data[0] as string);
  const nl = text.indexOf("\n");
  const bytes = typeof data === "string" ? Array.from({ length: count }, () => new Uint8Array(0)) : (data.slice(1) as Uint8Array[]);
  return { head: text.slice(0, nl), json: text.slice(nl + 1), bytes };
}

/** A hot message (a string or an array) rather than a plain object message. */
export const isWire = (data: unknown): data is string | unknown[] => typeof data === "string" || Array.isArray(data);

/** Several hot messages in one: `[null, ...messages]` (a message array starts with a string). A thread wake-up
 *  and a message cost ~10 µs on each side; under load one message carries the jobs (or results) of a turn. */
export function batch(messages: (string | unknown[])[]): string | unknown[] {
  return messages.length === 1 ? messages[0]! : [null, ...messages];
}

/** The hot messages of a message (one, or those of a batch). */
export function unbatch(data: string | unknown[]): (string | unknown[])[] {
  return typeof data !== "string" && data[0] === null ? (data.slice(1) as (string | unknown[])[]) : [data];
}

// ---- run jobs (pool → worker)

/** `header.paths` are the context's byte-array paths. Byte arrays are copied by the structured clone (the caller
 *  keeps its request body). */
export function encodeRun(header: Omit<RunHeader, "paths">, context: Packed): string | unknown[] {
  return encode({ ...header, paths: context.paths }, context.json, context.bytes);
}

export function decodeRun(data: string | unknown[]): { header: RunHeader; context: Packed } {
  const head = typeof data === "string" ? data : (data[0] as string);
  const header = JSON.parse(head.slice(0, head.indexOf("\n"))) as RunHeader;
  const { json, bytes } = decode(data, header.paths.length);
  return { header, context: { json, paths: header.paths, bytes } };
}

// ---- results (worker → pool)

/** `json`: the result's JSON text, byte arrays in it as `{ [key]: index }` placeholders; absent for no value
 *  (undefined, or a failure). The byte arrays' buffers are transferred, not copied. */
export function encodeDone(header: ExecHeader, json: string | undefined, bytes: Uint8Array[]): { data: string | unknown[]; transfer: ArrayBuffer[] } {
  const data = encode(header, json ?? "", bytes);
  return { data, transfer: typeof data === "string" ? [] : bytes.map((b) => b.buffer as ArrayBuffer) };
}

export function decodeDone(data: string | unknown[]): { header: ExecHeader; value: unknown } {
  const head = typeof data === "string" ? data : (data[0] as string);
  const header = JSON.parse(head.slice(0, head.indexOf("\n"))) as ExecHeader;
  const { json, bytes } = decode(data, header.bytes ?? 0);
  if (json === "") return { header, value: undefined };
  return { header, value: parseWithBytes(json, header.key, bytes) };
}

/** JSON text whose byte arrays are `{ [key]: index }` placeholders (the engine's export) → the value with the byte
 *  arrays in place. */
export function parseWithBytes(json: string, key: string | undefined, bytes: Uint8Array[]): unknown {
  if (key === undefined || bytes.length === 0) return JSON.parse(json);
  return JSON.parse(json, (_k, x) => {
    if (x !== null && typeof x === "object" && !Array.isArray(x) && typeof x[key] === "number" && x[key] < bytes.length) return bytes[x[key]];
    return x;
  });
}
