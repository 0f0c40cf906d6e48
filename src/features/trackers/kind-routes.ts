// The endpoints every tracker kind has (supplement §15, §16, §17): list, create, get, update, delete, `_history`,
// `_clear`, `_logs`, `_clear_logs` and `_logs_summary` under the kind's base path, with their OpenAPI schemas. A kind's
// routes.ts supplies what is its own (target schema, descriptions, and a plugin with its extra endpoints such as
// `_test` and `_debug`, registered after `_logs_summary` so they come before `/:tracker_id`).
import { Elysia, t, type AnyElysia, type TSchema } from "elysia";
import { Dict, looseBody, Named, op, Opt, Page, StringEnum, T, UnixTime, Uuid } from "../../platform/http/contract";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { ListQueryParams, ListQuerySchema } from "../../platform/http/list-query";
import { SecretsSelector, SecretsSelectorParam } from "../secrets/contract";
import { TaggedMembers, TagIdsParam } from "../tags/contract";
import type { TrackerKindService } from "./kind-service";
import { ScriptWarnings } from "../scripts/contract";

/** §27: how a save checks a target's scripts. */
const SCRIPT_CHECKED = "API configurators and extractors are compiled by QuickJS in their source forms; a page extractor is parsed, in the page's forms, as code for Chromium";

/** `_debug` body of every kind at runtime (the service checks the members with the spec's messages). */
export const DebugBody = t.Object({ target: t.Optional(t.Unknown()), config: t.Optional(t.Unknown()), secrets: t.Optional(t.Unknown()) });

export const Revision = Named(
  "TrackerRevision",
  T.Object({
    id: Uuid(),
    trackerId: Uuid(),
    createdAt: UnixTime(),
    size: T.Integer({ minimum: 0, description: "stored bytes" }),
    data: T.Unknown({ description: "the parsed value when the stored bytes are one JSON text, else their UTF-8 text" }),
    diff: T.Optional(T.String({ description: "with {diff: true}: unified diff from the next older revision (cut at 256 KiB)" })),
  }),
);
const HistoryParams = T.Object({
  refresh: Opt(T.Boolean({ description: "run the tracker once first (waits for a slot; a failed run shows in _logs, not here)" })),
  diff: Opt(T.Boolean({ description: "add unified diffs" })),
});
const RetryStrategy = T.Object({
  type: StringEnum(["constant"]),
  interval: T.Integer({ minimum: 60_000, maximum: 43_200_000, description: "ms between retries, 60,000..min(43,200,000, the schedule's minimum interval)" }),
  maxAttempts: T.Integer({ minimum: 1, maximum: 10 }),
});
const Job = T.Object({
  schedule: T.String({ description: "cron: 6 fields (second minute hour day month weekday, UTC), 5 (seconds 0) or 7 (with year); or @hourly, @daily, @weekly, @monthly (expanded at save)" }),
  retryStrategy: T.Optional(RetryStrategy),
});
const JobParam = T.Object({ schedule: Job.properties.schedule, retryStrategy: Opt(RetryStrategy) });

export interface TrackerRoutesSpec<Target> {
  /** Plugin name. */
  name: string;
  /** Base path, e.g. `/api/web_scraping/api_trackers`. */
  base: string;
  service: TrackerKindService<Target>;
  /** Schema name prefix: `ApiTracker` or `PageTracker` (→ ApiTracker, Page_ApiTracker, ApiTrackerCreateParams, …). */
  schemaName: string;
  /** The kind in summaries: singular with its article ("an API tracker") and plural ("API trackers"). */
  one: string;
  many: string;
  /** Schemas of the stored (echoed) target and of the target in requests. */
  target: TSchema;
  targetParam: TSchema;
  /** `config.timeout` in ms: range and default. */
  timeout: { minimum: number; maximum: number; default: number; description: string };
  /** The log phases, in order. */
  phases: readonly string[];
  /** A create body that works (the docs page's "Try it out"). */
  example: Record<string, unknown>;
  /** The kind's own endpoints (a plugin with `.use(auth)`), registered after `_logs_summary`. */
  own: AnyElysia;
}

