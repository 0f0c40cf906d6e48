// API docs (supplement §1 "API docs"): the OpenAPI 3.1 document at /api-docs/openapi.json, built from the route
// table by http/openapi.ts, and a browsable Swagger UI at /api-docs. The Swagger UI script and stylesheet are
// embedded (in the compiled binary too) and served from /api-docs/assets/, so the page works with no network:
// nothing is loaded from a CDN. No auth. The page is never framed (`X-Frame-Options: DENY` and `frame-ancestors
// 'none'`: "Try it out" sends the visitor's session cookie) and its CSP lets only what Swagger UI needs run
// (supplement §28.1): scripts from `<origin>/api-docs/assets/` plus the page's own inline start script by its hash,
// styles from there plus inline ones (the dark-mode <style>, Swagger UI's style attributes), images from here or
// `data:`, fetches to this origin only.
import { SwaggerUIRender } from "@elysiajs/openapi/swagger";
import { Elysia } from "elysia";
// @ts-ignore: a file import (path to the embedded asset), not a JavaScript module
import swaggerBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
// @ts-ignore: a file import (path to the embedded asset)
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { VERSION } from "../runtime";
import { buildOpenApi, type RouteLike } from "./openapi";
import { inlineScriptHashes, pageContentSecurityPolicy, pathSource } from "./page-policy";

export const DOCS_PATH = "/api-docs";
export const SPEC_PATH = "/api-docs/openapi.json";
export const ASSETS_PATH = "/api-docs/assets";
/** The interface's version (interface.md "Versioning"), independent of the server's release version. */
export const API_VERSION = "1.0.0-beta.2";

/** Served assets: URL path → embedded file and content type. */
export const DOCS_ASSETS: Record<string, { file: string; type: string }> = {
  [`${ASSETS_PATH}/swagger-ui-bundle.js`]: { file: swaggerBundle as string, type: "text/javascript; charset=utf-8" },
  [`${ASSETS_PATH}/swagger-ui.css`]: { file: swaggerCss as string, type: "text/css; charset=utf-8" },
};

/** The tags of interface.md's table (one per resource group), plus `auth` for the browser auth endpoints (§3.3). */
export const API_TAGS: { name: string; description: string }[] = [
  {
    name: "webhooks",
    description: "Responders: programmable HTTP endpoints that return a static or script-built response and can capture incoming requests",
  },
  { name: "certificates", description: "Certificate templates (generate self-signed certificates), private keys, fetching a remote TLS chain" },
  { name: "web_scraping", description: "Scheduled trackers of web pages and of HTTP API endpoints, with revision history and change notification" },
  { name: "web_security", description: "Content security policies that can be built and serialized to a header string" },
  { name: "api_keys", description: "API keys for programmatic access" },
  { name: "tags", description: "Coloured tags for organizing resources" },
  { name: "secrets", description: "Encrypted secrets usable from scripts" },
  { name: "scripts", description: "Reusable scripts for responders and trackers" },
  { name: "settings", description: "User preferences and the notification email destination" },
  { name: "user-data", description: "Export and import of user data" },
  { name: "notifications", description: "Public unsubscribe endpoints (RFC 8058)" },
  { name: "users", description: "Operator-only user administration, plus the current-user lookup" },
  { name: "scheduler", description: "Cron schedule parsing" },
  { name: "search", description: "Search across the user's resources" },
  { name: "messages", description: "Contact message by email" },
  { name: "status", description: "Server status" },
  { name: "auth", description: "Browser sign-up, sign-in, sign-out, password change and recovery" },
];

const DESCRIPTION =
  `Secbox ${VERSION}: self-hosted security toolbox. JSON API under /api. Every error is \`{message, code}\` ` +
  "(the `Error` schema): `message` is for people, `code` is a stable token to switch on; each operation lists its codes per status.";

export interface DocsOptions {
  /** `server.public_url`: the document's server. */
  publicUrl: string;
  /** The session cookie's effective name (platform/auth/cookies.ts sessionCookieName). */
  sessionCookie: string;
}

/** The docs page's CSP (`assets`: the source for `<origin>/api-docs/assets/`; `scriptHashes`: its start script). */
export function docsContentSecurityPolicy(assets: string, scriptHashes: readonly string[]): string {
  return pageContentSecurityPolicy({ defaultSrc: "'none'", assets, scriptHashes });
}

/** The document for an app's routes (also used by scripts and tests that have no server). */
export function apiDocument(routes: readonly RouteLike[], opts: DocsOptions) {
  return buildOpenApi(routes, { ...opts, title: "Secbox API", version: API_VERSION, description: DESCRIPTION, tags: API_TAGS });
}

export function docsPlugin(opts: DocsOptions) {
  const page = SwaggerUIRender(
    { title: "Secbox API", description: "Secbox API documentation" } as any,
    {
      // Local copies instead of unpkg.com; absolute spec URL so /api-docs/ (trailing slash) works too.
      cdn: `${ASSETS_PATH}/swagger-ui-bundle.js`,
      theme: `${ASSETS_PATH}/swagger-ui.css`,
      url: SPEC_PATH,
      // Swagger UI would otherwise ask validator.swagger.io to validate the document.
      validatorUrl: null,
    } as any,
  );
  const pageHashes = inlineScriptHashes(page);
  const pageHeaders = (request: Request) => ({
    "content-type": "text/html; charset=utf-8",
    "content-security-policy": docsContentSecurityPolicy(pathSource(request, opts.publicUrl, `${ASSETS_PATH}/`), pageHashes),
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
  });
  const plugin = new Elysia({ name: "platform/docs" });
  // Built on the first request, once every route is registered; the route table does not change afterwards.
  let spec: string | undefined;
  plugin
    .get(DOCS_PATH, ({ request }) => new Response(page, { headers: pageHeaders(request) }), { detail: { hide: true } })
    .get(
      SPEC_PATH,
      () => {
        spec ??= JSON.stringify(apiDocument((plugin as any).getGlobalRoutes() as RouteLike[], opts));
        return new Response(spec, { headers: { "content-type": "application/json; charset=utf-8" } });
      },
      { detail: { hide: true } },
    );
  for (const [path, { file, type }] of Object.entries(DOCS_ASSETS)) {
    plugin.get(path, () => new Response(Bun.file(file), { headers: { "content-type": type, "cache-control": "public, max-age=86400" } }), {
      detail: { hide: true },
    });
  }
  return plugin;
}
