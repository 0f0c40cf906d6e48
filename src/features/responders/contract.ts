// The responders contract (supplement §11.1, §11.2, §11.10–§11.12, and the web UI's additions `_info`, the `_history`
// window and `_test`): the one declaration of each wire shape and request body, as TypeBox schemas (routes.ts
// documents the routes with them; the web's types are generated from that document) and, beside each, its TypeScript
// type (`Static`). Requests are read loosely (looseBody) and checked by the service (rules.ts, try-request.ts) with
// the messages of supplement §2; the limits here come from shared-rules.ts, the values the web gets too.
// Owns: declarations only. Must never: hold a rule's value (shared-rules.ts does) or import a service.
import { HeaderPair, Named, Opt, StringEnum, T, UnixTime, Uuid, type Static } from "../../platform/http/contract";
import { ScriptWarnings } from "../scripts/contract";
import { SecretsSelector, SecretsSelectorParam } from "../secrets/contract";
import { TaggedMembers, TagIdsParam } from "../tags/contract";
import {
  HISTORY_MAX_LIMIT,
  MAX_HEADERS,
  MAX_STATUS,
  MIN_STATUS,
  PATH_MAX,
  PATH_TYPES,
  PREFIX_RE,
  RESPONDER_METHODS,
  STANDARD_METHODS,
  TRY_MAX_BODY_BYTES,
  TRY_MAX_RESPONSE_BYTES,
  TRY_MAX_TARGET,
} from "./shared-rules";

const PathType = StringEnum(PATH_TYPES, { description: "= exact, ^ prefix (as a plain string), * the path and any sub-path" });
const Method = StringEnum(RESPONDER_METHODS, { description: "ANY matches every method" });
const Notifications = T.Object(
  {
    enabled: T.Boolean(),
    throttleSeconds: T.Integer({ description: "one of the tier's notification_throttles (default list 300, 900, 3600, 21600, 86400); default 3600" }),
  },
  { description: "hit summary emails; enabled needs requestsToTrack > 0" },
);

export const Responder = Named(
  "Responder",
  T.Object({
    id: Uuid(),
    name: T.String(),
    url: T.String({ format: "uri", description: "absolute live URL of the responder" }),
    location: T.Object({
      pathType: PathType,
      path: T.String({ pattern: "^/" }),
      subdomainPrefix: T.Optional(T.String({ pattern: PREFIX_RE.source })),
    }),
    method: Method,
    enabled: T.Boolean(),
    settings: T.Object({
      requestsToTrack: T.Integer({ minimum: 0 }),
      statusCode: T.Integer({ minimum: MIN_STATUS, maximum: MAX_STATUS }),
      headers: T.Optional(T.Array(HeaderPair, { description: "[name, value] pairs; order and repeats kept; omitted when empty" })),
      body: T.Optional(T.String({ description: "omitted when empty" })),
      script: T.Optional(T.String({ description: "omitted when none" })),
      secrets: SecretsSelector,
      notifications: T.Optional(T.Object({ enabled: T.Boolean(), throttleSeconds: T.Integer() }, { description: "omitted when never set" })),
    }),
    ...TaggedMembers,
    createdAt: UnixTime(),
    updatedAt: UnixTime(),
  }),
);
export type Responder = Static<typeof Responder>;
export type ResponderLocation = Responder["location"];
export type ResponderSettings = Responder["settings"];
export type ResponderMethod = Responder["method"];
export type PathType = ResponderLocation["pathType"];

/** §27: a save compiles `settings.script` (never runs it) and answers a syntax error in `warnings`. */
export const ResponderSaved = Named(
  "ResponderSaved",
  T.Composite([Responder, T.Object({ warnings: T.Optional(ScriptWarnings) })], {
    description: "the responder, plus `warnings` when settings.script does not compile",
  }),
);
export type ResponderSaved = Static<typeof ResponderSaved>;

