// Test lanes (issue 31 §4): every *.test.ts of the repository is in exactly one lane, by name; `scripts/test/run.ts`
// checks it before each run (a file in no lane, or in two, fails the run) and runs the lanes.
//   fast     unit and API tests: each file its own server, data directory and (PostgreSQL) database, so the files
//            run in parallel worker processes (`bun test --parallel`). `bun run test:fast` is the developer loop.
//   timing   tests whose subject is time or scheduling: the sandbox's workers and limits, fairness, the work pool,
//            the page engine, several instances, crash and durability, long hits. One process, one file at a time.
//   browser  the web UI in a real Chromium (scripts/e2e): worker processes with one Chromium each.
// A file touches the database (and runs again on PostgreSQL) when it matches DB_PATTERN: it starts a server, opens
// the runtime or a database, or runs the CLI on a data directory.

export type Lane = "fast" | "timing" | "browser";
export const LANE_NAMES: readonly Lane[] = ["fast", "timing", "browser"];

/** A folder and the test files in it (names relative to the folder), to keep the lists short. */
const under = (dir: string, names: string[]) => names.map((n) => `${dir}/${n}`);

export const LANES: Record<Lane, string[]> = {
  timing: [
    ...under("src/sandbox", ["sandbox.test.ts", "fairness.test.ts", "dispatch.test.ts", "kv.test.ts", "proxy.test.ts", "worker-failure.test.ts"]),
    "src/platform/work/pool.test.ts",
    ...under("src/features/trackers/page", ["engine.test.ts", "engine-recycle.test.ts", "page-trackers.test.ts"]),
    "src/features/responders/responders.long.test.ts",
    "src/features/user-data/crash.test.ts",
    "src/tests/crash.test.ts",
    "src/tests/multi-instance.test.ts",
    "src/tests/kv-off-loop.test.ts",
  ],
  browser: under("scripts/e2e", [
    "a11y.e2e.test.ts",
    "api-trackers.e2e.test.ts",
    "auth.e2e.test.ts",
    "certificates.e2e.test.ts",
    "csp.e2e.test.ts",
    "first-hour.e2e.test.ts",
    "help.e2e.test.ts",
    "keyboard.e2e.test.ts",
    "mail-off.e2e.test.ts",
    "no-silent-clamp.e2e.test.ts",
    "page-trackers.e2e.test.ts",
    "responders-examples.e2e.test.ts",
    "responders.e2e.test.ts",
    "script-lint.e2e.test.ts",
    "scripts.e2e.test.ts",
    "search-palette.e2e.test.ts",
    "secrets.e2e.test.ts",
    "settings.e2e.test.ts",
    "shell.e2e.test.ts",
    "site-isolation.e2e.test.ts",
    "tags.e2e.test.ts",
    "user-data.e2e.test.ts",
  ]),
  fast: [
    ...under("src/cli", ["cli.test.ts", "data-migrate.test.ts", "data.test.ts", "serve-port.test.ts"]),
    ...under("src/config", ["load.test.ts", "site.test.ts"]),
    "src/features/api-keys/api-keys.test.ts",
    ...under("src/features/certificates", ["fetch.test.ts", "generate.test.ts", "keys.test.ts", "templates.test.ts"]),
    ...under("src/features/csp", [
      "csp-evaluate.test.ts",
      "csp-fidelity.test.ts",
      "csp-reference.test.ts",
      "csp-remote.test.ts",
      "csp-roundtrip.test.ts",
      "csp.test.ts",
    ]),
    "src/features/messages/messages.test.ts",
    "src/features/notification-email/notification-email.test.ts",
    ...under("src/features/responders", [
      "har.test.ts",
      "match.test.ts",
      "responders.browser.test.ts",
      "responders.capture.test.ts",
      "responders.durable.test.ts",
      "responders.hits.test.ts",
      "responders.rate.test.ts",
      "responders.scripts.test.ts",
      "responders.status.test.ts",
      "responders.test.ts",
      "responders.ui-api.test.ts",
      "script-result.test.ts",
    ]),
    "src/features/scripts/scripts.test.ts",
    ...under("src/features/search", ["search-index.test.ts", "search.test.ts"]),
    "src/features/secrets/secrets.test.ts",
    "src/features/settings/settings.test.ts",
    "src/features/status/status.test.ts",
    "src/features/tags/tags.test.ts",
    ...under("src/features/trackers/api", ["api-trackers.test.ts", "pipeline.test.ts", "scripts.test.ts"]),
    ...under("src/features/trackers/page", ["browser-user.test.ts", "page-trackers-guard.test.ts", "proxy.test.ts", "selector.test.ts"]),
    ...under("src/features/trackers", ["run-atomic.test.ts", "scheduler.test.ts"]),
    ...under("src/features/user-data", [
      "atomic.test.ts",
      "clone.test.ts",
      "crypto.test.ts",
      "export.test.ts",
      "import.test.ts",
      "isolation.test.ts",
      "roundtrip.test.ts",
    ]),
    ...under("src/features/users", ["auth.test.ts", "forgot.test.ts", "operator-proof.test.ts", "operators.test.ts", "session-probe.test.ts"]),
    ...under("src/platform/auth", ["cross-site.test.ts", "session-cookie.test.ts"]),
    ...under("src/platform/db", ["file-modes.test.ts", "list.test.ts", "migrate.test.ts", "postgres.test.ts", "search.test.ts", "sqlite.test.ts"]),
    ...under("src/platform/http", [
      "client-ip.test.ts",
      "docs.test.ts",
      "headers.test.ts",
      "http.test.ts",
      "names.test.ts",
      "nul.test.ts",
      "openapi.test.ts",
      "source-caps.test.ts",
    ]),
    "src/platform/core/token-buckets.test.ts",
    "src/platform/jobs/jobs.test.ts",
    "src/platform/mail/outbox.test.ts",
    ...under("src/platform/net", ["client.test.ts", "guard.test.ts"]),
    "src/platform/ui/ui.test.ts",
    ...under("src/sandbox", ["host-data.test.ts", "syntax.test.ts", "wire.test.ts", "engine/image.test.ts", "engine/quickjs-internals.test.ts"]),
    ...under("src/tests", [
      "client.test.ts",
      "credentials.test.ts",
      "fuzz.test.ts",
      "limits-concurrent.test.ts",
      "script-warnings.test.ts",
      "storage-guard.test.ts",
      "storage.test.ts",
    ]),
    "web/features/users/safe-next.test.ts",
    "web/features/search/search-targets.test.ts",
    ...under("web/components", ["prefill.test.ts", "code-editor/examples-compile.test.ts", "code-editor/script-syntax.test.ts"]),
    "web/features/certificates/template-model.test.ts",
    "web/features/help/topics.test.ts",
    "web/features/trackers/tracker-logic.test.ts",
  ],
};