/** The debug body of a kind: `target` as on create, `config` (only timeout is used), `secrets`. */
export const debugParams = (name: string, targetParam: TSchema) =>
  Named(
    `${name}DebugParams`,
    T.Object({ target: targetParam, config: Opt(T.Object({ timeout: Opt(T.Integer()) }, { description: "as on create; only timeout is used" })), secrets: Opt(SecretsSelectorParam) }),
  );

export function trackerRoutes<Target>({ auth }: { auth: AuthPlugin }, spec: TrackerRoutesSpec<Target>) {
  const { base: BASE, service } = spec;
  const N = spec.schemaName;
  const tags = ["web_scraping"];
  const Config = T.Object({
    revisions: T.Integer({ minimum: 1, description: "revisions kept, 1..tier max_revisions" }),
    timeout: T.Integer({ minimum: spec.timeout.minimum, maximum: spec.timeout.maximum, description: spec.timeout.description }),
    job: T.Optional(Job),
  });
  const ConfigParam = T.Object({
    revisions: Opt(T.Integer({ minimum: 1, description: "1..tier max_revisions, default 3" })),
    timeout: Opt(T.Integer({ ...spec.timeout, description: `${spec.timeout.description}, default ${spec.timeout.default}` })),
    job: Opt(T.Object(JobParam.properties, { description: "absent = manual runs only" })),
  });
  const Tracker = Named(
    N,
    T.Object({
      id: Uuid(),
      name: T.String(),
      enabled: T.Boolean(),
      config: Config,
      target: spec.target,
      notifications: T.Boolean(),
      secrets: SecretsSelector,
      ...TaggedMembers,
      createdAt: UnixTime(),
      updatedAt: UnixTime(),
      scheduledAt: T.Optional(UnixTime("next planned run while scheduled")),
      lastRanAt: T.Optional(UnixTime("start of the latest run of any kind")),
      revisionCount: T.Integer({ minimum: 0, description: "(addition) revisions stored now" }),
      running: T.Boolean({ description: "(addition) a run (scheduled, retry or manual) is waiting for a slot or running" }),
    }),
  );
  const Phase = T.Object({
    phase: StringEnum(spec.phases),
    durationMs: T.Integer({ minimum: 0 }),
    status: StringEnum(["success", "failure", "skipped"]),
    error: T.Optional(T.String()),
  });
  const Log = Named(
    `${N}Log`,
    T.Object({
      id: Uuid(),
      trackerId: Uuid(),
      startedAt: UnixTime(),
      finishedAt: UnixTime(),
      durationMs: T.Integer({ minimum: 0 }),
      status: StringEnum(["success", "failure"]),
      isManual: T.Boolean(),
      retryAttempt: T.Optional(T.Integer({ minimum: 1 })),
      hasChanges: T.Optional(T.Boolean()),
      revisionSize: T.Optional(T.Integer({ minimum: 0 })),
      error: T.Optional(T.String({ maxLength: 2000 })),
      phases: T.Array(Phase, { description: `every phase, in order: ${spec.phases.join(", ")}` }),
    }),
  );
  const Members = {
    name: T.String({ minLength: 1, description: `1..100 characters after trimming, unique among your ${spec.many}` }),
    enabled: Opt(T.Boolean({ description: "default true; disabling unschedules (manual refresh still works)" })),
    config: Opt(ConfigParam),
    target: spec.targetParam,
    notifications: Opt(T.Boolean({ description: "default false: email on change" })),
    secrets: Opt(SecretsSelectorParam),
    tagIds: TagIdsParam,
  };
  const CreateParams = Named(`${N}CreateParams`, T.Object(Members));
  const UpdateParams = Named(
    `${N}UpdateParams`,
    T.Partial(T.Object(Members), { description: "present members replace; absent ones are kept; {} → 400", minProperties: 1 }),
  );
  const HistoryBody = Named(`${N}GetHistoryParams`, HistoryParams);
  const SAVE_ERRORS = { 400: ["LIMIT_REACHED" as const, "INVALID_SCHEDULE" as const, "SCHEDULE_TOO_FREQUENT" as const, "TARGET_NOT_ALLOWED" as const] };

  return new Elysia({ name: spec.name })
    .use(auth)
    .get(BASE, ({ user, query }) => service.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      detail: op({ tags, summary: `List ${spec.many} (common list query)`, query: ListQueryParams, responses: { 200: Page(N, Tracker) } }),
    })
    .post(
      BASE,
      async ({ user, body, set }) => {
        const tracker = await service.create(user, body);
        set.status = 201;
        return tracker;
      },
      {
        auth: "user",
        body: looseBody(CreateParams),
        detail: op({
          tags,
          summary: `Create ${spec.one}`,
          description: `The target's scripts are compiled as they will run, never run: a syntax error is answered in \`warnings\` and the tracker is saved anyway (${SCRIPT_CHECKED}).`,
          body: CreateParams,
          responses: { 201: Named(`${N}Saved`, T.Composite([Tracker, T.Object({ warnings: T.Optional(ScriptWarnings) })], { description: "the tracker, plus `warnings` when a script does not compile" })) },
          errors: { ...SAVE_ERRORS, 409: ["DUPLICATE_NAME"] },
          example: spec.example,
        }),
      },
    )
    .get(`${BASE}/_logs_summary`, ({ user }) => service.logsSummary(user.id), {
      auth: "user",
      detail: op({
        tags,
        summary: `The 10 newest logs of each of your ${spec.many}, keyed by tracker id ({} when none)`,
        responses: { 200: Named(`${N}LogsSummary`, Dict(T.Array(Log), { description: "tracker id → its 10 newest logs, newest first" })) },
      }),
    })
    .use(spec.own)
    .get(`${BASE}/:tracker_id`, ({ user, params }) => service.get(user.id, params.tracker_id), {
      auth: "user",
      detail: op({ tags, summary: `Get ${spec.one}`, responses: { 200: Tracker } }),
    })
    .put(
      `${BASE}/:tracker_id`,
      async ({ user, params, body, set }) => {
        const warnings = await service.update(user, params.tracker_id, body);
        // 200 {warnings} when a script of the new target does not compile (§27, as §13.3), else 204 without a body.
        if (warnings.length > 0) return { warnings };
        set.status = 204;
      },
      {
        auth: "user",
        body: looseBody(UpdateParams),
        detail: op({
          tags,
          summary: `Update ${spec.one} (present members replace; {} → 400)`,
          description: `204 without a body; 200 {warnings} when a script of the new target does not compile (${SCRIPT_CHECKED}).`,
          body: UpdateParams,
          responses: { 200: T.Object({ warnings: ScriptWarnings }), 204: null },
          errors: { ...SAVE_ERRORS, 409: ["DUPLICATE_NAME"] },
          example: { enabled: false },
        }),
      },
    )
    .delete(
      `${BASE}/:tracker_id`,
      async ({ user, params, set }) => {
        await service.delete(user.id, params.tracker_id);
        set.status = 204;
      },
      { auth: "user", detail: op({ tags, summary: `Delete ${spec.one} with its revisions and logs`, responses: { 204: null } }) },
    )
    .post(`${BASE}/:tracker_id/_history`, ({ user, params, body }) => service.history(user.id, params.tracker_id, body), {
      auth: "user",
      body: looseBody(HistoryBody),
      detail: op({
        tags,
        summary: "Revisions, newest first ({refresh: true} runs the tracker first; {diff: true} adds unified diffs)",
        body: HistoryBody,
        responses: { 200: T.Array(Revision) },
        example: { refresh: false, diff: true },
      }),
    })
    .post(
      `${BASE}/:tracker_id/_clear`,
      async ({ user, params, set }) => {
        await service.clear(user.id, params.tracker_id);
        set.status = 204;
      },
      { auth: "user", detail: op({ tags, summary: "Delete every revision", responses: { 204: null } }) },
    )
    .get(`${BASE}/:tracker_id/_logs`, ({ user, params }) => service.logs(user.id, params.tracker_id), {
      auth: "user",
      detail: op({ tags, summary: "Execution logs with phase timings, newest first (at most 50)", responses: { 200: T.Array(Log) } }),
    })
    .post(
      `${BASE}/:tracker_id/_clear_logs`,
      async ({ user, params, set }) => {
        await service.clearLogs(user.id, params.tracker_id);
        set.status = 204;
      },
      { auth: "user", detail: op({ tags, summary: "Delete every execution log", responses: { 204: null } }) },
    );
}
