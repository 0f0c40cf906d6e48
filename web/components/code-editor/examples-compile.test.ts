// Every script the UI offers (insertable examples, a new library script's starters) compiles where it runs, by the
// editors' check (acorn, script-syntax.ts) and by the server's (QuickJS compile-only or acorn in the page's forms,
// in a real pool): an example never opens the "does not compile" dialog or comes back with a warning.
import { afterAll, describe, expect, test } from "bun:test";
import { createLogger } from "../../../src/platform/log";
import { extractorForms } from "../../../src/features/trackers/page/extractor";
import { ScriptPool } from "../../../src/sandbox/pool";
import { scriptChecker } from "../../../src/sandbox/syntax";
import { CONFIGURATOR_EXAMPLES, EXTRACTOR_EXAMPLES } from "../../features/trackers/api/api-examples";
import { PAGE_EXTRACTOR_EXAMPLES } from "../../features/trackers/page/page-examples";
import { SCRIPT_EXAMPLES } from "../../features/responders/script-examples";
import { SCRIPT_TYPES } from "../../features/scripts/script-types";
import { scriptProblem, type ScriptRuntime } from "./script-syntax";

const pool = new ScriptPool({ workers: 1, queueLimit: 1000, allowPrivate: false, log: createLogger("error") });
afterAll(() => pool.close());
const check = scriptChecker(pool, extractorForms);

const all: [string, string, ScriptRuntime][] = [
  ...SCRIPT_EXAMPLES.map((e) => [`responder: ${e.label}`, e.source, "quickjs"] as [string, string, ScriptRuntime]),
  ...CONFIGURATOR_EXAMPLES.map((e) => [`configurator: ${e.label}`, e.source, "quickjs"] as [string, string, ScriptRuntime]),
  ...EXTRACTOR_EXAMPLES.map((e) => [`extractor: ${e.label}`, e.source, "quickjs"] as [string, string, ScriptRuntime]),
  ...PAGE_EXTRACTOR_EXAMPLES.map((e) => [`page extractor: ${e.label}`, e.source, "chromium"] as [string, string, ScriptRuntime]),
  ...SCRIPT_TYPES.map(
    (t) => [`starter: ${t.value}`, t.starter, t.value === "page_extractor" ? "chromium" : "quickjs"] as [string, string, ScriptRuntime],
  ),
];

describe("the UI's examples compile", () => {
  test("in the editors' check", () => {
    expect(all.length).toBeGreaterThan(10);
    expect(all.filter(([, src, rt]) => scriptProblem(src, rt) !== null).map(([name]) => name)).toEqual([]);
  });

  test("in the server's check", async () => {
    const warnings = await check(
      all.map(([name, source, runtime]) => ({ field: name, source, runtime })),
      "u",
    );
    expect(warnings).toEqual([]);
  });
});
