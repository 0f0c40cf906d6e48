// POST /api/send_message (authentication optional) and POST /api/users/email (operator) (supplement §21, §4.2), with
// the schemas of contract.ts. Bodies are looseBody: the service checks them with the spec's messages.
import { Elysia } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { clientRateKey } from "../../platform/http/client-ip";
import { looseBody, op } from "../../platform/http/contract";
import { EmailParams, SendMessageParams } from "./contract";
import type { MessagesService } from "./service";

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
        body: looseBody(SendMessageParams),
        detail: op({
          tags: ["messages"],
          summary: "Send a contact message to the operator mailbox (5 per hour per client IP)",
          description: "Authentication is optional: when present, the caller's email is added to the message.",
          optionalAuth: true,
          body: SendMessageParams,
          responses: { 204: null },
          errors: { 403: ["MAIL_NOT_CONFIGURED"], 429: ["RATE_LIMITED"] },
          example: { message: "Hello from the docs page", email: "me@example.com" },
        }),
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
        body: looseBody(EmailParams),
        detail: op({
          tags: ["users"],
          summary: "Queue an email to a recipient (operator); queued in the outbox whether or not SMTP is configured",
          body: EmailParams,
          responses: { 204: null },
          example: { recipient: "ana@example.com", subject: "Welcome", text: "Your account is ready." },
        }),
      },
    );
