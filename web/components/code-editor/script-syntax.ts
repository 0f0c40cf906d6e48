// The editors' syntax check (issue 30, supplement §27), mirroring the server's: the source wrapped in the forms it
// runs in, parsed by acorn (~30 KiB gzip, only in lazy chunks: the editor's and the save check's), the error of the
// last form mapped back to the user's own line and column. QuickJS scripts (responders, API configurators and
// extractors, library scripts) use the engine's three forms (src/sandbox/engine/compile.ts), page extractors the
// page's two (src/features/trackers/page/extractor.ts), where `context` is a parameter. The server compiles QuickJS
// scripts with QuickJS itself, so its message can differ in words, rarely in verdict; its `warnings` are the word
// that counts. script-syntax.test.ts checks these forms against the server's.
import { parse } from "acorn";

/** Where a script runs: QuickJS (§11.6) or the Chromium page (§16.2). */
export type ScriptRuntime = "quickjs" | "chromium";

/** A script an editor page saves (script-check.ts). */
export interface EditorScript {
  /** The editor's label ("Script source", "Extractor"). */
  label: string;
  source: string;
  runtime: ScriptRuntime;
}

export interface ScriptProblem {
  message: string;
  /** 1-based, in the user's source */
  line: number;
  column: number;
  /** Offset in the user's source (for the editor's mark). */
  offset: number;
}

/** The source as every form holds it: trimmed, one trailing `;` dropped. */
export function normalizeSource(source: string): string {
  const src = source.trim();
  return src.endsWith(";") ? src.slice(0, -1) : src;
}

/** The texts the source is tried in, in order (the user's first line is line 2 of each). */
export function scriptForms(source: string, runtime: ScriptRuntime): string[] {
  const src = normalizeSource(source);
  return runtime === "quickjs"
    ? [`() => (\n${src}\n)`, `async () => (await (\n${src}\n))`, `async () => {\n${src}\n}`]
    : [`(async (context) => (await (\n${src}\n)))`, `(async (context) => {\n${src}\n})`];
}

/** The source's syntax error as it will run, or null. */
export function scriptProblem(source: string, runtime: ScriptRuntime): ScriptProblem | null {
  if (source.trim() === "") return null;
  let last: { message: string; line: number; column: number } | null = null;
  for (const text of scriptForms(source, runtime)) {
    try {
      parse(text, { ecmaVersion: "latest", sourceType: "script" });
      return null;
    } catch (err) {
      if (!(err instanceof SyntaxError)) return null; // acorn's own limits (deep nesting): cannot tell
      const loc = (err as SyntaxError & { loc?: { line: number; column: number } }).loc;
      last = { message: err.message.replace(/ \(\d+:\d+\)$/, ""), line: loc?.line ?? 2, column: (loc?.column ?? 0) + 1 };
    }
  }
  return last && toSource(source, last.message, last.line, last.column);
}

/** The position in the user's source of an error at line:column of a form (as the server's src/sandbox/syntax.ts). */
export function toSource(source: string, message: string, line: number, column: number): ScriptProblem {
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
  const outLine = l + leadLines;
  const starts = source.split("\n");
  let offset = 0;
  for (let i = 0; i < outLine - 1 && i < starts.length; i++) offset += starts[i]!.length + 1;
  return { message, line: outLine, column: c, offset: Math.min(source.length, offset + c - 1) };
}

/** The server's wording (without the field): `SyntaxError: Unexpected token (line 1, column 32)`. */
export const describeProblem = (p: ScriptProblem) => `SyntaxError: ${p.message} (line ${p.line}, column ${p.column})`;
