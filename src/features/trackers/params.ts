// Parameters every tracker kind shares (supplement §15.1, §16.1, §14): name, enabled, notifications, and
// `config` = {revisions, timeout, job?}. Pure validation; the kind supplies its timeout range.
import type { TierLimits } from "../../config/schema";
import { invalid } from "../../platform/http/errors";
import { normalizeName } from "../../platform/http/validate";
import { analyzeSchedule } from "../../platform/jobs/cron";

export interface RetryStrategy {
  type: "constant";
  /** ms */
  interval: number;
  maxAttempts: number;
}

export interface JobConfig {
  schedule: string;
  retryStrategy?: RetryStrategy;
}

export interface TrackerConfig {
  revisions: number;
  /** ms */
  timeout: number;
  job?: JobConfig;
}

export interface TimeoutRange {
  min: number;
  max: number;
  default: number;
}

export const DEFAULT_REVISIONS = 3;
export const RETRY_MIN_INTERVAL_MS = 60_000;
export const RETRY_MAX_INTERVAL_MS = 43_200_000;
export const RETRY_MAX_ATTEMPTS = 10;
export const NAME_MAX = 100;

export const present = (v: unknown) => v !== undefined && v !== null;
export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export function checkBool(raw: unknown, field: string): boolean {
  if (typeof raw !== "boolean") throw invalid(`${field}: must be a boolean`);
  return raw;
}

export function checkInt(raw: unknown, field: string, min: number, max: number): number {
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < min || raw > max) throw invalid(`${field}: must be an integer from ${min} to ${max}`);
  return raw;
}

export const checkName = (raw: unknown) => normalizeName(raw, NAME_MAX);

/** `config`: absent/null → defaults; `job` absent/null → manual only. Schedules are checked against the tier. */
export function parseConfig(raw: unknown, opts: { limits: TierLimits; nowMs: number; timeout: TimeoutRange; field?: string }): TrackerConfig {
  const field = opts.field ?? "config";
  const maxRevisions = opts.limits.max_revisions;
  if (!present(raw)) return { revisions: Math.min(DEFAULT_REVISIONS, maxRevisions), timeout: opts.timeout.default };
  if (!isPlainObject(raw)) throw invalid(`${field}: must be an object`);
  const revisions = present(raw.revisions) ? checkInt(raw.revisions, `${field}.revisions`, 1, maxRevisions) : Math.min(DEFAULT_REVISIONS, maxRevisions);
  const timeout = parseTimeout(raw.timeout, opts.timeout, `${field}.timeout`);
  const config: TrackerConfig = { revisions, timeout };
  if (present(raw.job)) config.job = parseJob(raw.job, opts.limits, opts.nowMs, `${field}.job`);
  return config;
}

export function parseTimeout(raw: unknown, range: TimeoutRange, field: string): number {
  return present(raw) ? checkInt(raw, field, range.min, range.max) : range.default;
}

export function parseJob(raw: unknown, limits: TierLimits, nowMs: number, field: string): JobConfig {
  if (!isPlainObject(raw)) throw invalid(`${field}: must be an object with a schedule`);
  const analysis = analyzeSchedule(raw.schedule, nowMs, { field: `${field}.schedule`, minAllowedSec: limits.min_schedule_interval_sec });
  const job: JobConfig = { schedule: analysis.schedule };
  if (present(raw.retryStrategy)) {
    const rs = raw.retryStrategy;
    const f = `${field}.retryStrategy`;
    if (!isPlainObject(rs)) throw invalid(`${f}: must be an object {type, interval, maxAttempts}`);
    if (rs.type !== "constant") throw invalid(`${f}.type: must be constant`);
    const maxInterval = Math.min(RETRY_MAX_INTERVAL_MS, analysis.minIntervalMs);
    if (maxInterval < RETRY_MIN_INTERVAL_MS) {
      throw invalid(`${f}: retries need at least ${RETRY_MIN_INTERVAL_MS} ms between scheduled runs; this schedule runs every ${analysis.minIntervalMs} ms`);
    }
    job.retryStrategy = {
      type: "constant",
      interval: checkInt(rs.interval, `${f}.interval`, RETRY_MIN_INTERVAL_MS, maxInterval),
      maxAttempts: checkInt(rs.maxAttempts, `${f}.maxAttempts`, 1, RETRY_MAX_ATTEMPTS),
    };
  }
  return job;
}