/** Files that also run on PostgreSQL: the ones under src/ whose source matches this. */
export const DB_PATTERN = /startTestServer|openRuntime|tests\/backend|"\.\/backend"|openDatabase|createServices|"--data-dir"/;

/** Every test file of the repository (tracked or not, outside node_modules), sorted. */
export function allTestFiles(root = "."): string[] {
  const found = new Set<string>();
  for (const f of new Bun.Glob("**/*.test.{ts,tsx}").scanSync({ cwd: root, onlyFiles: true })) {
    if (!f.split("/").includes("node_modules") && !f.startsWith("dist/")) found.add(f);
  }
  return [...found].sort();
}

/** Problems with lane membership: files in no lane, in two, or listed but missing. Empty when all is well. */
export function laneProblems(files = allTestFiles()): string[] {
  const problems: string[] = [];
  const laneOf = new Map<string, Lane>();
  for (const lane of LANE_NAMES) {
    for (const f of LANES[lane]) {
      const other = laneOf.get(f);
      if (other) problems.push(`${f}: in two lanes (${other}, ${lane})`);
      laneOf.set(f, lane);
    }
  }
  const present = new Set(files);
  for (const f of files) if (!laneOf.has(f)) problems.push(`${f}: in no lane (add it to one in scripts/test/lanes.ts)`);
  for (const f of laneOf.keys()) if (!present.has(f)) problems.push(`${f}: listed in scripts/test/lanes.ts but not found`);
  return problems;
}
