// Execution logs of a tracker (supplement §17.2), newest first: when, how it was started, status, duration, the
// outcome (new revision / no change / the error) and the phases drawn as a small waterfall (each phase starts where
// the previous one ended; its width is its share of the run). A row opens to the phase table with errors.
import { Box, Button, Group, Stack, Table, Text, Tooltip } from "@mantine/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { DataTable } from "mantine-datatable";
import { useState } from "react";
import type { TrackerLog } from "../../api/types";
import { confirmDelete } from "../../components/confirm";
import { notifyError, notifySuccess } from "../../components/notify";
import { EmptyState, ErrorState, LoadingState } from "../../components/states";
import { formatDateTimeSeconds, formatRelative } from "../../components/format";
import type { AnyTracker, TrackerKind } from "./kind";
import { StateBadge } from "./state-badge";
import { invalidateKind, useLogs } from "./trackers-api";

type Phase = TrackerLog["phases"][number];

const PHASE_COLOUR: Record<string, string> = {
  success: "var(--mantine-color-teal-filled)",
  failure: "var(--mantine-color-red-filled)",
  skipped: "var(--mantine-color-gray-5)",
};

/** The waterfall: one row per phase, offset by the phases before it. `compact` draws one stacked bar instead. */
export function PhaseBar({ phases, compact = false }: { phases: Phase[]; compact?: boolean }) {
  const total = Math.max(
    1,
    phases.reduce((s, p) => s + Number(p.durationMs), 0),
  );
  const summary = phases.map((p) => `${p.phase} ${p.status} ${Number(p.durationMs)} ms`).join(", ");
  if (compact)
    return (
      <Box
        role="img"
        aria-label={`Phases: ${summary}`}
        w={140}
        h={10}
        style={{ display: "flex", borderRadius: 3, overflow: "hidden", background: "var(--mantine-color-default-border)" }}
      >
        {phases
          .filter((p) => Number(p.durationMs) > 0 || p.status === "failure")
          .map((p) => (
            <div
              key={p.phase}
              style={{
                width: `${Math.max(3, (Number(p.durationMs) / total) * 100)}%`,
                background: PHASE_COLOUR[p.status] ?? PHASE_COLOUR.skipped,
                borderRight: "2px solid var(--mantine-color-body)",
              }}
            />
          ))}
      </Box>
    );
  let start = 0;
  return (
    <Stack gap={3} data-testid="phase-waterfall">
      {phases.map((p) => {
        const ms = Number(p.durationMs);
        const width = Math.max(0.8, (ms / total) * 100);
        const left = Math.min((start / total) * 100, 100 - width);
        start += ms;
        return (
          <Group key={p.phase} gap="xs" wrap="nowrap">
            <Text size="xs" w={90} className="mono">
              {p.phase}
            </Text>
            <Box style={{ flex: 1, position: "relative", height: 12, background: "var(--mantine-color-default-hover)", borderRadius: 2 }}>
              {p.status !== "skipped" && (
                <div
                  style={{
                    position: "absolute",
                    left: `${left}%`,
                    width: `${width}%`,
                    top: 0,
                    bottom: 0,
                    borderRadius: 2,
                    background: PHASE_COLOUR[p.status],
                  }}
                />
              )}
            </Box>
            <Text size="xs" w={110} ta="right" c={p.status === "failure" ? "red" : "dimmed"} className="nowrap">
              {p.status === "skipped" ? "skipped" : `${ms.toLocaleString()} ms${p.status === "failure" ? " · failed" : ""}`}
            </Text>
          </Group>
        );
      })}
    </Stack>
  );
}

function trigger(l: TrackerLog) {
  if (l.retryAttempt !== undefined) return `Retry ${Number(l.retryAttempt)}`;
  return l.isManual ? "Manual" : "Scheduled";
}

function Outcome({ log }: { log: TrackerLog }) {
  if (log.status === "failure")
    return (
      <Text size="sm" c="red" lineClamp={2} style={{ overflowWrap: "anywhere" }}>
        {log.error ?? "Failed"}
      </Text>
    );
  return <Text size="sm">{log.hasChanges ? `New revision (${Number(log.revisionSize ?? 0).toLocaleString()} B)` : "No change"}</Text>;
}

