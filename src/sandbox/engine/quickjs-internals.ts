// Every reach of the engine into quickjs-emscripten-core's private fields and the emscripten variant's exports, its
// way of instantiating and its memory layout, in one place, with the versions they were verified for and a self-check at worker start.
//
// Two kinds of internals, two policies:
// - Speed: the memory image (stack pointer exports, allocator, host-function table, the Math.random state and the
//   allocator's top pointer in WebAssembly memory), fastCall's argument blocks, defining accessors and measuring the
//   heap through the FFI. Used only when the installed packages are the versions below (PINNED) AND the self-check
//   (checkFast, and the probes of image.ts) passes; otherwise the worker says why (Engine.fallback; the pool logs it
//   once as a warning) and takes the slow safe path: a runtime created per execution, calls through
//   ctx.callFunction, accessors through the public defineProp, no resuming of parked jobs from the interrupt
//   handler, and a native stack overflow replaces the worker instead of being contained in it.
// - Safety: the guard of faults.ts (the FFI functions and the host-callback glue wrapped, so that a fault is never
//   swallowed by quickjs-emscripten's glue and QuickJS never runs on after it). It has no slow path: without it a
//   native stack overflow could leave QuickJS running on a half-updated runtime next to other users' parked jobs. If
//   the glue is not as expected (installGuard) or does not route host calls through the replacement (checkGlue), the
//   worker does not start, loudly ("unexpected quickjs-emscripten internals: …").
// Must never: hold state of its own between calls (the engine keeps what these functions find), or be bypassed: no
// other file casts a quickjs-emscripten object to reach a private field or a minified export.
// quickjs-internals.test.ts runs the self-check against the installed packages; an upgrade that moves any of this
// fails it with the name of what moved.
// @ts-ignore: not in the package's "exports" (Bun resolves and embeds it; tsc does not)
import corePackage from "quickjs-emscripten-core/package.json" with { type: "json" };
import variantPackage from "@jitl/quickjs-singlefile-mjs-release-sync/package.json" with { type: "json" };
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
import baseVariant from "@jitl/quickjs-singlefile-mjs-release-sync";

/** The package versions the internals below were verified for. */
export const PINNED = { core: "0.32.0", variant: "0.32.0" } as const;
export type QuickJSVersions = { core: string; variant: string };
/** The versions installed (embedded at build time in a compiled binary). */
export const INSTALLED: QuickJSVersions = { core: String((corePackage as { version?: unknown }).version), variant: String(variantPackage.version) };

/** Why the installed packages are not the pinned ones (`pinned`: tests force a mismatch), or null. */
export function versionMismatch(pinned: QuickJSVersions = PINNED): string | null {
  if (INSTALLED.core === pinned.core && INSTALLED.variant === pinned.variant) return null;
  return `quickjs-emscripten-core ${INSTALLED.core} / @jitl/quickjs-singlefile-mjs-release-sync ${INSTALLED.variant} installed, internals verified for ${pinned.core} / ${pinned.variant}`;
}

/** The stack reserved by this QuickJS build (emscripten STACK_SIZE of @jitl/quickjs-singlefile-mjs-release-sync
 *  0.32: 5 MiB, below the heap). image.ts checks it: the region must be unused in a fresh instance. */
export const WASM_STACK_BYTES = 5 * 1024 * 1024;

/** Pointers in an argument block of fastCall. */
export const ARGV_SLOTS = 8;

// ---------------------------------------------------------------- loading the module

/** The text of JS_FreeRuntime's leak assertion as emscripten's abort() reports it (see faults.ts isFreeAbort). */
export const LEAK_ABORT = "Aborted(Assertion failed: list_empty(&rt->gc_obj_list)";

/** emscripten's Module.printErr (the loader options' type does not name it): prints an abort before throwing it; the
 *  leak assertion's abort is contained (faults.ts abandon()), so it is not printed. */
