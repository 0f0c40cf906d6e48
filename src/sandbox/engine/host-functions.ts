// The globals of §11.6 and the host functions behind them: lazy globals (Sandbox/Deno, Secbox, console,
// TextEncoder/TextDecoder, atob/btoa, setTimeout/clearTimeout) defined as accessors that build their group on first
// access, from a snippet (bridge.ts) and host functions: encode/decode, atob/btoa, log, seal/sha256, the timers, and
// the operations answered by the main thread (op_proxy_request, Secbox.kv: startOp posts them, the run loop's
// opResult settles them).
// Owns: Exec.globals, .userSet, .logs, .sleeps (created; the run loop fires them), .ops (created). Must never: give the
// script a host object or a host error's details (failures become QuickJS errors through marshal.ts toScriptError),
// block the thread, or let one execution reach another's timers or operations.
import type { QuickJSHandle } from "quickjs-emscripten-core";
import type { EngineState } from "./state";
import { CONSOLE_SNIPPET, DEFINE_SNIPPET, SECBOX_SNIPPET, TEXT_SNIPPET, TIMERS_SNIPPET } from "../bridge";
import { CryptoInputError, sealSync, sha256Hex } from "../crypto";
import { MAX_LOG_BYTES, MAX_LOG_ENTRIES, type LogEntry } from "../types";
import { HostThrow, type Exec } from "./exec";
import { call, exportValue, newBuffer, newString, newU8, own, readString, snippet, toScriptError, withBytes } from "./marshal";
import { defineAccessor } from "./quickjs-internals";

const MAX_TIMERS = 100;
/** Host operations (kv, proxy) one execution may have in flight at once. */
const MAX_PENDING_OPS = 32;
const LEVELS = new Set(["log", "info", "warn", "error", "debug"]);

const utf8 = new TextEncoder();
const utf8Lenient = new TextDecoder("utf-8", { fatal: false, ignoreBOM: true });
const utf8Fatal = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Lazy globals: name → group; a group is built on first access to any of its names. */
const GROUP_OF: Record<string, string> = {
  Sandbox: "sandbox",
  Deno: "sandbox",
  Secbox: "secbox",
  console: "console",
  TextEncoder: "text",
  TextDecoder: "text",
  atob: "text",
  btoa: "text",
  setTimeout: "timers",
  clearTimeout: "timers",
};
const LAZY_NAMES = Object.keys(GROUP_OF);

/** Every lazy global gets an accessor whose getter and setter are one host function (0 args: get, 1: set).
 *  Defined through QTS_DefineProp directly: the public defineProp wraps a new host function per accessor, and
 *  a JS prelude doing the same costs ~75 µs per execution instead of ~15 µs. */
export function installGlobals(eng: EngineState, exec: Exec): void {
  const ctx = exec.ctx!;
  for (const name of LAZY_NAMES) {
    const accessor = (...args: QuickJSHandle[]) => {
      try {
        if (args.length > 0) {
          exec.userSet.add(name);
          defineData(exec, name, args[0]!);
          return;
        }
        const cached = exec.globals.get(name);
        if (cached) return cached.dup();
        return materialize(eng, exec, GROUP_OF[name]!, name);
      } catch (err) {
        return { error: toScriptError(exec, err) };
      }
    };
    defineAccessor(ctx, ctx.global, name, accessor, eng.fast);
  }
}

/** `globalThis[name] = value` as a writable, configurable, non-enumerable data property. */
function defineData(exec: Exec, name: string, value: QuickJSHandle): void {
  const ctx = exec.ctx!;
  exec.helpers.define ??= snippet(exec, DEFINE_SNIPPET);
  const k = ctx.newString(name);
  try {
    call(exec, exec.helpers.define, k, value).dispose();
  } finally {
    k.dispose();
  }
}

/** Builds `group`, defines its names as plain data properties (unless the script set them) and returns a new
 *  handle to `wanted`. */
