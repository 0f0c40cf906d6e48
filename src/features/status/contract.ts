// The wire shapes of the server status (supplement §21): the one declaration of each (TypeBox: the OpenAPI document
// and the web types come from it); the TypeScript types are their `Static`.
import { Named, StringEnum, T, type Static } from "../../platform/http/contract";

export const STATUS_LEVELS = ["available", "unavailable"] as const;
export type StatusLevel = (typeof STATUS_LEVELS)[number];

const Level = StringEnum(STATUS_LEVELS, { description: "informational: the UI shows a banner; the API behaves the same" });

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
export type Status = Static<typeof Status>;

export const SetStatusAPIParams = Named("SetStatusAPIParams", T.Object({ level: Level }));
