// API docs (supplement §1 "API docs"): the OpenAPI 3.1 document at /api-docs/openapi.json and a browsable
// Swagger UI at /api-docs. The Swagger UI script and stylesheet are embedded (in the compiled binary too) and
// served from /api-docs/assets/, so the page works with no network: nothing is loaded from a CDN. No auth.
import { openapi, toOpenAPISchema } from "@elysiajs/openapi";
import { Elysia } from "elysia";
// @ts-ignore: a file import (path to the embedded asset), not a JavaScript module
import swaggerBundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
// @ts-ignore: a file import (path to the embedded asset)
import swaggerCss from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { VERSION } from "../runtime";
import { requestPath } from "./body";

export const DOCS_PATH = "/api-docs";
export const SPEC_PATH = "/api-docs/openapi.json";
export const ASSETS_PATH = "/api-docs/assets";
/** The interface's version (interface.md "Versioning"), independent of the server's release version. */
export const API_VERSION = "1.0.0-beta.2";
export const OPENAPI_VERSION = "3.1.2";

/** Served assets: URL path → embedded file and content type. */
export const DOCS_ASSETS: Record<string, { file: string; type: string }> = {
  [`${ASSETS_PATH}/swagger-ui-bundle.js`]: { file: swaggerBundle as string, type: "text/javascript; charset=utf-8" },
  [`${ASSETS_PATH}/swagger-ui.css`]: { file: swaggerCss as string, type: "text/css; charset=utf-8" },
};

/** The tags of interface.md's table (one per resource group), plus `auth` for the browser auth endpoints (§3.3). */
export const API_TAGS: { name: string; description: string }[] = [
  { name: "webhooks", description: "Responders: programmable HTTP endpoints that return a static or script-built response and can capture incoming requests" },
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

const EXCLUDED = [DOCS_PATH, SPEC_PATH, ...Object.keys(DOCS_ASSETS)];

/**
 * The platform's global parse hook (raw body capture, platform/http/plugin.ts) hides the body's media type from
 * the generator, which then emits `requestBody.content: {}`. Request bodies are JSON (supplement §1), so the
 * generator is run once more over a view of the routes without parse hooks and the JSON bodies copied over.
 */
function fillJsonBodies(doc: any, routesOf: () => any[], definitionsOf: () => any) {
  const paths = doc?.paths;
  if (!paths || typeof paths !== "object") return;
  let fixed: any;
  for (const [path, ops] of Object.entries<any>(paths)) {
    for (const [method, op] of Object.entries<any>(ops ?? {})) {
      const content = op?.requestBody?.content;
      if (!content || Object.keys(content).length > 0) continue;
      fixed ??= toOpenAPISchema(
        {
          getGlobalRoutes: () => routesOf().map((r) => ({ ...r, hooks: { ...r.hooks, parse: undefined } })),
          getGlobalDefinitions: definitionsOf,
        } as any,
        { paths: EXCLUDED },
        undefined,
        undefined,
        OPENAPI_VERSION,
      ).paths;
      const json = fixed?.[path]?.[method]?.requestBody?.content?.["application/json"];
      if (json) op.requestBody = { ...op.requestBody, content: { "application/json": json } };
    }
  }
}

export function docsPlugin(opts: { sessionCookie?: string } = {}) {
  const assets = new Elysia({ name: "platform/docs-assets" });
  for (const [path, { file, type }] of Object.entries(DOCS_ASSETS)) {
    assets.get(path, () => new Response(Bun.file(file), { headers: { "content-type": type, "cache-control": "public, max-age=86400" } }), {
      detail: { hide: true },
    });
  }
  const docs = new Elysia({ name: "platform/docs" });
  return docs
    .onAfterHandle(({ request, response }) => {
      if (requestPath(request) === SPEC_PATH)
        fillJsonBodies(response, () => (docs as any).getGlobalRoutes() as any[], () => (docs as any).getGlobalDefinitions?.().type);
    })
    .use(assets)
    .use(
      openapi({
        path: DOCS_PATH,
        specPath: SPEC_PATH,
        openapiVersion: OPENAPI_VERSION,
        provider: "swagger-ui",
        swagger: {
          // Local copies instead of unpkg.com; absolute spec URL so /api-docs/ (trailing slash) works too.
          cdn: `${ASSETS_PATH}/swagger-ui-bundle.js`,
          theme: `${ASSETS_PATH}/swagger-ui.css`,
          url: SPEC_PATH,
          // Swagger UI would otherwise ask validator.swagger.io to validate the document.
          validatorUrl: null,
        } as any,
        exclude: { paths: EXCLUDED },
        documentation: {
          info: {
            title: "Secbox API",
            version: API_VERSION,
            description: `Secbox ${VERSION}: self-hosted security toolbox. JSON API under /api; errors are {message, code}.`,
          },
          tags: API_TAGS,
          components: {
            securitySchemes: {
              apiKey: { type: "http", scheme: "bearer", description: "API key `sbx_ak_…` or a service-account JWT" },
              session: { type: "apiKey", in: "cookie", name: opts.sessionCookie ?? "secbox_session", description: "Browser session" },
            },
          },
          // Credentials are optional at the document level ({}); each route enforces its own level.
          security: [{ apiKey: [] }, { session: [] }, {}],
        },
      }),
    );
}
