// Memory images: a fresh runtime per execution for the price of a memory copy (src/sandbox/README.md, "A fresh
// runtime per execution: the memory image"). A QuickJS runtime lives entirely in the worker's WebAssembly memory, so
// the worker builds one pristine runtime + context (with everything the engine would otherwise create per execution
// and that holds no per-execution state), records the parts of the memory that hold state, and copies them back
// before the next execution on it; a source compiled there becomes the source's own image (no parsing next time).
// Owns: Engine.tpl (the Template, its source images, the host-function table and Math.random seed restored with
// them; the seed of contexts executions create for themselves too). Must never: keep an image in which any code of a script ran, restore while an execution is alive in the
// instance, or be used when the speed internals are off (Engine.fast false: the engine never builds a template).
import type { QuickJSContext, QuickJSHandle } from "quickjs-emscripten-core";
import type { EngineState, SourceImage, Template } from "./state";
import { CONSOLE_SNIPPET, DEFINE_SNIPPET, DESCRIBE_SNIPPET, SECBOX_SNIPPET, TEXT_SNIPPET, TIMERS_SNIPPET } from "../bridge";
import type { Compiled, Form } from "./compile";
import { dropHandles, newExec, type Exec } from "./exec";
import { HOST_FUNCTIONS, installGlobals, materialize } from "./host-functions";
import { primeBuiltins, snippet, toJSONHook } from "./marshal";
import {
  allocator,
  ARGV_SLOTS,
  callInternals,
  contextPointer,
  findRandomState,
  findTopPointer,
  hostRefsOf,
  stackPointer,
  WASM_STACK_BYTES,
  type HostRefs,
} from "./quickjs-internals";

/** Memory images with a compiled source kept per worker (each about the size of the pristine image, ~200 KiB,
 *  plus the compiled code), least recently used dropped first; longer sources are compiled per execution. */
const SOURCE_IMAGES = 16;
const MAX_IMAGE_SOURCE = 64 * 1024;

/** Builds the pristine runtime + context that executions start from, and its memory image.
 *
 *  A QuickJS runtime lives entirely in the WebAssembly memory (the static area of the C program, whose allocator
 *  state is there too, and the heap). Copying the used parts of it back makes the runtime byte-for-byte what it
 *  was right after creation: nothing an execution did (globals, prototypes, atoms, pending jobs, allocator
 *  state) survives, exactly as with a new runtime, for ~15 µs instead of ~110 µs to create and free one. The
 *  stack needs no copy: between calls into the instance it holds no live data. What lives outside the memory is
 *  reset too: the host-function table of quickjs-emscripten (restored with the image) and Math.random's state,
 *  reseeded from the host's CSPRNG per execution (a new runtime seeds it from the clock).
 *
 *  Everything the engine would otherwise create per execution and that holds no per-execution state is made
 *  here, once: the lazy-global accessors, host functions, snippet factories and built-in lookups.
 *
 *  Returns why not (every execution then creates its own runtime) when the memory does not look as expected. */
