import { Text } from "@mantine/core";
import type { Timestamp } from "../api/types";
import { formatDateTime, formatRelative } from "./format";
import { LazyTooltip } from "./lazy-tooltip";

/** A relative time ("3 hours ago") with the exact date on hover; `fallback` when there is none. */
export function Time({ value, fallback = "—" }: { value: Timestamp | null | undefined; fallback?: string }) {
  if (value === null || value === undefined)
    return (
      <Text span size="sm" c="dimmed">
        {fallback}
      </Text>
    );
  return (
    <LazyTooltip label={formatDateTime(value)}>
      <Text span size="sm" className="nowrap">
        <time dateTime={new Date(Number(value) * 1000).toISOString()}>{formatRelative(value)}</time>
      </Text>
    </LazyTooltip>
  );
}
