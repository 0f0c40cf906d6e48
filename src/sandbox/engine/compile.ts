// Source forms (§11.6) and the call that starts a script: a source becomes a function, the first of three wrappers
// that parses (remembered per source), and calling that function runs the script; its value, awaited, is the result.
// Owns: the form cache (per worker thread). Must never: run any code of the script while compiling (evaluating the
// wrapper only creates the function), or retry a script in another form once it has run (a SyntaxError thrown while a
// script runs is its failure).
import type { QuickJSHandle } from "quickjs-emscripten-core";
import { ScriptThrew, type Exec } from "./exec";
import { callFn, errorName, own } from "./marshal";

export type Form = "direct" | "await" | "body";
export const FORMS: Form[] = ["direct", "await", "body"];
/** The wrappers of compile(). The script's first line is line 2 of script.js in each form. */
export const WRAPPERS: Record<Form, (src: string) => string> = {
  direct: (src) => `() => (\n${src}\n)`,
  await: (src) => `async () => (await (\n${src}\n))`,
  body: (src) => `async () => {\n${src}\n}`,
};

/** A source as compiled: trimmed, without a trailing semicolon (so that `expr;` is still an expression). */
export function normalizeSource(source: string): string {
  const src = source.trim();
  return src.endsWith(";") ? src.slice(0, -1) : src;
}

/** How each source runs (see compile), keyed by a 64-bit hash of the source (not the text: 4,096 scripts
 *  of up to 64 KiB would hold 256 MiB). A collision could only change how that one script runs, i.e. its own
 *  result. Bounded, oldest dropped first. */
const forms = new Map<number | bigint, Form>();
const FORM_CACHE = 4096;
function rememberForm(key: number | bigint, form: Form): void {
  if (forms.size >= FORM_CACHE) forms.delete(forms.keys().next().value!);
  forms.set(key, form);
}

export interface Compiled {
  /** The script as a function (or, when the source closed its wrapper early, the value of the evaluated text). */
  fn: QuickJSHandle;
  form: Form;
  /** The wrapper's text (image.ts keeps an image only if the function's own text is all of it). */
  text: string;
  /** The source's form was known already: it was compiled before in this worker. */
  seen: boolean;
}

/**
 * §11.6: trim; drop one trailing `;`; an expression whose awaited value is the result, or, when that does not
 * parse, an async function body. The script as a function: its source wrapped as an expression (`() => (src)`;
 * its value awaited the way `await` does, Promise.resolve of the intrinsic Promise, so thenables are adopted), an
 * awaited expression (`async () => (await (src))`: it parses only inside an async function) or an async function
 * body (`async () => { src }`), the first form that parses (remembered per source, parsing is deterministic).
 * Evaluating the wrapper only creates the function, so the compiled function can be kept in a memory image and
 * called by later executions (see image.ts keepImage). `{error}`: the source failed (a syntax error in its last
 * form, or the limits): the caller ends the execution with it.
 */
export function compile(exec: Exec, src: string, key: number | bigint): Compiled | { error: QuickJSHandle } {
  const ctx = exec.ctx!;
  const known = forms.get(key);
  const order = known ? [known] : FORMS;
  for (let i = 0; i < order.length; i++) {
    const form = order[i]!;
    const text = WRAPPERS[form](src);
    const r = ctx.evalCode(text, "script.js", { type: "global" });
    if (r.error) {
      // Not this form (a SyntaxError; a runtime SyntaxError cannot happen: no code of the script ran): the next one.
      if (i < order.length - 1 && !exec.reason && errorName(exec, r.error) === "SyntaxError") {
        r.error.dispose();
        continue;
      }
      return { error: r.error };
    }
    if (!known) rememberForm(key, form);
    return { fn: r.value, form, text, seen: known !== undefined };
  }
  throw new Error("unreachable: no source form"); // the last form's error is returned above
}

/** Calls the compiled script; its value (awaited) is the result, kept as exec.promise. An expression's value that is
 *  not an object goes straight to the result; objects go through Promise.resolve, so a thenable is adopted as
 *  `await` would. Returns the thrown value when the call threw (the caller ends the execution with it). */
export function invoke(exec: Exec, fn: QuickJSHandle, form: Form, isFunction = false): QuickJSHandle | null {
  const ctx = exec.ctx!;
  let r: QuickJSHandle;
  if (isFunction || ctx.typeof(fn) === "function") {
    const call = callFn(exec, fn, ctx.undefined, []);
    if (call.error) return call.error;
    r = call.value!;
  } else {
    // the wrapper's text was not one function (a source that closes it early): its value is the result
    r = fn.dup();
  }
  if (form !== "direct") {
    exec.promise = r;
    return null;
  }
  const type = ctx.typeof(r);
  if (type !== "object" && type !== "function") {
    exec.promise = r;
    return null;
  }
  exec.helpers.Promise ??= own(exec, ctx.getProp(ctx.global, "Promise"));
  exec.helpers.promiseResolve ??= own(exec, ctx.getProp(exec.helpers.Promise, "resolve"));
  try {
    const p = callFn(exec, exec.helpers.promiseResolve, exec.helpers.Promise, [r]);
    if (p.error) throw new ScriptThrew(p.error);
    exec.promise = p.value!;
  } finally {
    r.dispose();
  }
  return null;
}
