// Values in and out of QuickJS, for one execution's context: the packed `context` and op results in (one call of the
// import helper: JSON text + byte arrays), values out as JSON text with byte arrays beside it (one call of the
// export helper, a host toJSON hook swapping byte arrays for placeholders), strings NUL-safe both ways, bytes of any
// ArrayBuffer view, thrown values described, host failures turned into errors to throw. Plus the calls it makes:
// helper lookups kept per execution (`helpers`), snippets, and calls through fastCall where the runtime has an
// argument block.
// Host data into the instance is admitted first (admit(): the run's memory limit against its measured heap), so an
// over-size string or byte array is that run's memory error, never a write the worker's memory cannot hold.
// Owns: Exec.helpers, .key, .exporting, .exportedBytes. Must never: decide an execution's outcome (results.ts),
// keep a handle it did not register with own(), or trust a value the script could have shaped (accessors it may have
// replaced are re-checked against the buffer's real length; host details never reach the script).
import type { QuickJSHandle } from "quickjs-emscripten-core";
import { CODE_UNITS_SNIPPET, DESCRIBE_SNIPPET, EXPORT_SNIPPET, IMPORT_SNIPPET } from "../bridge";
import type { Packed } from "../protocol";
import { pack, parseWithBytes } from "../wire";
import { ExportError, HostThrow, OutOfMemory, ScriptThrew, type Exec } from "./exec";
import { ARGV_SLOTS, fastCall, memoryUsage } from "./quickjs-internals";

export function own(exec: Exec, h: QuickJSHandle): QuickJSHandle {
  exec.handles.push(h);
  return h;
}

export function snippet(exec: Exec, source: string): QuickJSHandle {
  const ctx = exec.ctx!;
  const r = ctx.evalCode(source, "secbox-bridge.js", { type: "global", strict: true });
  if (r.error) {
    const e = r.error;
    throw new ScriptThrew(e);
  }
  return own(exec, r.value);
}

export function call(exec: Exec, fn: QuickJSHandle, ...args: QuickJSHandle[]): QuickJSHandle {
  const r = callFn(exec, fn, exec.ctx!.undefined, args);
  if (r.error) throw new ScriptThrew(r.error);
  return r.value!;
}

/** ctx.callFunction, through fastCall when the runtime has an argument block (the pristine runtime does). */
export function callFn(
  exec: Exec,
  fn: QuickJSHandle,
  thisArg: QuickJSHandle,
  args: QuickJSHandle[],
): { value?: QuickJSHandle; error?: QuickJSHandle } {
  if (exec.argv !== 0 && args.length <= ARGV_SLOTS) return fastCall(exec.ctx!, exec.mem!.words(), exec.argv, fn, thisArg, args);
  const r = exec.ctx!.callFunction(fn, thisArg, ...args);
  return r.error ? { error: r.error } : { value: r.value };
}

/** Built-ins the host uses on the script's values (looked up before any script code runs). */
export function primeBuiltins(exec: Exec): void {
  const ctx = exec.ctx!;
  jsonFn(exec, "parse");
  jsonFn(exec, "stringify");
  const reflect = own(exec, ctx.getProp(ctx.global, "Reflect"));
  exec.helpers.construct = own(exec, ctx.getProp(reflect, "construct"));
  exec.helpers.Uint8Array = own(exec, ctx.getProp(ctx.global, "Uint8Array"));
  const abCtor = own(exec, ctx.getProp(ctx.global, "ArrayBuffer"));
  exec.helpers.isView = own(exec, ctx.getProp(abCtor, "isView"));
  exec.helpers.String = own(exec, ctx.getProp(ctx.global, "String"));
  exec.helpers.Promise = own(exec, ctx.getProp(ctx.global, "Promise"));
  exec.helpers.promiseResolve = own(exec, ctx.getProp(exec.helpers.Promise, "resolve"));
  const fnCtor = own(exec, ctx.getProp(ctx.global, "Function"));
  const fnProto = own(exec, ctx.getProp(fnCtor, "prototype"));
  exec.helpers.fnToString = own(exec, ctx.getProp(fnProto, "toString"));
  exec.helpers.codeUnits = snippet(exec, CODE_UNITS_SNIPPET);
  exec.helpers.importData = snippet(exec, IMPORT_SNIPPET);
  exec.helpers.exportJson = snippet(exec, EXPORT_SNIPPET);
}

// ---------------------------------------------------------------- in

/** The global `context` from its packed form (wire.ts). */
export function installContext(exec: Exec, packed: Packed): void {
  importPacked(exec, packed, true).dispose();
}