const quietModule = {
  printErr: (text: string) => void (text.startsWith(LEAK_ABORT) || console.error(text)),
} as unknown as NonNullable<Parameters<typeof newVariant>[1]["emscriptenModule"]>;

/** The QuickJS module of the single-file variant on `memory`, its WebAssembly.Instance (whose exports the functions
 *  below use) and, when not `shared`, the WebAssembly.Module the variant compiled from its embedded binary (for the
 *  next workers). The variant instantiates through WebAssembly.instantiate with `memory` among its imports: that
 *  call is watched, only while this worker initializes (nothing else runs on its thread meanwhile). */
export async function loadQuickJS(
  memory: WebAssembly.Memory,
  shared?: WebAssembly.Module,
): Promise<{ mod: QuickJSWASMModule; instance: WebAssembly.Instance | null; compiled: WebAssembly.Module | null }> {
  let compiled: WebAssembly.Module | null = shared ?? null;
  let instance: WebAssembly.Instance | null = null;
  const real = WebAssembly.instantiate;
  const capture = async (source: unknown, imports?: object) => {
    const r = await (real as (s: unknown, i?: object) => Promise<unknown>)(source, imports);
    // Other modules may instantiate meanwhile (libsodium): QuickJS's is the one importing this memory.
    const ours = !!imports && Object.values(imports).some((ns) => !!ns && typeof ns === "object" && Object.values(ns).includes(memory));
    if (!ours) return r;
    if (r instanceof WebAssembly.Instance) instance ??= r;
    else if (r && typeof r === "object" && "instance" in r && r.instance instanceof WebAssembly.Instance) {
      instance ??= r.instance;
      if ("module" in r && r.module instanceof WebAssembly.Module) compiled ??= r.module;
    }
    return r;
  };
  WebAssembly.instantiate = capture as typeof WebAssembly.instantiate;
  try {
    const mod = await newQuickJSWASMModuleFromVariant(
      newVariant(baseVariant, {
        wasmMemory: memory,
        ...(shared ? { wasmModule: shared } : {}),
        emscriptenModule: quietModule,
      }),
    );
    return { mod, instance, compiled };
  } finally {
    WebAssembly.instantiate = real;
  }
}

// ---------------------------------------------------------------- the emscripten stack (variant exports)

type Exports = Record<string, unknown>;

/** The instance's stack pointer between calls (= the stack's top = the heap's start). The variant's minified export
 *  `Oa` is emscripten's stackSave (its glue: `ra=a.Oa`, used as `h=ra()` … `sa(h)`); the package version is
 *  pinned, and the shape is checked: stackSave takes no argument, stackRestore (`Ma`) and stackAlloc (`Na`) one. */
export function stackPointer(instance: WebAssembly.Instance | null): number | null {
  const ex = instance?.exports as Exports | undefined;
  const save = ex?.Oa;
  const restore = ex?.Ma;
  const alloc = ex?.Na;
  if (typeof save !== "function" || typeof restore !== "function" || typeof alloc !== "function") return null;
  if (save.length !== 0 || restore.length !== 1 || alloc.length !== 1) return null;
  const a = (save as () => unknown)();
  const b = (save as () => unknown)();
  return typeof a === "number" && Number.isInteger(a) && a === b && a > 0 ? a : null;
}

/** emscripten's stackSave (checked by stackPointer). */
export function stackSave(instance: WebAssembly.Instance): () => number {
  return (instance.exports as Record<string, () => number>).Oa!;
}

/** emscripten's stackRestore, or null when the export is not a function. */
export function stackRestore(instance: WebAssembly.Instance | null): ((sp: number) => void) | null {
  const restore = (instance?.exports as Exports | undefined)?.Ma;
  return typeof restore === "function" ? (restore as (sp: number) => void) : null;
}

// ---------------------------------------------------------------- the FFI and the host-callback glue (the guard)

export type Ffi = (a?: unknown, b?: unknown, c?: unknown, d?: unknown) => unknown;

