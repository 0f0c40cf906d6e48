// The trackers contract shared by every kind (supplement §14–§17): the one declaration of the scheduler's parse
// endpoint, revisions, and — through trackerKindContract, called once per kind by api/contract.ts and
// page/contract.ts with its target schemas, timeout range and phases — each kind's tracker, log, logs summary and
// request bodies. TypeBox schemas (routes document the endpoints with them; the web's types are generated from that
// document) and, beside each, its TypeScript type (`Static`): the generic ones here (TrackerConfig, PhaseRecord,
// TrackerLog, TrackerWire) are what the core works with. Requests are read loosely (looseBody) and checked by the
// services (params.ts, the kinds' target.ts) with the messages of supplement §2; limits come from shared-rules.ts.
// Owns: declarations only. Must never: hold a rule's value (shared-rules.ts does) or import a service.
import type { TSchema, TUnknown } from "@sinclair/typebox";
import { Dict, Named, Opt, StringEnum, T, UnixTime, Uuid, type Static } from "../../platform/http/contract";
import { ScriptWarnings } from "../scripts/contract";
import { SecretsSelector, SecretsSelectorParam } from "../secrets/contract";
import { TaggedMembers, TagIdsParam } from "../tags/contract";
import { RETRY_MAX_ATTEMPTS, RETRY_MAX_INTERVAL_MS, RETRY_MIN_INTERVAL_MS } from "./shared-rules";

/** A body as it reaches a service (looseBody: every member as sent). */
export type Loose<S extends TSchema> = { [K in keyof Static<S>]?: unknown };

// ---- scheduler (§14) ----

/** Logs kept per tracker, and per tracker in the summary; the longest error text a log keeps (supplement §17.2,
 *  §17.3, §22). */
export const MAX_LOGS = 50;
export const SUMMARY_LOGS = 10;
export const MAX_LOG_ERROR_CHARS = 2000;

export const SchedulerParseScheduleParams = Named(
  "SchedulerParseScheduleParams",
  T.Object({
    schedule: T.String({
      description:
        "cron: 6 fields `second minute hour day-of-month month day-of-week` (UTC); 5 fields = seconds 0; 7 fields add a year; or @hourly, @daily, @weekly, @monthly",
      examples: ["0 0 * * * *"],
    }),
  }),
);
export type ParseScheduleInput = Loose<typeof SchedulerParseScheduleParams>;
export const SchedulerParseScheduleResult = Named(
  "SchedulerParseScheduleResult",
  T.Object({
    minInterval: T.Integer({ minimum: 0, description: "smallest gap in ms between consecutive occurrences among the next 1,000" }),
    nextOccurrences: T.Array(T.Integer(), { description: "the next 5 occurrences, unix seconds" }),
  }),
);
export type SchedulerParseScheduleResult = Static<typeof SchedulerParseScheduleResult>;

// ---- revisions (§17.1) ----

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
export type Revision = Static<typeof Revision>;

const HistoryParams = T.Object({
  refresh: Opt(T.Boolean({ description: "run the tracker once first (waits for a slot; a failed run shows in _logs, not here)" })),
  diff: Opt(T.Boolean({ description: "add unified diffs" })),
});

// ---- config (§14, §15.1, §16.1) ----

const RetryStrategy = T.Object({
  type: StringEnum(["constant"]),
  interval: T.Integer({
    minimum: RETRY_MIN_INTERVAL_MS,
    maximum: RETRY_MAX_INTERVAL_MS,
    description: "ms between retries, 60,000..min(43,200,000, the schedule's minimum interval)",
  }),
  maxAttempts: T.Integer({ minimum: 1, maximum: RETRY_MAX_ATTEMPTS }),
});
export type RetryStrategy = Static<typeof RetryStrategy>;
const Job = T.Object({
  schedule: T.String({
    description:
      "cron: 6 fields (second minute hour day month weekday, UTC), 5 (seconds 0) or 7 (with year); or @hourly, @daily, @weekly, @monthly (expanded at save)",
  }),
  retryStrategy: T.Optional(RetryStrategy),
});
export type JobConfig = Static<typeof Job>;
const JobParam = T.Object({ schedule: Job.properties.schedule, retryStrategy: Opt(RetryStrategy) });

/** A kind's `config.timeout`: range and default in ms, and how the document describes it. */
export interface TimeoutSpec {
  minimum: number;
  maximum: number;
  default: number;
  description: string;
}

const configSchema = (timeout: TimeoutSpec) =>
  T.Object({
    revisions: T.Integer({ minimum: 1, description: "revisions kept, 1..tier max_revisions" }),
    timeout: T.Integer({ minimum: timeout.minimum, maximum: timeout.maximum, description: timeout.description }),
    job: T.Optional(Job),
  });
