#!/usr/bin/env bun
// `bun run build`: compiles Secbox into one executable, dist/secbox.
//
// Equivalent to
//   bun build --compile --minify-syntax --minify-identifiers --sourcemap --bytecode --format=esm \
//     --no-compile-autoload-dotenv --no-compile-autoload-bunfig src/main.ts --outfile dist/secbox
//
// Whitespace is not minified: Elysia's handler analysis ("Sucrose") reads the source text of hooks and handlers
// to decide what to parse, and on whitespace-minified method shorthands (`async transform(c){…}`) it fails
// (measured: a "[Sucrose] warning" on stdout at the first request). Keeping whitespace costs ~0.4 MB.
//
// Everything the server needs at run time is inside the binary:
// - the SQL migrations (imported as text by src/platform/db/migrations/index.ts);
// - the Swagger UI script and stylesheet of the offline API docs (file imports in src/platform/http/docs.ts);
// - the web UI, once web/ exists (it will be bundled here and embedded the same way).
// The binary does not read .env or bunfig.toml from the directory it is started in: its configuration is only
// the TOML file, SECBOX_* variables and flags (supplement §23).
//
// Options: --outfile PATH (default dist/secbox), --target bun-linux-x64|bun-linux-x64-baseline|bun-linux-arm64|...
import { mkdirSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: { outfile: { type: "string", default: "dist/secbox" }, target: { type: "string" } },
  strict: true,
});

const root = import.meta.dir;
const outfile = resolve(root, values.outfile!);
mkdirSync(dirname(outfile), { recursive: true });

const started = performance.now();
const result = await Bun.build({
  // The sandbox worker is a separate entrypoint: Bun embeds it and the pool finds it at /$bunfs/root/sandbox/worker.js.
  entrypoints: [resolve(root, "src/main.ts"), resolve(root, "src/sandbox/worker.ts")],
  compile: {
    outfile,
    ...(values.target ? { target: values.target as Bun.Build.CompileTarget } : {}),
    autoloadDotenv: false,
    autoloadBunfig: false,
  },
  minify: { syntax: true, identifiers: true, whitespace: false },
  sourcemap: "linked",
  bytecode: true,
  format: "esm",
  target: "bun",
});

if (!result.success) {
  for (const log of result.logs) console.error(log);
  console.error("build failed");
  process.exit(1);
}
for (const log of result.logs) console.warn(log);

const size = statSync(outfile).size;
const ms = Math.round(performance.now() - started);
console.log(`built ${values.outfile} (${(size / 1024 / 1024).toFixed(1)} MiB) in ${ms} ms`);
