// /api/web_scraping/api_trackers (interface "Web scraping: API trackers", supplement §15, §17): the endpoints every
// kind has (kind-routes.ts) with the API target, plus `_test` and the pipeline's `_debug`.
import { Elysia, t } from "elysia";
import { Dict, looseBody, Named, Nullable, op, Opt, StringEnum, T } from "../../../platform/http/contract";
import type { TrackersRoutesDeps } from "../routes";
import { debugParams, DebugBody, trackerRoutes } from "../kind-routes";

const BASE = "/api/web_scraping/api_trackers";
const tags = ["web_scraping"];

const Method = StringEnum(["GET", "POST", "PUT", "PATCH", "DELETE"]);
const Url = T.String({ format: "uri", maxLength: 2048, description: "http or https URL; a literal private or local target is refused (400 TARGET_NOT_ALLOWED)" });
const Script = T.String({ minLength: 1, description: "1..51,200 UTF-8 bytes" });
const AcceptStatuses = T.Array(T.Integer({ minimum: 100, maximum: 599 }), { description: "(addition) statuses that count as success; default any 2xx" });

const Request = T.Object({
  url: T.String(),
  method: Method,
  headers: Dict(T.String()),
  body: T.Optional(T.String()),
  acceptInvalidCertificates: T.Boolean(),
  acceptStatuses: T.Optional(AcceptStatuses),
});
const Target = T.Object({
  requests: T.Array(Request, { minItems: 1, maxItems: 10, description: "issued in order; index 0 is the primary request" }),
  configurator: T.Optional(T.String()),
  extractor: T.Optional(T.String()),
});

const RequestParam = T.Object({
  url: Url,
  method: Opt(T.Unsafe<string>({ ...Method, description: "default GET" })),
  headers: Opt(Dict(T.String(), { description: "default {}" })),
  body: Opt(T.String({ description: "sent verbatim (JSON must be pre-stringified); ≤ 1 MiB" })),
  acceptInvalidCertificates: Opt(T.Boolean({ description: "default false: disables TLS verification" })),
  acceptStatuses: Opt(AcceptStatuses),
});
const ScriptMembers = {
  configurator: Opt(T.Unsafe<string>({ ...Script, description: "script: sees context.requests, returns {requests}" })),
  extractor: Opt(T.Unsafe<string>({ ...Script, description: "script: sees context.responses, returns {body}" })),
};
export const ApiTrackerTargetParam = Named(
  "ApiTrackerTargetParam",
  T.Union(
    [
      T.Object({ requests: T.Array(RequestParam, { minItems: 1, maxItems: 10, description: "issued in order; index 0 is the primary request" }), ...ScriptMembers }),
      T.Object({ ...RequestParam.properties, ...ScriptMembers }, { description: "flat form: one request (echoed in the requests form)" }),
    ],
    { description: "the requests and the scripts" },
  ),
);

export const ApiTrackerTestParams = Named(
  "ApiTrackerTestParams",
  T.Object({ target: ApiTrackerTargetParam, timeout: Opt(T.Integer({ minimum: 1000, maximum: 60_000, description: "ms, default 10,000" })) }),
);
export const ApiTrackerTestResult = Named(
  "ApiTrackerTestResult",
  T.Object({
    status: T.Integer(),
    headers: Dict(T.String(), { description: "lower-case names, repeats joined with \", \"" }),
    body: T.String({ description: "lossy UTF-8, cut at 524,288 bytes" }),
    latencyMs: T.Integer({ minimum: 0 }),
  }),
);
const Logs = T.Array(T.Object({ level: T.String(), message: T.String() }), { description: "the script's console output (≤ 100 entries of ≤ 2 KiB)" });
const Stage = Nullable(
  T.Object({ result: T.Unknown(), params: T.Unknown({ description: "the context given to the script (secret values as ********)" }), error: Nullable(T.String()), logs: Logs }),
  { description: "null when the script is absent" },
);
export const ApiTrackerDebugResult = Named(
  "ApiTrackerDebugResult",
  T.Object({
    configurator: Stage,
    requests: T.Array(
      T.Object({
        request: T.Object({ url: T.String(), method: T.String(), headers: Dict(T.String()) }, { additionalProperties: true }),
        response: T.Union([
          T.Object({ status: T.Integer(), headers: Dict(T.String()), body: T.String(), bodySize: T.Integer(), latencyMs: T.Integer() }),
          T.Object({ error: T.String() }),
        ]),
      }),
    ),
    extractor: Stage,
    result: Nullable(T.Object({ body: T.Unknown({ description: "the value as revision data would show it" }) })),
    elapsedMs: T.Integer({ minimum: 0 }),
  }),
);

export const apiTrackersRoutes = ({ auth, trackers }: TrackersRoutesDeps) => {
  const api = trackers.api;
  const DebugParams = debugParams("ApiTracker", ApiTrackerTargetParam);
  const own = new Elysia({ name: "feature/trackers/api/own" })
    .use(auth)
    .post(`${BASE}/_test`, ({ body }) => api.test(body), {
      auth: "user",
      body: t.Object({ target: t.Optional(t.Unknown()), timeout: t.Optional(t.Unknown()) }),
      detail: op({
        tags,
        summary: "Send the primary request without scripts and return the raw response; nothing is stored",
        body: ApiTrackerTestParams,
        responses: { 200: ApiTrackerTestResult },
        errors: { 400: ["TARGET_NOT_ALLOWED", "UPSTREAM_FAILED"] },
        example: { target: { url: "https://example.com/" } },
      }),
    })
    .post(`${BASE}/_debug`, ({ user, body }) => api.debug(user, body), {
      auth: "user",
      body: DebugBody,
      detail: op({
        tags,
        summary: "Run configurator, requests and extractor with a trace; nothing is stored",
        body: DebugParams,
        responses: { 200: ApiTrackerDebugResult },
        errors: { 400: ["TARGET_NOT_ALLOWED"] },
        example: { target: { url: "https://example.com/", extractor: "({ body: context.responses[0].status })" } },
      }),
    });
  return trackerRoutes(
    { auth },
    {
      name: "feature/trackers/api",
      base: BASE,
      service: api,
      schemaName: "ApiTracker",
      one: "an API tracker",
      many: "API trackers",
      target: Target,
      targetParam: ApiTrackerTargetParam,
      timeout: { minimum: 1000, maximum: 60_000, default: 10_000, description: "ms per request, 1,000..60,000" },
      phases: ["configurator", "request", "extractor", "compare", "persist", "notify"],
      example: {
        name: "release-feed",
        config: { revisions: 3, job: { schedule: "0 17 9 * * *" } },
        target: { requests: [{ url: "https://example.com/", method: "GET", headers: { accept: "text/html" } }] },
      },
      own,
    },
  );
};
