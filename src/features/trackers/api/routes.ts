// /api/web_scraping/api_trackers (interface "Web scraping: API trackers", supplement §15, §17): the endpoints every
// kind has (kind-routes.ts) with the API target, plus `_test` and the pipeline's `_debug`.
import { Elysia, t } from "elysia";
import type { TrackersRoutesDeps } from "../routes";
import { DebugBody, detail, field, trackerRoutes } from "../kind-routes";

const BASE = "/api/web_scraping/api_trackers";

const RequestSchema = t.Object({
  url: t.String(),
  method: t.String({ description: "GET, POST, PUT, PATCH or DELETE" }),
  headers: t.Record(t.String(), t.String()),
  body: t.Optional(t.String()),
  acceptInvalidCertificates: t.Boolean(),
  acceptStatuses: t.Optional(t.Array(t.Integer(), { description: "(addition) accepted statuses; default any 2xx" })),
});
const TargetSchema = t.Object({
  requests: t.Array(RequestSchema, { description: "issued in order; index 0 is the primary request" }),
  configurator: t.Optional(t.String()),
  extractor: t.Optional(t.String()),
});

const TestBody = t.Object({ target: field("as on create (flat form accepted); only requests[0] is sent"), timeout: field("ms 1,000..60,000") });
const TestResultSchema = t.Object({ status: t.Integer(), headers: t.Record(t.String(), t.String()), body: t.String(), latencyMs: t.Integer() });
const StageSchema = t.Union([
  t.Object({ result: t.Unknown(), params: t.Unknown(), error: t.Union([t.String(), t.Null()]), logs: t.Array(t.Object({ level: t.String(), message: t.String() })) }),
  t.Null(),
]);
const DebugSchema = t.Object({
  configurator: StageSchema,
  requests: t.Array(t.Object({ request: t.Unknown(), response: t.Unknown() })),
  extractor: StageSchema,
  result: t.Union([t.Object({ body: t.Unknown() }), t.Null()]),
  elapsedMs: t.Integer(),
});

export const apiTrackersRoutes = ({ auth, trackers }: TrackersRoutesDeps) => {
  const api = trackers.api;
  const own = new Elysia({ name: "feature/trackers/api/own" })
    .use(auth)
    .post(`${BASE}/_test`, ({ body }) => api.test(body), {
      auth: "user",
      body: TestBody,
      response: TestResultSchema,
      detail: detail("Send the primary request without scripts; nothing is stored"),
    })
    .post(`${BASE}/_debug`, ({ user, body }) => api.debug(user, body), {
      auth: "user",
      body: DebugBody,
      response: DebugSchema,
      detail: detail("Run configurator, requests and extractor with a trace; nothing is stored"),
    });
  return trackerRoutes(
    { auth },
    {
      name: "feature/trackers/api",
      base: BASE,
      service: api,
      one: "an API tracker",
      many: "API trackers",
      target: TargetSchema,
      timeout: "ms per request, 1,000..60,000",
      phases: "configurator, request, extractor, compare, persist, notify",
      configBody: "{revisions?: 1..tier max (3), timeout?: ms 1,000..60,000 (10,000), job?: {schedule, retryStrategy?}}",
      targetBody:
        "{requests: [{url, method?, headers?, body?, acceptInvalidCertificates?, acceptStatuses?}], configurator?, extractor?} or the flat form {url, ...}",
      own,
    },
  );
};
