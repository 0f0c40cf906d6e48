// The web UI embedded in the compiled binary. In a checkout this is `null` and assets.ts builds the UI in memory;
// build.ts replaces this module's source while compiling (a Bun.build onLoad plugin) with one generated from the
// UI build: one `import … with { type: "file" }` per file and per precompressed sibling, so the files live inside
// the executable and nothing is built, read from disk or fetched at run time. The hashes of index.html's inline
// scripts, computed by the build, come along (EMBEDDED_UI_SCRIPT_HASHES).
export interface EmbeddedUiFile {
  /** URL path, "/index.html" or "/assets/…". */
  path: string;
  type: string;
  /** Paths of the embedded files (/$bunfs/…): the file and its optional gzip and brotli versions. */
  raw: string;
  gzip?: string;
  br?: string;
}

export const EMBEDDED_UI: EmbeddedUiFile[] | null = null;

/** `'sha256-…'` sources of index.html's inline scripts (ui/build.ts inlineScriptHashes, at build time). */
export const EMBEDDED_UI_SCRIPT_HASHES: string[] = [];
