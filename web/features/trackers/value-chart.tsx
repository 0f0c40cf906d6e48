// A small line chart of a numeric tracker value over its revisions: plain SVG (no chart library: this file is
// ~1 KiB gz), drawn at the container's measured width. Each point has
// a tooltip; the chart's accessible name says what it shows, and the numbers are also listed in the revisions
// timeline beside it.
import { Box, Group, Text } from "@mantine/core";
import { useElementSize } from "@mantine/hooks";
import { formatDateTime, formatDateTimeSeconds } from "../../components/format";

const H = 120;
const PAD = { top: 10, right: 10, bottom: 10, left: 10 };

const fmt = (n: number) => n.toLocaleString(undefined, { maximumFractionDigits: 6 });

export function ValueChart({
  points,
  onSelect,
  selectedId,
}: {
  points: { id: string; at: number; value: number }[];
  onSelect?: (id: string) => void;
  selectedId?: string;
}) {
  const { ref, width } = useElementSize();
  const W = Math.max(120, width || 600);
  const values = points.map((p) => p.value);
  const min = Math.min(...values);
  const max = Math.max(...values);
  const first = points[0]!;
  const last = points.at(-1)!;
  const t0 = first.at;
  const span = Math.max(1, last.at - t0);
  const x = (at: number) => PAD.left + ((at - t0) / span) * (W - PAD.left - PAD.right);
  const y = (v: number) => (max === min ? H / 2 : PAD.top + (1 - (v - min) / (max - min)) * (H - PAD.top - PAD.bottom));
  const line = points.map((p) => `${x(p.at).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
  const label = `Value over ${points.length} revisions, from ${fmt(first.value)} to ${fmt(last.value)}; lowest ${fmt(min)}, highest ${fmt(max)}`;
  return (
    <Box data-testid="value-chart" ref={ref}>
      <Group justify="space-between" gap="xs" mb={2}>
        <Text size="xs" c="dimmed">
          Lowest {fmt(min)} · highest {fmt(max)}
        </Text>
        <Text size="xs" c="dimmed">
          Latest <b>{fmt(last.value)}</b>
        </Text>
      </Group>
      <svg viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-label={label} style={{ display: "block", overflow: "visible" }}>
        <line x1={PAD.left} x2={W - PAD.right} y1={H - PAD.bottom} y2={H - PAD.bottom} stroke="var(--mantine-color-default-border)" />
        <polyline points={line} fill="none" stroke="var(--mantine-color-blue-filled)" strokeWidth={2} strokeLinejoin="round" />
        {points.map((p) => (
          <circle
            key={p.id}
            cx={x(p.at)}
            cy={y(p.value)}
            r={p.id === selectedId ? 5 : 3.5}
            fill={p.id === selectedId ? "var(--mantine-color-orange-filled)" : "var(--mantine-color-blue-filled)"}
            style={{ cursor: onSelect ? "pointer" : undefined }}
            onClick={onSelect ? () => onSelect(p.id) : undefined}
          >
            <title>{`${fmt(p.value)} — ${formatDateTimeSeconds(p.at)}`}</title>
          </circle>
        ))}
      </svg>
      <Group justify="space-between" gap="xs" mt={2}>
        <Text size="xs" c="dimmed">
          {formatDateTime(first.at)}
        </Text>
        <Text size="xs" c="dimmed">
          {formatDateTime(last.at)}
        </Text>
      </Group>
    </Box>
  );
}