interface GlueInternals {
  ffi: Record<string, unknown>;
  callbacks: {
    contextCallbacks: Map<number, { callFunction: (...a: number[]) => number }>;
    runtimeCallbacks: Map<number, { shouldInterrupt: (rt: number) => number }>;
  };
  module: { callbacks: { callFunction: unknown; shouldInterrupt: unknown } };
}

/**
 * Wraps every FFI function (`wrap(fn, name)`) and replaces quickjs-emscripten's glue of host-function calls and
 * interrupts with the same dispatch minus its catch-all: `escaping(inner)` returns the glue to install (see
 * faults.ts guard()). Throws when the module does not look as in the pinned version.
 */
export function installGuard(
  mod: QuickJSWASMModule,
  wrap: (fn: Ffi, name: string) => Ffi,
  escaping: <A extends number[]>(inner: (...a: A) => number) => (asyncify: unknown, ...a: A) => number,
): void {
  const m = mod as unknown as GlueInternals;
  const glue = m.module?.callbacks;
  const { contextCallbacks, runtimeCallbacks } = m.callbacks ?? {};
  if (
    !(contextCallbacks instanceof Map) ||
    !(runtimeCallbacks instanceof Map) ||
    typeof glue?.callFunction !== "function" ||
    typeof glue.shouldInterrupt !== "function"
  ) {
    throw new Error("sandbox: unexpected quickjs-emscripten internals: module callbacks");
  }
  for (const [name, fn] of Object.entries(m.ffi)) {
    if (!name.startsWith("QTS_") || typeof fn !== "function") continue;
    m.ffi[name] = wrap(fn as Ffi, name);
  }
  glue.callFunction = escaping((ctx: number, thisPtr: number, argc: number, argv: number, fnId: number) =>
    contextCallbacks.get(ctx)!.callFunction(ctx, thisPtr, argc, argv, fnId),
  );
  glue.shouldInterrupt = escaping((rt: number) => runtimeCallbacks.get(rt)!.shouldInterrupt(rt));
}

/** The largest block a host-side allocation may ask for: emscripten's `_malloc` takes a 32-bit size, so a larger one
 *  would wrap around to a small block that the copy then overruns. */
export const MAX_HOST_ALLOC = 0x7fff_0000;

/**
 * quickjs-emscripten copies host data into the instance (ctx.newString, newArrayBuffer, callFunction's argument
 * arrays, evalCode's source: ModuleMemory in quickjs-emscripten-core 0.32) into a block from the module's `_malloc`
 * without checking it: when the allocation fails (the execution's memory limit refused the growth, or the worker's
 * memory is at its cap) it writes the data from address 0 over the C program's globals, the allocator's state, the
 * stack and every runtime of the instance, then hands that address to QuickJS (issue 29: a trap, or silent
 * corruption of other users' parked scripts). The module's `_malloc` is replaced by one that throws `refused(bytes)`
 * instead of returning 0 (or a size that does not fit 32 bits), before anything is written. Checked at once in a
 * throwaway runtime: a host string must come through it. Throws when the module does not look as in the pinned
 * version (the guard has no slow path).
 */
export function guardAllocations(mod: QuickJSWASMModule, refused: (bytes: number) => Error): void {
  const module = (mod as unknown as { module?: { _malloc?: unknown } }).module;
  const raw = module?._malloc;
  if (!module || typeof raw !== "function") throw new Error("sandbox: unexpected quickjs-emscripten internals: module._malloc");
  const malloc = raw as (n: number) => number;
  let calls = 0;
  module._malloc = (n: number): number => {
    calls++;
    if (!(n >= 0 && n <= MAX_HOST_ALLOC)) throw refused(n);
    const p = malloc(n);
    if (p === 0) throw refused(n);
    return p;
  };
  const rt = mod.newRuntime();
  const ctx = rt.newContext();
  try {
    const before = calls;
    ctx.newString("probe").dispose();
    if (calls === before) throw new Error("sandbox: unexpected quickjs-emscripten internals: host strings do not go through module._malloc");
  } finally {
    ctx.dispose();
    rt.dispose();
  }
}

