// OpenAPI 3.1 document at /api-docs/openapi.json and a browsable UI at /api-docs that works offline.
import { openapi } from "@elysiajs/openapi";
import { VERSION } from "../runtime";

export const API_TAGS = [
  "webhooks", "certificates", "web_scraping", "web_security", "api_keys", "tags", "secrets", "scripts", "settings",
  "user-data", "notifications", "users", "scheduler", "search", "messages", "status", "auth",
];

export function docsPlugin() {
  return openapi({
    path: "/api-docs",
    specPath: "/api-docs/openapi.json",
    documentation: {
      info: { title: "Secbox API", version: "1.0.0-beta.2", description: `Secbox ${VERSION}: self-hosted security toolbox.` },
      tags: API_TAGS.map((name) => ({ name })),
    },
  });
}
