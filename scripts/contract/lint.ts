#!/usr/bin/env bun
// Lint gates of the OpenAPI document (issue 19): `bun scripts/contract/lint.ts` writes the document the app serves
// (built in-process, scripts/contract/document.ts) to a temporary file and runs both independent linters on it,
// offline: Redocly CLI with its recommended ruleset (scripts/contract/redocly.yaml) and Spectral with
// `spectral:oas` (scripts/contract/spectral.yaml). Exits 1 when either reports an error. Rules switched off carry
// their reason in those files. Run by the test suite (src/platform/http/openapi-lint.test.ts) and .ci/run.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openApiDocument } from "./document";

const ROOT = resolve(import.meta.dir, "../..");
const BIN = join(ROOT, "node_modules/.bin");

export interface LintResult {
  tool: string;
  ok: boolean;
  output: string;
}

/** Runs both linters on `doc`; no network (Redocly's telemetry and update check are off). */
export async function lintDocument(doc: unknown): Promise<LintResult[]> {
  const dir = mkdtempSync(join(tmpdir(), "secbox-openapi-"));
  try {
    const file = join(dir, "openapi.json");
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const env = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1", CI: "true" };
    const run = async (tool: string, cmd: string[]): Promise<LintResult> => {
      const proc = Bun.spawn(cmd, { cwd: ROOT, env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
      const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      return { tool, ok: code === 0, output: (out + err).replace(/^.*[║╔╚].*\n?/gm, "").trim() };
    };
    return await Promise.all([
      run("redocly", [join(BIN, "redocly"), "lint", file, "--config", join(import.meta.dir, "redocly.yaml"), "--format", "stylish"]),
      run("spectral", [
        join(BIN, "spectral"),
        "lint",
        file,
        "--ruleset",
        join(import.meta.dir, "spectral.yaml"),
        "--fail-severity",
        "error",
        "--format",
        "text",
      ]),
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const results = await lintDocument(await openApiDocument());
  for (const r of results) console.log(`== ${r.tool}: ${r.ok ? "0 errors" : "FAILED"}\n${r.output}\n`);
  process.exit(results.every((r) => r.ok) ? 0 : 1);
}