/**
 * Self-check of the guard (after installGuard): a host-function call and an interrupt must go through the glue
 * installed in the module's callbacks (the emscripten code looks it up per call). Runs in a throwaway runtime;
 * returns what is not as expected, or null.
 */
export function checkGlue(mod: QuickJSWASMModule): string | null {
  const glue = (mod as unknown as GlueInternals).module.callbacks;
  const installed = {
    callFunction: glue.callFunction as (...a: unknown[]) => number,
    shouldInterrupt: glue.shouldInterrupt as (...a: unknown[]) => number,
  };
  let calls = 0;
  let interrupts = 0;
  glue.callFunction = (...a: unknown[]) => (calls++, installed.callFunction(...a));
  glue.shouldInterrupt = (...a: unknown[]) => (interrupts++, installed.shouldInterrupt(...a));
  const rt = mod.newRuntime();
  const ctx = rt.newContext();
  try {
    let handled = 0;
    rt.setInterruptHandler(() => (handled++, false));
    const fn = ctx.newFunction("probe", (a) => ctx.newNumber(ctx.getNumber(a!) + 1));
    ctx.setProp(ctx.global, "probe", fn);
    fn.dispose();
    const r = ctx.evalCode("let s = 0; for (let i = 0; i < 1000; i++) s += i & 1; probe(41)");
    if (r.error) {
      r.error.dispose();
      return "a host-function call failed";
    }
    const v = ctx.typeof(r.value) === "number" ? ctx.getNumber(r.value) : null;
    r.value.dispose();
    if (v !== 42 || calls === 0) return "host-function calls do not go through module.callbacks.callFunction";
    if (interrupts === 0 || handled === 0) return "interrupts do not go through module.callbacks.shouldInterrupt";
    return null;
  } finally {
    glue.callFunction = installed.callFunction;
    glue.shouldInterrupt = installed.shouldInterrupt;
    ctx.dispose();
    rt.dispose();
  }
}

// ---------------------------------------------------------------- private fields of contexts and runtimes

interface CallInternals {
  ffi: {
    QTS_Call(ctx: number, fn: number, thisArg: number, argc: number, argv: number): number;
    QTS_ResolveException(ctx: number, ptr: number): number;
    QTS_FreeValuePointer(ctx: number, ptr: number): void;
  };
  ctx: { value: number };
  memory: { heapValueHandle(ptr: number): QuickJSHandle };
}

/** The internals fastCall uses, or null if this quickjs-emscripten-core does not have them. */
export function callInternals(ctx: QuickJSContext): CallInternals | null {
  const c = ctx as unknown as Partial<CallInternals>;
  const ok =
    typeof c.ffi?.QTS_Call === "function" &&
    typeof c.ffi.QTS_ResolveException === "function" &&
    typeof c.ffi.QTS_FreeValuePointer === "function" &&
    typeof c.ctx?.value === "number" &&
    typeof c.memory?.heapValueHandle === "function";
  return ok ? (c as CallInternals) : null;
}

/**
 * ctx.callFunction (quickjs-emscripten-core 0.32) without its per-call argument array (a malloc, two typed-array
 * copies and a free, ~1 µs): the arguments' JSValue pointers go into `argv`, a block of ARGV_SLOTS pointers made
 * once in the runtime's memory. QTS_Call copies the values out of the block before it calls, so a nested call
 * (a host function the script calls back into) may reuse it.
 */
