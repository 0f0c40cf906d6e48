// /api/webhooks/responders: responder management, history, stats and HAR export (supplement §11.1–§11.2,
// §11.10–§11.12), and three additions for the web UI: `_info` (URL bases, tier limits), a `_history` window
// (`after`, `before`, `limit`) and `_test` ("Try it", try-request.ts). Hits on responder hosts never reach these
// routes (RespondersService.dispatch runs first).
import { pullStream } from "../../platform/http/stream";
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { RespondersService } from "./service";
import { HeaderPair, looseBody, media, Named, op, Opt, Page, StringEnum, T, UnixTime, Uuid } from "../../platform/http/contract";
import { listQueryParams, ListQuerySchema } from "../../platform/http/list-query";
import { SecretsSelector, SecretsSelectorParam } from "../secrets/contract";
import { TaggedMembers, TagIdsParam } from "../tags/contract";
import { ScriptWarnings } from "../scripts/contract";
import { HarDocument, HISTORY_MAX_LIMIT } from "./har";
import type { Work } from "../../platform/work/pool";
import { RESPONDER_METHODS, STANDARD_METHODS } from "./match";
import { TRY_MAX_BODY_BYTES, TRY_MAX_RESPONSE_BYTES } from "./try-request";

// ---- contract schemas (supplement §11) ----

const PathType = StringEnum(["=", "^", "*"], { description: "= exact, ^ prefix (as a plain string), * the path and any sub-path" });
const Method = StringEnum(RESPONDER_METHODS, { description: "ANY matches every method" });
const PrefixPattern = "^[a-z0-9]([a-z0-9-]{0,34}[a-z0-9])?$";
const Notifications = T.Object(
  { enabled: T.Boolean(), throttleSeconds: T.Integer({ description: "one of the tier's notification_throttles (default list 300, 900, 3600, 21600, 86400); default 3600" }) },
  { description: "hit summary emails; enabled needs requestsToTrack > 0" },
);

