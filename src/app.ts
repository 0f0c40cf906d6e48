// Builds the application: services from the runtime, then the Elysia app (platform plugins + every
// feature's routes), then the HTTP server.
import { Elysia } from "elysia";
import { authPlugin } from "./platform/auth/plugin";
import { docsPlugin } from "./platform/http/docs";
import { httpPlugin } from "./platform/http/plugin";
import type { Runtime } from "./platform/runtime";
import { ApiKeysService } from "./features/api-keys/service";
import { StatusService } from "./features/status/service";
import { statusRoutes } from "./features/status/routes";
import { UsersService } from "./features/users/service";

export function createServices(rt: Runtime) {
  const users = new UsersService(rt);
  const apiKeys = new ApiKeysService(rt, users);
  const status = new StatusService(rt);
  const auth = authPlugin({
    config: rt.config,
    clock: rt.clock,
    lookup: {
      byApiKeyHash: (h) => apiKeys.byApiKeyHash(h),
      bySessionHash: (h) => users.bySessionHash(h),
      byEmail: (e) => users.byEmail(e),
    },
  });
  return { rt, auth, users, apiKeys, status };
}

export type Services = ReturnType<typeof createServices>;

export function createApp(services: Services) {
  const { rt } = services;
  return new Elysia({ name: "secbox" })
    .use(httpPlugin({ maxBodyBytes: rt.config.server.max_body_bytes, maxImportBytes: rt.config.server.max_import_bytes }, rt.log))
    .use(docsPlugin())
    .use(statusRoutes(services));
}

export type App = ReturnType<typeof createApp>;

export interface RunningServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Listens without SO_REUSEPORT so a second server on a busy port fails instead of sharing it. */
export function listen(app: App, host: string, port: number): RunningServer {
  app.listen({ hostname: host, port, reusePort: false });
  const server = app.server!;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${server.port}`,
    port: server.port!,
    stop: async () => {
      await app.stop(true);
    },
  };
}
