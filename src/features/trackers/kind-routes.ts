// The endpoints every tracker kind has (supplement §15, §16, §17): list, create, get, update, delete, `_history`,
// `_clear`, `_logs`, `_clear_logs` and `_logs_summary` under the kind's base path, with their OpenAPI schemas. A kind's
// routes.ts supplies what is its own (target schema, descriptions, and a plugin with its extra endpoints such as
// `_test` and `_debug`, registered after `_logs_summary` so they come before `/:tracker_id`).
import { Elysia, t, type AnyElysia, type TSchema } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { ListQuerySchema } from "../../platform/http/list-query";
import type { TrackerKindService } from "./kind-service";

export const field = (description: string) => t.Optional(t.Unknown({ description }));
export const detail = (summary: string) => ({ tags: ["web_scraping"], summary });

/** `_debug` body of every kind (loose types: the service produces the spec's messages and codes). */
export const DebugBody = t.Object({
  target: field("as on create"),
  config: field("as on create; only timeout is used"),
  secrets: field("secrets access selector, default none"),
});

const TagRefSchema = t.Object({ id: t.String({ format: "uuid" }), name: t.String(), color: t.String() });
const SelectorSchema = t.Union([t.Literal("none"), t.Literal("all"), t.Object({ selected: t.Array(t.String({ format: "uuid" })) })], {
  description: 'secrets access selector: "none", "all" or {"selected": [secret ids]}',
});
const RevisionSchema = t.Object({
  id: t.String({ format: "uuid" }),
  trackerId: t.String({ format: "uuid" }),
  createdAt: t.Integer(),
  size: t.Integer({ description: "stored bytes" }),
  data: t.Unknown({ description: "parsed JSON when the stored bytes are JSON, else their UTF-8 text" }),
  diff: t.Optional(t.String({ description: "unified diff from the next older revision (with {diff: true})" })),
});
const HistoryBody = t.Object({ refresh: field("run the tracker once first"), diff: field("add unified diffs") });

export interface TrackerRoutesSpec<Target> {
  /** Plugin name. */
  name: string;
  /** Base path, e.g. `/api/web_scraping/api_trackers`. */
  base: string;
  service: TrackerKindService<Target>;
  /** The kind in summaries: singular with its article ("an API tracker") and plural ("API trackers"). */
  one: string;
  many: string;
  /** Schema of the stored (echoed) target. */
  target: TSchema;
  /** Descriptions of `config.timeout` (wire object) and of the log phases. */
  timeout: string;
  phases: string;
  /** Descriptions of the create/update body members `config` and `target`. */
  configBody: string;
  targetBody: string;
  /** The kind's own endpoints (a plugin with `.use(auth)`), registered after `_logs_summary`. */
  own: AnyElysia;
}

export function trackerRoutes<Target>({ auth }: { auth: AuthPlugin }, spec: TrackerRoutesSpec<Target>) {
  const { base: BASE, service } = spec;
  const ConfigSchema = t.Object({
    revisions: t.Integer({ description: "revisions kept, 1..tier max_revisions" }),
    timeout: t.Integer({ description: spec.timeout }),
    job: t.Optional(
      t.Object({
        schedule: t.String({ description: "stored cron (presets expanded)" }),
        retryStrategy: t.Optional(t.Object({ type: t.Literal("constant"), interval: t.Integer(), maxAttempts: t.Integer() })),
      }),
    ),
  });
  const TrackerSchema = t.Object({
    id: t.String({ format: "uuid" }),
    name: t.String(),
    enabled: t.Boolean(),
    config: ConfigSchema,
    target: spec.target,
    notifications: t.Boolean(),
    secrets: SelectorSchema,
    tags: t.Array(TagRefSchema),
    tagIds: t.Array(t.String({ format: "uuid" })),
    createdAt: t.Integer(),
    updatedAt: t.Integer(),
    scheduledAt: t.Optional(t.Integer({ description: "next planned run (unix s) while scheduled" })),
    lastRanAt: t.Optional(t.Integer({ description: "start of the latest run of any kind (unix s)" })),
  });
  const PageSchema = t.Object({ items: t.Array(TrackerSchema), total: t.Integer() });
  const PhaseSchema = t.Object({
    phase: t.String({ description: spec.phases }),
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
  // Loose types: the service produces the spec's messages and codes.
  const TrackerBody = t.Object({
    name: field(`1..100 characters, unique among your ${spec.many}`),
    enabled: field("boolean, default true"),
    config: field(spec.configBody),
    target: field(spec.targetBody),
    notifications: field("boolean, default false: email on change"),
    secrets: field('"none" (default), "all" or {"selected": [ids or names]}'),
    tagIds: field("tag ids (at most 10)"),
  });

  return new Elysia({ name: spec.name })
    .use(auth)
    .get(BASE, ({ user, query }) => service.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      response: PageSchema,
      detail: detail(`List ${spec.many} (common list query)`),
    })
    .post(
      BASE,
      async ({ user, body, set }) => {
        const tracker = await service.create(user, body);
        set.status = 201;
        return tracker;
      },
      { auth: "user", body: TrackerBody, response: { 201: TrackerSchema }, detail: detail(`Create ${spec.one}`) },
    )
    .get(`${BASE}/_logs_summary`, ({ user }) => service.logsSummary(user.id), {
      auth: "user",
      response: t.Record(t.String(), t.Array(LogSchema)),
      detail: detail(`The 10 newest logs of each of your ${spec.many}, keyed by tracker id`),
    })
    .use(spec.own)
    .get(`${BASE}/:tracker_id`, ({ user, params }) => service.get(user.id, params.tracker_id), {
      auth: "user",
      response: TrackerSchema,
      detail: detail(`Get ${spec.one}`),
    })
    .put(
      `${BASE}/:tracker_id`,
      async ({ user, params, body, set }) => {
        await service.update(user, params.tracker_id, body);
        set.status = 204;
      },
      { auth: "user", body: TrackerBody, detail: detail(`Update ${spec.one} (present members replace; {} → 400)`) },
    )
    .delete(
      `${BASE}/:tracker_id`,
      async ({ user, params, set }) => {
        await service.delete(user.id, params.tracker_id);
        set.status = 204;
      },
      { auth: "user", detail: detail(`Delete ${spec.one} with its revisions and logs`) },
    )
    .post(`${BASE}/:tracker_id/_history`, ({ user, params, body }) => service.history(user.id, params.tracker_id, body), {
      auth: "user",
      body: HistoryBody,
      response: t.Array(RevisionSchema),
      detail: detail("Revisions, newest first ({refresh: true} runs the tracker first; {diff: true} adds unified diffs)"),
    })
    .post(
      `${BASE}/:tracker_id/_clear`,
      async ({ user, params, set }) => {
        await service.clear(user.id, params.tracker_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Delete every revision") },
    )
    .get(`${BASE}/:tracker_id/_logs`, ({ user, params }) => service.logs(user.id, params.tracker_id), {
      auth: "user",
      response: t.Array(LogSchema),
      detail: detail("Execution logs with phase timings, newest first (at most 50)"),
    })
    .post(
      `${BASE}/:tracker_id/_clear_logs`,
      async ({ user, params, set }) => {
        await service.clearLogs(user.id, params.tracker_id);
        set.status = 204;
      },
      { auth: "user", detail: detail("Delete every execution log") },
    );
}
