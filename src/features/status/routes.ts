// GET /api/status (public) and POST /api/status (operator).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { StatusService } from "./service";

const StatusSchema = t.Object({
  version: t.String(),
  level: t.Union([t.Literal("available"), t.Literal("unavailable")]),
  db: t.Object({ operational: t.Boolean() }),
  features: t.Object({ mail: t.Boolean(), chromium: t.Boolean(), dsa: t.Boolean(), signup: t.Boolean() }),
});

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface StatusRoutesDeps {
  auth: AuthPlugin;
  status: StatusService;
}

export const statusRoutes = ({ auth, status }: StatusRoutesDeps) =>
  new Elysia({ name: "feature/status" })
    .use(auth)
    .get("/api/status", () => status.get(), {
      auth: "public",
      response: StatusSchema,
      detail: { tags: ["status"], summary: "Server status (no authentication)" },
    })
    .post(
      "/api/status",
      async ({ body, set }) => {
        await status.setLevel(body.level);
        set.status = 204;
      },
      {
        auth: "operator",
        body: t.Object({ level: t.Union([t.Literal("available"), t.Literal("unavailable")]) }),
        detail: { tags: ["status"], summary: "Set the server status level (operator)" },
      },
    );