export function fastCall(
  ctx: QuickJSContext,
  heap: Uint32Array,
  argv: number,
  fn: QuickJSHandle,
  thisArg: QuickJSHandle,
  args: QuickJSHandle[],
): { value?: QuickJSHandle; error?: QuickJSHandle } {
  const c = ctx as unknown as CallInternals;
  for (let i = 0; i < args.length; i++) heap[(argv >>> 2) + i] = args[i]!.value as unknown as number;
  const ctxPtr = c.ctx.value;
  const result = c.ffi.QTS_Call(ctxPtr, fn.value as unknown as number, thisArg.value as unknown as number, args.length, argv);
  const error = c.ffi.QTS_ResolveException(ctxPtr, result);
  if (error) {
    c.ffi.QTS_FreeValuePointer(ctxPtr, result);
    return { error: c.memory.heapValueHandle(error) };
  }
  return { value: c.memory.heapValueHandle(result) };
}

/** quickjs-emscripten's table of host functions (HostRefMap of a runtime). */
export interface HostRefs {
  nextId: number;
  freelist: number[];
  groups: Map<number, Map<number, unknown>>;
}

/** A runtime's host-function table, or null when it does not look as in the pinned version. */
export function hostRefsOf(rt: QuickJSRuntime): HostRefs | null {
  const refs = (rt as unknown as { hostRefs?: HostRefs }).hostRefs;
  return refs && typeof refs.nextId === "number" && Array.isArray(refs.freelist) && refs.groups instanceof Map ? refs : null;
}

/** Removes a runtime from quickjs-emscripten's callback registry, as its dispose does after QTS_FreeRuntime: for a
 *  runtime whose QTS_FreeRuntime did not return (faults.ts abandon()). */
export function forgetRuntime(mod: QuickJSWASMModule, rt: QuickJSRuntime): void {
  const callbacks = (mod as unknown as { callbacks?: { deleteRuntime?: (ptr: unknown) => void } }).callbacks;
  const ptr = (rt as unknown as { rt?: { value?: unknown } }).rt?.value;
  if (typeof callbacks?.deleteRuntime === "function" && ptr !== undefined) callbacks.deleteRuntime(ptr);
}

/** The JSContext pointer of a context, or null. */
export function contextPointer(ctx: QuickJSContext): number | null {
  const p = (ctx as unknown as { ctx?: { value?: unknown } }).ctx?.value;
  return typeof p === "number" ? p : null;
}

/** The emscripten module's malloc and free, or null. */
export function allocator(mod: QuickJSWASMModule): { malloc: (n: number) => number; free: (p: number) => void } | null {
  const module = (mod as unknown as { module?: { _malloc?: (n: number) => number; _free?: (p: number) => void } }).module;
  if (typeof module?._malloc !== "function" || typeof module._free !== "function") return null;
  return { malloc: module._malloc, free: module._free };
}

/** Whether memoryUsage can make the usage object in the execution's own context (see memoryUsage). */
function usageInternals(ctx: QuickJSContext): boolean {
  const c = ctx as unknown as { ffi?: { QTS_RuntimeComputeMemoryUsage?: unknown }; getMemory?: unknown };
  return typeof c.ffi?.QTS_RuntimeComputeMemoryUsage === "function" && typeof c.getMemory === "function";
}

/** JS_ComputeMemoryUsage with the usage object made in the execution's own context (the public computeMemoryUsage
 *  creates a second, "system" context on first use, which must not happen in the pristine runtime's image).
 *  `fast` false (the slow safe path, no image): the public API. */
export function memoryUsage(rt: QuickJSRuntime, ctx: QuickJSContext, fast: boolean): QuickJSHandle {
  const c = ctx as unknown as {
    ffi?: { QTS_RuntimeComputeMemoryUsage?: (rt: unknown, ctx: unknown) => number };
    ctx?: { value: unknown };
    getMemory?: (rt: unknown) => { heapValueHandle(ptr: number): QuickJSHandle };
  };
  const r = rt as unknown as { rt?: { value: unknown } };
  const compute = c.ffi?.QTS_RuntimeComputeMemoryUsage;
  if (fast && typeof compute === "function" && c.ctx && r.rt && typeof c.getMemory === "function") {
    return c.getMemory(r.rt.value).heapValueHandle(compute.call(c.ffi, r.rt.value, c.ctx.value));
  }
  return rt.computeMemoryUsage();
}

