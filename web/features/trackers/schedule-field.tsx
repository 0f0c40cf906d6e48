// The schedule editor: presets (manual, hourly, daily, weekly) or a custom cron, always shown as the cron it saves;
// while you type, the API's parse_schedule (supplement §14) answers with the next five runs and the shortest gap
// between runs, or with its error (invalid, or more frequent than your plan allows). Retries of failed scheduled
// runs are set here too.
import { Alert, Code, Group, List, NumberInput, SegmentedControl, Select, Stack, Switch, Text, TextInput } from "@mantine/core";
import type { ReactNode } from "react";
import { ApiError, errorMessage } from "../../api/client";
import { trackers as trackerRules } from "../../api/rules.gen";
import { formatRelative } from "../../components/format";
import { useParsedSchedule } from "./trackers-api";
import { describeCron, formatInterval, presetCron, WEEKDAYS, type SchedulePreset, type ScheduleValue } from "./schedule";

const PRESETS: { value: SchedulePreset; label: string }[] = [
  { value: "manual", label: "Manual" },
  { value: "hourly", label: "Hourly" },
  { value: "daily", label: "Daily" },
  { value: "weekly", label: "Weekly" },
  { value: "custom", label: "Custom cron" },
];

const utc = new Intl.DateTimeFormat(undefined, {
  weekday: "short",
  day: "numeric",
  month: "short",
  year: "numeric",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  timeZone: "UTC",
  hour12: false,
});
const pad = (n: number) => String(n).padStart(2, "0");

/** The API's message without the field prefix ("schedule: runs as often as …" → "Runs as often as …"). */
const bare = (err: unknown) => {
  const m = errorMessage(err).replace(/^[\w.]+: /, "");
  return m.charAt(0).toUpperCase() + m.slice(1);
};

/** Retry interval bounds in minutes (the API's, in ms). */
const RETRY_MIN_MINUTES = trackerRules.RETRY_MIN_INTERVAL_MS / 60_000;
const RETRY_MAX_MINUTES = trackerRules.RETRY_MAX_INTERVAL_MS / 60_000;

export function ScheduleField({
  value,
  onChange,
  error,
  retryError,
}: {
  value: ScheduleValue;
  onChange: (v: ScheduleValue) => void;
  error?: ReactNode;
  retryError?: ReactNode;
}) {
  const set = (patch: Partial<ScheduleValue>) => onChange({ ...value, ...patch });
  const cron = presetCron(value);
  const parsed = useParsedSchedule(cron);
  const words = cron ? describeCron(cron) : null;
  const time = `${pad(value.hour)}:${pad(value.minute)}`;
  const setTime = (t: string) => {
    const m = /^(\d{1,2}):(\d{2})/.exec(t);
    if (m) set({ hour: Math.min(23, Number(m[1])), minute: Math.min(59, Number(m[2])) });
  };
  const minGapMs = parsed.data ? Number(parsed.data.minInterval) : undefined;
  const apiError = parsed.isError ? parsed.error : undefined;
  const tooFrequent = apiError instanceof ApiError && apiError.code === "SCHEDULE_TOO_FREQUENT";

  return (
    <Stack gap="sm">
      <SegmentedControl
        aria-label="Schedule"
        value={value.preset}
        onChange={(v) => set({ preset: v as SchedulePreset, ...(v === "custom" && value.preset !== "custom" && cron ? { cron } : {}) })}
        data={PRESETS}
        style={{ alignSelf: "flex-start", maxWidth: "100%" }}
      />
      {value.preset === "manual" && (
        <Text size="sm" c="dimmed">
          Runs only when you press “Run now” (or call <Code>_history</Code> with <Code>refresh</Code>).
        </Text>
      )}
      <Group gap="sm" align="flex-start" wrap="wrap">
        {value.preset === "hourly" && (
          <NumberInput
            label="Minute past the hour"
            min={0}
            max={59}
            clampBehavior="strict"
            allowDecimal={false}
            w={200}
            value={value.minute}
            onChange={(v) => set({ minute: Number(v) || 0 })}
          />
        )}
        {value.preset === "weekly" && (
          <Select
            label="Day"
            w={180}
            data={WEEKDAYS.map((d, i) => ({ value: String(i), label: d }))}
            value={String(value.weekday)}
            onChange={(v) => v !== null && set({ weekday: Number(v) })}
            allowDeselect={false}
            comboboxProps={{ withinPortal: true }}
          />
        )}
        {(value.preset === "daily" || value.preset === "weekly") && (
          <TextInput type="time" label="Time (UTC)" w={160} value={time} onChange={(e) => setTime(e.currentTarget.value)} />
        )}
        {value.preset !== "manual" && (
          <TextInput
            label="Cron expression (UTC)"
            description={
              value.preset === "custom" ? "second minute hour day-of-month month day-of-week; 5 fields mean second 0" : "What this preset saves"
            }
            readOnly={value.preset !== "custom"}
            styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
            style={{ flex: "1 1 260px" }}
            maw={420}
            value={value.preset === "custom" ? value.cron : (cron ?? "")}
            onChange={(e) => set({ cron: e.currentTarget.value })}
            error={error ?? (apiError ? bare(apiError) : undefined)}
            data-testid="cron-input"
          />
        )}
      </Group>
      {cron && parsed.data && (
        <Alert color="gray" variant="light" p="sm" data-testid="schedule-preview">
          <Stack gap={4}>
            <Text size="sm">
              <b>{words ? words.charAt(0).toUpperCase() + words.slice(1) : "Custom schedule"}</b>
              {minGapMs !== undefined && <> · at most every {formatInterval(minGapMs)}</>}
            </Text>
            <Text size="xs" c="dimmed">
              Next runs:
            </Text>
            <List size="xs" spacing={0} data-testid="next-runs">
              {parsed.data.nextOccurrences.map((t) => (
                <List.Item key={String(t)}>
                  {utc.format(new Date(Number(t) * 1000))} UTC{" "}
                  <Text span size="xs" c="dimmed">
                    ({formatRelative(t)})
                  </Text>
                </List.Item>
              ))}
            </List>
          </Stack>
        </Alert>
      )}
      {tooFrequent && (
        <Text size="xs" c="dimmed">
          Pick a less frequent schedule, or ask your operator for a plan with a shorter minimum interval.
        </Text>
      )}
      {value.preset !== "manual" && (
        <Stack gap="xs">
          <Switch label="Retry when a scheduled run fails" checked={value.retry} onChange={(e) => set({ retry: e.currentTarget.checked })} />
          {value.retry && (
            <Group gap="sm" align="flex-start">
              <NumberInput
                label="Minutes between retries"
                min={RETRY_MIN_MINUTES}
                max={minGapMs ? Math.max(RETRY_MIN_MINUTES, Math.min(RETRY_MAX_MINUTES, Math.floor(minGapMs / 60_000))) : RETRY_MAX_MINUTES}
                allowDecimal={false}
                w={200}
                value={value.retryMinutes}
                onChange={(v) => set({ retryMinutes: Number(v) || 1 })}
                error={retryError}
              />
              <NumberInput
                label="Attempts"
                min={1}
                max={trackerRules.RETRY_MAX_ATTEMPTS}
                allowDecimal={false}
                w={120}
                value={value.retryAttempts}
                onChange={(v) => set({ retryAttempts: Number(v) || 1 })}
              />
            </Group>
          )}
          {value.retry && (
            <Text size="xs" c="dimmed">
              A retry that would start at or after the next scheduled run is dropped.
            </Text>
          )}
        </Stack>
      )}
    </Stack>
  );
}