export const Responder = Named(
  "Responder",
  T.Object({
    id: Uuid(),
    name: T.String(),
    url: T.String({ format: "uri", description: "absolute live URL of the responder" }),
    location: T.Object({ pathType: PathType, path: T.String({ pattern: "^/" }), subdomainPrefix: T.Optional(T.String({ pattern: PrefixPattern })) }),
    method: Method,
    enabled: T.Boolean(),
    settings: T.Object({
      requestsToTrack: T.Integer({ minimum: 0 }),
      statusCode: T.Integer({ minimum: 200, maximum: 599 }),
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
/** §27: a save compiles `settings.script` (never runs it) and answers a syntax error in `warnings`. */
export const ResponderSaved = Named(
  "ResponderSaved",
  T.Composite([Responder, T.Object({ warnings: T.Optional(ScriptWarnings) })], { description: "the responder, plus `warnings` when settings.script does not compile" }),
);
const SCRIPT_CHECKED = "`settings.script` is compiled as it will run, never run: a syntax error is answered in `warnings` and the responder is saved anyway.";

const SettingsParam = T.Object(
  {
    requestsToTrack: Opt(T.Integer({ minimum: 0, description: "0..tier max_requests_to_track (default 0: no capture)" })),
    statusCode: Opt(T.Integer({ minimum: 200, maximum: 599, description: "default 200" })),
    headers: Opt(
      T.Array(HeaderPair, { maxItems: 100, description: "[name, value] pairs (RFC 9110 token names; values without CR, LF, NUL, ≤ 8 KiB); values may use ${secrets.NAME}" }),
    ),
    body: Opt(T.String({ description: "≤ 1 MiB UTF-8; may use ${secrets.NAME}" })),
    script: Opt(T.String({ minLength: 1, description: "1..51,200 UTF-8 bytes; null = none" })),
    secrets: Opt(SecretsSelectorParam),
    notifications: Opt(T.Object({ enabled: T.Boolean(), throttleSeconds: Opt(Notifications.properties.throttleSeconds) }, { description: Notifications.description })),
  },
  { description: "a complete settings object: omitted members take their defaults" },
);
const ResponderMembers = {
  name: T.String({ minLength: 1, description: "1..100 characters after trimming, unique per user" }),
  location: T.Object({
    pathType: PathType,
    path: T.String({ pattern: "^/", minLength: 1, maxLength: 255, description: "RFC 3986 path characters; a trailing / is removed (except for /)" }),
    subdomainPrefix: Opt(T.String({ pattern: PrefixPattern, description: "lets one user own several hosts: <prefix>-<handle>.<responders domain>" })),
  }),
  method: Opt(Method),
  enabled: Opt(T.Boolean({ description: "default true" })),
  settings: Opt(SettingsParam),
  tagIds: TagIdsParam,
};
export const RespondersCreateParams = Named(
  "RespondersCreateParams",
  T.Object({ ...ResponderMembers, method: T.Optional(Method), settings: T.Optional(SettingsParam) }, { description: "method default ANY; settings default {}" }),
);
export const RespondersUpdateParams = Named(
  "RespondersUpdateParams",
  T.Partial(T.Object(ResponderMembers), { description: "present members replace (settings as a whole); absent ones are kept; {} → 400", minProperties: 1 }),
);

const TrackedResponse = T.Object({
  statusCode: T.Integer(),
  headers: T.Array(HeaderPair, { description: "as produced, in order, repeats as separate pairs" }),
  body: T.Optional(T.String({ contentEncoding: "base64", description: "base64 of the stored bytes; omitted when empty" })),
  bodySize: T.Integer({ minimum: 0 }),
  truncated: T.Boolean(),
});
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
    headers: T.Array(HeaderPair, { description: "lower-case names, sorted by name; repeats joined with \", \" (cookie with \"; \")" }),
    body: T.Optional(T.String({ contentEncoding: "base64", description: "base64 of the stored bytes (cut at max_tracked_body_bytes); omitted when empty" })),
    bodySize: T.Integer({ minimum: 0, description: "original size" }),
    statusCode: T.Optional(
      T.Integer({
        minimum: 100,
        maximum: 599,
        description: "(supplement §27) status of the response sent, whether or not the response is stored; absent only on records captured before statuses were recorded that have no stored response",
      }),
    ),
    response: T.Optional(TrackedResponse),
  }),
);
export const ResponderStats = Named(
  "ResponderStats",
  T.Object({ responderId: Uuid(), requestCount: T.Integer({ minimum: 0 }), lastRequestedAt: T.Optional(UnixTime("newest record's createdAt")) }),
);

// ---- additions for the web UI ----

const HistoryWindowQuery = T.Object({
  after: T.Optional(Uuid({ description: "(addition) only records newer than this record id" })),
  before: T.Optional(Uuid({ description: "(addition) only records older than this record id" })),
  limit: T.Optional(T.Integer({ minimum: 1, maximum: HISTORY_MAX_LIMIT, description: `(addition) at most this many records (1..${HISTORY_MAX_LIMIT}), the newest of the window; no parameter at all = the whole history` })),
});
export const ResponderInfo = Named(
  "ResponderInfo",
  T.Object({
    urlStyle: StringEnum(["subdomain", "path"], { description: "responders.url_style: <handle>.<responders domain> or the path form /api/webhooks/<handle>" }),
    baseUrl: T.String({ format: "uri", description: "a responder's URL without its path, no subdomain prefix" }),
    prefixedBaseUrl: T.Optional(T.String({ description: "the same with a prefix, {prefix} standing for it (subdomain style only)" })),
    maxRequestsToTrack: T.Integer({ minimum: 0, description: "the caller's tier maximum of settings.requestsToTrack" }),
    notificationThrottles: T.Array(T.Integer({ minimum: 1 }), { description: "the allowed settings.notifications.throttleSeconds" }),
  }),
);
export const RespondersTestParams = Named(
  "RespondersTestParams",
  T.Object(
    {
      method: Opt(StringEnum(STANDARD_METHODS, { description: "default the responder's method (ANY: GET)" })),
      path: Opt(T.String({ pattern: "^/", maxLength: 2048, description: "path and optional ?query in URL characters (percent-encode the others), no . or .. segments; default the responder's location.path" })),
      headers: Opt(T.Array(HeaderPair, { maxItems: 100, description: "[name, value] pairs in order (RFC 9110 token names; values without CR, LF, NUL, ≤ 8 KiB); host, content-length and transfer-encoding are set by Secbox" })),
      body: Opt(T.String({ description: `request body text (UTF-8, ≤ ${TRY_MAX_BODY_BYTES / 1024 / 1024} MiB)` })),
    },
    { description: "a request to the responder's own URL; every member is optional ({} or no body: the responder's method and path)" },
  ),
);
export const ResponderTestResult = Named(
  "ResponderTestResult",
  T.Object({
    responderId: T.Optional(Uuid({ description: "the responder that answered (the real match: may be another of yours); absent when none did (404)" })),
    durationMs: T.Integer({ minimum: 0 }),
    request: T.Object({ method: T.String(), url: T.String({ format: "uri", description: "the responder URL the request was built for" }) }),
    response: T.Object({
      ...TrackedResponse.properties,
      headers: T.Array(HeaderPair, { description: "as a client reads them: lower-case names, a repeated name joined with \", \" (Set-Cookie aside)" }),
      body: T.Optional(T.String({ contentEncoding: "base64", description: `base64 of the response body, its first ${TRY_MAX_RESPONSE_BYTES / 1024 / 1024} MiB; omitted when empty` })),
      bodySize: T.Integer({ minimum: 0, description: "the whole body's size" }),
    }),
    record: T.Optional(TrackedRequest),
  }),
);

const Har = T.Object(
  { log: T.Object({ version: T.String(), creator: T.Object({ name: T.String(), version: T.String() }), entries: T.Array(T.Object({}, { additionalProperties: true })) }) },
  { description: "HAR 1.2 (entries oldest first)" },
);

const ListQuery = ListQuerySchema;
const IdParams = t.Object({ responder_id: t.String() });
/** Runtime query of `_history` (values as sent); har.ts parseHistoryWindow checks them with messages naming them. */
const HistoryQuery = t.Object({ after: t.Optional(t.String()), before: t.Optional(t.String()), limit: t.Optional(t.String()) });
const RESPONDER_EXAMPLE = {
  name: "orders-mock",
  location: { pathType: "*", path: "/orders" },
  method: "GET",
  settings: { requestsToTrack: 5, statusCode: 200, headers: [["content-type", "application/json"]], body: '{"ok":true}' },
};
const tags = ["webhooks"];



/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface RespondersRoutesDeps {
  auth: AuthPlugin;
  responders: RespondersService;
  /** The work pool: HAR entries are rendered there (absent: on the event loop, one entry per turn). */
  work?: Work;
}

export const respondersRoutes = ({ auth, responders, work }: RespondersRoutesDeps) =>
  new Elysia({ name: "feature/responders" })
    .use(auth)
    .get("/api/webhooks/responders", ({ user, query }) => responders.list(user, query), {
      auth: "user",
      query: ListQuery,
      detail: op({
        tags,
        summary: "List responders (common list query; sort also by lastRequestedAt)",
        query: listQueryParams(["name", "createdAt", "updatedAt", "lastRequestedAt"]),
        responses: { 200: Page("Responder", Responder) },
      }),
    })
    .post(
      "/api/webhooks/responders",
      async ({ user, body, set }) => {
        const created = await responders.create(user, body);
        set.status = 201;
        return created;
      },
      {
        auth: "user",
        body: looseBody(RespondersCreateParams),
        detail: op({
          tags,
          summary: "Create a responder",
          description: SCRIPT_CHECKED,
          body: RespondersCreateParams,
          responses: { 201: ResponderSaved },
          errors: { 400: ["LIMIT_REACHED"], 409: ["DUPLICATE_NAME", "CONFLICT"] },
          example: RESPONDER_EXAMPLE,
        }),
      },
    )
    .get("/api/webhooks/responders/_stats", ({ user }) => responders.stats(user), {
      auth: "user",
      detail: op({ tags, summary: "Stored request count and last request time per responder (name ascending)", responses: { 200: T.Array(ResponderStats) } }),
    })
    .get("/api/webhooks/responders/_info", ({ user }) => responders.info(user), {
      auth: "user",
      detail: op({
        tags,
        summary: "(addition) Responder URL bases and the caller's tier limits, for an editor before a responder exists",
        responses: { 200: ResponderInfo },
      }),
    })
    .get("/api/webhooks/responders/:responder_id", ({ user, params }) => responders.get(user, params.responder_id), {
      auth: "user",
      params: IdParams,
      detail: op({ tags, summary: "Get a responder", responses: { 200: Responder } }),
    })
    .put("/api/webhooks/responders/:responder_id", ({ user, params, body }) => responders.update(user, params.responder_id, body), {
      auth: "user",
      params: IdParams,
      body: looseBody(RespondersUpdateParams),
      detail: op({
        tags,
        summary: "Update a responder (present members replace; settings is replaced as a whole)",
        description: SCRIPT_CHECKED,
        body: RespondersUpdateParams,
        responses: { 200: ResponderSaved },
        errors: { 409: ["DUPLICATE_NAME", "CONFLICT"] },
        example: { enabled: false },
      }),
    })
    .delete(
      "/api/webhooks/responders/:responder_id",
      async ({ user, params, set }) => {
        await responders.delete(user, params.responder_id);
        set.status = 204;
      },
      { auth: "user", params: IdParams, detail: op({ tags, summary: "Delete a responder with its history and KV data", responses: { 204: null } }) },
    )
    .get("/api/webhooks/responders/:responder_id/_history", ({ user, params, query }) => responders.history(user, params.responder_id, query), {
      auth: "user",
      params: IdParams,
      query: HistoryQuery,
      detail: op({
        tags,
        summary: "Tracked requests, newest first; after/before/limit (addition) select a window",
        query: HistoryWindowQuery,
        responses: { 200: T.Array(TrackedRequest) },
      }),
    })
    .post("/api/webhooks/responders/:responder_id/_test", ({ user, params, body }) => responders.tryRequest(user, params.responder_id, body), {
      auth: "user",
      params: IdParams,
      body: looseBody(RespondersTestParams),
      detail: op({
        tags,
        summary: "(addition) Send a request to your responder, served in-process as a hit (no network): its response and the record it left",
        body: RespondersTestParams,
        responses: { 200: ResponderTestResult },
        example: { path: "/orders/7?debug=1", headers: [["content-type", "application/json"]], body: '{"qty":2}' },
      }),
    })
    .post(
      "/api/webhooks/responders/:responder_id/_clear",
      async ({ user, params, set }) => {
        await responders.clear(user, params.responder_id);
        set.status = 204;
      },
      { auth: "user", params: IdParams, detail: op({ tags, summary: "Clear the tracked request history (KV data is kept)", responses: { 204: null } }) },
    )
    .get(
      "/api/webhooks/responders/:responder_id/_har",
      async ({ user, params }) => {
        const { har, contentDisposition } = await responders.har(user, params.responder_id);
        // Written while the client reads, its entries rendered on the work pool under the user's share (har.ts).
        return new Response(har instanceof HarDocument ? pullStream(har.chunks(work && { work, owner: user.id })) : JSON.stringify(har), {
          headers: { "content-type": "application/json; charset=utf-8", "content-disposition": contentDisposition },
        });
      },
      {
        auth: "user",
        params: IdParams,
        detail: op({
          tags,
          summary: "Export the tracked history as HAR 1.2 (an attachment <name>-history.har)",
          responses: { 200: media("application/json", Har, { headers: { "Content-Disposition": { description: 'attachment; filename="<name>-history.har"' } } }) },
          // entries are rendered on the work pool (har.ts): its queue may be full
          errors: { 429: ["RATE_LIMITED"], 503: ["UNAVAILABLE"] },
        }),
      },
    );
