// The endpoints every tracker kind has (supplement §15, §16, §17): list, create, get, update, delete, `_history`,
// `_clear`, `_logs`, `_clear_logs` and `_logs_summary` under the kind's base path, declared with the kind's schemas
// (trackerKindContract, contract.ts). A kind's routes.ts supplies what is its own (its contract, descriptions, and a
// plugin with its extra endpoints such as `_test` and `_debug`, registered after `_logs_summary` so they come before
// `/:tracker_id`). Bodies are read loosely (looseBody) and checked by the services.
import { Elysia, type AnyElysia } from "elysia";
import { looseBody, op, Page, T } from "../../platform/http/contract";
import type { AuthPlugin } from "../../platform/auth/plugin";
import { ListQueryParams, ListQuerySchema } from "../../platform/http/list-query";
import { Revision, type TrackerKindContract } from "./contract";
import type { TrackerKindService } from "./kind-service";
import type { TrackersService } from "./service";
import { ScriptWarnings } from "../scripts/contract";

/** §27: how a save checks a target's scripts. */
const SCRIPT_CHECKED =
  "API configurators and extractors are compiled by QuickJS in their source forms; a page extractor is parsed, in the page's forms, as code for Chromium";

/** What the trackers routes use, every kind's included: the auth plugin and the feature's service (app.ts wires them). */
export interface TrackersRoutesDeps {
  auth: AuthPlugin;
  trackers: TrackersService;
}

export interface TrackerRoutesSpec<Target> {
  /** Plugin name. */
  name: string;
  /** Base path, e.g. `/api/web_scraping/api_trackers`. */
  base: string;
  service: TrackerKindService<Target>;
  /** The kind's schemas (trackerKindContract in contract.ts, called by the kind's contract.ts). */
  contract: TrackerKindContract;
  /** The kind in summaries: singular with its article ("an API tracker") and plural ("API trackers"). */
  one: string;
  many: string;
  /** A create body that works (the docs page's "Try it out"). */
  example: Record<string, unknown>;
  /** The kind's own endpoints (a plugin with `.use(auth)`), registered after `_logs_summary`. */
  own: AnyElysia;
}

export function trackerRoutes<Target>({ auth }: { auth: AuthPlugin }, spec: TrackerRoutesSpec<Target>) {
  const { base: BASE, service } = spec;
  const { Tracker, Saved, Log, LogsSummary, CreateParams, UpdateParams, HistoryParams } = spec.contract;
  const tags = ["web_scraping"];
  const SAVE_ERRORS = {
    400: ["LIMIT_REACHED" as const, "INVALID_SCHEDULE" as const, "SCHEDULE_TOO_FREQUENT" as const, "TARGET_NOT_ALLOWED" as const],
  };

  return new Elysia({ name: spec.name })
    .use(auth)
    .get(BASE, ({ user, query }) => service.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      detail: op({
        tags,
        summary: `List ${spec.many} (common list query)`,
        query: ListQueryParams,
        responses: { 200: Page(spec.contract.name, Tracker) },
      }),
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
          responses: { 201: Saved },
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
        responses: { 200: LogsSummary },
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
      body: looseBody(HistoryParams),
      detail: op({
        tags,
        summary: "Revisions, newest first ({refresh: true} runs the tracker first; {diff: true} adds unified diffs)",
        body: HistoryParams,
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