export function buildTemplate(eng: EngineState): Template | string {
  const memory = eng.memory!;
  const sp = stackPointer(eng.instance);
  if (sp === null || sp % 16 !== 0 || sp - WASM_STACK_BYTES < 1024 || sp >= memory.buffer.byteLength)
    return "stack pointer not where this build puts it";
  // The static area ends where the stack's reserved region starts; in a fresh instance that region is unused.
  const staticEnd = sp - WASM_STACK_BYTES;
  if (!allZero(new Uint8Array(memory.buffer, staticEnd, WASM_STACK_BYTES - 65536))) return "the reserved stack region is in use in a fresh instance";
  const rt = eng.mod!.newRuntime();
  const ctx = rt.newContext();
  const ctxPtr = contextPointer(ctx);
  const refs = hostRefsOf(rt);
  // The record of the executions that will run on this runtime; the job is a placeholder until the first one.
  const exec = newExec({
    t: "run",
    id: 0,
    cell: 0,
    token: 0,
    source: "",
    context: { json: "null", paths: [], bytes: [] },
    memoryBytes: 0,
    timeoutMs: 0,
    stackBytes: 0,
    kv: false,
    proxy: false,
    owner: "",
  });
  const discard = (why: string): string => {
    for (const h of exec.handles) if (h.alive) h.dispose();
    ctx.dispose();
    rt.dispose();
    return why;
  };
  if (ctxPtr === null || refs === null) return discard("context or runtime internals missing");
  exec.rt = rt;
  exec.ctx = ctx;
  exec.deadline = Infinity;
  exec.nextMemCheck = Infinity;
  rt.setInterruptHandler(() => eng.interrupt(exec));
  // quickjs-emscripten caches these handles on first use: they must exist in the image.
  void [ctx.undefined, ctx.null, ctx.true, ctx.false, ctx.global];
  installGlobals(eng, exec);
  primeBuiltins(exec);
  exec.helpers.describe = snippet(exec, DESCRIBE_SNIPPET);
  exec.helpers.define = snippet(exec, DEFINE_SNIPPET);
  exec.helpers.secboxF = snippet(exec, SECBOX_SNIPPET);
  exec.helpers.consoleF = snippet(exec, CONSOLE_SNIPPET);
  exec.helpers.textF = snippet(exec, TEXT_SNIPPET);
  exec.helpers.timersF = snippet(exec, TIMERS_SNIPPET);
  for (const make of HOST_FUNCTIONS) make(eng, exec);
  toJSONHook(exec);
  // The lazy globals themselves, built once per variant (op_proxy_request and Secbox.kv depend on the job): an
  // execution's first access returns the image's object instead of building it.
  const built = { proxy: new Map(), plain: new Map(), kv: new Map(), noKv: new Map(), common: new Map() } as Record<
    string,
    Map<string, QuickJSHandle>
  >;
  const build = (group: string, name: string, flags: { proxy: boolean; kv: boolean }, into: Map<string, QuickJSHandle>) => {
    exec.job = { ...exec.job, ...flags };
    exec.globals = new Map();
    materialize(eng, exec, group, name).dispose();
    for (const [n, h] of exec.globals) into.set(n, h);
  };
  build("sandbox", "Sandbox", { proxy: true, kv: false }, built.proxy!);
  build("sandbox", "Sandbox", { proxy: false, kv: false }, built.plain!);
  build("secbox", "Secbox", { proxy: false, kv: true }, built.kv!);
  build("secbox", "Secbox", { proxy: false, kv: false }, built.noKv!);
  for (const [group, name] of [
    ["console", "console"],
    ["text", "TextEncoder"],
    ["timers", "setTimeout"],
  ] as const)
    build(group, name, { proxy: false, kv: false }, built.common!);
  // One complete, read-only map per job variant (index: proxy × 2 + kv), shared by the executions.
  const globals = [false, true].flatMap((proxy) =>
    [false, true].map((kv) => new Map([...built.common!, ...(proxy ? built.proxy! : built.plain!), ...(kv ? built.kv! : built.noKv!)])),
  );
  exec.globals = new Map();
  const randomAt = findRandomState(ctx, memory, ctxPtr);
  if (randomAt === null) return discard("Math.random state not found");
  // Everything allocated lies below the allocator's top chunk. A block larger than the whole heap so far cannot
  // come from a free chunk inside it, so it is taken from the top: its address bounds the heap to copy.
  const alloc = allocator(eng.mod!);
  if (alloc === null) return discard("module _malloc/_free missing");
  // fastCall's argument block, part of the image
  if (callInternals(ctx)) {
    exec.argv = alloc.malloc(ARGV_SLOTS * 4);
    exec.mem = eng.view;
  }
  const extent = lastNonZero(new Uint8Array(memory.buffer)) + 1 - sp;
  if (extent <= 0) return discard("empty heap");
  const probe = alloc.malloc(extent + 65536);
  if (!probe) return discard("the allocator refused the probe block");
  alloc.free(probe);
  if (probe <= sp || probe > sp + extent + 64) return discard("the allocator's top chunk is not where the heap ends");
  const heapEnd = (probe + 16 + 15) & ~15;
  // Before the image is taken: the check allocates (and frees) the same block again.
  const topAt = findTopPointer(memory, staticEnd, probe, alloc.malloc, alloc.free, extent + 65536);
  const mem = new Uint8Array(memory.buffer);
  return {
    exec,
    helpers: { ...exec.helpers },
    globals,
    staticImage: mem.slice(0, staticEnd),
    heapStart: sp,
    heapImage: mem.slice(sp, heapEnd),
    refs: copyRefs(refs),
    liveRefs: refs,
    randomAt,
    randomOffset: randomAt - ctxPtr,
    seeds: new BigUint64Array(64),
    seedNext: 64,
    inUse: false,
    dirty: false,
    imageBytes: memory.buffer.byteLength,
    topAt,
    sources: new Map(),
    at: null,
    refsFrom: null,
  };
}

