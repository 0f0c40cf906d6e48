// Syntax checks (supplement §27): a job with `check` (types.ts SyntaxCheckMode) compiles or parses its source and
// answers `null` or the SyntaxError, never running anything of it. `quickjs`: the source forms of compile.ts,
// evaluated compile-only (QuickJS's JS_EVAL_FLAG_COMPILE_ONLY: bytecode is made, no code runs, not even a source that
// closes its wrapper early); the error of the last form is the one a run would fail with. `acorn`: the given texts
// (code that runs in Chromium) parsed by acorn; no QuickJS involved. Line and column are those of the wrapped text
// (1-based), in the stack as `    at script.js:L:C`, like QuickJS's own errors; ../syntax.ts maps them back to the
// user's source.
// Owns: nothing kept between jobs. Must never: run the source, or post more than one result per job (the caller
// posts it).
import type { QuickJSHandle } from "quickjs-emscripten-core";
import { parse } from "acorn";
import { FORMS, WRAPPERS } from "./compile";
import type { Exec } from "./exec";
import { errorName } from "./marshal";

/** Compiles `src` (normalized) in each form without running it: null when one compiles, else the last form's error
 *  (a handle in exec's context, for results.ts fail()). */
export function compileOnly(exec: Exec, src: string): QuickJSHandle | null {
  const ctx = exec.ctx!;
  for (let i = 0; i < FORMS.length; i++) {
    const r = ctx.evalCode(WRAPPERS[FORMS[i]!](src), "script.js", { type: "global", compileOnly: true });
    if (!r.error) {
      r.value.dispose();
      return null;
    }
    if (i < FORMS.length - 1 && !exec.reason && errorName(exec, r.error) === "SyntaxError") {
      r.error.dispose();
      continue;
    }
    return r.error;
  }
  return null;
}

/** Parses each text with acorn until one parses: null, or the last text's error (message without acorn's
 *  "(line:column)" suffix; line and column 1-based). */
export function acornCheck(forms: string[]): { message: string; line: number; column: number } | null {
  let last: { message: string; line: number; column: number } | null = null;
  for (const text of forms) {
    try {
      parse(text, { ecmaVersion: "latest", sourceType: "script" });
      return null;
    } catch (err) {
      // acorn's own recursion limit (deeply nested code): cannot tell, say nothing
      if (!(err instanceof SyntaxError)) return null;
      const loc = (err as SyntaxError & { loc?: { line: number; column: number } }).loc;
      last = { message: err.message.replace(/ \(\d+:\d+\)$/, ""), line: loc?.line ?? 1, column: (loc?.column ?? 0) + 1 };
    }
  }
  return last;
}