/** Host data → a new handle (op results): primitives directly, anything else through the import helper. */
export function importValue(exec: Exec, value: unknown): QuickJSHandle {
  const ctx = exec.ctx!;
  if (value === undefined) return ctx.undefined.dup();
  if (value === null) return ctx.null.dup();
  if (typeof value === "string") return newString(exec, value);
  if (typeof value === "number") return ctx.newNumber(value);
  if (typeof value === "boolean") return (value ? ctx.true : ctx.false).dup();
  const packed = pack(value);
  // the JSON text's UTF-8 copy and QuickJS string, the value parsed from it (about as large), and each byte array
  // twice (the host's copy in the instance, then QuickJS's)
  if (packed.json.length * 5 + packedBytesOf(packed) * 2 >= ADMIT_MIN) {
    const text = stringBytes(packed.json);
    admit(exec, text.utf8 + 2 * text.vm + 2 * packedBytesOf(packed));
  }
  return importPacked(exec, packed, false);
}

const packedBytesOf = (p: Packed): number => p.bytes.reduce((n, b) => n + b.byteLength, 0);

/** One call of the import helper (IMPORT_SNIPPET): the JSON text, then the byte arrays. */
function importPacked(exec: Exec, packed: Packed, install: boolean): QuickJSHandle {
  const ctx = exec.ctx!;
  // JSON text holds no raw U+0000 (JSON.stringify escapes it), so newString is exact here (see newString)
  const args = [
    ctx.newString(packed.paths.length === 0 ? `[[],${packed.json}]` : `[${JSON.stringify(packed.paths)},${packed.json}]`),
    install ? ctx.true : ctx.false,
  ];
  try {
    for (const b of packed.bytes) {
      // an empty one is made inside (a request without a body: no buffer to copy in)
      if (b.byteLength === 0) args.push(ctx.undefined);
      else args.push(ctx.newArrayBuffer(b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? (b.buffer as ArrayBuffer) : b.slice().buffer));
    }
    return call(exec, exec.helpers.importData!, ...args);
  } finally {
    args[0]!.dispose();
    for (let i = 2; i < args.length; i++) if (args[i] !== ctx.undefined) args[i]!.dispose();
  }
}

// ---------------------------------------------------------------- strings and bytes

/** getString, NUL-safe: quickjs-emscripten passes strings as C strings, so a string holding U+0000 comes back cut
 *  at the first one; then it is read through JSON.stringify instead. */
export function readString(exec: Exec, h: QuickJSHandle): string {
  const ctx = exec.ctx!;
  const s = ctx.getString(h);
  const lengthH = ctx.getProp(h, "length");
  const n = ctx.typeof(lengthH) === "number" ? ctx.getNumber(lengthH) : s.length;
  lengthH.dispose();
  if (n === s.length) return s;
  const r = ctx.callFunction(jsonFn(exec, "stringify"), ctx.undefined, h);
  if (r.error) throw new ScriptThrew(r.error);
  try {
    return JSON.parse(ctx.getString(r.value)) as string;
  } finally {
    r.value.dispose();
  }
}

// ---------------------------------------------------------------- host data into the instance

/** Host data at least this large is admitted against the run's measured heap (~0.1 ms) before it is made; smaller
 *  values are bounded like the script's own allocations (growth charged, the heap measured while it runs). */
const ADMIT_MIN = 256 * 1024;

/** Room for `bytes` more in the execution's memory, or the run's memory error: QuickJS's "out of memory" thrown here
 *  (catchable, like a refused allocation of the script's own), and the run ends as its memory limit. The bytes are
 *  what making the value takes in the instance at once (the host's copy and QuickJS's). */
export function admit(exec: Exec, bytes: number): void {
  if (bytes < ADMIT_MIN) return;
  if (bytes <= exec.memLimit && heapUsed(exec) + bytes <= exec.memLimit) return;
  exec.reason ??= "memory";
  throw new OutOfMemory();
}

/** The execution's measured heap (JS_ComputeMemoryUsage's memory_used_size). */
export function heapUsed(exec: Exec): number {
  const ctx = exec.ctx!;
  const usage = memoryUsage(exec.rt!, ctx, exec.fast);
  try {
    const used = ctx.getProp(usage, "memory_used_size");
    try {
      return ctx.typeof(used) === "number" ? ctx.getNumber(used) : 0;
    } finally {
      used.dispose();
    }
  } finally {
    usage.dispose();
  }
}

const WIDE = /[^\u0000-\u00ff]/;

/** A host string's size in the instance: its UTF-8 copy (how quickjs-emscripten passes it) and the QuickJS string
 *  (1 byte per character when all are Latin-1, else 2). */
