// Fault containment: what happens when an error comes out of the WebAssembly code instead of a QuickJS exception.
// - guard(): while a fault stands, no call enters the instance, and quickjs-emscripten's glue can no longer swallow
//   one (so QuickJS never runs on after it); a host-side allocation in the instance that fails is refused (the
//   execution's memory error) instead of being written at address 0;
// - contain(): a native stack overflow ends only the execution that caused it; the worker goes on, or retires when
//   other executions live in the instance;
// - abandon(): a runtime whose JS_FreeRuntime stops at its leak assertion (a QuickJS bug, see there) is left to the
//   next restore of the memory image; the worker goes on, or retires after too many;
// - poison(): anything else (a trap), or an overflow that cannot be contained: the instance is untrustworthy, every
//   unfinished execution is reported in one message and the pool replaces the worker; those that were not on the
//   thread and never started a host operation are marked for the pool to run again elsewhere.
// Owns: Engine.fault, .poisoned, .draining. Must never: run script code, free a runtime that a fault cut off (its
// state may be half-updated), or let an execution go unreported.
import type { EngineState } from "./state";
import type { LogEntry, ScriptError } from "../types";
import { clip, dropHandles, OutOfMemory, timeoutError, type Exec } from "./exec";
import { releaseTemplate } from "./image";
import { forgetRuntime, guardAllocations, LEAK_ABORT, installGuard, stackPointer, stackRestore, type Ffi } from "./quickjs-internals";
import { post } from "./results";

/**
 * Keeps QuickJS from running on after a failure it cannot see. A JS exception thrown inside a call into the
 * WebAssembly code unwinds its frames at once; but quickjs-emscripten's glue catches every error of a host
 * callback (it logs it and returns null, or "interrupt"), and the host's own `finally` blocks free handles while
 * the exception passes. So: an error out of any FFI function (a native stack overflow, a trap) is the `fault`; while
 * a fault stands, no FFI call enters the instance (frees are skipped, anything else rethrows it); and the glue of
 * host-function calls and interrupts is replaced by one that rethrows a fault instead of swallowing it, until it
 * reaches the run loop's slice() (see contain()).
 */
export function guard(eng: EngineState): void {
  const fault = (err: unknown): Error => (eng.fault ??= err instanceof Error ? err : new Error(String(err)));
  // The original glue minus its catch-all: a fault raised inside (or before) the callback leaves the instance.
  const escaping =
    <A extends number[]>(inner: (...a: A) => number) =>
    (_asyncify: unknown, ...a: A): number => {
      if (eng.fault !== null) throw eng.fault;
      let r: number;
      try {
        r = inner(...a);
      } catch (err) {
        throw fault(err);
      }
      if (eng.fault !== null) throw eng.fault;
      return r;
    };
  installGuard(eng.mod!, (fn, name) => guarded(fn, name.startsWith("QTS_Free"), () => eng.fault, fault), escaping);
  // Host data that does not fit: the running execution's memory error, thrown where the data would have been made
  // (marshal.ts admit() refuses most of it before; this is for whatever gets past, e.g. free memory the worker no
  // longer has).
  guardAllocations(eng.mod!, () => {
    if (eng.current) eng.current.reason ??= "memory";
    return new OutOfMemory();
  });
}

/** An FFI function that does not enter the instance while a fault stands (a free is skipped, anything else rethrows
 *  the fault) and makes any error thrown out of it the fault (see guard). Fixed arity where it can: this
 *  is on every call into QuickJS (extra arguments to a wasm export are ignored). */
