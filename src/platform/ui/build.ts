// Bundles the web UI (web/index.html and everything it imports) with Bun.build, in memory, and precompresses the
// output. Used by build.ts (the compiled binary embeds the result, see embedded.ts) and, from a checkout, by
// assets.ts at the first UI request or at `serve` start, so `bun run start` shows the UI with no separate step.
//
// Output: index.html at "/", everything else under /assets/ with a content hash in its name (immutable). React's
// production build is selected through the NODE_ENV define (without it the development build ships, +71 KiB gz).
// Lazy routes (the code editor) become separate chunks through `splitting`. The SHA-256 sources of index.html's inline
// scripts (the theme script) are computed here, at build time, for the Content-Security-Policy (ui/serve.ts).
import { resolve } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { inlineScriptHashes } from "../http/page-policy";

// The asynchronous forms compress on libuv's thread pool: a server building its UI at start keeps answering
// API requests meanwhile (the synchronous ones held the event loop for the whole ~1.7 MB).
const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

export interface BuiltUiFile {
  /** URL path: "/index.html" or "/assets/<name>-<hash>.<ext>". */
  path: string;
  type: string;
  raw: Uint8Array;
  gzip?: Uint8Array;
  br?: Uint8Array;
}

export interface BuiltUi {
  files: BuiltUiFile[];
  /** `'sha256-…'` sources of every inline <script> of index.html, for script-src. */
  scriptHashes: string[];
}

export interface UiBuildOptions {
  /** Brotli quality 0..11 (build.ts: 11; from a checkout a faster 5). */
  brotliQuality: number;
  /** gzip level 1..9. */
  gzipLevel: number;
}

export const WEB_ENTRY = resolve(import.meta.dir, "../../../web/index.html");

const COMPRESSIBLE = /^(text\/|application\/(javascript|json|xml)|image\/svg\+xml)/;

export async function buildUi(opts: UiBuildOptions): Promise<BuiltUi> {
  const result = await Bun.build({
    entrypoints: [WEB_ENTRY],
    target: "browser",
    minify: true,
    splitting: true,
    publicPath: "/",
    naming: { entry: "[name].[ext]", chunk: "assets/[name]-[hash].[ext]", asset: "assets/[name]-[hash].[ext]" },
    define: { "process.env.NODE_ENV": JSON.stringify("production") },
  });
  if (!result.success) throw new Error(`web UI build failed:\n${result.logs.map(String).join("\n")}`);
  const files = await Promise.all(
    result.outputs.map(async (out): Promise<BuiltUiFile> => {
      const raw = new Uint8Array(await out.arrayBuffer());
      // "./index.html", "./assets/<name>-<hash>.<ext>" → URL paths.
      const path = `/${out.path.replace(/^\.?\//, "")}`;
      const file: BuiltUiFile = { path, type: out.type, raw };
      if (COMPRESSIBLE.test(out.type) && raw.byteLength > 256) {
        const [gz, br] = await Promise.all([
          gzipAsync(raw, { level: opts.gzipLevel }),
          brotliAsync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: opts.brotliQuality, [constants.BROTLI_PARAM_SIZE_HINT]: raw.byteLength } }),
        ]);
        if (gz.byteLength < raw.byteLength) file.gzip = new Uint8Array(gz);
        if (br.byteLength < raw.byteLength) file.br = new Uint8Array(br);
      }
      return file;
    }),
  );
  const index = files.find((f) => f.path === "/index.html");
  if (!index) throw new Error("web UI build produced no index.html");
  return { files, scriptHashes: inlineScriptHashes(new TextDecoder().decode(index.raw)) };
}