export function materialize(eng: EngineState, exec: Exec, group: string, wanted: string): QuickJSHandle {
  const ctx = exec.ctx!;
  const members = new Map<string, QuickJSHandle>();
  const temps: QuickJSHandle[] = [];
  try {
    switch (group) {
      case "sandbox": {
        // Built from handles (no JS to parse): Sandbox = Deno = { core: { encode, decode, ops: { op_proxy_request } } }.
        const sandbox = ctx.newObject();
        const core = ctx.newObject();
        const ops = ctx.newObject();
        temps.push(sandbox, core, ops);
        ctx.setProp(core, "encode", encodeFn(eng, exec));
        ctx.setProp(core, "decode", decodeFn(eng, exec));
        if (exec.job.proxy) ctx.setProp(ops, "op_proxy_request", proxyFn(eng, exec));
        ctx.setProp(core, "ops", ops);
        ctx.setProp(sandbox, "core", core);
        members.set("Sandbox", sandbox).set("Deno", sandbox);
        break;
      }
      case "secbox": {
        const op = exec.job.kv ? opFunction(eng, exec) : ctx.undefined;
        const fn = (exec.helpers.secboxF ??= snippet(exec, SECBOX_SNIPPET));
        const obj = call(exec, fn, op, sealFn(eng, exec), sha256Fn(eng, exec));
        temps.push(obj);
        members.set("Secbox", obj);
        break;
      }
      case "console": {
        const fn = (exec.helpers.consoleF ??= snippet(exec, CONSOLE_SNIPPET));
        const obj = call(exec, fn, logFn(eng, exec));
        temps.push(obj);
        members.set("console", obj);
        break;
      }
      case "text": {
        const fn = (exec.helpers.textF ??= snippet(exec, TEXT_SNIPPET));
        const arr = call(exec, fn, encFn(eng, exec), decFn(eng, exec), atobFn(eng, exec), btoaFn(eng, exec));
        temps.push(arr);
        ["TextEncoder", "TextDecoder", "atob", "btoa"].forEach((n, i) => {
          const h = ctx.getProp(arr, i);
          temps.push(h);
          members.set(n, h);
        });
        break;
      }
      case "timers": {
        const fn = (exec.helpers.timersF ??= snippet(exec, TIMERS_SNIPPET));
        const arr = call(exec, fn, sleepFn(eng, exec), cancelFn(eng, exec));
        temps.push(arr);
        ["setTimeout", "clearTimeout"].forEach((n, i) => {
          const h = ctx.getProp(arr, i);
          temps.push(h);
          members.set(n, h);
        });
        break;
      }
      default:
        throw new Error(`unknown group ${group}`);
    }
    // The accessors stay: later reads return the cached object (a host call, cheaper than redefining).
    for (const [name, h] of members) exec.globals.set(name, h.dup());
    return members.get(wanted)!.dup();
  } finally {
    for (const h of temps) if (h.alive) h.dispose();
  }
}

/** A host function kept for the execution's lifetime (disposed with it). */
function hostFn(exec: Exec, slot: keyof Exec["helpers"], name: string, impl: (...args: QuickJSHandle[]) => QuickJSHandle | undefined): QuickJSHandle {
  const existing = exec.helpers[slot];
  if (existing) return existing;
  const ctx = exec.ctx!;
  const fn = ctx.newFunction(name, (...args: QuickJSHandle[]) => {
    try {
      return impl(...args);
    } catch (err) {
      return { error: toScriptError(exec, err) };
    }
  });
  exec.helpers[slot] = own(exec, fn);
  return fn;
}

function encFn(_eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "enc", "encode", (s) => {
    const ctx = exec.ctx!;
    const text = s && ctx.typeof(s) === "string" ? readString(exec, s) : "";
    return newBuffer(exec, utf8.encode(text));
  });
}

function decFn(_eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "dec", "decode", (ab, fatal) => {
    const ctx = exec.ctx!;
    const bytes = ctx.getArrayBuffer(ab!);
    try {
      const strict = fatal !== undefined && ctx.typeof(fatal) === "boolean" && ctx.dump(fatal) === true;
      let text: string;
      try {
        text = (strict ? utf8Fatal : utf8Lenient).decode(bytes.value);
      } catch {
        throw new HostThrow("TypeError", "The encoded data was not valid utf-8");
      }
      return newString(exec, text);
    } finally {
      bytes.dispose();
    }
  });
}

/** Sandbox.core.encode(text) → Uint8Array (UTF-8). */
function encodeFn(_eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "encode", "encode", (arg) => {
    const ctx = exec.ctx!;
    let text = "";
    if (arg && ctx.typeof(arg) === "string") text = readString(exec, arg);
    else if (arg && ctx.typeof(arg) !== "undefined") {
      exec.helpers.String ??= own(exec, ctx.getProp(ctx.global, "String"));
      const s = call(exec, exec.helpers.String, arg);
      try {
        text = readString(exec, s);
      } finally {
        s.dispose();
      }
    }
    return newU8(exec, utf8.encode(text));
  });
}

/** Sandbox.core.decode(bytes) → string (UTF-8, invalid sequences → U+FFFD, a leading BOM dropped). */
function decodeFn(_eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "decode", "decode", (arg) => {
    const text = arg ? withBytes(exec, arg, (bytes) => utf8Lenient.decode(bytes)) : null;
    if (text === null) throw new HostThrow("TypeError", "Sandbox.core.decode: expected a Uint8Array or ArrayBuffer");
    return newString(exec, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  });
}

function proxyFn(eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "proxy", "op_proxy_request", (options) => startOp(eng, exec, "proxy", options ?? exec.ctx!.undefined));
}

function atobFn(_eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "atob", "atob", (s) => {
    const text = readString(exec, s!);
    let binary: string;
    try {
      binary = atob(text);
    } catch {
      throw new HostThrow("InvalidCharacterError", "atob: the string is not correctly encoded");
    }
    return newString(exec, binary);
  });
}

