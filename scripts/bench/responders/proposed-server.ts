#!/usr/bin/env bun
// Bench-only launcher of Secbox with the wiring proposed for app.ts's listen() (issue 5 report), to measure it
// next to the shipped `secbox serve`: responder hits bypass Elysia — Bun.serve's fetch calls
// RespondersService.dispatch first and hands only API requests to the Elysia app. Everything else (services,
// sandbox pool, background work) is exactly what app.ts builds.
//   bun scripts/bench/responders/proposed-server.ts <port> <data-dir>
// Configuration comes from SECBOX_* variables as for `secbox serve`.
import { createApp, createServices, startBackground, stopBackground } from "../../../src/app";
import { loadConfig } from "../../../src/config/load";
import { openRuntime } from "../../../src/platform/boot";

const [port, dataDir] = [Number(Bun.argv[2]), Bun.argv[3]!];
const config = loadConfig({ env: { ...(process.env as Record<string, string>), SECBOX_SERVER_DATA_DIR: dataDir, SECBOX_SERVER_PORT: String(port) }, file: "" });
const rt = await openRuntime(config);
const services = createServices(rt);
const app = createApp(services);
const server = Bun.serve({
  hostname: "127.0.0.1",
  port,
  reusePort: false,
  fetch: (request, srv) => services.responders.dispatch(request, srv) ?? app.fetch(request),
});
// Elysia's context `server` (requestIP for sign-in throttling) reads app.server.
(app as unknown as { server: unknown }).server = server;
await startBackground(services);
console.log(`ready ${server.port}`);
process.once("SIGTERM", async () => {
  server.stop(true);
  await stopBackground(services);
  rt.close();
  process.exit(0);
});
