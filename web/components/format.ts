// Formatting of wire values for display.
import type { Timestamp } from "../api/types";

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const dateTimeSeconds = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });

export const toDate = (t: Timestamp) => new Date(Number(t) * 1000);

export function formatDateTime(t: Timestamp | null | undefined): string {
  return t === null || t === undefined ? "" : dateTime.format(toDate(t));
}

/** With seconds: for events that can be seconds apart (tracker runs and revisions). */
export function formatDateTimeSeconds(t: Timestamp | null | undefined): string {
  return t === null || t === undefined ? "" : dateTimeSeconds.format(toDate(t));
}

export function formatRelative(t: Timestamp, now = Date.now()): string {
  const diff = (Number(t) * 1000 - now) / 1000;
  const abs = Math.abs(diff);
  if (abs < 45) return diff < 0 ? "just now" : "in a few seconds";
  const units: [Intl.RelativeTimeFormatUnit, number][] = [
    ["minute", 60],
    ["hour", 3600],
    ["day", 86400],
    ["month", 2_592_000],
    ["year", 31_536_000],
  ];
  let unit: [Intl.RelativeTimeFormatUnit, number] = units[0]!;
  for (const u of units) if (abs >= u[1]) unit = u;
  return relative.format(Math.round(diff / unit[1]), unit[0]);
}

export const formatBytes = (n: number) => `${n.toLocaleString()} B`;

export const utf8Length = (s: string) => new TextEncoder().encode(s).byteLength;
