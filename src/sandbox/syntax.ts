// Syntax warnings on save (supplement §27): a script is compiled as it will run, without running it, in the pool's
// workers (a compile of 51,200 bytes never holds the API's event loop), and a syntax error becomes a warning
// `<field>: SyntaxError: <message> (line L, column C)` with L and C in the user's own source (1-based), not in the
// wrapper's. QuickJS scripts (responders, API configurators and extractors, library scripts) are compiled by QuickJS
// in their source forms (engine/check.ts); code that runs in Chromium (page extractors) is parsed by acorn in the
// forms the page extractor builds, which the caller passes (features/trackers/page/extractor.ts extractorForms).
// Owns: the mapping from the wrapped text to the source, the wording of the warning. Must never: refuse a save (a
// check that cannot run, the queue full or the pool closed, answers no warning).
import { normalizeSource } from "./engine/compile";
import type { ScriptRunRequest, ScriptRunResult, SyntaxCheckMode } from "./types";

/** Where the code runs: QuickJS (§11.6) or the Chromium page (§16.2). */
export type ScriptRuntime = "quickjs" | "chromium";

/** One script of a save: its field path (§2), its source, where it runs. */
export interface ScriptToCheck {
  field: string;
  source: string;
  runtime: ScriptRuntime;
}

/** Checks the scripts of one save for `owner` (a user id): the warnings, in the order given (none: []). */
export type ScriptChecker = (scripts: ScriptToCheck[], owner: string) => Promise<string[]>;

export interface SyntaxProblem {
  message: string;
  line: number;
  column: number;
}

/** The pool as the checker uses it (ScriptPool). */
interface Runner {
  run(req: ScriptRunRequest): Promise<ScriptRunResult>;
}

/** Generous and fixed: parsing 51,200 bytes takes a few MiB and milliseconds; the tier's limits are for running. */
const CHECK_LIMITS = { memoryMib: 32, timeoutMs: 5000, proxyTimeoutMs: 1000, maxProxyBodyBytes: 0 };

/** A checker over `pool`; `chromiumForms` makes the texts Chromium compiles for a page extractor's source. */
export function scriptChecker(pool: Runner, chromiumForms: (source: string) => string[]): ScriptChecker {
  return async (scripts, owner) => {
    const found = await Promise.all(
      scripts.map(async (s) => {
        const check: SyntaxCheckMode = s.runtime === "quickjs" ? { parser: "quickjs" } : { parser: "acorn", forms: chromiumForms(s.source) };
        const p = await checkSyntax(pool, s.source, check, owner);
        return p ? syntaxWarning(s.field, p) : null;
      }),
    );
    return found.filter((w): w is string => w !== null);
  };
}

/** The source's syntax error, or null (it compiles, or the check could not run). */
export async function checkSyntax(pool: Runner, source: string, check: SyntaxCheckMode, owner: string): Promise<SyntaxProblem | null> {
  const r = await pool.run({ source, context: null, limits: CHECK_LIMITS, proxy: false, owner, check });
  if (r.ok || r.error.kind !== "error" || r.error.name !== "SyntaxError") return null;
  const at = /script\.js:(\d+):(\d+)/.exec(r.error.stack ?? "");
  const message = r.error.message.replace(/^SyntaxError: /, "");
  return toSource(source, message, at ? Number(at[1]) : 2, at ? Number(at[2]) : 1);
}

/**
 * The position in the user's source of an error at `line`:`column` of a wrapped text (every form puts the
 * normalized source, trimmed and without its trailing `;`, from line 2 on). An error in the wrapper's closing text
 * (the source ended too early: `foo(`) is put just after the source's last character, and a message that names the
 * wrapper's own closing token or the end of the text (QuickJS's `''`; acorn's bare "Unexpected token" there) says "unexpected end of script" instead.
 */
export function toSource(source: string, message: string, line: number, column: number): SyntaxProblem {
  const src = normalizeSource(source);
  const lead = source.slice(0, source.length - source.trimStart().length);
  const leadLines = lead.split("\n").length - 1;
  const indent = lead.length - (lead.lastIndexOf("\n") + 1);
  const lines = src.split("\n");
  let l = line - 1;
  let c = column;
  if (l < 1) {
    l = 1;
    c = 1;
  } else if (l > lines.length) {
    l = lines.length;
    c = lines[l - 1]!.length + 1;
    if (/'[)}]?'$/.test(message) || message === "Unexpected token") message = "unexpected end of script";
  }
  if (l === 1) c += indent;
  return { message, line: l + leadLines, column: c };
}

/** §27 wording: `settings.script: SyntaxError: unexpected token in expression: '}' (line 1, column 32)`. */
export function syntaxWarning(field: string, p: SyntaxProblem): string {
  return `${field}: SyntaxError: ${p.message} (line ${p.line}, column ${p.column})`;
}
