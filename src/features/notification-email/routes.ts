// /api/user/notification_email* (user) and /api/notifications/unsubscribe (public, RFC 8058).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { NotificationEmailService } from "./service";
import { invalid } from "../../platform/http/errors";
import { UNSUBSCRIBE_PAGE, UNSUBSCRIBE_PAGE_CSP } from "./unsubscribe-page";

const Destination = t.Object({
  id: t.String({ format: "uuid" }),
  kind: t.Literal("email"),
  address: t.String(),
  status: t.Union([t.Literal("pending"), t.Literal("verified")]),
  verificationSentAt: t.Optional(t.Integer()),
  verificationExpiresAt: t.Optional(t.Integer()),
  verifiedAt: t.Optional(t.Integer()),
  createdAt: t.Integer(),
  updatedAt: t.Integer(),
});

const settingsDoc = (summary: string) => ({ tags: ["settings"], summary });

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface NotificationEmailRoutesDeps {
  auth: AuthPlugin;
  notificationEmail: NotificationEmailService;
}

export const notificationEmailRoutes = ({ auth, notificationEmail }: NotificationEmailRoutesDeps) =>
  new Elysia({ name: "feature/notification-email" })
    .use(auth)
    .get(
      "/api/user/notification_email",
      async ({ user }) => {
        // A JSON `null` body (Elysia would send an empty body for a null return value).
        const dest = await notificationEmail.get(user.id);
        return new Response(JSON.stringify(dest), { headers: { "content-type": "application/json; charset=utf-8" } });
      },
      {
        auth: "user",
        detail: settingsDoc("The notification email destination (UserNotificationDestination), or null"),
      },
    )
    .put("/api/user/notification_email", ({ user, body }) => notificationEmail.set(user.id, body.email), {
      auth: "user",
      body: t.Object({ email: t.String() }),
      response: Destination,
      detail: settingsDoc("Set the notification email; a 6-digit code is emailed to it"),
    })
    .delete(
      "/api/user/notification_email",
      async ({ user, set }) => {
        await notificationEmail.remove(user.id);
        set.status = 204;
      },
      { auth: "user", detail: settingsDoc("Remove the notification email; notifications go to the login email") },
    )
    .post(
      "/api/user/notification_email/_resend",
      async ({ user, set }) => {
        await notificationEmail.resend(user.id);
        set.status = 204;
      },
      { auth: "user", detail: settingsDoc("Send a new verification code") },
    )
    .post("/api/user/notification_email/_verify", ({ user, body }) => notificationEmail.verify(user.id, body.code), {
      auth: "user",
      body: t.Object({ code: t.String() }),
      response: Destination,
      detail: settingsDoc("Verify the notification email with the 6-digit code"),
    })
    .get(
      "/api/notifications/unsubscribe",
      async ({ query, set }) => {
        if (typeof query.token !== "string" || query.token === "") throw invalid("token: is required");
        await notificationEmail.unsubscribe(query.token);
        set.headers["content-type"] = "text/html; charset=utf-8";
        set.headers["content-security-policy"] = UNSUBSCRIBE_PAGE_CSP;
        set.headers["cache-control"] = "no-store";
        set.headers["referrer-policy"] = "no-referrer";
        return UNSUBSCRIBE_PAGE;
      },
      {
        auth: "public",
        query: t.Object({ token: t.Optional(t.String()) }),
        detail: { tags: ["notifications"], summary: "Unsubscribe confirmation page (for mail clients following List-Unsubscribe)" },
      },
    )
    .post(
      "/api/notifications/unsubscribe",
      async ({ query, body, set }) => {
        const token = body.token ?? query.token;
        if (typeof token !== "string" || token === "") throw invalid("token: is required");
        await notificationEmail.unsubscribe(token);
        set.status = 204;
      },
      {
        auth: { level: "public", acceptForm: true },
        query: t.Object({ token: t.Optional(t.String()) }),
        body: t.Object({ token: t.Optional(t.String()) }),
        detail: { tags: ["notifications"], summary: "RFC 8058 one-click unsubscribe; 204 for any token" },
      },
    );