const SettingsParam = T.Object(
  {
    requestsToTrack: Opt(T.Integer({ minimum: 0, description: "0..tier max_requests_to_track (default 0: no capture)" })),
    statusCode: Opt(T.Integer({ minimum: MIN_STATUS, maximum: MAX_STATUS, description: "default 200" })),
    headers: Opt(
      T.Array(HeaderPair, {
        maxItems: MAX_HEADERS,
        description: "[name, value] pairs (RFC 9110 token names; values without CR, LF, NUL, ≤ 8 KiB); values may use ${secrets.NAME}",
      }),
    ),
    body: Opt(T.String({ description: "≤ 1 MiB UTF-8; may use ${secrets.NAME}" })),
    script: Opt(T.String({ minLength: 1, description: "1..51,200 UTF-8 bytes; null = none" })),
    secrets: Opt(SecretsSelectorParam),
    notifications: Opt(
      T.Object({ enabled: T.Boolean(), throttleSeconds: Opt(Notifications.properties.throttleSeconds) }, { description: Notifications.description }),
    ),
  },
  { description: "a complete settings object: omitted members take their defaults" },
);
const ResponderMembers = {
  name: T.String({ minLength: 1, description: "1..100 characters after trimming, unique per user" }),
  location: T.Object({
    pathType: PathType,
    path: T.String({
      pattern: "^/",
      minLength: 1,
      maxLength: PATH_MAX,
      description: "RFC 3986 path characters; a trailing / is removed (except for /)",
    }),
    subdomainPrefix: Opt(
      T.String({ pattern: PREFIX_RE.source, description: "lets one user own several hosts: <prefix>-<handle>.<responders domain>" }),
    ),
  }),
  method: Opt(Method),
  enabled: Opt(T.Boolean({ description: "default true" })),
  settings: Opt(SettingsParam),
  tagIds: TagIdsParam,
};
export const RespondersCreateParams = Named(
  "RespondersCreateParams",
  T.Object(
    { ...ResponderMembers, method: T.Optional(Method), settings: T.Optional(SettingsParam) },
    { description: "method default ANY; settings default {}" },
  ),
);
export const RespondersUpdateParams = Named(
  "RespondersUpdateParams",
  T.Partial(T.Object(ResponderMembers), {
    description: "present members replace (settings as a whole); absent ones are kept; {} → 400",
    minProperties: 1,
  }),
);
/** A create or update body as it reaches the service (looseBody: every member as sent, checked by rules.ts). */
export type ResponderInput = { [K in keyof Static<typeof RespondersCreateParams>]?: unknown };

export const TrackedResponse = T.Object({
  statusCode: T.Integer(),
  headers: T.Array(HeaderPair, { description: "as produced, in order, repeats as separate pairs" }),
  body: T.Optional(T.String({ contentEncoding: "base64", description: "base64 of the stored bytes; omitted when empty" })),
  bodySize: T.Integer({ minimum: 0 }),
  truncated: T.Boolean(),
});
export type TrackedResponse = Static<typeof TrackedResponse>;
export const TrackedRequest = Named(
  "TrackedRequest",
  T.Object({
    id: Uuid(),
    createdAt: UnixTime(),
    durationMs: T.Integer({ minimum: 0 }),
    clientAddress: T.Optional(T.String()),
    method: T.String(),
    path: T.String(),
    rawQuery: T.Optional(T.String()),
    headers: T.Array(HeaderPair, { description: 'lower-case names, sorted by name; repeats joined with ", " (cookie with "; ")' }),
    body: T.Optional(
      T.String({ contentEncoding: "base64", description: "base64 of the stored bytes (cut at max_tracked_body_bytes); omitted when empty" }),
    ),
    bodySize: T.Integer({ minimum: 0, description: "original size" }),
    statusCode: T.Optional(
      T.Integer({
        minimum: 100,
        maximum: 599,
        description:
          "(supplement §27) status of the response sent, whether or not the response is stored; absent only on records captured before statuses were recorded that have no stored response",
      }),
    ),
    response: T.Optional(TrackedResponse),
  }),
);
export type TrackedRequest = Static<typeof TrackedRequest>;

export const ResponderStats = Named(
  "ResponderStats",
  T.Object({ responderId: Uuid(), requestCount: T.Integer({ minimum: 0 }), lastRequestedAt: T.Optional(UnixTime("newest record's createdAt")) }),
);
export type ResponderStats = Static<typeof ResponderStats>;

// ---- additions for the web UI ----

