// Serves the web UI next to the API (supplement §1: everything under /api and /api-docs stays the API's):
// - GET/HEAD of "/" and of every other path that is not /api…, /api-docs… or /assets/… answers index.html, so
//   client-side routes are deep-linkable and reload-safe; `Cache-Control: no-cache` plus an ETag (304 on match).
// - /assets/<name>-<hash>.<ext>: `immutable`, brotli or gzip per Accept-Encoding (precompressed), 404 when
//   unknown. A root path with a file extension (/robots.txt, /x.php) is a 404 too, not the HTML shell;
//   /favicon.ico answers the favicon.
// - Our own pages are hardened: a strict Content-Security-Policy (supplement §28.1: scripts only from
//   `<origin>/assets/`, built from the request's own origin, plus the inline theme script by its hash computed at
//   build time; not `'self'`, which would also run a path-form responder's /api/webhooks/<handle>/x.js; no
//   plugins, no <base>, no framing, forms and fetches to our origin only), nosniff, no Referer (the recovery page
//   carries a token in its URL), DENY framing, same-origin opener and resources. Styles come from
//   `<origin>/assets/` plus `'unsafe-inline'`: Mantine sets CSS variables through style attributes and <style> tags.
// Other methods on UI paths fall through to the API's JSON 404. Responder hosts never reach this (app.ts
// dispatches them before Elysia).
import { Elysia } from "elysia";
import { requestPath } from "../http/body";
import { pageContentSecurityPolicy, pathSource } from "../http/page-policy";
import { errorResponse } from "../http/plugin";
import type { Logger } from "../log";
import { uiAssets, type UiAssets, type UiFile } from "./assets";

export const isApiPath = (path: string) => path === "/api" || path.startsWith("/api/") || path === "/api-docs" || path.startsWith("/api-docs/");

/** The UI's CSP (`assets`: the source for `<origin>/assets/`; `scriptHashes`: the inline scripts index.html needs). */
export function uiContentSecurityPolicy(assets: string, scriptHashes: readonly string[]): string {
  return pageContentSecurityPolicy({ defaultSrc: "'self'", assets, scriptHashes, fontSrc: "'self'" });
}

const COMMON_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cross-origin-resource-policy": "same-origin",
};

const PAGE_HEADERS = {
  ...COMMON_HEADERS,
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
  "permissions-policy": "camera=(), microphone=(), geolocation=(), payment=(), usb=()",
};

/** Whether Accept-Encoding accepts `coding` (present and not `;q=0`). */
function accepts(header: string, coding: string): boolean {
  for (const part of header.toLowerCase().split(",")) {
    const [name, ...params] = part.trim().split(";");
    if (name?.trim() !== coding) continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

function fileResponse(request: Request, file: UiFile, headers: Record<string, string>): Response {
  const ae = request.headers.get("accept-encoding") ?? "";
  let body = file.raw;
  const h: Record<string, string> = { ...headers, "content-type": file.type, vary: "Accept-Encoding" };
  if (file.br && accepts(ae, "br")) {
    body = file.br;
    h["content-encoding"] = "br";
  } else if (file.gzip && accepts(ae, "gzip")) {
    body = file.gzip;
    h["content-encoding"] = "gzip";
  }
  if (file.etag) h.etag = file.etag;
  return new Response(request.method === "HEAD" ? null : body, { status: 200, headers: h });
}

function indexResponse(request: Request, assets: UiAssets, csp: string): Response {
  const headers = { ...PAGE_HEADERS, "content-security-policy": csp, "cache-control": "no-cache" };
  const inm = request.headers.get("if-none-match");
  if (inm !== null && inm.split(",").some((t) => t.trim() === assets.index.etag))
    return new Response(null, { status: 304, headers: { ...headers, etag: assets.index.etag } });
  return fileResponse(request, assets.index, headers);
}

const FAVICON = /^\/assets\/favicon-[^/]+\.svg$/;

export async function handleUi(request: Request, log: Logger, publicUrl: string): Promise<Response> {
  let assets: UiAssets;
  try {
    assets = await uiAssets();
  } catch (err) {
    log.error("web UI unavailable", { error: String((err as Error)?.message ?? err) });
    return errorResponse(503, "INTERNAL", "The web UI could not be built; the API at /api still works (see the server log)");
  }
  const path = requestPath(request);
  if (path.startsWith("/assets/")) {
    const file = assets.files.get(path);
    if (!file) return errorResponse(404, "NOT_FOUND", "Not found", COMMON_HEADERS);
    return fileResponse(request, file, { ...COMMON_HEADERS, "cache-control": "public, max-age=31536000, immutable" });
  }
  if (path === "/favicon.ico") {
    const icon = [...assets.files.values()].find((f) => FAVICON.test(f.path));
    if (icon) return fileResponse(request, icon, { ...COMMON_HEADERS, "cache-control": "public, max-age=86400" });
  }
  // A path whose last segment has an extension names a file, not a page: 404 instead of the HTML shell.
  if (path !== "/index.html" && /\.[A-Za-z0-9]+$/.test(path.slice(path.lastIndexOf("/") + 1)))
    return errorResponse(404, "NOT_FOUND", "Not found", COMMON_HEADERS);
  return indexResponse(request, assets, uiContentSecurityPolicy(pathSource(request, publicUrl, "/assets/"), assets.scriptHashes));
}

/**
 * Starts loading (from a checkout: building) the UI in the background; `serve` calls it after it listens. The
 * build waits `delayMs` so the API's first answers do not share the CPU with it (a UI request before then starts
 * it at once); the binary's embedded UI only reads index.html.
 */
export function warmUi(log: Logger, delayMs = 250): void {
  const timer = setTimeout(() => {
    const started = performance.now();
    uiAssets().then(
      (a) => log.info(`web UI ready (${a.source}, ${a.files.size + 1} files) in ${Math.round(performance.now() - started)} ms`),
      (err) => log.error("web UI build failed; the API still works", { error: String((err as Error)?.message ?? err) }),
    );
  }, delayMs);
  timer.unref?.();
}

/** Answers UI paths before Elysia routes the request (GET and HEAD only; everything else stays the API's). */
export function uiPlugin(log: Logger, publicUrl: string) {
  return new Elysia({ name: "platform/ui" }).onRequest(({ request }) => {
    if (request.method !== "GET" && request.method !== "HEAD") return;
    if (isApiPath(requestPath(request))) return;
    return handleUi(request, log, publicUrl);
  });
}
