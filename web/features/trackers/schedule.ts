// Schedules in words and the editor's presets (supplement §14). Stored schedules are 6-field crons in UTC
// (`second minute hour day-of-month month day-of-week`, a 7th field is the year; presets are expanded when saved),
// so a list can say "every day at 06:00 UTC" instead of "0 0 6 * * *". Patterns the words do not cover are shown
// as the cron itself (describeCron returns null). Pure functions: no DOM, no React (unit-tested).

export const WEEKDAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"] as const;
const DAY_NAMES: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

const pad = (n: number) => String(n).padStart(2, "0");
const isNum = (s: string) => /^\d{1,2}$/.test(s);

/** A day-of-week field entry (0–7, or a name) as 0–6; undefined when it is not one day. */
function weekday(s: string): number | undefined {
  const lower = s.toLowerCase();
  if (lower in DAY_NAMES) return DAY_NAMES[lower];
  if (!isNum(s)) return undefined;
  const n = Number(s);
  return n >= 0 && n <= 7 ? n % 7 : undefined;
}

/** "Monday", "Monday and Friday", "Monday, Wednesday and Friday", "Monday to Friday"; undefined when not understood. */
function weekdayWords(field: string): string | undefined {
  const range = /^(\w+)-(\w+)$/.exec(field);
  if (range) {
    const a = weekday(range[1]!);
    const b = weekday(range[2]!);
    if (a === undefined || b === undefined) return undefined;
    if (a === 1 && (b === 5 || range[2] === "5")) return "Monday to Friday";
    return `${WEEKDAYS[a]} to ${WEEKDAYS[b]}`;
  }
  const days = field.split(",").map(weekday);
  if (days.some((d) => d === undefined)) return undefined;
  const names = [...new Set(days)].map((d) => WEEKDAYS[d!]);
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

const ordinal = (n: number) => {
  const s = n % 100 >= 11 && n % 100 <= 13 ? "th" : (({ 1: "st", 2: "nd", 3: "rd" } as Record<number, string>)[n % 10] ?? "th");
  return `${n}${s}`;
};

function every(n: number, unit: string) {
  return n === 1 ? `every ${unit}` : `every ${n} ${unit}s`;
}

/** A cron in words ("every day at 06:00 UTC"), or null when the pattern is not one of the common shapes. */
export function describeCron(cron: string): string | null {
  const f = cron.trim().split(/\s+/);
  if (f.length === 5) f.unshift("0");
  if (f.length === 7) {
    if (f[6] !== "*") return null;
    f.pop();
  }
  if (f.length !== 6) return null;
  const [sec, min, hour, dom, mon, dow] = f as [string, string, string, string, string, string];
  if (mon !== "*") return null;
  const step = (s: string) => {
    const m = /^(?:\*|0)\/(\d+)$/.exec(s);
    return m ? Number(m[1]) : undefined;
  };
  // Sub-minute and sub-hour steps with everything else open.
  if (dom === "*" && dow === "*" && hour === "*") {
    if (min === "*" && sec === "*") return "every second";
    if (min === "*" && step(sec)) return every(step(sec)!, "second");
    if (min === "*" && isNum(sec)) return "every minute";
    if (isNum(sec) && step(min)) return `${every(step(min)!, "minute")}${sec === "0" ? "" : ` at second ${Number(sec)}`}`;
    if (isNum(sec) && isNum(min)) return `every hour at minute ${Number(min)}${sec === "0" ? "" : `:${pad(Number(sec))}`}`;
    return null;
  }
  if (!isNum(sec) || !isNum(min)) return null;
  const at = (h: number) => `${pad(h)}:${pad(Number(min))}${sec === "0" ? "" : `:${pad(Number(sec))}`} UTC`;
  if (step(hour) && dom === "*" && dow === "*") return `${every(step(hour)!, "hour")} at minute ${Number(min)}`;
  if (!isNum(hour)) {
    // A list of hours, e.g. "6,18": "every day at 06:00 and 18:00 UTC".
    if (/^\d{1,2}(,\d{1,2})+$/.test(hour) && dom === "*" && dow === "*") {
      const times = hour.split(",").map((h) => `${pad(Number(h))}:${pad(Number(min))}`);
      return `every day at ${times.slice(0, -1).join(", ")} and ${times.at(-1)} UTC`;
    }
    return null;
  }
  const time = at(Number(hour));
  if (dom === "*" && dow === "*") return `every day at ${time}`;
  if (dom === "*") {
    const days = weekdayWords(dow);
    if (!days) return null;
    return days === "Monday to Friday" ? `Monday to Friday at ${time}` : `every ${days} at ${time}`;
  }
  if (dow === "*" && isNum(dom)) return `on the ${ordinal(Number(dom))} of every month at ${time}`;
  if (dow === "*" && dom === "L") return `on the last day of every month at ${time}`;
  return null;
}

/** A tracker's schedule in words: "manual only" without a job, else the cron in words or the cron itself. */
export function scheduleWords(schedule: string | undefined): string {
  if (!schedule) return "Manual only";
  const words = describeCron(schedule);
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : `Cron ${schedule} (UTC)`;
}

/** "1 h", "15 min", "1 h 30 min", "10 s", "2 days" for a duration in ms. */
export function formatInterval(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  if (s % 86_400 === 0) return `${s / 86_400} day${s === 86_400 ? "" : "s"}`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  const parts = [h ? `${h} h` : "", m ? `${m} min` : "", rest ? `${rest} s` : ""].filter(Boolean);
  return parts.join(" ");
}

// ---- the editor's presets ------------------------------------------------------------------------------------

export type SchedulePreset = "manual" | "hourly" | "daily" | "weekly" | "custom";

export interface ScheduleValue {
  preset: SchedulePreset;
  /** Minute past the hour (hourly, daily, weekly). */
  minute: number;
  /** Hour of the day, UTC (daily, weekly). */
  hour: number;
  /** 0 = Sunday (weekly). */
  weekday: number;
  /** The cron text (custom). */
  cron: string;
  retry: boolean;
  /** Minutes between retries. */
  retryMinutes: number;
  retryAttempts: number;
}

export const DEFAULT_SCHEDULE: ScheduleValue = {
  preset: "manual",
  minute: 0,
  hour: 6,
  weekday: 1,
  cron: "0 0 6 * * *",
  retry: false,
  retryMinutes: 5,
  retryAttempts: 3,
};

/** The cron a preset stands for (undefined for manual). */
export function presetCron(v: ScheduleValue): string | undefined {
  switch (v.preset) {
    case "manual":
      return undefined;
    case "hourly":
      return `0 ${v.minute} * * * *`;
    case "daily":
      return `0 ${v.minute} ${v.hour} * * *`;
    case "weekly":
      return `0 ${v.minute} ${v.hour} * * ${v.weekday}`;
    case "custom":
      return v.cron.trim();
  }
}

/** The editor's value for a stored job: a preset when the cron is exactly one, else custom. */
export function scheduleFromJob(
  job: { schedule: string; retryStrategy?: { interval: number | string; maxAttempts: number | string } } | undefined,
): ScheduleValue {
  if (!job) return { ...DEFAULT_SCHEDULE };
  const retry = job.retryStrategy
    ? {
        retry: true,
        retryMinutes: Math.max(1, Math.round(Number(job.retryStrategy.interval) / 60_000)),
        retryAttempts: Number(job.retryStrategy.maxAttempts),
      }
    : { retry: false, retryMinutes: DEFAULT_SCHEDULE.retryMinutes, retryAttempts: DEFAULT_SCHEDULE.retryAttempts };
  const base = { ...DEFAULT_SCHEDULE, ...retry, cron: job.schedule };
  const f = job.schedule.trim().split(/\s+/);
  const n = (s: string | undefined, max: number) => (s !== undefined && isNum(s) && Number(s) <= max ? Number(s) : undefined);
  if (f.length === 6 && f[0] === "0" && f[4] === "*") {
    const minute = n(f[1], 59);
    const hour = n(f[2], 23);
    if (minute !== undefined && f[2] === "*" && f[3] === "*" && f[5] === "*") return { ...base, preset: "hourly", minute };
    if (minute !== undefined && hour !== undefined && f[3] === "*") {
      if (f[5] === "*") return { ...base, preset: "daily", minute, hour };
      const day = n(f[5], 7);
      if (day !== undefined) return { ...base, preset: "weekly", minute, hour, weekday: day % 7 };
    }
  }
  return { ...base, preset: "custom" };
}

/** `config.job` for a create/update body: null for manual only (supplement §14: absent/null = manual). */
export function jobBody(v: ScheduleValue): { schedule: string; retryStrategy?: { type: "constant"; interval: number; maxAttempts: number } } | null {
  const schedule = presetCron(v);
  if (schedule === undefined) return null;
  return v.retry ? { schedule, retryStrategy: { type: "constant", interval: v.retryMinutes * 60_000, maxAttempts: v.retryAttempts } } : { schedule };
}