function stringBytes(s: string): { utf8: number; vm: number } {
  const utf8 = Buffer.byteLength(s, "utf8");
  return { utf8, vm: utf8 === s.length || !WIDE.test(s) ? s.length : 2 * s.length };
}

/** Strings holding U+0000 shorter than this go in as JSON text (cheaper for a short one); longer ones as code
 *  units (see newString). */
const JSON_NUL_MAX = 4096;

/** A new string in the context (admitted), NUL-safe (see readString): quickjs-emscripten passes strings as C
 *  strings, so a string holding U+0000 goes in otherwise: a short one as JSON text, parsed inside; a longer one as
 *  its code units in an ArrayBuffer (1 byte each when all are Latin-1, else 2), made into the string inside by the
 *  code-units helper (bridge.ts). JSON text takes up to 6 bytes per NUL, twice (its UTF-8 copy and its QuickJS
 *  string), and took ~1.6× the CPU of the code units for a NUL-dense MiB. */
export function newString(exec: Exec, s: string): QuickJSHandle {
  const ctx = exec.ctx!;
  const nul = s.includes("\u0000");
  if (!nul || s.length < JSON_NUL_MAX) {
    if (s.length * 5 >= ADMIT_MIN) {
      const { utf8, vm } = stringBytes(s);
      admit(exec, utf8 + vm);
    }
    return nul ? parseJson(exec, JSON.stringify(s)) : ctx.newString(s);
  }
  const wide = WIDE.test(s);
  const units = Buffer.from(s, wide ? "utf16le" : "latin1");
  // the buffer (the host's copy, then QuickJS's), the parts made from it and the string they are joined into
  admit(exec, 3 * units.byteLength);
  exec.helpers.codeUnits ??= snippet(exec, CODE_UNITS_SNIPPET);
  const buffer = ctx.newArrayBuffer(
    units.byteOffset === 0 && units.byteLength === units.buffer.byteLength ? (units.buffer as ArrayBuffer) : new Uint8Array(units).buffer,
  );
  try {
    return call(exec, exec.helpers.codeUnits, buffer, wide ? ctx.true : ctx.false);
  } finally {
    buffer.dispose();
  }
}

/** A new ArrayBuffer in the context holding `bytes` (admitted: the host's copy in the instance, then QuickJS's). */
export function newBuffer(exec: Exec, bytes: Uint8Array): QuickJSHandle {
  admit(exec, 2 * bytes.byteLength);
  return exec.ctx!.newArrayBuffer(
    bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : new Uint8Array(bytes).buffer,
  );
}

/** JSON.parse / JSON.stringify of the context (looked up once per execution; the first lookup happens before any
 *  script code when the context holds data, otherwise a script that replaced them only affects its own data). */
function jsonFn(exec: Exec, name: "parse" | "stringify"): QuickJSHandle {
  const slot = name === "parse" ? "jsonParse" : "jsonStringify";
  const existing = exec.helpers[slot];
  if (existing) return existing;
  const ctx = exec.ctx!;
  exec.helpers.json ??= own(exec, ctx.getProp(ctx.global, "JSON"));
  return (exec.helpers[slot] = own(exec, ctx.getProp(exec.helpers.json, name)));
}

function parseJson(exec: Exec, json: string): QuickJSHandle {
  const ctx = exec.ctx!;
  const s = ctx.newString(json);
  try {
    const r = ctx.callFunction(jsonFn(exec, "parse"), ctx.undefined, s);
    if (r.error) throw new ScriptThrew(r.error);
    return r.value;
  } finally {
    s.dispose();
  }
}

/** `new Uint8Array(bytes)` in the context, through Reflect.construct (no JS to parse). */
export function newU8(exec: Exec, bytes: Uint8Array): QuickJSHandle {
  const ctx = exec.ctx!;
  if (!exec.helpers.construct || !exec.helpers.Uint8Array) {
    const reflect = own(exec, ctx.getProp(ctx.global, "Reflect"));
    exec.helpers.construct = own(exec, ctx.getProp(reflect, "construct"));
    exec.helpers.Uint8Array = own(exec, ctx.getProp(ctx.global, "Uint8Array"));
  }
  const ab = newBuffer(exec, bytes);
  const args = ctx.newArray();
  try {
    ctx.setProp(args, 0, ab);
    return call(exec, exec.helpers.construct, exec.helpers.Uint8Array, args);
  } finally {
    args.dispose();
    ab.dispose();
  }
}

/** The bytes of an ArrayBuffer / typed array / DataView handle (a copy), or null when it is none of them. */
function readBytes(exec: Exec, h: QuickJSHandle): Uint8Array | null {
  return withBytes(exec, h, (bytes) => bytes.slice());
}

