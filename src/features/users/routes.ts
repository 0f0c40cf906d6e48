// Routes of the users feature: browser auth (/api/auth/*), the current user, operator user administration
// and subscriptions (supplement §3.3, §4), with the schemas of contract.ts. Bodies are looseBody: the service
// checks them with the spec's messages.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { UsersService } from "./service";
import { isCrossSiteWrite } from "../../platform/auth/plugin";
import { clientRateKey } from "../../platform/http/client-ip";
import { looseBody, media, Nullable, op, T } from "../../platform/http/contract";
import {
  Credentials,
  EmailParam,
  ForgotParams,
  PasswordChangeParams,
  RecoverParams,
  RemoveParams,
  SignInParams,
  SignupParams,
  UpdateSubscriptionParams,
  User,
} from "./contract";

const SESSION_COOKIE = media("application/json", User, {
  headers: { "Set-Cookie": { description: "the session cookie (HttpOnly, SameSite=Lax; Secure when public_url is https)" } },
});

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
          body: looseBody(Credentials),
          detail: op({
            tags: ["auth"],
            summary: "Create an account and sign in (sets the session cookie)",
            description:
              "Public sign-up does not prove the email. An email listed in security.operators gets an ordinary account (isOperator false) and a verification link by email; operator rights apply once that link is used. Without mail configured such an email is 403 SIGNUP_RESERVED.",
            body: Credentials,
            responses: { 200: SESSION_COOKIE },
            errors: { 400: ["WEAK_PASSWORD", "EMAIL_TAKEN"], 403: ["SIGNUP_CLOSED", "SIGNUP_RESERVED"] },
            example: { email: "ana@example.com", password: "correct horse battery" },
          }),
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
          body: looseBody(SignInParams),
          detail: op({
            tags: ["auth"],
            summary: "Sign in with email and password (sets the session cookie; throttled)",
            description:
              "401 for an unknown email, a wrong password or a user without a password (always the same message); 429 after 10 failures per email and client IP in 15 minutes.",
            body: SignInParams,
            responses: { 200: SESSION_COOKIE },
            errors: { 401: ["UNAUTHENTICATED"], 403: ["NOT_ACTIVATED"], 429: ["RATE_LIMITED"] },
            example: { email: "ana@example.com", password: "correct horse battery" },
          }),
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
          detail: op({
            tags: ["auth"],
            summary: "Sign out: ends the cookie's session and clears the cookie (a cross-site request does neither; still 204)",
            optionalAuth: true,
            responses: { 204: null },
          }),
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
          body: looseBody(PasswordChangeParams),
          detail: op({
            tags: ["auth"],
            summary: "Change the password (revokes the user's other sessions)",
            body: PasswordChangeParams,
            responses: { 204: null },
            errors: { 400: ["BAD_PASSWORD", "WEAK_PASSWORD"] },
          }),
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
          body: looseBody(RecoverParams),
          detail: op({
            tags: ["auth"],
            summary: "Set a new password with a recovery token (activates the user, signs in)",
            body: RecoverParams,
            responses: { 200: SESSION_COOKIE },
            errors: { 400: ["INVALID_TOKEN", "WEAK_PASSWORD"] },
          }),
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
          body: looseBody(ForgotParams),
          detail: op({
            tags: ["auth"],
            summary: "Email a recovery link when the address is registered (always 204)",
            body: ForgotParams,
            responses: { 204: null },
            example: { email: "ana@example.com" },
          }),
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
          detail: op({
            tags: ["auth"],
            summary: "The signed-in user, or null when not signed in (never 401)",
            optionalAuth: true,
            responses: { 200: Nullable(User) },
          }),
        },
      )
      // Current user and operator administration (supplement §4.2)
      .get("/api/users/self", ({ user }) => users.self(user.id), {
        auth: "user",
        detail: op({ tags: ["users"], summary: "The authenticated user", responses: { 200: User } }),
      })
      .get("/api/users", ({ query }) => users.getByEmail(query.email), {
        auth: "operator",
        query: t.Object({ email: t.Optional(t.String()) }),
        detail: op({
          tags: ["users"],
          summary: "Look a user up by email (operator)",
          query: T.Object({ email: EmailParam }),
          responses: { 200: User },
          errors: { 404: ["NOT_FOUND"] },
        }),
      })
      .get("/api/users/:user_id", ({ params }) => users.getById(params.user_id), {
        auth: "operator",
        detail: op({ tags: ["users"], summary: "Get a user (operator)", responses: { 200: User } }),
      })
      .delete(
        "/api/users/:user_id",
        async ({ params, set }) => {
          await users.removeById(params.user_id);
          set.status = 204;
        },
        { auth: "operator", detail: op({ tags: ["users"], summary: "Remove a user and everything they own (operator)", responses: { 204: null } }) },
      )
      .post(
        "/api/users/remove",
        async ({ body, set }) => {
          await users.removeByEmail(body.email);
          set.status = 204;
        },
        {
          auth: "operator",
          body: looseBody(RemoveParams),
          detail: op({
            tags: ["users"],
            summary: "Remove a user by email; 204 also for an unknown email (operator)",
            body: RemoveParams,
            responses: { 204: null },
          }),
        },
      )
      .post("/api/users/signup", ({ body }) => users.adminSignup(body), {
        auth: "operator",
        body: looseBody(SignupParams),
        detail: op({
          tags: ["users"],
          summary: "Register a user (operator); the email counts as proven",
          body: SignupParams,
          responses: { 200: User },
          errors: { 400: ["EMAIL_TAKEN", "HANDLE_TAKEN", "WEAK_PASSWORD"] },
          example: { email: "new-user@example.com" },
        }),
      })
      .post(
        "/api/user/subscription",
        async ({ body, set }) => {
          await users.setSubscription(body.userEmail, body.subscription);
          set.status = 204;
        },
        {
          auth: "operator",
          body: looseBody(UpdateSubscriptionParams),
          detail: op({
            tags: ["users"],
            summary: "Set a user's subscription (operator)",
            body: UpdateSubscriptionParams,
            responses: { 204: null },
            errors: { 404: ["NOT_FOUND"] },
            example: { userEmail: "ana@example.com", subscription: { tier: "professional" } },
          }),
        },
      )
  );
};
