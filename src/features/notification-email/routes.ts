// /api/user/notification_email* (user) and /api/notifications/unsubscribe (public, RFC 8058), with the schemas of
// contract.ts. Bodies are looseBody: the service checks them with the spec's messages.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { NotificationEmailService } from "./service";
import { looseBody, media, Nullable, op, T } from "../../platform/http/contract";
import {
  NotificationEmailSetParams,
  NotificationEmailVerifyParams,
  NotificationsUnsubscribeParams,
  TokenQuery,
  UserNotificationDestination,
} from "./contract";
import { UNSUBSCRIBE_PAGE, UNSUBSCRIBE_PAGE_CSP } from "./unsubscribe-page";

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
        detail: op({
          tags: ["settings"],
          summary: "The notification email destination, or null when none is configured",
          responses: { 200: Nullable(UserNotificationDestination) },
        }),
      },
    )
    .put("/api/user/notification_email", ({ user, body }) => notificationEmail.set(user.id, body.email), {
      auth: "user",
      body: looseBody(NotificationEmailSetParams),
      detail: op({
        tags: ["settings"],
        summary: "Set the notification email; a 6-digit code is emailed to it",
        body: NotificationEmailSetParams,
        responses: { 200: UserNotificationDestination },
        errors: { 400: ["COOLDOWN"] },
        example: { email: "alerts@example.com" },
      }),
    })
    .delete(
      "/api/user/notification_email",
      async ({ user, set }) => {
        await notificationEmail.remove(user.id);
        set.status = 204;
      },
      {
        auth: "user",
        detail: op({
          tags: ["settings"],
          summary: "Remove the notification email; notifications go to the login email (204 also when none)",
          responses: { 204: null },
        }),
      },
    )
    .post(
      "/api/user/notification_email/_resend",
      async ({ user, set }) => {
        await notificationEmail.resend(user.id);
        set.status = 204;
      },
      {
        auth: "user",
        detail: op({
          tags: ["settings"],
          summary: "Send a new verification code (the old one stops working)",
          responses: { 204: null },
          errors: { 400: ["VERIFICATION_FAILED", "COOLDOWN"], 404: ["NOT_FOUND"] },
        }),
      },
    )
    .post("/api/user/notification_email/_verify", ({ user, body }) => notificationEmail.verify(user.id, body.code), {
      auth: "user",
      body: looseBody(NotificationEmailVerifyParams),
      detail: op({
        tags: ["settings"],
        summary: "Verify the notification email with the 6-digit code",
        body: NotificationEmailVerifyParams,
        responses: { 200: UserNotificationDestination },
        errors: { 400: ["VERIFICATION_FAILED"], 404: ["NOT_FOUND"] },
      }),
    })
    .get(
      "/api/notifications/unsubscribe",
      async ({ query, set }) => {
        await notificationEmail.unsubscribeRequest(undefined, query.token);
        set.headers["content-type"] = "text/html; charset=utf-8";
        set.headers["content-security-policy"] = UNSUBSCRIBE_PAGE_CSP;
        set.headers["cache-control"] = "no-store";
        set.headers["referrer-policy"] = "no-referrer";
        return UNSUBSCRIBE_PAGE;
      },
      {
        auth: "public",
        query: t.Object({ token: t.Optional(t.String()) }),
        detail: op({
          tags: ["notifications"],
          summary: "Unsubscribe confirmation page (for mail clients following List-Unsubscribe); the same page for any token",
          query: TokenQuery,
          responses: {
            200: media("text/html", T.String(), { description: "a self-contained page (no scripts) saying notification emails are off" }),
          },
          errors: { 400: ["INVALID_INPUT"] },
        }),
      },
    )
    .post(
      "/api/notifications/unsubscribe",
      async ({ query, body, set }) => {
        await notificationEmail.unsubscribeRequest(body.token, query.token);
        set.status = 204;
      },
      {
        auth: { level: "public", acceptForm: true },
        query: t.Object({ token: t.Optional(t.String()) }),
        body: looseBody(NotificationsUnsubscribeParams),
        detail: op({
          tags: ["notifications"],
          summary: "RFC 8058 one-click unsubscribe; 204 for any token, known or not (400 only when no token came at all)",
          query: T.Object({ token: T.Optional(TokenQuery.properties.token) }),
          body: NotificationsUnsubscribeParams,
          form: true,
          responses: { 204: null },
        }),
      },
    );
