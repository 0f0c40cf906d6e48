// GET /api/status (public) and POST /api/status (operator) (supplement §21).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { Named, op, StringEnum, T } from "../../platform/http/contract";
import type { StatusService } from "./service";

const Level = StringEnum(["available", "unavailable"], { description: "informational: the UI shows a banner; the API behaves the same" });

export const Status = Named(
  "Status",
  T.Object({
    version: T.String({ description: "the server build version" }),
    level: Level,
    db: T.Object({ operational: T.Boolean() }),
    features: T.Object(
      {
        mail: T.Boolean({ description: "SMTP configured" }),
        chromium: T.Boolean({ description: "the Chromium executable was found" }),
        dsa: T.Boolean({ description: "an openssl program for DSA" }),
        signup: T.Boolean({ description: "public sign-up is open (security.signup)" }),
        interactions: T.Object(
          {
            dns: T.Boolean({ description: "a DNS listener is configured" }),
            smtp: T.Boolean({ description: "an SMTP capture listener is configured" }),
            http: T.Boolean({ description: "HTTP capture of <labels>.<handle> hosts is on" }),
          },
          { description: "out-of-band interaction listeners (supplement §24; none exist in this build yet, so all false)" },
        ),
      },
      { description: "optional parts this server can use" },
    ),
  }),
);
export const SetStatusAPIParams = Named("SetStatusAPIParams", T.Object({ level: Level }));

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
        // Validated by Elysia: an unknown level is a 400 (the http plugin's error mapper).
        body: t.Object({ level: t.Union([t.Literal("available"), t.Literal("unavailable")]) }),
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
