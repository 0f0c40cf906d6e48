// The editor's values shared by both kinds (name, tags, switches, secrets access, timeout, revisions, schedule),
// how they come from a stored tracker and go into a create/update body (supplement §15.1, §16.1), and where an API
// error that names a field ("target.requests[0].url: …") is shown in the form.
import { trackers as trackerRules } from "../../api/rules.gen";
import type { ApiTrackerCreateParams } from "../../api/types";
import type { AnyTracker } from "./kind";
import { DEFAULT_SCHEDULE, jobBody, scheduleFromJob, type ScheduleValue } from "./schedule";

export type SecretsMode = "none" | "all" | "selected";

export interface CommonValues {
  name: string;
  enabled: boolean;
  notifications: boolean;
  tagIds: string[];
  secretsMode: SecretsMode;
  secretIds: string[];
  timeoutSec: number;
  revisions: number;
  schedule: ScheduleValue;
}

export interface KeyedHeader {
  key: string;
  name: string;
  value: string;
}

let seq = 0;
/** A React key for a list row of the form (headers, requests). */
export const rowKey = () => `r${++seq}`;

export const headersFrom = (h: Record<string, string> | undefined): KeyedHeader[] =>
  Object.entries(h ?? {}).map(([name, value]) => ({ key: rowKey(), name, value }));
export const headersBody = (rows: KeyedHeader[]): Record<string, string> =>
  Object.fromEntries(rows.filter((r) => r.name.trim() !== "").map((r) => [r.name.trim(), r.value]));

/** The editor's common values for a new tracker, a copy (`copy`) or an existing one. */
export function commonFrom(t: AnyTracker | undefined, opts: { copy: boolean; timeoutSec: number }): CommonValues {
  if (!t)
    return {
      name: "",
      enabled: true,
      notifications: false,
      tagIds: [],
      secretsMode: "none",
      secretIds: [],
      timeoutSec: opts.timeoutSec,
      revisions: trackerRules.DEFAULT_REVISIONS,
      schedule: { ...DEFAULT_SCHEDULE },
    };
  const s = t.secrets;
  return {
    name: opts.copy ? `${t.name} (copy)`.slice(0, trackerRules.NAME_MAX) : t.name,
    enabled: t.enabled,
    notifications: t.notifications,
    tagIds: t.tagIds,
    secretsMode: typeof s === "string" ? s : "selected",
    secretIds: typeof s === "string" ? [] : s.selected,
    timeoutSec: Math.round(Number(t.config.timeout) / 1000),
    revisions: Number(t.config.revisions),
    schedule: scheduleFromJob(t.config.job ? { schedule: t.config.job.schedule, retryStrategy: t.config.job.retryStrategy } : undefined),
  };
}

/** Create/update members both kinds share (the page kind's are the same type). */
export type CommonBody = Omit<ApiTrackerCreateParams, "target">;

/** The common members of a create/update body; `target` is the kind's. */
export function commonBody(v: CommonValues): CommonBody {
  return {
    name: v.name.trim(),
    enabled: v.enabled,
    notifications: v.notifications,
    tagIds: v.tagIds,
    secrets: v.secretsMode === "selected" ? (v.secretIds.length ? { selected: v.secretIds } : "none") : v.secretsMode,
    config: { revisions: v.revisions, timeout: v.timeoutSec * 1000, job: jobBody(v.schedule) },
  };
}

/** `secrets` as `_debug` takes it. */
export const secretsBody = (v: CommonValues): CommonBody["secrets"] => commonBody(v).secrets;

const COMMON_FIELDS: [RegExp, string][] = [
  [/^name$/, "name"],
  [/^config\.revisions$/, "revisions"],
  [/^config\.timeout$/, "timeoutSec"],
  [/^config\.job\.retryStrategy/, "schedule.retryMinutes"],
  [/^config\.job/, "schedule.cron"],
  [/^secrets/, "secretIds"],
  [/^tagIds/, "tagIds"],
];

/**
 * The form field an API 400 names, e.g. "target.requests[0].url: must be …" → {field: "requests.0.url", message}.
 * `kindFields` maps the kind's own paths (with [n] written as .n); undefined when the message names no field.
 */
export function errorFieldPath(
  message: string,
  kindFields: [RegExp, string | ((m: RegExpExecArray) => string)][],
): { field: string; message: string } | undefined {
  const m = /^([A-Za-z][\w.[\]-]*): (.+)$/s.exec(message);
  if (!m) return undefined;
  const path = m[1]!.replace(/\[(\d+)\]/g, ".$1");
  for (const [re, to] of [...kindFields, ...COMMON_FIELDS]) {
    const hit = re.exec(path);
    if (hit) return { field: typeof to === "string" ? to : to(hit), message: m[2]!.charAt(0).toUpperCase() + m[2]!.slice(1) };
  }
  return undefined;
}
