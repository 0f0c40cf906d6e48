// GET /api/status (public) and POST /api/status (operator) (supplement §21), with the schemas of contract.ts. The
// body is looseBody: the service checks the level.
import { Elysia } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { looseBody, op } from "../../platform/http/contract";
import { SetStatusAPIParams, Status } from "./contract";
import type { StatusService } from "./service";

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
      detail: op({ tags: ["status"], summary: "Server status (no authentication)", responses: { 200: Status } }),
    })
    .post(
      "/api/status",
      async ({ body, set }) => {
        await status.setLevel(body.level);
        set.status = 204;
      },
      {
        auth: "operator",
        body: looseBody(SetStatusAPIParams),
        detail: op({
          tags: ["status"],
          summary: "Set the server status level (operator)",
          body: SetStatusAPIParams,
          responses: { 204: null },
          errors: { 500: ["INTERNAL"] },
          example: { level: "available" },
        }),
      },
    );