function guarded(fn: Ffi, free: boolean, current: () => Error | null, fault: (err: unknown) => Error): Ffi {
  if (free) {
    return (a, b, c) => {
      if (current() === null) return fn(a, b, c);
    };
  }
  // A wasm export's length is its parameter count; cwrap's string-converting closures (length 0) read `arguments`.
  const n = fn.length;
  if (n === 0 || n > 4) {
    const any = fn as (...args: unknown[]) => unknown;
    return ((...args: unknown[]) => {
      const standing = current();
      if (standing !== null) throw standing;
      try {
        return any(...args);
      } catch (err) {
        throw fault(err); // only a trap or a native stack overflow gets here
      }
    }) as Ffi;
  }
  return (a, b, c, d) => {
    const standing = current();
    if (standing !== null) throw standing;
    try {
      return fn(a, b, c, d);
    } catch (err) {
      throw fault(err);
    }
  };
}

/** JSC's error when the thread's native stack runs out (thrown at the entry of the function that would overflow). */
export function isNativeOverflow(err: unknown): err is RangeError {
  return err instanceof RangeError && err.message.startsWith("Maximum call stack size exceeded");
}

/**
 * `exec` ran the worker thread's native stack out inside the WebAssembly code (JSC's RangeError, see
 * isNativeOverflow): deeply nested text given to the parser, eval, JSON or RegExp, or deep data given to
 * JSON.stringify or Array.prototype.flat; QuickJS's own check (setMaxStackSize) measures only the emscripten
 * stack and trips later for these. JSC throws at a function's entry, so the instance's frames were cut off at a
 * call: the allocator (dlmalloc: its updates are macros, its calls start from a consistent state) and every other
 * runtime are as they were; only `exec`'s runtime may be half-updated. It is abandoned (never freed, no more of
 * its code runs: the guarded glue keeps it out, see guard()), the stack pointer goes back to the top, and `exec`
 * ends as QuickJS's "stack overflow". If no other execution lives in the instance, the memory image makes it
 * pristine again and the worker goes on; otherwise the others run to their end while the pool retires this
 * worker (it takes no new job) and starts a replacement. Another user's parked job is never lost to it.
 * False when the stack pointer cannot be put back (or the speed internals are off: Engine.stackTop is null): the
 * caller poisons the instance.
 */
export function contain(eng: EngineState, exec: Exec): boolean {
  // a nested slice's frames start where it was entered: the slices below it keep theirs
  const entry = eng.nestSp.length > 0 ? eng.nestSp[eng.nestSp.length - 1]! : eng.stackTop;
  if (!eng.execs.has(exec.id) || !stackBack(eng, entry)) return false;
  eng.execs.delete(exec.id);
  if (exec.deadlineTimer) clearTimeout(exec.deadlineTimer);
  for (const sl of exec.sleeps.values()) clearTimeout(sl.timer);
  const tpl = eng.tpl;
  if (tpl && exec === tpl.exec) releaseTemplate(tpl);
  else {
    dropHandles(exec); // with its runtime: the next restore of the image takes their memory back
    if (tpl) tpl.dirty = true;
  }
  const error: ScriptError =
    exec.reason === "timeout" || Date.now() >= exec.deadline
      ? timeoutError()
      : { kind: "error", name: "InternalError", message: "InternalError: stack overflow" };
  const finished = exec.finished;
  exec.finished = true;
  // Nothing else alive: reap() (at the end of the slice) frees what finished and restores the image.
  if (tpl && ![...eng.execs.values()].some((e) => !e.finished)) {
    if (!finished) post(eng, exec, { ok: false, error });
    return true;
  }
  // Otherwise the result goes with the retirement (the pool settles it, then retires or replaces the worker).
  retire(
    eng,
    "a script ran the worker's native stack out while other executions were alive",
    finished ? [] : [{ id: exec.id, error, logs: exec.logs }],
  );
  return true;
}

/** Runtimes abandon() leaves in the instance before the worker retires (each holds at most its execution's memory
 *  limit; the next restore of the memory image takes them all back). */
export const MAX_ABANDONED = 16;