/** A host function's implementation, as quickjs-emscripten's newFunction takes it. */
export type HostImpl = (...args: QuickJSHandle[]) => QuickJSHandle | { error: QuickJSHandle } | undefined;

/** `obj[name]` as an accessor whose getter and setter are one host function made from `impl` (0 args: get, 1: set),
 *  through QTS_DefineProp directly (quickjs-emscripten-core 0.32 internals: `ffi`, `ctx`); on the slow safe path
 *  (`fast` false), or if they ever move, through the public defineProp (a host function per getter and setter). */
export function defineAccessor(ctx: QuickJSContext, obj: QuickJSHandle, name: string, impl: HostImpl, fast: boolean): void {
  const internals = ctx as unknown as {
    ffi?: { QTS_DefineProp?: (...a: unknown[]) => void };
    ctx?: { value: unknown };
  };
  const define = internals.ffi?.QTS_DefineProp;
  if (fast && typeof define === "function" && internals.ctx) {
    const fn = ctx.newFunction(name, impl);
    try {
      const key = ctx.newString(name);
      try {
        define.call(internals.ffi, internals.ctx.value, obj.value, key.value, ctx.undefined.value, fn.value, fn.value, true, false, false);
      } finally {
        key.dispose();
      }
    } finally {
      fn.dispose();
    }
    return;
  }
  // (the getter and setter must call `impl`, not a handle to a function made from it: the handle would be freed here)
  ctx.defineProp(obj, name, {
    configurable: true,
    enumerable: false,
    get: () => impl() as QuickJSHandle,
    set: (v) => void impl(v),
  });
}

// ---------------------------------------------------------------- state in WebAssembly memory (QuickJS, dlmalloc)

const M64 = (1n << 64n) - 1n;
/** QuickJS's Math.random step: xorshift64* (quickjs.c); returns [next state, output]. */
function xorshift64star(x: bigint): [bigint, bigint] {
  x ^= x >> 12n;
  x = (x ^ (x << 25n)) & M64;
  x ^= x >> 27n;
  return [x, (x * 0x2545f4914f6cdd1dn) & M64];
}
/** js_math_random: the output's top 52 bits as a double in [0, 1). */
function randomDouble(v: bigint): number {
  const dv = new DataView(new ArrayBuffer(8));
  dv.setBigUint64(0, (0x3ffn << 52n) | (v >> 12n));
  return dv.getFloat64(0) - 1;
}

/** Finds the context's Math.random state: the 8-byte slot of the JSContext that one call moves by exactly one
 *  xorshift64* step and whose output is the value returned; then confirmed by writing a state and predicting the
 *  next value. Null when not found (the build differs). */
export function findRandomState(ctx: QuickJSContext, memory: WebAssembly.Memory, ctxPtr: number): number | null {
  const SCAN = 1024;
  if (ctxPtr % 8 !== 0 || ctxPtr + SCAN > memory.buffer.byteLength) return null;
  const math = ctx.getProp(ctx.global, "Math");
  const random = ctx.getProp(math, "random");
  math.dispose();
  const call = (): number | null => {
    const r = ctx.callFunction(random, ctx.undefined);
    if (r.error) {
      r.error.dispose();
      return null;
    }
    const v = ctx.typeof(r.value) === "number" ? ctx.getNumber(r.value) : null;
    r.value.dispose();
    return v;
  };
  try {
    const read = () => new BigUint64Array(memory.buffer.slice(ctxPtr, ctxPtr + SCAN));
    const before = read();
    const got = call();
    const after = read();
    if (got === null) return null;
    for (let i = 0; i < before.length; i++) {
      if (before[i] === after[i]) continue;
      const [state, out] = xorshift64star(before[i]!);
      if (state !== after[i] || randomDouble(out) !== got) continue;
      const at = ctxPtr + i * 8;
      const probe = 0x9e3779b97f4a7c15n;
      new DataView(memory.buffer).setBigUint64(at, probe, true);
      return call() === randomDouble(xorshift64star(probe)[1]) ? at : null;
    }
    return null;
  } finally {
    random.dispose();
  }
}

