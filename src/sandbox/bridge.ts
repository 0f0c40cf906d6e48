// JavaScript evaluated INSIDE a script's QuickJS context to build the globals of §11.6 on top of a few host
// functions. Every snippet is a function expression, compiled lazily, only in the context that needs it (parsing
// costs ~50 µs per KiB, so a trivial script pays for none of them). Snippets hold no secrets: a script may
// replace any global, which only affects its own run. Host functions receive and return plain QuickJS values
// (strings, numbers, ArrayBuffers), never host objects.

/** `(e) => string`: JSON `[name, message, stack, code]` of a thrown value; never throws. */
export const DESCRIBE_SNIPPET = `(function (e) {
  const S = (x) => { try { return typeof x === "string" ? x : x === undefined || x === null ? "" : String(x); } catch (_) { return ""; } };
  let name = "", message = "", stack = "", code = "";
  if (e !== null && (typeof e === "object" || typeof e === "function")) {
    try { name = S(e.name); } catch (_) {}
    try { message = S(e.message); } catch (_) {}
    try { stack = S(e.stack); } catch (_) {}
    try { if (typeof e.code === "string") code = e.code; } catch (_) {}
    if (name === "" && message === "") { try { message = String(e); } catch (_) { message = "[object]"; } }
  } else {
    message = S(e);
    if (typeof e === "symbol") { try { message = e.toString(); } catch (_) {} }
  }
  return JSON.stringify([name.slice(0, 200), message.slice(0, 4000), stack.slice(0, 8000), code.slice(0, 200)]);
})`;

/** `(buffer, wide) => string`: the string whose code units are the buffer's bytes (Latin-1), or its 16-bit words
 *  when `wide`: how the host hands in a string holding U+0000 (quickjs-emscripten passes strings as C strings; see
 *  engine/marshal.ts newString). The built-ins it uses are taken when it is made (in the memory image, before any
 *  script code). */
export const CODE_UNITS_SNIPPET = `(function () {
  "use strict";
  const U8 = Uint8Array, U16 = Uint16Array, apply = Reflect.apply, fromCharCode = String.fromCharCode;
  const subarray = Object.getPrototypeOf(Uint8Array.prototype).subarray, join = Array.prototype.join;
  return function (buffer, wide) {
    const units = wide ? new U16(buffer) : new U8(buffer);
    const parts = [];
    for (let i = 0, n = 0; i < units.length; i += 8192, n++) parts[n] = apply(fromCharCode, null, apply(subarray, units, [i, i + 8192]));
    return apply(join, parts, [""]);
  };
})()`;

/** `(name, value)`: a writable, configurable, non-enumerable global. */
export const DEFINE_SNIPPET = `(function (name, value) {
  Object.defineProperty(globalThis, name, { configurable: true, enumerable: false, writable: true, value });
})`;

const TO_BUFFER = `const toBuffer = (b, what) => {
    if (b instanceof ArrayBuffer) return b;
    if (ArrayBuffer.isView(b)) return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
    throw new TypeError(what + ": expected a Uint8Array or ArrayBuffer");
  };`;

/** `(op|undefined, seal, sha256) => Secbox` */
export const SECBOX_SNIPPET = `(function (op, seal, sha256) {
  "use strict";
  ${TO_BUFFER}
  const data = (d, what) => typeof d === "string" ? d : toBuffer(d, what);
  const crypto = {
    async seal(recipientPublicKey, plaintext) { return seal(typeof recipientPublicKey === "string" ? recipientPublicKey : null, data(plaintext, "Secbox.crypto.seal")); },
    async sha256(input) { return sha256(data(input, "Secbox.crypto.sha256")); },
  };
  if (!op) return { crypto };
  const kv = {
    async get(key) { return op("kv", { m: "get", key }); },
    async getEntry(key) { return op("kv", { m: "getEntry", key }); },
    async set(key, value, options) { return op("kv", { m: "set", key, value, options }); },
    async delete(key) { return op("kv", { m: "delete", key }); },
    async list(options) { return op("kv", { m: "list", options }); },
    async watch(options) { return op("kv", { m: "watch", options }); },
  };
  return { kv, crypto };
})`;

/** `(log) => console`; `log(level, message)` returns false once the capture is full. */
export const CONSOLE_SNIPPET = `(function (log) {
  "use strict";
  let full = false;
  const one = (x) => {
    if (typeof x === "string") return x;
    if (x instanceof Error) { const s = String(x); return typeof x.stack === "string" && x.stack ? s + "\\n" + x.stack : s; }
    if (typeof x === "object" && x !== null) {
      try { const j = JSON.stringify(x); if (j !== undefined) return j; } catch (_) {}
    }
    if (typeof x === "symbol") return x.toString();
    return String(x);
  };
  const emit = (level) => function (...args) {
    if (full) return;
    let s = "";
    for (let i = 0; i < args.length && s.length <= 2048; i++) {
      let t;
      try { t = one(args[i]); } catch (_) { t = "[unprintable]"; }
      s += (i ? " " : "") + t;
    }
    if (!log(level, s)) full = true;
  };
  return { log: emit("log"), info: emit("info"), warn: emit("warn"), error: emit("error"), debug: emit("debug") };
})`;

