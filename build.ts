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
// - the web UI: web/ is bundled first (src/platform/ui/build.ts: minified, code-split, hashed names, production
//   React), each file precompressed with gzip -9 and brotli 11 into dist/ui/, and src/platform/ui/embedded.ts is
//   replaced while compiling by a manifest with one `with { type: "file" }` import per file, so the binary serves
//   the UI from inside itself and builds or reads nothing at run time.
// The binary does not read .env or bunfig.toml from the directory it is started in: its configuration is only
// the TOML file, SECBOX_* variables and flags (supplement §23).
//
// Options: --outfile PATH (default dist/secbox), --target bun-linux-x64|bun-linux-x64-baseline|bun-linux-arm64|...
import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { buildUi } from "./src/platform/ui/build";
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

// ---- the web UI -------------------------------------------------------------------------------------------------
const uiDir = resolve(root, "dist/ui");
rmSync(uiDir, { recursive: true, force: true });
const { files: uiFiles, scriptHashes } = await buildUi({ brotliQuality: 11, gzipLevel: 9 });
const imports: string[] = [];
const entries: string[] = [];
uiFiles.forEach((f, i) => {
  const base = join(uiDir, f.path);
  mkdirSync(dirname(base), { recursive: true });
  writeFileSync(base, f.raw);
  imports.push(`import f${i} from ${JSON.stringify(base)} with { type: "file" };`);
  const parts = [`path: ${JSON.stringify(f.path)}`, `type: ${JSON.stringify(f.type)}`, `raw: f${i}`];
  for (const enc of ["gzip", "br"] as const) {
    const bytes = f[enc];
    if (!bytes) continue;
    writeFileSync(`${base}.${enc === "gzip" ? "gz" : "br"}`, bytes);
    imports.push(`import f${i}${enc} from ${JSON.stringify(`${base}.${enc === "gzip" ? "gz" : "br"}`)} with { type: "file" };`);
    parts.push(`${enc}: f${i}${enc}`);
  }
  entries.push(`  { ${parts.join(", ")} },`);
});
const manifest =
  `${imports.join("\n")}\nexport const EMBEDDED_UI = [\n${entries.join("\n")}\n];\n` +
  `export const EMBEDDED_UI_SCRIPT_HASHES = ${JSON.stringify(scriptHashes)};\n`;
const embeddedModule = resolve(root, "src/platform/ui/embedded.ts");
// The first load is what index.html names (its entry script and stylesheet); lazy chunks of a source file called
// index.tsx are also named index-<hash>.js, so the name alone does not tell.
const indexHtml = new TextDecoder().decode(uiFiles.find((f) => f.path === "/index.html")!.raw);
const named = new Set([...indexHtml.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]));
const firstLoad = uiFiles.filter((f) => f.path === "/index.html" || named.has(f.path));
const kib = (n: number) => (n / 1024).toFixed(1);
console.log(
  `web UI: ${uiFiles.length} files; first load (HTML + entry JS + CSS) ${kib(firstLoad.reduce((n, f) => n + (f.gzip ?? f.raw).byteLength, 0))} KiB gzip, ` +
    `${kib(firstLoad.reduce((n, f) => n + (f.br ?? f.raw).byteLength, 0))} KiB brotli`,
);

const result = await Bun.build({
  // The sandbox worker and the work pool's worker are separate entrypoints: Bun embeds them and the pools find them at
  // /$bunfs/root/sandbox/worker.js and /$bunfs/root/work-tasks.js.
  entrypoints: [resolve(root, "src/main.ts"), resolve(root, "src/sandbox/worker.ts"), resolve(root, "src/work-tasks.ts")],
  compile: {
    outfile,
    ...(values.target ? { target: values.target as Bun.Build.CompileTarget } : {}),
    autoloadDotenv: false,
    autoloadBunfig: false,
  },
  minify: { syntax: true, identifiers: true, whitespace: false },
  sourcemap: "linked",
  bytecode: true,
  // The work pool's entry imports the services (src/work-tasks.ts): shared chunks keep them in the binary once
  // (without: +15 MiB).
  splitting: true,
  format: "esm",
  target: "bun",
  plugins: [
    {
      name: "embed-web-ui",
      setup(build) {
        build.onLoad({ filter: /[\\/]src[\\/]platform[\\/]ui[\\/]embedded\.ts$/ }, (args) => {
          if (resolve(args.path) !== embeddedModule) return undefined;
          return { contents: manifest, loader: "ts" };
        });
      },
    },
  ],
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
