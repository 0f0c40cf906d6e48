// /api/web_scraping/page_trackers (interface "Web scraping: page trackers", supplement §16, §17).
import { Elysia, t } from "elysia";
import type { Services } from "../../../app";
import { ListQuerySchema } from "../../../platform/http/list-query";

const BASE = "/api/web_scraping/page_trackers";

const TagRefSchema = t.Object({ id: t.String({ format: "uuid" }), name: t.String(), color: t.String() });
const SelectorSchema = t.Union([t.Literal("none"), t.Literal("all"), t.Object({ selected: t.Array(t.String({ format: "uuid" })) })], {
  description: 'secrets access selector: "none", "all" or {"selected": [secret ids]}',
});
const TargetSchema = t.Object({
  url: t.String({ description: "http or https URL of the page (≤ 2,048 characters)" }),
  extractor: t.Optional(t.String({ description: "runs inside the page: an expression or async function body; global context = {previousContent?, params: {secrets}}" })),
  waitFor: t.Optional(
    t.Object({
      selector: t.Optional(t.String({ description: "CSS selector to wait for after the load event" })),
      delayMs: t.Optional(t.Integer({ description: "extra wait in ms, 0..30,000" })),
    }),
  ),
  userAgent: t.Optional(t.String()),
  headers: t.Record(t.String(), t.String(), { description: "extra request headers for the page" }),
  acceptInvalidCertificates: t.Boolean(),
  resources: t.Boolean({ description: "also store the inventory of loaded scripts and stylesheets (url, type, size, sha256)" }),
});
const ConfigSchema = t.Object({
  revisions: t.Integer({ description: "revisions kept, 1..tier max_revisions" }),
  timeout: t.Integer({ description: "ms for the whole run, 5,000..120,000" }),
  job: t.Optional(
    t.Object({
      schedule: t.String({ description: "stored cron (presets expanded)" }),
      retryStrategy: t.Optional(t.Object({ type: t.Literal("constant"), interval: t.Integer(), maxAttempts: t.Integer() })),
    }),
  ),
});
const PageTrackerSchema = t.Object({
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
const PageSchema = t.Object({ items: t.Array(PageTrackerSchema), total: t.Integer() });

const PhaseSchema = t.Object({
  phase: t.String({ description: "browser, navigate, extract, compare, persist, notify" }),
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
  name: field("1..100 characters, unique among your page trackers"),
  enabled: field("boolean, default true"),
  config: field("{revisions?: 1..tier max (3), timeout?: ms 5,000..120,000 (30,000), job?: {schedule, retryStrategy?}}"),
  target: field(
    "{url, extractor?, waitFor?: {selector?, delayMs?}, userAgent?, headers?, acceptInvalidCertificates?, resources?}; the extractor runs inside the page",
  ),
  notifications: field("boolean, default false: email on change"),
  secrets: field('"none" (default), "all" or {"selected": [ids or names]}'),
  tagIds: field("tag ids (at most 10)"),
});
const HistoryBody = t.Object({ refresh: field("run the tracker once first"), diff: field("add unified diffs") });
const DebugBody = t.Object({
  target: field("as on create"),
  config: field("as on create; only timeout is used"),
  secrets: field("secrets access selector, default none"),
});
const DebugSchema = t.Object({
  result: t.Optional(t.Unknown({ description: "the value as revision data would show it (absent on failure)" })),
  error: t.Optional(t.String({ description: "why the run failed (absent on success)" })),
  logs: t.Array(t.Object({ level: t.String({ description: "log, info, warn, error or debug" }), message: t.String() }), {
    description: "page console output, uncaught page errors and blocked requests (≤ 200 entries)",
  }),
  screenshots: t.Array(
    t.Object({
      label: t.String({ description: "navigated, final or error" }),
      mimeType: t.String(),
      data: t.String({ description: "base64 PNG of the 1280×800 viewport" }),
    }),
  ),
  elapsedMs: t.Integer(),
});

const detail = (summary: string) => ({ tags: ["web_scraping"], summary });

export const pageTrackersRoutes = ({ auth, trackers }: Services) => {
  const page = trackers.page;
  return new Elysia({ name: "feature/trackers/page" })
    .use(auth)
    .get(BASE, ({ user, query }) => page.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      response: PageSchema,
      detail: detail("List page trackers (common list query)"),
    })
    .post(
      BASE,
      async ({ user, body, set }) => {
        const tracker = await page.create(user, body);
        set.status = 201;
        return tracker;
      },
      { auth: "user", body: TrackerBody, response: { 201: PageTrackerSchema }, detail: detail("Create a page tracker") },
    )
    .get(`${BASE}/_logs_summary`, ({ user }) => page.logsSummary(user.id), {
      auth: "user",
      response: t.Record(t.String(), t.Array(LogSchema)),
      detail: detail("The 10 newest logs of each of your page trackers, keyed by tracker id"),
    })
    .post(`${BASE}/_debug`, ({ user, body }) => page.debug(user, body), {
      auth: "user",
      body: DebugBody,
      response: DebugSchema,
      detail: detail("Render the page once in Chromium: result or error, console logs and screenshots; nothing is stored"),
    })
    .get(`${BASE}/:tracker_id`, ({ user, params }) => page.get(user.id, params.tracker_id), {
      auth: "user",
      response: PageTrackerSchema,
      detail: detail("Get a page tracker"),
    })
    .put(
      `${BASE}/:tracker_id`,
      async ({ user, params, body, set }) => {
        await page.update(user, params.tracker_id, body);
        set.status = 204;
      },
      { auth: "user", body: TrackerBody, detail: detail("Update a page tracker (present members replace; {} → 400)") },
    )
    .delete(
      `${BASE}/:tracker_id`,
      async ({ user, params, set }) => {
        await page.delete(user.id, params.tracker_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Delete a page tracker with its revisions and logs") },
    )
    .post(`${BASE}/:tracker_id/_history`, ({ user, params, body }) => page.history(user.id, params.tracker_id, body), {
      auth: "user",
      body: HistoryBody,
      response: t.Array(RevisionSchema),
      detail: detail("Revisions, newest first ({refresh: true} runs the tracker first; {diff: true} adds unified diffs)"),
    })
    .post(
      `${BASE}/:tracker_id/_clear`,
      async ({ user, params, set }) => {
        await page.clear(user.id, params.tracker_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Delete every revision") },
    )
    .get(`${BASE}/:tracker_id/_logs`, ({ user, params }) => page.logs(user.id, params.tracker_id), {
      auth: "user",
      response: t.Array(LogSchema),
      detail: detail("Execution logs with phase timings, newest first (at most 50)"),
    })
    .post(
      `${BASE}/:tracker_id/_clear_logs`,
      async ({ user, params, set }) => {
        await page.clearLogs(user.id, params.tracker_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Delete every execution log") },
    );
};
