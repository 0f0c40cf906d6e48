// The wire shapes of users and browser auth (supplement §3.3, §4): the one declaration of each (TypeBox: the OpenAPI
// document and the web types come from it); the TypeScript types are their `Static`. Other features import User
// from here.
import { TIERS } from "../../config/schema";
import { Named, Opt, StringEnum, T, UnixTime, Uuid, type Static } from "../../platform/http/contract";
import { HANDLE_RE, PASSWORD_MAX, PASSWORD_MIN, RESERVED_HANDLES } from "./shared-rules";

export const EmailParam = T.String({
  format: "email",
  maxLength: 254,
  description: "trimmed and lower-cased; at most 254 characters",
  examples: ["ana@example.com"],
});
const PasswordParam = T.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX, description: `${PASSWORD_MIN}..${PASSWORD_MAX} characters` });
const Tier = StringEnum(TIERS);

export const User = Named(
  "User",
  T.Object({
    id: Uuid(),
    email: T.String(),
    handle: T.String({ pattern: HANDLE_RE.source, description: "the user's responder subdomain label; fixed for life" }),
    createdAt: UnixTime(),
    isActivated: T.Boolean({ description: "false blocks sign-in and the user's API keys and JWTs" }),
    isOperator: T.Boolean({ description: "the email is listed in security.operators and proven" }),
    subscription: T.Object({
      tier: Tier,
      startedAt: UnixTime(),
      endsAt: T.Optional(UnixTime("after it the effective tier is subscriptions.default_tier")),
    }),
  }),
);
export type User = Static<typeof User>;

/** A single-use recovery link (operator clone answers it; the CLI prints it). */
export const RecoveryLink = T.Object({ url: T.String({ format: "uri" }), expiresAt: UnixTime() });
export type RecoveryLink = Static<typeof RecoveryLink>;

export const Credentials = Named("Credentials", T.Object({ email: EmailParam, password: PasswordParam }));
export const SignInParams = Named("SignInParams", T.Object({ email: EmailParam, password: T.String() }));
export const PasswordChangeParams = Named("PasswordChangeParams", T.Object({ currentPassword: T.String(), newPassword: PasswordParam }));
export const RecoverParams = Named(
  "RecoverParams",
  T.Object({ token: T.String({ description: "the recovery token of the link" }), newPassword: PasswordParam }),
);
export const ForgotParams = Named("ForgotParams", T.Object({ email: EmailParam }));
export const RemoveParams = Named("RemoveParams", T.Object({ email: EmailParam }));
export const SignupParams = Named(
  "SignupParams",
  T.Object({
    email: EmailParam,
    password: Opt(PasswordParam),
    handle: Opt(T.String({ pattern: HANDLE_RE.source, description: `not ${RESERVED_HANDLES.join(", ")}; default random 16 hex` })),
    activated: Opt(T.Boolean({ description: "default true" })),
  }),
);
export const UpdateSubscriptionParams = Named(
  "UpdateSubscriptionParams",
  T.Object({
    userEmail: EmailParam,
    subscription: T.Object({ tier: Tier, endsAt: Opt(T.Integer({ description: "unix seconds in the future; absent or null = no end" })) }),
  }),
);