export type TrackerConfig = Static<ReturnType<typeof configSchema>>;

const phaseSchema = (phases: readonly string[]) =>
  T.Object({
    phase: StringEnum(phases),
    durationMs: T.Integer({ minimum: 0 }),
    status: StringEnum(["success", "failure", "skipped"]),
    error: T.Optional(T.String()),
  });
export type PhaseRecord = Static<ReturnType<typeof phaseSchema>>;
export type PhaseStatus = PhaseRecord["status"];

const logSchema = (name: string, phases: readonly string[]) =>
  Named(
    `${name}Log`,
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
      error: T.Optional(T.String({ maxLength: MAX_LOG_ERROR_CHARS })),
      phases: T.Array(phaseSchema(phases), { description: `every phase, in order: ${phases.join(", ")}` }),
    }),
  );
export type TrackerLog = Static<ReturnType<typeof logSchema>>;

const trackerSchema = <Target extends TSchema>(name: string, target: Target, config: ReturnType<typeof configSchema>) =>
  Named(
    name,
    T.Object({
      id: Uuid(),
      name: T.String(),
      enabled: T.Boolean(),
      config,
      target,
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
/** A tracker as the API answers it, of any kind (`Target`: the kind's stored target). */
export type TrackerWire<Target = unknown> = Omit<Static<ReturnType<typeof trackerSchema<TUnknown>>>, "target"> & { target: Target };

// ---- one kind's contract ----

export interface TrackerKindSpec<Target extends TSchema, TargetParam extends TSchema> {
  /** Schema name prefix: `ApiTracker` or `PageTracker` (→ ApiTracker, ApiTrackerLog, ApiTrackerCreateParams, …). */
  name: string;
  /** The kind in descriptions, plural ("API trackers"). */
  many: string;
  /** The stored (echoed) target, and the target in requests. */
  target: Target;
  targetParam: TargetParam;
  timeout: TimeoutSpec;
  /** Every phase of a run, in order (the kind's own, then CORE_PHASES). */
  phases: readonly string[];
}

/** The schemas of one tracker kind (kind-routes.ts declares its endpoints with them). */
export function trackerKindContract<Target extends TSchema, TargetParam extends TSchema>(spec: TrackerKindSpec<Target, TargetParam>) {
  const N = spec.name;
  const Config = configSchema(spec.timeout);
  const ConfigParam = T.Object({
    revisions: Opt(T.Integer({ minimum: 1, description: "1..tier max_revisions, default 3" })),
    timeout: Opt(T.Integer({ ...spec.timeout, description: `${spec.timeout.description}, default ${spec.timeout.default}` })),
    job: Opt(T.Object(JobParam.properties, { description: "absent = manual runs only" })),
  });
  const Tracker = trackerSchema(N, spec.target, Config);
  const Log = logSchema(N, spec.phases);
  const Members = {
    name: T.String({ minLength: 1, description: `1..100 characters after trimming, unique among your ${spec.many}` }),
    enabled: Opt(T.Boolean({ description: "default true; disabling unschedules (manual refresh still works)" })),
    config: Opt(ConfigParam),
    target: spec.targetParam,
    notifications: Opt(T.Boolean({ description: "default false: email on change" })),
    secrets: Opt(SecretsSelectorParam),
    tagIds: TagIdsParam,
  };
  return {
    /** The schema name prefix (the list's page is `Page_<name>`). */
    name: N,
    Tracker,
    /** The created tracker, plus `warnings` when a script of its target does not compile (§27). */
    Saved: Named(
      `${N}Saved`,
      T.Composite([Tracker, T.Object({ warnings: T.Optional(ScriptWarnings) })], {
        description: "the tracker, plus `warnings` when a script does not compile",
      }),
    ),
    Log,
    LogsSummary: Named(`${N}LogsSummary`, Dict(T.Array(Log), { description: "tracker id → its 10 newest logs, newest first" })),
    CreateParams: Named(`${N}CreateParams`, T.Object(Members)),
    UpdateParams: Named(
      `${N}UpdateParams`,
      T.Partial(T.Object(Members), { description: "present members replace; absent ones are kept; {} → 400", minProperties: 1 }),
    ),
    HistoryParams: Named(`${N}GetHistoryParams`, HistoryParams),
    /** `_debug`: `target` as on create, `config` (only timeout is used), `secrets`. */
    DebugParams: Named(
      `${N}DebugParams`,
      T.Object({
        target: spec.targetParam,
        config: Opt(T.Object({ timeout: Opt(T.Integer()) }, { description: "as on create; only timeout is used" })),
        secrets: Opt(SecretsSelectorParam),
      }),
    ),
  };
}
export type TrackerKindContract = ReturnType<typeof trackerKindContract<TSchema, TSchema>>;