/** `use(bytes)` with the bytes of an ArrayBuffer / typed array / DataView handle (a view of a temporary copy, valid
 *  during the call), or null when the handle is none of them. Native lookups only, no JS to parse (a helper snippet
 *  cost ~18 µs per execution): ArrayBuffer.isView, then the view's buffer, byteOffset and byteLength, checked
 *  against the buffer's real length. A script that replaced those accessors gets its own bytes or a TypeError
 *  from the caller, never bytes outside its buffer: QTS_GetArrayBuffer copies exactly the buffer's real length. */
export function withBytes<T>(exec: Exec, h: QuickJSHandle, use: (bytes: Uint8Array) => T): T | null {
  const ctx = exec.ctx!;
  if (ctx.typeof(h) !== "object") return null;
  if (!exec.helpers.isView) {
    const abCtor = own(exec, ctx.getProp(ctx.global, "ArrayBuffer"));
    exec.helpers.isView = own(exec, ctx.getProp(abCtor, "isView"));
  }
  let isView = false;
  if (ctx.typeof(exec.helpers.isView) === "function") {
    const r = ctx.callFunction(exec.helpers.isView, ctx.undefined, h);
    if (r.error) throw new ScriptThrew(r.error);
    isView = ctx.typeof(r.value) === "boolean" && ctx.getNumber(r.value) === 1;
    r.value.dispose();
  }
  let buffer = h;
  let offset = 0;
  let length = -1;
  if (isView) {
    buffer = ctx.getProp(h, "buffer");
    const o = ctx.getProp(h, "byteOffset");
    const l = ctx.getProp(h, "byteLength");
    offset = ctx.typeof(o) === "number" ? ctx.getNumber(o) : NaN;
    length = ctx.typeof(l) === "number" ? ctx.getNumber(l) : NaN;
    o.dispose();
    l.dispose();
  }
  try {
    if (ctx.typeof(buffer) !== "object" || !Number.isInteger(offset) || offset < 0 || (length !== -1 && (!Number.isInteger(length) || length < 0)))
      return null;
    let copy: { value: Uint8Array; dispose(): void };
    try {
      copy = ctx.getArrayBuffer(buffer);
    } catch {
      return null; // not an ArrayBuffer (a plain object, or a view whose accessors were replaced)
    }
    try {
      const all = copy.value;
      if (length === -1) length = all.byteLength - offset;
      if (offset + length > all.byteLength) return null;
      return use(offset === 0 && length === all.byteLength ? all : all.subarray(offset, offset + length));
    } finally {
      copy.dispose();
    }
  } finally {
    if (buffer !== h) buffer.dispose();
  }
}

// ---------------------------------------------------------------- out

/** A handle → host data: JSON values, byte arrays as Uint8Array (see exportJson). */
export function exportValue(exec: Exec, h: QuickJSHandle): { value: unknown; transfer: ArrayBuffer[] } {
  const { json, bytes } = exportJson(exec, h, false);
  if (json === undefined) return { value: undefined, transfer: [] };
  // bytes is non-empty only if the hook ran, which made the key
  return { value: parseWithBytes(json, exec.key ?? undefined, bytes), transfer: bytes.map((b) => b.buffer as ArrayBuffer) };
}

/** A handle → JSON text (undefined for no value; NaN and ±Infinity are null, as in JSON) and the byte arrays it
 *  holds: during the native JSON.stringify
 *  (of the export helper, held from before any script code) a host `toJSON` on the ArrayBuffer, %TypedArray% and
 *  DataView prototypes swaps each byte array for a placeholder holding a random per-execution key (exec.key).
 *  `final`: the result of a finished execution (the hook stays installed: no script code runs any more). Throws
 *  ExportError for values that are not data, ScriptThrew when script code run by the serialization (toJSON,
 *  getters) threw or the value cannot be serialized (BigInt, cycles). */
export function exportJson(exec: Exec, h: QuickJSHandle, final: boolean): { json: string | undefined; bytes: Uint8Array[] } {
  const ctx = exec.ctx!;
  const bytes: Uint8Array[] = [];
  exec.exporting = bytes;
  exec.exportedBytes = 0;
  let json: string | undefined;
  try {
    const r = callFn(exec, exec.helpers.exportJson!, ctx.undefined, [h, toJSONHook(exec), final ? ctx.true : ctx.false]);
    if (r.error) throw new ScriptThrew(r.error);
    const value = r.value!;
    try {
      // JSON text holds no raw U+0000 (JSON.stringify escapes it), so getString is exact here (see readString);
      // the helper answers "" when JSON.stringify gives no text
      json = ctx.getString(value) || undefined;
    } finally {
      value.dispose();
    }
  } finally {
    exec.exporting = null;
  }
  // JSON text never starts with "#": the helper's answer for values that are not data
  if (json?.startsWith("#")) throw new ExportError(`Script result must be data (JSON values or byte arrays), not a ${json.slice(1)}`);
  return { json, bytes };
}