/** `(enc, dec, atob, btoa) => [TextEncoder, TextDecoder, atob, btoa]` */
export const TEXT_SNIPPET = `(function (enc, dec, hatob, hbtoa) {
  "use strict";
  ${TO_BUFFER}
  class TextEncoder {
    get encoding() { return "utf-8"; }
    encode(input = "") { return new Uint8Array(enc(String(input))); }
  }
  const LABELS = ["utf-8", "utf8", "unicode-1-1-utf-8"];
  class TextDecoder {
    #fatal; #ignoreBOM;
    constructor(label = "utf-8", options = {}) {
      if (!LABELS.includes(String(label).trim().toLowerCase())) throw new RangeError("TextDecoder: only utf-8 is supported");
      this.#fatal = !!(options && options.fatal);
      this.#ignoreBOM = !!(options && options.ignoreBOM);
    }
    get encoding() { return "utf-8"; }
    get fatal() { return this.#fatal; }
    get ignoreBOM() { return this.#ignoreBOM; }
    decode(input) {
      if (input === undefined) return "";
      const s = dec(toBuffer(input, "TextDecoder.decode"), this.#fatal);
      return !this.#ignoreBOM && s.charCodeAt(0) === 0xfeff ? s.slice(1) : s;
    }
  }
  const atob = function atob(data) { return hatob(String(data)); };
  const btoa = function btoa(data) { return hbtoa(String(data)); };
  return [TextEncoder, TextDecoder, atob, btoa];
})`;

/** `(sleep, cancel) => [setTimeout, clearTimeout]`; `sleep(id, ms)` resolves after ms (host-clamped). */
export const TIMERS_SNIPPET = `(function (sleep, cancel) {
  "use strict";
  let next = 0;
  function setTimeout(callback, delay, ...args) {
    if (typeof callback !== "function") throw new TypeError("setTimeout: callback must be a function");
    const id = ++next;
    sleep(id, Number(delay) || 0).then(() => { callback(...args); });
    return id;
  }
  function clearTimeout(id) { if (typeof id === "number") cancel(id); }
  return [setTimeout, clearTimeout];
})`;

/** `(text, install, ...buffers) => value`: host data from `text`, the JSON of `[paths, value]` (wire.ts Packed),
 *  each buffer becoming a Uint8Array at its path (undefined: an empty one); with `install` it becomes the global
 *  `context`. Made before any script code (the built-ins it holds are the pristine ones); one call instead of a
 *  host round trip per step. */
export const IMPORT_SNIPPET = `(() => {
  "use strict";
  const parse = JSON.parse, define = Object.defineProperty, U8 = Uint8Array, global = globalThis;
  return function (text, install) {
    const all = parse(text), paths = all[0];
    let value = all[1];
    for (let i = 0; i < paths.length; i++) {
      const path = paths[i], buffer = arguments[i + 2], bytes = buffer === undefined ? new U8(0) : new U8(buffer);
      if (path.length === 0) { value = bytes; continue; }
      let parent = value;
      for (let k = 0; k < path.length - 1; k++) parent = parent[path[k]];
      define(parent, path[path.length - 1], { __proto__: null, value: bytes, writable: true, enumerable: true, configurable: true });
    }
    if (install) global.context = value;
    return value;
  };
})()`;

/** `(value, hook, final) => string`: "#function", "#symbol" or "#bigint" for those (not data, nothing run), else
 *  JSON.stringify ("" for no JSON text) of a result with `hook` as the `toJSON` of the
 *  byte-array prototypes (ArrayBuffer, DataView, %TypedArray%) during the call; removed after it unless `final`
 *  (no script code runs after a final export). Built-ins held from before any script code; indexed loops and
 *  prototype-less descriptors only (a script may have replaced Array.prototype[Symbol.iterator] or added `get` to
 *  Object.prototype). */
export const EXPORT_SNIPPET = `(() => {
  "use strict";
  const stringify = JSON.stringify, define = Object.defineProperty;
  const protos = [ArrayBuffer.prototype, DataView.prototype, Object.getPrototypeOf(Uint8Array.prototype)];
  return function (value, hook, final) {
    const type = typeof value;
    if (type === "function" || type === "symbol" || type === "bigint") return "#" + type;
    for (let i = 0; i < protos.length; i++) define(protos[i], "toJSON", { __proto__: null, value: hook, writable: true, enumerable: false, configurable: true });
    let done = false;
    try {
      const json = stringify(value);
      done = true;
      return json === undefined ? "" : json;
    } finally {
      if (!final || !done) for (let i = 0; i < protos.length; i++) define(protos[i], "toJSON", { __proto__: null, value: undefined, writable: true, enumerable: false, configurable: true });
    }
  };
})()`;
