// Routes of the users feature: browser auth (/api/auth/*), the current user, operator user administration
// and subscriptions (supplement §3.3, §4).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { UsersService } from "./service";
import { isCrossSiteWrite } from "../../platform/auth/plugin";
import { clientRateKey } from "../../platform/http/client-ip";

const Email = t.String({ description: "email address (trimmed, lower-cased)", examples: ["ana@example.com"] });
const Password = t.String({ description: "8 to 1024 characters" });

export const UserSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    email: t.String(),
    handle: t.String(),
    createdAt: t.Integer(),
    isActivated: t.Boolean(),
    isOperator: t.Boolean(),
    subscription: t.Object({
      tier: t.String({ description: "basic | standard | professional | ultimate" }),
      startedAt: t.Integer(),
      endsAt: t.Optional(t.Integer()),
    }),
  },
  { description: "User" },
);

const ErrorSchema = t.Object({ message: t.String(), code: t.Optional(t.String()) });

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface UsersRoutesDeps {
  auth: AuthPlugin;
  users: UsersService;
  /** `server.trust_proxy`: the client IP of the sign-in throttle comes from proxy headers. */
  trustProxy: boolean;
}

export const usersRoutes = ({ auth, users, trustProxy }: UsersRoutesDeps) => {
  return (
    new Elysia({ name: "feature/users" })
      .use(auth)
      // Browser auth (supplement §3.3)
      .post(
        "/api/auth/signup",
        async ({ body, set }) => {
          const { user, sessionToken } = await users.signup(body.email, body.password);
          set.headers["set-cookie"] = users.sessionCookie(sessionToken);
          return user;
        },
        {
          auth: "public",
          transform: () => users.assertSignupOpen(),
          body: t.Object({ email: Email, password: Password }),
          response: { 200: UserSchema, 400: ErrorSchema, 403: ErrorSchema },
          detail: {
            tags: ["auth"],
            summary: "Create an account and sign in (sets the session cookie)",
            description:
              "Public sign-up does not prove the email. An email listed in security.operators gets an ordinary account (isOperator false) and a verification link by email; operator rights apply once that link is used. Without mail configured such an email is 403 SIGNUP_RESERVED.",
          },
        },
      )
      .post(
        "/api/auth/signin",
        async ({ body, set, request, server }) => {
          const client = clientRateKey(request, server?.requestIP(request)?.address, trustProxy);
          const { user, sessionToken } = await users.signin(body.email, body.password, client);
          set.headers["set-cookie"] = users.sessionCookie(sessionToken);
          return user;
        },
        {
          auth: "public",
          body: t.Object({ email: Email, password: t.String() }),
          response: { 200: UserSchema, 401: ErrorSchema, 403: ErrorSchema, 429: ErrorSchema },
          detail: { tags: ["auth"], summary: "Sign in with email and password (sets the session cookie; throttled)" },
        },
      )
      .post(
        "/api/auth/signout",
        async ({ principal, request, set }) => {
          set.status = 204;
          // Cross-site (supplement §1 guard): the cookie is ignored like on every public route, and nothing is
          // cleared either, so another site cannot sign the user out (204 without effect).
          if (isCrossSiteWrite(request)) return;
          await users.signout(principal?.via === "session" ? principal.sessionId : undefined);
          set.headers["set-cookie"] = users.clearedSessionCookie();
        },
        {
          auth: "public",
          detail: {
            tags: ["auth"],
            summary: "Sign out: ends the cookie's session and clears the cookie (a cross-site request does neither; still 204)",
          },
        },
      )
      .post(
        "/api/auth/password",
        async ({ body, user, principal, set }) => {
          await users.changePassword(user.id, principal?.via === "session" ? principal.sessionId : undefined, body.currentPassword, body.newPassword);
          set.status = 204;
        },
        {
          auth: "user",
          body: t.Object({ currentPassword: t.String(), newPassword: Password }),
          detail: { tags: ["auth"], summary: "Change the password (revokes the user's other sessions)" },
        },
      )
      .post(
        "/api/auth/recover",
        async ({ body, set }) => {
          const { user, sessionToken } = await users.recover(body.token, body.newPassword);
          set.headers["set-cookie"] = users.sessionCookie(sessionToken);
          return user;
        },
        {
          auth: "public",
          body: t.Object({ token: t.String({ description: "recovery token from the link" }), newPassword: Password }),
          response: { 200: UserSchema, 400: ErrorSchema },
          detail: { tags: ["auth"], summary: "Set a new password with a recovery token (activates the user, signs in)" },
        },
      )
      .post(
        "/api/auth/forgot",
        async ({ body, set }) => {
          await users.forgot(body.email);
          set.status = 204;
        },
        {
          auth: "public",
          body: t.Object({ email: Email }),
          detail: { tags: ["auth"], summary: "Email a recovery link when the address is registered (always 204)" },
        },
      )
      // (addition) The browser UI's session probe: the signed-in user or null, never a 401, so a signed-out visitor's
      // page load logs no failed request. Public: an invalid or cross-site cookie counts as none.
      .get(
        "/api/auth/session",
        async ({ principal }) => {
          const self = principal?.user ? await users.self(principal.user.id) : null;
          // A JSON `null` body (Elysia would send an empty body for a null return value).
          return new Response(JSON.stringify(self), { headers: { "content-type": "application/json; charset=utf-8" } });
        },
        {
          auth: "public",
          response: { 200: t.Union([UserSchema, t.Null()]) },
          detail: { tags: ["auth"], summary: "The signed-in user, or null when not signed in (never 401)" },
        },
      )
      // Current user and operator administration (supplement §4.2)
      .get("/api/users/self", ({ user }) => users.self(user.id), {
        auth: "user",
        response: { 200: UserSchema },
        detail: { tags: ["users"], summary: "The authenticated user" },
      })
      .get("/api/users", ({ query }) => users.getByEmail(query.email), {
        auth: "operator",
        query: t.Object({ email: t.Optional(t.String({ description: "the user's email (required)" })) }),
        response: { 200: UserSchema },
        detail: { tags: ["users"], summary: "Look a user up by email (operator)" },
      })
      .get("/api/users/:user_id", ({ params }) => users.getById(params.user_id), {
        auth: "operator",
        response: { 200: UserSchema },
        detail: { tags: ["users"], summary: "Get a user (operator)" },
      })
      .delete(
        "/api/users/:user_id",
        async ({ params, set }) => {
          await users.removeById(params.user_id);
          set.status = 204;
        },
        { auth: "operator", detail: { tags: ["users"], summary: "Remove a user and everything they own (operator)" } },
      )
      .post(
        "/api/users/remove",
        async ({ body, set }) => {
          await users.removeByEmail(body.email);
          set.status = 204;
        },
        {
          auth: "operator",
          body: t.Object({ email: Email }),
          detail: { tags: ["users"], summary: "Remove a user by email; 204 also for an unknown email (operator)" },
        },
      )
      .post("/api/users/signup", ({ body }) => users.adminSignup(body), {
        auth: "operator",
        body: t.Object({
          email: Email,
          password: t.Optional(t.Union([Password, t.Null()])),
          handle: t.Optional(t.Union([t.String({ description: "^[a-z0-9]{3,26}$, not api, www, responders" }), t.Null()])),
          activated: t.Optional(t.Union([t.Boolean({ description: "default true" }), t.Null()])),
        }),
        response: { 200: UserSchema },
        detail: { tags: ["users"], summary: "Register a user (operator)" },
      })
      .post(
        "/api/user/subscription",
        async ({ body, set }) => {
          await users.setSubscription(body.userEmail, body.subscription);
          set.status = 204;
        },
        {
          auth: "operator",
          body: t.Object({
            userEmail: Email,
            subscription: t.Object({
              tier: t.String({ description: "basic | standard | professional | ultimate" }),
              endsAt: t.Optional(t.Unknown({ description: "unix seconds in the future; absent or null = no end" })),
            }),
          }),
          detail: { tags: ["users"], summary: "Set a user's subscription (operator)" },
        },
      )
  );
};
