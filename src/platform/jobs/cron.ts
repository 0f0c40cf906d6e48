// Cron schedules (supplement §14) on croner: 6 fields `second minute hour day-of-month month day-of-week` in UTC,
// 5 fields = seconds 0 (stored with "0 " prepended), 7 fields add a year. Presets (@hourly, @daily, @weekly,
// @monthly) are expanded against the current UTC time into anchored crons. A schedule is valid when it parses
// and has at least 2 future occurrences; its minimum interval is the smallest gap among the next 1,000.
import { Cron } from "croner";
import { ApiError, invalid } from "../core/errors";

export const MAX_SCHEDULE_LENGTH = 256;
/** Occurrences examined for the minimum interval. */
export const MIN_INTERVAL_SAMPLE = 1000;
const SECOND_MS = 1000;

const invalidSchedule = (field: string, reason: string) => new ApiError(400, "INVALID_SCHEDULE", `${field}: ${reason}`);

/** Bounded cache of parsed patterns (a scheduler asks for the same few patterns over and over). */
const cache = new Map<string, Cron>();
const CACHE_MAX = 10_000;

function cronFor(pattern: string): Cron {
  let c = cache.get(pattern);
  if (c === undefined) {
    // paused + no callback: croner never arms a timer; we only ask it for occurrences.
    // utcOffset 0 is UTC without Intl time-zone conversions (an order of magnitude faster than timezone "UTC").
    c = new Cron(pattern, { paused: true, utcOffset: 0, mode: "6-or-7-parts" });
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
    cache.set(pattern, c);
  }
  return c;
}

/** Expands a preset at `nowMs` (UTC): minute m, hour h, day d, weekday w. */
export function expandPreset(preset: string, nowMs: number): string | undefined {
  const d = new Date(nowMs);
  const m = d.getUTCMinutes();
  const h = d.getUTCHours();
  switch (preset.toLowerCase()) {
    case "@hourly":
      return `0 ${m} * * * *`;
    case "@daily":
      return `0 ${m} ${h} * * *`;
    case "@weekly":
      return `0 ${m} ${h} * * ${d.getUTCDay()}`;
    case "@monthly":
      return `0 ${m} ${h} ${Math.min(d.getUTCDate(), 28)} * *`;
    default:
      return undefined;
  }
}

/**
 * The stored form of a schedule: presets expanded, whitespace collapsed, 5 fields → "0 " prepended.
 * Throws 400 INVALID_INPUT for a non-string and INVALID_SCHEDULE for anything croner rejects.
 */
export function normalizeSchedule(raw: unknown, nowMs: number, field = "schedule"): string {
  if (raw === undefined || raw === null) throw invalid(`${field}: is required`);
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const text = raw.trim();
  if (text === "") throw invalidSchedule(field, "must not be empty");
  if (text.length > MAX_SCHEDULE_LENGTH) throw invalidSchedule(field, `must be at most ${MAX_SCHEDULE_LENGTH} characters`);
  let pattern: string;
  if (text.startsWith("@")) {
    const expanded = expandPreset(text, nowMs);
    if (expanded === undefined) throw invalidSchedule(field, "unknown preset; use @hourly, @daily, @weekly or @monthly");
    pattern = expanded;
  } else {
    const fields = text.split(/\s+/);
    if (fields.length < 5 || fields.length > 7) {
      throw invalidSchedule(field, "must have 6 fields (second minute hour day-of-month month day-of-week); 5 and 7 fields are also accepted");
    }
    pattern = (fields.length === 5 ? ["0", ...fields] : fields).join(" ");
  }
  try {
    cronFor(pattern);
  } catch (err) {
    const msg = String((err as Error)?.message ?? err).replace(/^CronPattern:\s*/, "");
    throw invalidSchedule(field, msg.slice(0, 300));
  }
  return pattern;
}

/** The first occurrence strictly after `afterMs`, or undefined when the pattern never fires again. */
export function nextOccurrence(pattern: string, afterMs: number): number | undefined {
  const next = cronFor(pattern).nextRun(new Date(afterMs));
  return next ? next.getTime() : undefined;
}

/** Up to `n` occurrences strictly after `afterMs`. */
export function nextOccurrences(pattern: string, afterMs: number, n: number): number[] {
  const out: number[] = [];
  let at = afterMs;
  for (let i = 0; i < n; i++) {
    const next = nextOccurrence(pattern, at);
    if (next === undefined) break;
    out.push(next);
    at = next;
  }
  return out;
}

export interface ScheduleAnalysis {
  /** Stored form (see normalizeSchedule). */
  schedule: string;
  /** Smallest gap in ms between consecutive occurrences among the next 1,000. */
  minIntervalMs: number;
  /** The next 5 occurrences (ms). */
  next: number[];
}

/**
 * Normalizes and validates a schedule at `nowMs`: at least 2 future occurrences (else INVALID_SCHEDULE) and,
 * when `minAllowedSec` is given, a minimum interval of at least that many seconds (else SCHEDULE_TOO_FREQUENT).
 */
export function analyzeSchedule(raw: unknown, nowMs: number, opts: { field?: string; minAllowedSec?: number } = {}): ScheduleAnalysis {
  const field = opts.field ?? "schedule";
  const schedule = normalizeSchedule(raw, nowMs, field);
  const next = nextOccurrences(schedule, nowMs, 5);
  if (next.length < 2) throw invalidSchedule(field, "never fires (fewer than 2 future occurrences)");
  const minIntervalMs = minInterval(schedule, nowMs);
  if (opts.minAllowedSec !== undefined && minIntervalMs < opts.minAllowedSec * 1000) {
    throw new ApiError(
      400,
      "SCHEDULE_TOO_FREQUENT",
      `${field}: runs as often as every ${formatDuration(minIntervalMs)}; the minimum interval for your plan is ${formatDuration(opts.minAllowedSec * 1000)}`,
    );
  }
  return { schedule, minIntervalMs, next };
}

/** Results of minInterval per pattern, reused for a minute (1,000 occurrences of a weekly pattern take ~0.1 s). */
const minCache = new Map<string, { at: number; value: number }>();
const MIN_CACHE_TTL_MS = 60_000;

/** Smallest gap in ms between consecutive occurrences among the next 1,000 after `fromMs`. */
export function minInterval(pattern: string, fromMs: number): number {
  const hit = minCache.get(pattern);
  if (hit && Math.abs(fromMs - hit.at) < MIN_CACHE_TTL_MS) return hit.value;
  let min = Number.POSITIVE_INFINITY;
  let prev = nextOccurrence(pattern, fromMs);
  for (let i = 1; i < MIN_INTERVAL_SAMPLE && prev !== undefined; i++) {
    const occ = nextOccurrence(pattern, prev);
    if (occ === undefined) break;
    min = Math.min(min, occ - prev);
    prev = occ;
    if (min <= SECOND_MS) break; // occurrences are whole seconds: nothing beats one second
  }
  if (minCache.size >= CACHE_MAX) minCache.delete(minCache.keys().next().value as string);
  minCache.set(pattern, { at: fromMs, value: min });
  return min;
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s % 86400 === 0) return `${s / 86400} d`;
  if (s % 3600 === 0) return `${s / 3600} h`;
  if (s % 60 === 0) return `${s / 60} min`;
  return `${s} s`;
}
