// /api/web_scraping/api_trackers (interface "Web scraping: API trackers", supplement §15, §17).
import { Elysia, t } from "elysia";
import type { Services } from "../../../app";
import { ListQuerySchema } from "../../../platform/http/list-query";

const BASE = "/api/web_scraping/api_trackers";

const TagRefSchema = t.Object({ id: t.String({ format: "uuid" }), name: t.String(), color: t.String() });
const SelectorSchema = t.Union([t.Literal("none"), t.Literal("all"), t.Object({ selected: t.Array(t.String({ format: "uuid" })) })], {
  description: 'secrets access selector: "none", "all" or {"selected": [secret ids]}',
});
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
const ConfigSchema = t.Object({
  revisions: t.Integer({ description: "revisions kept, 1..tier max_revisions" }),
  timeout: t.Integer({ description: "ms per request, 1,000..60,000" }),
  job: t.Optional(
    t.Object({
      schedule: t.String({ description: "stored cron (presets expanded)" }),
      retryStrategy: t.Optional(t.Object({ type: t.Literal("constant"), interval: t.Integer(), maxAttempts: t.Integer() })),
    }),
  ),
});
const ApiTrackerSchema = t.Object({
  id: t.String({ format: "uuid" }),
  name: t.String(),
  enabled: t.Boolean(),
  config: ConfigSchema,
  target: TargetSchema,
  notifications: t.Boolean(),
  secrets: SelectorSchema,
  tags: t.Array(TagRefSchema),
  tagIds: t.Array(t.String({ format: "uuid" })),
  createdAt: t.Integer(),
  updatedAt: t.Integer(),
  scheduledAt: t.Optional(t.Integer({ description: "next planned run (unix s) while scheduled" })),
  lastRanAt: t.Optional(t.Integer({ description: "start of the latest run of any kind (unix s)" })),
});
const PageSchema = t.Object({ items: t.Array(ApiTrackerSchema), total: t.Integer() });

const PhaseSchema = t.Object({
  phase: t.String({ description: "configurator, request, extractor, compare, persist, notify" }),
  durationMs: t.Integer(),
  status: t.String({ description: "success, failure or skipped" }),
  error: t.Optional(t.String()),
});
const LogSchema = t.Object({
  id: t.String({ format: "uuid" }),
  trackerId: t.String({ format: "uuid" }),
  startedAt: t.Integer(),
  finishedAt: t.Integer(),
  durationMs: t.Integer(),
  status: t.String({ description: "success or failure" }),
  isManual: t.Boolean(),
  retryAttempt: t.Optional(t.Integer()),
  hasChanges: t.Optional(t.Boolean()),
  revisionSize: t.Optional(t.Integer()),
  error: t.Optional(t.String()),
  phases: t.Array(PhaseSchema),
});
const RevisionSchema = t.Object({
  id: t.String({ format: "uuid" }),
  trackerId: t.String({ format: "uuid" }),
  createdAt: t.Integer(),
  size: t.Integer({ description: "stored bytes" }),
  data: t.Unknown({ description: "parsed JSON when the stored bytes are JSON, else their UTF-8 text" }),
  diff: t.Optional(t.String({ description: "unified diff from the next older revision (with {diff: true})" })),
});

const field = (description: string) => t.Optional(t.Unknown({ description }));
// Loose types: the service produces the spec's messages and codes.
const TrackerBody = t.Object({
  name: field("1..100 characters, unique among your API trackers"),
  enabled: field("boolean, default true"),
  config: field("{revisions?: 1..tier max (3), timeout?: ms 1,000..60,000 (10,000), job?: {schedule, retryStrategy?}}"),
  target: field("{requests: [{url, method?, headers?, body?, acceptInvalidCertificates?, acceptStatuses?}], configurator?, extractor?} or the flat form {url, ...}"),
  notifications: field("boolean, default false: email on change"),
  secrets: field('"none" (default), "all" or {"selected": [ids or names]}'),
  tagIds: field("tag ids (at most 10)"),
});
const HistoryBody = t.Object({ refresh: field("run the tracker once first"), diff: field("add unified diffs") });
const TestBody = t.Object({ target: field("as on create (flat form accepted); only requests[0] is sent"), timeout: field("ms 1,000..60,000") });
const DebugBody = t.Object({
  target: field("as on create"),
  config: field("as on create; only timeout is used"),
  secrets: field("secrets access selector, default none"),
});
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

const detail = (summary: string) => ({ tags: ["web_scraping"], summary });

export const apiTrackersRoutes = ({ auth, trackers }: Services) => {
  const api = trackers.api;
  return new Elysia({ name: "feature/trackers/api" })
    .use(auth)
    .get(BASE, ({ user, query }) => api.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      response: PageSchema,
      detail: detail("List API trackers (common list query)"),
    })
    .post(
      BASE,
      async ({ user, body, set }) => {
        const tracker = await api.create(user, body);
        set.status = 201;
        return tracker;
      },
      { auth: "user", body: TrackerBody, response: { 201: ApiTrackerSchema }, detail: detail("Create an API tracker") },
    )
    .get(`${BASE}/_logs_summary`, ({ user }) => api.logsSummary(user.id), {
      auth: "user",
      response: t.Record(t.String(), t.Array(LogSchema)),
      detail: detail("The 10 newest logs of each of your API trackers, keyed by tracker id"),
    })
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
    })
    .get(`${BASE}/:tracker_id`, ({ user, params }) => api.get(user.id, params.tracker_id), {
      auth: "user",
      response: ApiTrackerSchema,
      detail: detail("Get an API tracker"),
    })
    .put(
      `${BASE}/:tracker_id`,
      async ({ user, params, body, set }) => {
        await api.update(user, params.tracker_id, body);
        set.status = 204;
      },
      { auth: "user", body: TrackerBody, detail: detail("Update an API tracker (present members replace; {} → 400)") },
    )
    .delete(
      `${BASE}/:tracker_id`,
      async ({ user, params, set }) => {
        await api.delete(user.id, params.tracker_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Delete an API tracker with its revisions and logs") },
    )
    .post(`${BASE}/:tracker_id/_history`, ({ user, params, body }) => api.history(user.id, params.tracker_id, body), {
      auth: "user",
      body: HistoryBody,
      response: t.Array(RevisionSchema),
      detail: detail("Revisions, newest first ({refresh: true} runs the tracker first; {diff: true} adds unified diffs)"),
    })
    .post(
      `${BASE}/:tracker_id/_clear`,
      async ({ user, params, set }) => {
        await api.clear(user.id, params.tracker_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Delete every revision") },
    )
    .get(`${BASE}/:tracker_id/_logs`, ({ user, params }) => api.logs(user.id, params.tracker_id), {
      auth: "user",
      response: t.Array(LogSchema),
      detail: detail("Execution logs with phase timings, newest first (at most 50)"),
    })
    .post(
      `${BASE}/:tracker_id/_clear_logs`,
      async ({ user, params, set }) => {
        await api.clearLogs(user.id, params.tracker_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Delete every execution log") },
    );
};
