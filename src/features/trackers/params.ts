// Parameters every tracker kind shares (supplement §15.1, §16.1, §14): name, enabled, notifications, and
// `config` = {revisions, timeout, job?}; plus the target members both kinds validate alike (URL, script, extra
// headers). Pure validation; the kind supplies its timeout range. The shapes are contract.ts's, the limits
// shared-rules.ts's.
import type { TierLimits } from "../../config/schema";
import { ApiError, invalid } from "../../platform/core/errors";
import { normalizeName, utf8Length } from "../../platform/core/validate";
import { analyzeSchedule } from "../../platform/jobs/cron";
import { INVALID_VALUE as OUTBOUND_BAD_VALUE } from "../../platform/net/client";
import { TOKEN_RE } from "../../platform/net/shared-rules";
import { literalTargetRefused } from "../../platform/net/guard";
import { MAX_SCRIPT_BYTES } from "../scripts/shared-rules";
import type { JobConfig, TrackerConfig } from "./contract";
import {
  DEFAULT_REVISIONS,
  HEADER_VALUE_BAD_RE,
  MAX_HEADERS,
  MAX_URL_CHARS,
  NAME_MAX,
  RETRY_MAX_ATTEMPTS,
  RETRY_MAX_INTERVAL_MS,
  RETRY_MIN_INTERVAL_MS,
} from "./shared-rules";

/** A kind's `config.timeout` range in ms (shared-rules.ts API_TIMEOUT_MS, PAGE_TIMEOUT_MS). */
export interface TimeoutRange {
  readonly min: number;
  readonly max: number;
  readonly default: number;
}

export interface TargetOptions {
  allowPrivate: boolean;
}

export const present = (v: unknown) => v !== undefined && v !== null;
export const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A request body as an object: absent/null → `{}`; anything but a JSON object → 400. */
export const asBody = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null) return {};
  if (!isPlainObject(body)) throw invalid("body: must be a JSON object");
  return body;
};

export function checkBool(raw: unknown, field: string): boolean {
  if (typeof raw !== "boolean") throw invalid(`${field}: must be a boolean`);
  return raw;
}

export function checkInt(raw: unknown, field: string, min: number, max: number): number {
  if (typeof raw !== "number" || !Number.isInteger(raw) || raw < min || raw > max)
    throw invalid(`${field}: must be an integer from ${min} to ${max}`);
  return raw;
}

export const checkName = (raw: unknown) => normalizeName(raw, NAME_MAX);

/** `config`: absent/null → defaults; `job` absent/null → manual only. Schedules are checked against the tier. */
export function parseConfig(raw: unknown, opts: { limits: TierLimits; nowMs: number; timeout: TimeoutRange; field?: string }): TrackerConfig {
  const field = opts.field ?? "config";
  const maxRevisions = opts.limits.max_revisions;
  if (!present(raw)) return { revisions: Math.min(DEFAULT_REVISIONS, maxRevisions), timeout: opts.timeout.default };
  if (!isPlainObject(raw)) throw invalid(`${field}: must be an object`);
  const revisions = present(raw.revisions)
    ? checkInt(raw.revisions, `${field}.revisions`, 1, maxRevisions)
    : Math.min(DEFAULT_REVISIONS, maxRevisions);
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
      throw invalid(
        `${f}: retries need at least ${RETRY_MIN_INTERVAL_MS} ms between scheduled runs; this schedule runs every ${analysis.minIntervalMs} ms`,
      );
    }
    job.retryStrategy = {
      type: "constant",
      interval: checkInt(rs.interval, `${f}.interval`, RETRY_MIN_INTERVAL_MS, maxInterval),
      maxAttempts: checkInt(rs.maxAttempts, `${f}.maxAttempts`, 1, RETRY_MAX_ATTEMPTS),
    };
  }
  return job;
}

/** An absolute http(s) URL of at most MAX_URL_CHARS (trimmed); refused literal targets → 400 TARGET_NOT_ALLOWED unless private targets are allowed. */
export function parseUrl(raw: unknown, field: string, allowPrivate: boolean): string {
  if (!present(raw)) throw invalid(`${field}: is required`);
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const text = raw.trim();
  if (text.length === 0 || text.length > MAX_URL_CHARS)
    throw invalid(`${field}: must be an http or https URL of at most ${MAX_URL_CHARS} characters`);
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw invalid(`${field}: must be an absolute http or https URL`);
  }
  if ((u.protocol !== "http:" && u.protocol !== "https:") || u.hostname === "") throw invalid(`${field}: must be an absolute http or https URL`);
  if (!allowPrivate && literalTargetRefused(u.href)) throw new ApiError(400, "TARGET_NOT_ALLOWED", `${field}: URL not allowed (private address)`);
  return text;
}

/** An optional script source: absent/null → undefined, else 1..MAX_SCRIPT_BYTES bytes of text. */
export function parseScript(raw: unknown, field: string): string | undefined {
  if (!present(raw)) return undefined;
  if (typeof raw !== "string") throw invalid(`${field}: must be a string or null`);
  const n = utf8Length(raw);
  if (n < 1 || n > MAX_SCRIPT_BYTES) throw invalid(`${field}: must be 1 to ${MAX_SCRIPT_BYTES} bytes`);
  return raw;
}

/**
 * Extra request headers: absent/null → `{}`; at most MAX_HEADERS RFC 9110 token names with string values free of
 * control characters (HEADER_VALUE_BAD_RE; tab allowed). `outbound`: the values are sent by the outbound HTTP client
 * (API trackers), which also refuses characters above U+00FF (OUTBOUND_BAD_VALUE, platform/net/client.ts), so a
 * value it would refuse at every run is refused when it is saved (page trackers hand theirs to Chromium, which
 * sends them as UTF-8).
 */
export function parseHeaders(raw: unknown, field: string, opts: { outbound?: boolean } = {}): Record<string, string> {
  if (!present(raw)) return {};
  if (!isPlainObject(raw)) throw invalid(`${field}: must be an object of header names to string values`);
  const entries = Object.entries(raw);
  if (entries.length > MAX_HEADERS) throw invalid(`${field}: at most ${MAX_HEADERS} headers`);
  const out: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!TOKEN_RE.test(name)) throw invalid(`${field}: invalid header name ${JSON.stringify(name.slice(0, 100))}`);
    if (typeof value !== "string") throw invalid(`${field}.${name}: must be a string`);
    if (HEADER_VALUE_BAD_RE.test(value)) throw invalid(`${field}.${name}: must not contain control characters`);
    if (opts.outbound && OUTBOUND_BAD_VALUE.test(value)) throw invalid(`${field}.${name}: must not contain characters above U+00FF`);
    out[name] = value;
  }
  return out;
}