function LogDetail({ log }: { log: TrackerLog }) {
  const failed = log.phases.filter((p) => p.error);
  return (
    <Stack gap="xs" p="sm">
      <PhaseBar phases={log.phases} />
      {failed.length > 0 && (
        <Table fz="sm" verticalSpacing={2}>
          <Table.Tbody>
            {failed.map((p) => (
              <Table.Tr key={p.phase}>
                <Table.Td className="mono" w={100}>
                  {p.phase}
                </Table.Td>
                <Table.Td style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>{p.error}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}

export function LogsPanel<T extends AnyTracker>({ kind, tracker }: { kind: TrackerKind<T>; tracker: T }) {
  const logs = useLogs(kind, tracker.id);
  const qc = useQueryClient();
  const [expanded, setExpanded] = useState<string[] | null>(null);
  const clear = useMutation({
    mutationFn: () => kind.api.clearLogs(tracker.id),
    onSuccess: () => notifySuccess(`Logs of “${tracker.name}” cleared`),
    onError: (err) => notifyError(err, "Could not clear the logs"),
    onSettled: () => invalidateKind(qc, kind),
  });
  if (logs.isPending) return <LoadingState label="Loading logs" />;
  if (logs.isError) return <ErrorState error={logs.error} onRetry={() => logs.refetch()} title="Could not load the logs" />;
  if (logs.data.length === 0)
    return (
      <EmptyState title="No runs logged">
        Each run (scheduled, retried or by hand) leaves a log with its phases and timings; the 50 newest are kept.
      </EmptyState>
    );
  // The newest run opens by default, so its phases show at once.
  const open = expanded ?? [logs.data[0]!.id];

  return (
    <Stack gap="sm">
      <Group justify="space-between">
        <Text size="sm" c="dimmed">
          {logs.data.length} run{logs.data.length === 1 ? "" : "s"} logged (the 50 newest are kept). Select a run to see its phases.
        </Text>
        <Button
          size="compact-sm"
          variant="subtle"
          color="red"
          onClick={() => confirmDelete({ what: "the logs of", name: tracker.name, onConfirm: () => clear.mutateAsync() })}
        >
          Clear logs
        </Button>
      </Group>
      <DataTable<TrackerLog>
        withTableBorder
        borderRadius="sm"
        highlightOnHover
        records={logs.data}
        idAccessor="id"
        rowExpansion={{
          allowMultiple: true,
          expanded: { recordIds: open, onRecordIdsChange: (ids: unknown[]) => setExpanded(ids as string[]) },
          content: ({ record }) => <LogDetail log={record} />,
        }}
        columns={[
          {
            accessor: "startedAt",
            title: "Started",
            render: (l) => (
              <Stack gap={0}>
                <Text size="sm" className="nowrap">
                  {formatDateTimeSeconds(l.startedAt)}
                </Text>
                <Text size="xs" c="dimmed">
                  {formatRelative(l.startedAt)}
                </Text>
              </Stack>
            ),
          },
          {
            accessor: "status",
            title: "Status",
            render: (l) => <StateBadge tone={l.status === "failure" ? "fail" : "ok"}>{l.status === "failure" ? "Failed" : "OK"}</StateBadge>,
          },
          { accessor: "trigger", title: "Trigger", visibleMediaQuery: "(min-width: 48em)", render: (l) => <Text size="sm">{trigger(l)}</Text> },
          {
            accessor: "durationMs",
            title: "Duration",
            textAlign: "right",
            visibleMediaQuery: "(min-width: 36em)",
            render: (l) => (
              <Text size="sm" className="nowrap">
                {Number(l.durationMs).toLocaleString()} ms
              </Text>
            ),
          },
          {
            accessor: "phases",
            title: "Phases",
            visibleMediaQuery: "(min-width: 36em)",
            render: (l) => (
              <Tooltip
                label={l.phases.map((p) => `${p.phase}: ${p.status === "skipped" ? "skipped" : `${Number(p.durationMs)} ms`}`).join(" · ")}
                openDelay={300}
              >
                <Box>
                  <PhaseBar phases={l.phases} compact />
                </Box>
              </Tooltip>
            ),
          },
          { accessor: "outcome", title: "Outcome", render: (l) => <Outcome log={l} /> },
        ]}
      />
    </Stack>
  );
}