/** The `_history` window (documented query; har.ts parseHistoryWindow reads it with messages naming each member). */
export const HistoryWindowQuery = T.Object({
  after: T.Optional(Uuid({ description: "(addition) only records newer than this record id" })),
  before: T.Optional(Uuid({ description: "(addition) only records older than this record id" })),
  limit: T.Optional(
    T.Integer({
      minimum: 1,
      maximum: HISTORY_MAX_LIMIT,
      description: `(addition) at most this many records (1..${HISTORY_MAX_LIMIT}), the newest of the window; no parameter at all = the whole history`,
    }),
  ),
});
export type HistoryWindow = Static<typeof HistoryWindowQuery>;

export const ResponderInfo = Named(
  "ResponderInfo",
  T.Object({
    urlStyle: StringEnum(["subdomain", "path"], {
      description: "responders.url_style: <handle>.<responders domain> or the path form /api/webhooks/<handle>",
    }),
    baseUrl: T.String({ format: "uri", description: "a responder's URL without its path, no subdomain prefix" }),
    prefixedBaseUrl: T.Optional(T.String({ description: "the same with a prefix, {prefix} standing for it (subdomain style only)" })),
    maxRequestsToTrack: T.Integer({ minimum: 0, description: "the caller's tier maximum of settings.requestsToTrack" }),
    notificationThrottles: T.Array(T.Integer({ minimum: 1 }), { description: "the allowed settings.notifications.throttleSeconds" }),
  }),
);
export type ResponderInfo = Static<typeof ResponderInfo>;

export const RespondersTestParams = Named(
  "RespondersTestParams",
  T.Object(
    {
      method: Opt(StringEnum(STANDARD_METHODS, { description: "default the responder's method (ANY: GET)" })),
      path: Opt(
        T.String({
          pattern: "^/",
          maxLength: TRY_MAX_TARGET,
          description:
            "path and optional ?query in URL characters (percent-encode the others), no . or .. segments; default the responder's location.path",
        }),
      ),
      headers: Opt(
        T.Array(HeaderPair, {
          maxItems: MAX_HEADERS,
          description:
            "[name, value] pairs in order (RFC 9110 token names; values without CR, LF, NUL, ≤ 8 KiB); host, content-length and transfer-encoding are set by Secbox",
        }),
      ),
      body: Opt(T.String({ description: `request body text (UTF-8, ≤ ${TRY_MAX_BODY_BYTES / 1024 / 1024} MiB)` })),
    },
    { description: "a request to the responder's own URL; every member is optional ({} or no body: the responder's method and path)" },
  ),
);
/** A `_test` body as it reaches the service (looseBody: every member as sent, checked by try-request.ts). */
export type TryInput = { [K in keyof Static<typeof RespondersTestParams>]?: unknown };

export const ResponderTestResult = Named(
  "ResponderTestResult",
  T.Object({
    responderId: T.Optional(
      Uuid({ description: "the responder that answered (the real match: may be another of yours); absent when none did (404)" }),
    ),
    durationMs: T.Integer({ minimum: 0 }),
    request: T.Object({ method: T.String(), url: T.String({ format: "uri", description: "the responder URL the request was built for" }) }),
    response: T.Object({
      ...TrackedResponse.properties,
      headers: T.Array(HeaderPair, { description: 'as a client reads them: lower-case names, a repeated name joined with ", " (Set-Cookie aside)' }),
      body: T.Optional(
        T.String({
          contentEncoding: "base64",
          description: `base64 of the response body, its first ${TRY_MAX_RESPONSE_BYTES / 1024 / 1024} MiB; omitted when empty`,
        }),
      ),
      bodySize: T.Integer({ minimum: 0, description: "the whole body's size" }),
    }),
    record: T.Optional(TrackedRequest),
  }),
);
export type ResponderTestResult = Static<typeof ResponderTestResult>;

/** The `_har` document's outline (har.ts writes it). */
export const Har = T.Object(
  {
    log: T.Object({
      version: T.String(),
      creator: T.Object({ name: T.String(), version: T.String() }),
      entries: T.Array(T.Object({}, { additionalProperties: true })),
    }),
  },
  { description: "HAR 1.2 (entries oldest first)" },
);
