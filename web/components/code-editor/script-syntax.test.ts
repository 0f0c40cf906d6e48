// The editors' syntax check agrees with the server's: the same forms, the same positions in the user's source.
import { describe, expect, test } from "bun:test";
import { FORMS, normalizeSource as serverNormalize, WRAPPERS } from "../../../src/sandbox/engine/compile";
import { toSource as serverToSource } from "../../../src/sandbox/syntax";
import { extractorForms } from "../../../src/features/trackers/page/extractor";
import { normalizeSource, scriptForms, scriptProblem, toSource } from "./script-syntax";

const SOURCES = ["return 1", "  x;", "\n\nfoo(\n  1,\n", "a b", "let context = 1; return context", "return {statusCode: 200, body: }"];

describe("the same forms as the server", () => {
  test("QuickJS forms are the engine's, page forms the page extractor's", () => {
    for (const s of SOURCES) {
      expect(normalizeSource(s)).toBe(serverNormalize(s));
      expect(scriptForms(s, "quickjs")).toEqual(FORMS.map((f) => WRAPPERS[f](serverNormalize(s))));
      expect(scriptForms(s, "chromium")).toEqual(extractorForms(s));
    }
  });

  test("positions map back as the server maps them", () => {
    for (const [s, line, col] of [
      ["a\n  b c", 3, 5],
      ["\n\n   x +", 2, 3],
      ["foo(", 3, 1],
      ["x", 1, 1],
    ] as const) {
      const { offset: _, ...mine } = toSource(s, "unexpected token in expression: '}'", line, col);
      expect(mine).toEqual(serverToSource(s, "unexpected token in expression: '}'", line, col));
    }
  });
});

describe("scriptProblem", () => {
  test("valid scripts in every form pass; a broken one is found with the user's line, column and offset", () => {
    for (const s of ["return 1", "({a: 1})", "await Promise.resolve(2)", "(async () => 1)();"]) expect(scriptProblem(s, "quickjs")).toBeNull();
    const p = scriptProblem("\nreturn {statusCode: 200, body: }", "quickjs")!;
    expect(p).toEqual({ message: "Unexpected token", line: 2, column: 32, offset: 32 });
  });

  test("page extractors: `context` is the function's parameter", () => {
    expect(scriptProblem("let context = 1; return context", "quickjs")).toBeNull();
    expect(scriptProblem("let context = 1; return context", "chromium")?.message).toBe("Identifier 'context' has already been declared");
  });

  test("a source ending early is marked at its end", () => {
    expect(scriptProblem("return foo(", "quickjs")).toEqual({ message: "unexpected end of script", line: 1, column: 12, offset: 11 });
  });
});