/** The `toJSON` installed on byte-array prototypes while exportValue serializes: records the bytes and returns
 *  the placeholder. Outside an export it is not installed. */
export function toJSONHook(exec: Exec): QuickJSHandle {
  if (exec.helpers.toJSON) return exec.helpers.toJSON;
  const ctx = exec.ctx!;
  const fn = ctx.newFunction("toJSON", function (this: QuickJSHandle) {
    try {
      const list = exec.exporting;
      if (!list) return undefined;
      const bytes = readBytes(exec, this);
      if (!bytes) return undefined;
      // Each reference is a copy on the host: a result naming one big array many times must not grow the
      // worker's own memory without bound. In all, the copies may not exceed the execution's memory limit.
      exec.exportedBytes += bytes.byteLength;
      if (exec.exportedBytes > exec.memLimit) {
        list.length = 0;
        return { error: newError(exec, "Script result too large: its byte arrays exceed the script memory limit", "RangeError") };
      }
      list.push(bytes);
      const marker = ctx.newObject();
      const n = ctx.newNumber(list.length - 1);
      ctx.setProp(marker, bytesKey(exec), n);
      n.dispose();
      return marker;
    } catch (err) {
      return { error: toScriptError(exec, err) };
    }
  });
  return (exec.helpers.toJSON = own(exec, fn));
}

/** The per-execution placeholder key for byte arrays in exported JSON: random, so a script cannot forge one (no NUL:
 *  quickjs-emscripten passes strings as C strings). */
function bytesKey(exec: Exec): string {
  return (exec.key ??= `__secbox_bytes_${crypto.randomUUID().replaceAll("-", "")}`);
}

// ---------------------------------------------------------------- errors

/** A host-side failure inside a host function, as a QuickJS error handle to throw. */
export function toScriptError(exec: Exec, err: unknown): QuickJSHandle {
  if (err instanceof ScriptThrew) return err.handle;
  if (err instanceof HostThrow) return newError(exec, err.message, err.errorName);
  if (err instanceof ExportError) return newError(exec, err.message, "TypeError");
  // Unexpected: keep host details (paths, stacks) out of the script.
  return newError(exec, "Internal error in a sandbox host function", "InternalError");
}

export function newError(exec: Exec, message: string, name = "Error", code?: string): QuickJSHandle {
  const ctx = exec.ctx!;
  const e = ctx.newError({ name, message });
  if (code) {
    const c = ctx.newString(code);
    ctx.setProp(e, "code", c);
    c.dispose();
  }
  return e;
}

/** Name, message, stack and code of a thrown value, read by the describe helper (never throws into the host). */
export function describe(exec: Exec, err: QuickJSHandle): { name: string; message: string; stack: string; code: string } {
  const ctx = exec.ctx!;
  try {
    exec.helpers.describe ??= snippet(exec, DESCRIBE_SNIPPET);
    const r = ctx.callFunction(exec.helpers.describe, ctx.undefined, err);
    if (r.error) {
      r.error.dispose();
      return { name: "", message: "Script failed with an error that could not be read", stack: "", code: "" };
    }
    const text = readString(exec, r.value);
    r.value.dispose();
    let parts: unknown;
    try {
      parts = JSON.parse(text);
    } catch {
      parts = null;
    }
    if (!Array.isArray(parts) || !parts.every((p) => typeof p === "string")) {
      return { name: "", message: "Script failed with an error that could not be read", stack: "", code: "" };
    }
    return { name: parts[0] ?? "", message: parts[1] ?? "", stack: parts[2] ?? "", code: parts[3] ?? "" };
  } catch (e) {
    if (e instanceof ScriptThrew) {
      e.handle.dispose();
      return { name: "", message: "Script failed with an error that could not be read", stack: "", code: "" };
    }
    throw e;
  }
}

/** `name` of an error QuickJS itself threw before any script code ran (so no getter can be involved). */
export function errorName(exec: Exec, err: QuickJSHandle): string {
  const ctx = exec.ctx!;
  if (ctx.typeof(err) !== "object") return "";
  const n = ctx.getProp(err, "name");
  try {
    return ctx.typeof(n) === "string" ? ctx.getString(n) : "";
  } finally {
    n.dispose();
  }
}