/** QuickJS's JS_INTERRUPT_COUNTER_INIT: the interrupt handler is called once every this many "ticks" (calls and loop
 *  iterations), when JSContext.interrupt_counter counts down to 0. */
const INTERRUPT_COUNTER_INIT = 10_000;

/**
 * The offset of JSContext.interrupt_counter from a context's pointer (the same in every context): the int32 slot that
 * the same loop, run twice, moves down by the same number of ticks both times; confirmed by writing 1 there and
 * seeing the interrupt handler called by the next evaluation (and not without the write). Made in a throwaway
 * runtime. Null when not found (the build differs): the engine then stops a run at the next regular check.
 */
export function findInterruptCounter(mod: QuickJSWASMModule, memory: WebAssembly.Memory): number | null {
  const SCAN = 1024;
  const rt = mod.newRuntime();
  const ctx = rt.newContext();
  let calls = 0;
  rt.setInterruptHandler(() => (calls++, false));
  const run = (src: string): void => {
    const r = ctx.evalCode(src);
    (r.error ?? r.value).dispose();
  };
  try {
    const ptr = contextPointer(ctx);
    if (ptr === null || ptr % 4 !== 0 || ptr + SCAN > memory.buffer.byteLength) return null;
    const read = () => new Int32Array(memory.buffer.slice(ptr, ptr + SCAN));
    const loop = "for (let i = 0; i < 50; i++) {}";
    run("0"); // (a new context's counter starts due: this first run calls the handler)
    const settled = calls;
    const [a, b] = [read(), (run(loop), read())];
    const c = (run(loop), read());
    if (calls !== settled) return null; // (far fewer ticks than the counter's period)
    const found: number[] = [];
    for (let i = 0; i < a.length; i++) {
      const d = a[i]! - b[i]!;
      if (d >= 50 && d === b[i]! - c[i]! && c[i]! > 0 && a[i]! <= INTERRUPT_COUNTER_INIT) found.push(i * 4);
    }
    if (found.length !== 1) return null;
    new DataView(memory.buffer).setInt32(ptr + found[0]!, 1, true);
    run("0");
    return calls > settled ? found[0]! : null;
  } finally {
    ctx.dispose();
    rt.dispose();
  }
}

/**
 * The address of the allocator's top-chunk pointer (emscripten's dlmalloc: `_gm_.top`, a static variable): the heap
 * in use ends at the top chunk, so a source image copies the heap up to it. Found as the one static word that holds
 * the top chunk (`probe` − 8, where `probe` is a block the allocator just took from the top and freed), follows the
 * top when a block of `size` bytes is taken from it, and returns when the block is freed. Null if that is not so.
 */
export function findTopPointer(
  memory: WebAssembly.Memory,
  staticEnd: number,
  probe: number,
  malloc: (n: number) => number,
  free: (p: number) => void,
  size: number,
): number | null {
  const words = (): Uint32Array => new Uint32Array(memory.buffer, 0, staticEnd >>> 2);
  const top = probe - 8;
  const found: number[] = [];
  const before = words();
  for (let i = 0; i < before.length; i++) if (before[i] === top) found.push(i);
  if (found.length === 0 || found.length > 16) return null;
  const block = malloc(size);
  if (block !== probe) {
    if (block) free(block);
    return null;
  }
  const during = words();
  const moved = found.filter((i) => during[i]! > block && during[i]! <= block + size + 16);
  free(block);
  const after = words();
  const back = moved.filter((i) => after[i] === top);
  return back.length === 1 ? back[0]! * 4 : null;
}

// ---------------------------------------------------------------- the self-check of the speed internals