function btoaFn(_eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "btoa", "btoa", (s) => {
    const text = readString(exec, s!);
    let encoded: string;
    try {
      encoded = btoa(text);
    } catch {
      throw new HostThrow("InvalidCharacterError", "btoa: the string contains characters outside of the Latin1 range");
    }
    return newString(exec, encoded);
  });
}

function logFn(_eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "log", "log", (level, message) => {
    const ctx = exec.ctx!;
    if (exec.logs.length >= MAX_LOG_ENTRIES) return ctx.false;
    const l = ctx.getString(level!);
    exec.logs.push({ level: (LEVELS.has(l) ? l : "log") as LogEntry["level"], message: clipBytes(readString(exec, message!), MAX_LOG_BYTES) });
    return exec.logs.length < MAX_LOG_ENTRIES ? ctx.true : ctx.false;
  });
}

function sealFn(_eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "seal", "seal", (pk, data) => {
    const ctx = exec.ctx!;
    const key = pk && ctx.typeof(pk) === "string" ? ctx.getString(pk) : null;
    let sealed: string;
    try {
      sealed = sealSync(key, stringOrBytes(exec, data!));
    } catch (err) {
      if (err instanceof CryptoInputError) throw new HostThrow("TypeError", err.message);
      throw err;
    }
    return newString(exec, sealed);
  });
}

function sha256Fn(_eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "sha256", "sha256", (data) => newString(exec, sha256Hex(stringOrBytes(exec, data!))));
}

function sleepFn(eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "sleep", "sleep", (idH, msH) => {
    const ctx = exec.ctx!;
    if (exec.sleeps.size >= MAX_TIMERS) throw new HostThrow("RangeError", `setTimeout: too many pending timers (${MAX_TIMERS})`);
    const id = ctx.getNumber(idH!);
    const requested = ctx.getNumber(msH!);
    const remaining = Math.max(0, exec.deadline - Date.now());
    const delay = Math.min(Math.max(0, Number.isFinite(requested) ? requested : 0), remaining);
    const d = ctx.newPromise();
    const timer = setTimeout(() => eng.fireSleep(exec, id), delay);
    exec.sleeps.set(id, { d, timer, at: Date.now() + delay });
    return d.handle;
  });
}

function cancelFn(_eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "cancel", "cancel", (idH) => {
    const ctx = exec.ctx!;
    const id = ctx.getNumber(idH!);
    const s = exec.sleeps.get(id);
    if (s) {
      clearTimeout(s.timer);
      exec.sleeps.delete(id);
      s.d.dispose();
    }
    return undefined;
  });
}

/** `op(name, payload)` for the Secbox snippet (kv). */
function opFunction(eng: EngineState, exec: Exec): QuickJSHandle {
  return hostFn(exec, "op", "op", (nameH, payload) => {
    const op = exec.ctx!.getString(nameH!);
    if (op !== "kv" && op !== "proxy") throw new HostThrow("TypeError", "unknown operation");
    return startOp(eng, exec, op, payload ?? exec.ctx!.undefined);
  });
}

/** kv and proxy: the payload goes to the main thread as data; the returned promise settles when it answers. */
function startOp(eng: EngineState, exec: Exec, op: "kv" | "proxy", payload: QuickJSHandle): QuickJSHandle {
  const ctx = exec.ctx!;
  const d = ctx.newPromise();
  let exported: { value: unknown; transfer: ArrayBuffer[] };
  try {
    if (exec.ops.size >= MAX_PENDING_OPS) throw new HostThrow("RangeError", `Too many operations in flight (at most ${MAX_PENDING_OPS})`);
    exported = exportValue(exec, payload);
  } catch (err) {
    // Not data (or its toJSON threw): the returned promise rejects.
    const e = toScriptError(exec, err);
    d.reject(e);
    e.dispose();
    const h = d.handle.dup();
    d.dispose();
    return h;
  }
  const opId = ++exec.opSeq;
  exec.ops.set(opId, d);
  eng.send({ t: "op", id: exec.id, opId, op, args: exported.value, remainingMs: Math.max(0, exec.deadline - Date.now()) }, exported.transfer);
  return d.handle;
}

function stringOrBytes(exec: Exec, h: QuickJSHandle): string | Uint8Array {
  const ctx = exec.ctx!;
  if (ctx.typeof(h) === "string") return readString(exec, h);
  const view = ctx.getArrayBuffer(h);
  try {
    return view.value.slice();
  } finally {
    view.dispose();
  }
}

/** Every host function, made once in the pristine runtime (image.ts): an execution started from the image finds
 *  them in its helpers. */
export const HOST_FUNCTIONS = [encFn, decFn, encodeFn, decodeFn, proxyFn, atobFn, btoaFn, logFn, sealFn, sha256Fn, sleepFn, cancelFn, opFunction];

/** Cuts to at most `max` UTF-8 bytes on a character boundary. */
function clipBytes(s: string, max: number): string {
  if (s.length * 3 <= max) return s;
  const bytes = utf8.encode(s);
  if (bytes.length <= max) return s;
  let end = max;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return utf8Lenient.decode(bytes.subarray(0, end));
}