/** The runtime back to the pristine image, or to a source's image (no execution may be alive). */
export function restoreImage(eng: EngineState, tpl: Template, img: SourceImage | null): void {
  const mem = eng.view.bytes();
  const from = img ?? tpl;
  mem.set(from.staticImage, 0);
  mem.set(from.heapImage, tpl.heapStart);
  // Host functions made during the execution are gone with the memory; the ones of the image are back. An
  // execution that made none (the usual case: the image holds the lazy globals) left the table as it was.
  const live = tpl.liveRefs;
  if (tpl.refsFrom !== from || live.nextId !== from.refs.nextId || live.freelist.length !== from.refs.freelist.length) {
    live.nextId = from.refs.nextId;
    live.freelist = from.refs.freelist.slice();
    live.groups = cloneGroups(from.refs.groups);
    tpl.refsFrom = from;
  }
  tpl.at = img;
  tpl.dirty = false;
}

/** After the pristine runtime compiled a source it had seen before (a source run once, e.g. a new one per run,
 *  makes no image): its memory (pristine image + the compiled function) becomes the source's image, so later
 *  executions of the source skip parsing. Only when evaluating the wrapper ran no code of the script: the
 *  function's source text (read with the pristine Function.prototype.toString) is the whole wrapper, i.e. the
 *  evaluated text was one function expression. The least recently used image's buffers are reused. */
export function keepImage(eng: EngineState, tpl: Template, src: string, key: number | bigint, c: Compiled): void {
  if (!c.seen || tpl.topAt === null || tpl.at !== null || src.length > MAX_IMAGE_SOURCE) return;
  const exec = tpl.exec;
  const ctx = exec.ctx!;
  if (ctx.typeof(c.fn) !== "function" || !exec.helpers.fnToString) return;
  const r = ctx.callFunction(exec.helpers.fnToString, c.fn);
  if (r.error) {
    r.error.dispose();
    return;
  }
  const text = ctx.typeof(r.value) === "string" ? ctx.getString(r.value) : null;
  r.value.dispose();
  if (text !== c.text) return;
  const buffer = eng.memory!.buffer;
  const top = new Uint32Array(buffer)[tpl.topAt >>> 2]!;
  const end = (top + 8 + 16 + 15) & ~15;
  if (top < tpl.heapStart || end > buffer.byteLength) return;
  const mem = eng.view.bytes();
  let staticImage: Uint8Array | undefined;
  let heapSpace: Uint8Array | undefined;
  if (tpl.sources.size >= SOURCE_IMAGES) {
    const oldest = tpl.sources.keys().next().value!;
    const old = tpl.sources.get(oldest)!;
    tpl.sources.delete(oldest);
    staticImage = old.staticImage;
    heapSpace = old.heapSpace;
  }
  const heapLength = end - tpl.heapStart;
  if (staticImage === undefined) staticImage = new Uint8Array(tpl.staticImage.byteLength);
  // room for a little more than this heap, so that the buffer can serve the next source too
  if (heapSpace === undefined || heapSpace.byteLength < heapLength) heapSpace = new Uint8Array(heapLength + 16384);
  staticImage.set(mem.subarray(0, staticImage.byteLength));
  heapSpace.set(mem.subarray(tpl.heapStart, end));
  const refs = tpl.liveRefs;
  const img: SourceImage = {
    source: src,
    form: c.form,
    fn: c.fn,
    staticImage,
    heapSpace,
    heapImage: heapSpace.subarray(0, heapLength),
    refs: copyRefs(refs),
  };
  tpl.sources.set(key, img);
  tpl.at = img;
}

