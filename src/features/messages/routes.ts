// POST /api/send_message (authentication optional) and POST /api/users/email (operator).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { MessagesService } from "./service";
import { clientRateKey } from "../../platform/http/client-ip";

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface MessagesRoutesDeps {
  auth: AuthPlugin;
  messages: MessagesService;
  /** `server.trust_proxy`: the client IP of the send_message throttle comes from proxy headers. */
  trustProxy: boolean;
}

export const messagesRoutes = ({ auth, messages, trustProxy }: MessagesRoutesDeps) =>
  new Elysia({ name: "feature/messages" })
    .use(auth)
    .post(
      "/api/send_message",
      async ({ body, request, server, principal, set }) => {
        const ip = clientRateKey(request, server?.requestIP(request)?.address, trustProxy);
        await messages.sendContactMessage(body, ip, principal?.user?.email);
        set.status = 204;
      },
      {
        auth: "public",
        // 403 MAIL_NOT_CONFIGURED comes before any body check (supplement §21), JSON decoding included.
        transform: () => messages.assertMailConfigured(),
        body: t.Object({
          message: t.Optional(t.Unknown({ description: "1..10,000 characters" })),
          email: t.Optional(t.Unknown({ description: "optional reply address" })),
        }),
        detail: { tags: ["messages"], summary: "Send a contact message to the operator mailbox" },
      },
    )
    .post(
      "/api/users/email",
      async ({ body, set }) => {
        await messages.queueOperatorEmail(body);
        set.status = 204;
      },
      {
        auth: "operator",
        body: t.Object({ recipient: t.String(), subject: t.String(), text: t.String(), html: t.Optional(t.Union([t.String(), t.Null()])) }),
        detail: { tags: ["users"], summary: "Queue an email to a recipient (operator)" },
      },
    );