/** JS_FreeRuntime's assertion that every object of the runtime was freed (emscripten aborts on it). QuickJS
 *  2025-09-13 in quickjs-emscripten 0.32 leaves objects in a runtime's GC list after some allocations in a promise
 *  job, or after an out-of-memory (quickjs-emscripten issues #257 and #269, no fix upstream): an ordinary script that
 *  awaits and then makes 200,000 objects is enough. */
export function isFreeAbort(err: unknown): boolean {
  return err instanceof WebAssembly.RuntimeError && err.message.startsWith(LEAK_ABORT);
}

/**
 * reap(): `exec`'s runtime could not be freed (isFreeAbort; its context was). JS_FreeRuntime had freed the
 * runtime's jobs and garbage and stopped at its final check: the allocator is consistent (the abort is not inside
 * it) and nothing else refers to this runtime. So it is left where it is: the stack pointer goes back to the top,
 * the runtime leaves quickjs-emscripten's registry, and the next restore of the memory image (once no execution is
 * alive) takes its memory back. Without an image, or after MAX_ABANDONED runtimes before a restore, the worker
 * retires (the pool starts a replacement; the executions alive here run to their end first). False when the stack
 * pointer cannot be put back (the speed internals are off): the caller poisons the instance.
 */
export function abandon(eng: EngineState, exec: Exec): boolean {
  if (eng.current !== null || !stackBack(eng, eng.stackTop)) return false;
  if (exec.rt) forgetRuntime(eng.mod!, exec.rt);
  exec.rt = null;
  exec.ctx = null;
  eng.abandoned++;
  if (eng.tpl) eng.tpl.dirty = true;
  if ((eng.tpl === null || eng.abandoned > MAX_ABANDONED) && !eng.draining) {
    retire(eng, `${eng.abandoned} QuickJS runtimes could not be freed (JS_FreeRuntime leak assertion)`, []);
  }
  return true;
}

/** Puts the instance's stack pointer back at `to` (null: not verified); false when it cannot. */
function stackBack(eng: EngineState, to: number | null): boolean {
  const restore = stackRestore(eng.instance);
  if (to === null || restore === null) return false;
  restore(to);
  return stackPointer(eng.instance) === to;
}

/** The worker takes no new job; the pool settles `results`, starts a replacement and ends this one once idle. */
function retire(eng: EngineState, reason: string, results: { id: number; error: ScriptError; logs: LogEntry[] }[]): void {
  eng.draining = true;
  eng.send({ t: "retire", reason, results });
}

/** Reports the instance unusable, with the outcome of every unfinished execution, in ONE message (so the pool
 *  replaces the worker before it could hand it another job). */
export function poison(eng: EngineState, exec: Exec | null, err: unknown): void {
  if (eng.poisoned) return;
  eng.poisoned = true;
  const nativeOverflow = err instanceof RangeError && /call stack/i.test(err.message);
  const results: { id: number; error: ScriptError; logs: LogEntry[]; retry?: boolean }[] = [];
  for (const e of eng.execs.values()) {
    if (e.finished) continue;
    e.finished = true;
    let error: ScriptError;
    if (e === exec && nativeOverflow) {
      // The script recursed until the worker thread's own stack ran out: report it like QuickJS's overflow.
      error = { kind: "error", name: "InternalError", message: "InternalError: stack overflow" };
    } else if (e === exec && (e.reason === "timeout" || Date.now() >= e.deadline)) {
      error = timeoutError();
    } else {
      error = { kind: "internal", message: "Script worker failed and was restarted; try again" };
      // Another execution, parked (not on the thread's slice stack, so none of its code ran when the fault came)
      // and without a host operation started (kv, proxy: every effect outside the worker goes through one): all it
      // did lives in this instance, and running it again elsewhere is indistinguishable from a first run.
      if (!eng.stack.includes(e) && e.opSeq === 0) {
        results.push({ id: e.id, error, logs: e.logs, retry: true });
        continue;
      }
    }
    results.push({ id: e.id, error, logs: e.logs });
  }
  const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  eng.send({ t: "poisoned", reason: clip(reason, 300), results });
}
