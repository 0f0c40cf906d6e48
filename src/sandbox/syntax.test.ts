// Syntax checks in the pool (syntax.ts, engine/check.ts; supplement §27): compile-only jobs run in the workers, never
// run the source, and map positions back to the user's source.
import { afterAll, describe, expect, test } from "bun:test";
import { createLogger } from "../platform/log";
import { ScriptPool } from "./pool";
import { checkSyntax, scriptChecker, toSource } from "./syntax";

const pool = new ScriptPool({ workers: 1, queueLimit: 100, allowPrivate: false, log: createLogger("error") });
afterAll(() => pool.close());

describe("compile-only jobs", () => {
  test("a source is compiled, not run: a script that would throw, loop or close its wrapper early answers null", async () => {
    for (const source of ["throw new Error('ran')", "while (true) {}", "0), (null.x), (0", "0), (function () { for (;;); })(), (0"]) {
      expect(await checkSyntax(pool, source, { parser: "quickjs" }, "u")).toBeNull();
    }
  });

  test("the last form's error, as a run would fail with it", async () => {
    expect(await checkSyntax(pool, "return {a: }", { parser: "quickjs" }, "u")).toEqual({
      message: "unexpected token in expression: '}'",
      line: 1,
      column: 12,
    });
  });

  test("acorn: the given forms, tried in order", async () => {
    const forms = (src: string) => [`(async (context) => (await (\n${src}\n)))`, `(async (context) => {\n${src}\n})`];
    const check = scriptChecker(pool, forms);
    expect(await check([{ field: "target.extractor", source: "return document.title", runtime: "chromium" }], "u")).toEqual([]);
    expect(await check([{ field: "target.extractor", source: "document.title", runtime: "chromium" }], "u")).toEqual([]);
    expect(await check([{ field: "target.extractor", source: "\n  return [1,,", runtime: "chromium" }], "u")).toEqual([
      "target.extractor: SyntaxError: unexpected end of script (line 2, column 14)",
    ]);
  });

  test("a compile of 51,200 bytes does not hold the event loop: it runs in a worker", async () => {
    let source = "";
    for (let i = 0; source.length < 51_000; i++) source += `const v${i} = { a: [1, 2, 3].map((x) => x * ${i}), s: "text ${i}" };\n`;
    source = `${source.slice(0, 51_100)}\n+`; // a syntax error at the very end: every form is parsed in full
    await pool.ready();
    let turns = 0;
    let done = false;
    const spin = () => {
      if (done) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    const p = await checkSyntax(pool, source, { parser: "quickjs" }, "u");
    done = true;
    expect(p?.line).toBe(source.split("\n").length);
    // the event loop kept turning while the three forms were compiled (on this thread it could not turn at all)
    expect(turns).toBeGreaterThan(1);
  });
});

describe("toSource", () => {
  test("leading blank lines and the first line's indentation are added back; the wrapper's line is not counted", () => {
    expect(toSource("x", "m", 2, 1)).toEqual({ message: "m", line: 1, column: 1 });
    expect(toSource("\n\n   x +", "m", 2, 3)).toEqual({ message: "m", line: 3, column: 6 });
    expect(toSource("a;\n  b c", "m", 3, 5)).toEqual({ message: "m", line: 2, column: 5 });
  });

  test("an error in the wrapper's closing text is put after the source's end, and named as the end", () => {
    expect(toSource("foo(\n  1,", "unexpected token in expression: ')'", 4, 1)).toEqual({ message: "unexpected end of script", line: 2, column: 5 });
    expect(toSource("x = [", "expecting ']'", 3, 1)).toEqual({ message: "expecting ']'", line: 1, column: 6 });
  });
});
