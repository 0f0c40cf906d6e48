// The UI's files as the server holds them: from the binary (embedded.ts) or, from a checkout, built in memory once
// per process (build.ts) on first use. `serve` starts that build when it starts listening (warmUi) so the first
// page load does not wait for it; API-only processes (the test suite, CLI commands) never build anything.
import { EMBEDDED_UI, EMBEDDED_UI_SCRIPT_HASHES, type EmbeddedUiFile } from "./embedded";
import type { BuiltUi } from "./build";

export interface UiFile {
  path: string;
  type: string;
  raw: Blob;
  gzip?: Blob;
  br?: Blob;
  /** Strong ETag (content hash), used for index.html revalidation. */
  etag: string;
}

export interface UiAssets {
  /** The HTML shell answered for "/" and every client-side route. */
  index: UiFile;
  /** `'sha256-…'` sources of index.html's inline scripts, computed when the UI was built (its CSP allows them). */
  scriptHashes: string[];
  /** By URL path ("/assets/…"). */
  files: Map<string, UiFile>;
  source: "embedded" | "built";
}

const etagOf = (bytes: Uint8Array) => `"${new Bun.CryptoHasher("sha256").update(bytes).digest("base64url").slice(0, 22)}"`;

async function fromEmbedded(list: EmbeddedUiFile[], scriptHashes: string[]): Promise<UiAssets> {
  const files = new Map<string, UiFile>();
  for (const f of list) {
    const raw = Bun.file(f.raw);
    let etag = "";
    // Only index.html is read here (its ETag); the others are streamed from the binary.
    if (f.path === "/index.html") etag = etagOf(await raw.bytes());
    files.set(f.path, { path: f.path, type: f.type, raw, gzip: f.gzip ? Bun.file(f.gzip) : undefined, br: f.br ? Bun.file(f.br) : undefined, etag });
  }
  return assemble(files, scriptHashes, "embedded");
}

function fromBuild(built: BuiltUi): UiAssets {
  const files = new Map<string, UiFile>();
  for (const f of built.files) {
    const blob = (b: Uint8Array | undefined) => (b ? new Blob([b as Uint8Array<ArrayBuffer>], { type: f.type }) : undefined);
    files.set(f.path, { path: f.path, type: f.type, raw: blob(f.raw)!, gzip: blob(f.gzip), br: blob(f.br), etag: etagOf(f.raw) });
  }
  return assemble(files, built.scriptHashes, "built");
}

function assemble(files: Map<string, UiFile>, scriptHashes: string[], source: UiAssets["source"]): UiAssets {
  const index = files.get("/index.html");
  if (!index) throw new Error("web UI has no index.html");
  files.delete("/index.html");
  return { index, scriptHashes, files, source };
}

let loading: Promise<UiAssets> | undefined;

/** The UI's files, loaded (or built) once per process. A failed build is retried at the next call. */
export function uiAssets(): Promise<UiAssets> {
  loading ??= (async () => {
    if (EMBEDDED_UI) return fromEmbedded(EMBEDDED_UI, EMBEDDED_UI_SCRIPT_HASHES);
    const { buildUi } = await import("./build");
    return fromBuild(await buildUi({ brotliQuality: 5, gzipLevel: 6 }));
  })();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}
