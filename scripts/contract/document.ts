// The OpenAPI document the app serves at /api-docs/openapi.json, built in-process on a throwaway data directory and
// asked through `app.handle` (no port, no network). The one builder of it: the contract scripts (lint.ts, client
// check) and `bun run gen:api` (scripts/gen-api-types.ts) all call openApiDocument.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, createServices } from "../../src/app";
import { loadConfig } from "../../src/config/load";
import { openRuntime } from "../../src/platform/boot";
import { createLogger } from "../../src/platform/log";

export async function openApiDocument(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(join(tmpdir(), "secbox-openapi-doc-"));
  try {
    const config = loadConfig({ env: { SECBOX_SERVER_DATA_DIR: dataDir }, file: "" });
    const rt = await openRuntime(config, { log: createLogger("error") });
    try {
      const services = createServices(rt);
      const res = await createApp(services).handle(new Request("http://localhost/api-docs/openapi.json"));
      if (res.status !== 200) throw new Error(`GET /api-docs/openapi.json answered ${res.status}`);
      const doc = (await res.json()) as Record<string, unknown>;
      await services.sandbox.close();
      return doc;
    } finally {
      rt.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