/** A new Math.random state for the next execution on the pristine runtime. */
export function reseed(eng: EngineState, tpl: Template): void {
  const mem = eng.view.bytes();
  new DataView(mem.buffer, tpl.randomAt, 8).setBigUint64(0, nextSeed(tpl), true);
}

/** The same for a context an execution created for itself (the pristine runtime was in use): QuickJS seeded it from
 *  the millisecond clock, the same seed as any other context created in that millisecond, on any worker. The state
 *  lies at the same offset in every JSContext of this build (found with the image's, see findRandomState). */
export function seedFresh(eng: EngineState, tpl: Template, ctx: QuickJSContext): void {
  const at = contextPointer(ctx);
  if (at === null) return;
  const mem = eng.view.bytes();
  new DataView(mem.buffer, at + tpl.randomOffset, 8).setBigUint64(0, nextSeed(tpl), true);
}

/** 64 bits from the CSPRNG, drawn 64 at a time (never 0: xorshift would stay at 0). */
function nextSeed(tpl: Template): bigint {
  if (tpl.seedNext >= tpl.seeds.length) {
    crypto.getRandomValues(tpl.seeds);
    tpl.seedNext = 0;
  }
  return tpl.seeds[tpl.seedNext++]! || 1n;
}

/** The pristine runtime's execution ended: its handles point into the memory the next restore overwrites, so they
 *  are dropped, never disposed. */
export function releaseTemplate(tpl: Template): void {
  dropHandles(tpl.exec);
  tpl.inUse = false;
  tpl.dirty = true;
}

const ZERO_CHUNK = new Uint8Array(65536);

/** Whether every byte is 0 (native comparisons, 64 KiB at a time: this runs while a worker starts, cold). */
function allZero(bytes: Uint8Array): boolean {
  for (let at = 0; at < bytes.byteLength; at += ZERO_CHUNK.byteLength) {
    const part = bytes.subarray(at, at + ZERO_CHUNK.byteLength);
    if (Buffer.compare(part, ZERO_CHUNK.subarray(0, part.byteLength)) !== 0) return false;
  }
  return true;
}

/** Index of the last non-zero byte (−1 if none). */
function lastNonZero(mem: Uint8Array): number {
  const size = ZERO_CHUNK.byteLength;
  for (let end = mem.byteLength; end > 0; end -= size) {
    const start = Math.max(0, end - size);
    const part = mem.subarray(start, end);
    if (Buffer.compare(part, ZERO_CHUNK.subarray(0, part.byteLength)) === 0) continue;
    for (let j = end - 1; j >= start; j--) if (mem[j] !== 0) return j;
  }
  return -1;
}

/** A copy of quickjs-emscripten's host-function table (kept with an image). */
function copyRefs(refs: HostRefs): HostRefs {
  return { nextId: refs.nextId, freelist: refs.freelist.slice(), groups: cloneGroups(refs.groups) };
}

function cloneGroups(groups: Map<number, Map<number, unknown>>): Map<number, Map<number, unknown>> {
  const out = new Map<number, Map<number, unknown>>();
  for (const [k, v] of groups) out.set(k, new Map(v));
  return out;
}