/**
 * Probes every speed internal used (see the header) in a throwaway runtime of the fresh instance: the stack pointer
 * round-trips through stackRestore/stackSave; the private fields exist; fastCall returns a call's value and its
 * exception; the FFI heap measurement and accessor definition work; the context's Math.random state is found and
 * holds a written seed. Returns what is not as expected, or null. (The memory image's own layout checks, the unused
 * stack region and the allocator's top, are made where the image is built: image.ts.)
 */
export function checkFast(mod: QuickJSWASMModule, instance: WebAssembly.Instance | null, memory: WebAssembly.Memory): string | null {
  const sp = stackPointer(instance);
  if (sp === null) return "stack pointer exports (stackSave Oa, stackRestore Ma, stackAlloc Na) not as expected";
  const save = stackSave(instance!);
  const restore = stackRestore(instance)!;
  restore(sp - 16);
  const moved = save();
  restore(sp);
  if (moved !== sp - 16 || save() !== sp) return "stackRestore/stackSave do not round-trip";
  const alloc = allocator(mod);
  if (alloc === null) return "module _malloc/_free missing";
  const rt = mod.newRuntime();
  const ctx = rt.newContext();
  const handles: QuickJSHandle[] = [];
  const keep = (h: QuickJSHandle) => (handles.push(h), h);
  try {
    const ctxPtr = contextPointer(ctx);
    if (ctxPtr === null) return "QuickJSContext.ctx.value missing";
    if (hostRefsOf(rt) === null) return "QuickJSRuntime.hostRefs not as expected";
    if (callInternals(ctx) === null) return "QuickJSContext ffi.QTS_Call / memory.heapValueHandle missing";
    if (!usageInternals(ctx)) return "QuickJSContext ffi.QTS_RuntimeComputeMemoryUsage / getMemory missing";
    const fnR = ctx.evalCode("[(a, b) => a - b, () => { throw 7; }]");
    if (fnR.error) {
      fnR.error.dispose();
      return "the probe did not compile";
    }
    const fns = keep(fnR.value);
    const sub = keep(ctx.getProp(fns, 0));
    const thrower = keep(ctx.getProp(fns, 1));
    const argv = alloc.malloc(ARGV_SLOTS * 4);
    try {
      const heap = new Uint32Array(memory.buffer);
      const r = fastCall(ctx, heap, argv, sub, ctx.undefined, [keep(ctx.newNumber(7)), keep(ctx.newNumber(2))]);
      const v = r.value ? keep(r.value) : null;
      if (r.error) keep(r.error);
      if (!v || ctx.typeof(v) !== "number" || ctx.getNumber(v) !== 5) return "fastCall does not return the call's value";
      const e = fastCall(ctx, new Uint32Array(memory.buffer), argv, thrower, ctx.undefined, []);
      const err = e.error ? keep(e.error) : null;
      if (e.value) keep(e.value);
      if (!err || ctx.typeof(err) !== "number" || ctx.getNumber(err) !== 7) return "fastCall does not return the call's exception";
    } finally {
      alloc.free(argv);
    }
    const usage = keep(memoryUsage(rt, ctx, true));
    const used = keep(ctx.getProp(usage, "memory_used_size"));
    if (ctx.typeof(used) !== "number" || ctx.getNumber(used) <= 0) return "QTS_RuntimeComputeMemoryUsage does not measure the heap";
    const target = keep(ctx.newObject());
    defineAccessor(ctx, target, "probe", (...args) => (args.length === 0 ? ctx.newNumber(42) : undefined), true);
    const read = keep(ctx.getProp(target, "probe"));
    if (ctx.typeof(read) !== "number" || ctx.getNumber(read) !== 42) return "QTS_DefineProp does not define an accessor";
    if (findRandomState(ctx, memory, ctxPtr) === null) return "Math.random state not found in the JSContext";
    return null;
  } finally {
    for (const h of handles) if (h.alive) h.dispose();
    ctx.dispose();
    rt.dispose();
  }
}
