// The wire shapes of the notification email destination and unsubscribe (interface "Notification email destination",
// supplement §10): the one declaration of each (TypeBox: the OpenAPI document and the web types come from it); the
// TypeScript types are their `Static`.
import { Named, StringEnum, T, UnixTime, Uuid, type Static } from "../../platform/http/contract";
import { CODE_TTL_SEC, VERIFICATION_CODE_DIGITS } from "./shared-rules";

export const UserNotificationDestination = Named(
  "UserNotificationDestination",
  T.Object({
    id: Uuid(),
    kind: StringEnum(["email"]),
    address: T.String({ description: "the address being verified or verified" }),
    status: StringEnum(["pending", "verified"]),
    verificationSentAt: T.Optional(UnixTime("present while pending")),
    verificationExpiresAt: T.Optional(UnixTime(`present while pending: the code is valid ${CODE_TTL_SEC} s`)),
    verifiedAt: T.Optional(UnixTime("present when verified")),
    createdAt: UnixTime(),
    updatedAt: UnixTime(),
  }),
);
export type UserNotificationDestination = Static<typeof UserNotificationDestination>;

export const NotificationEmailSetParams = Named(
  "NotificationEmailSetParams",
  T.Object({ email: T.String({ format: "email", maxLength: 254, description: "differs from the login email (ignoring case)" }) }),
);
export const NotificationEmailVerifyParams = Named(
  "NotificationEmailVerifyParams",
  T.Object({ code: T.String({ description: `the ${VERIFICATION_CODE_DIGITS}-digit code (surrounding whitespace ignored)`, examples: ["042917"] }) }),
);
export const NotificationsUnsubscribeParams = Named(
  "NotificationsUnsubscribeParams",
  T.Object({ token: T.Optional(T.String({ description: "the token of the List-Unsubscribe link (or in ?token=)" })) }),
);
export const TokenQuery = T.Object({ token: T.String({ description: "the token of the List-Unsubscribe link" }) });
