// The captured requests as a table: method, path and query, the status sent (every record carries it, supplement §27;
// only records of older versions without a stored response lack it), client address, arrival time and duration.
// Rows are memoised by record, so a poll that brings a few new records renders only those (the page keeps up with 50
// requests/s: scripts/bench/responders/ui-history.ts). Opening a row is a button (keyboard and screen readers); the
// open one is marked.
import { Badge, Table } from "@mantine/core";
import "./history-table.css";
import { memo } from "react";
import type { TrackedRecord } from "./responders-api";

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
export const recordTime = (r: Pick<TrackedRecord, "createdAt">) => timeFormat.format(new Date(Number(r.createdAt) * 1000));
export const recordDateTime = (r: Pick<TrackedRecord, "createdAt">) => dateTimeFormat.format(new Date(Number(r.createdAt) * 1000));

export function statusColor(status: number): string {
  if (status >= 500) return "red";
  if (status >= 400) return "orange";
  if (status >= 300) return "blue";
  return "green";
}

/** The status a record was answered with: its own, else its stored response's; undefined when unknown. */
export function recordStatus(r: Pick<TrackedRecord, "statusCode" | "response">): number | undefined {
  const s = r.statusCode ?? r.response?.statusCode;
  return s === undefined ? undefined : Number(s);
}

/** A status with a coloured dot (the text stays in the body colour: readable in both schemes). */
export function StatusBadge({ status }: { status: number }) {
  return (
    <Badge variant="dot" color={statusColor(status)} radius="sm" tt="none" className="mono">
      {status}
    </Badge>
  );
}

// Row cells are plain elements styled by class (history-table.css): a poll under load mounts dozens of rows at
// once, and Mantine's Text/Badge per cell made that the page's main cost (scripts/bench/responders/ui-history.ts).
const Row = memo(function Row({ r, selected, onOpen }: { r: TrackedRecord; selected: boolean; onOpen: (id: string) => void }) {
  const target = r.path + (r.rawQuery ? `?${r.rawQuery}` : "");
  const status = recordStatus(r);
  return (
    <Table.Tr className={selected ? "history-row history-row-selected" : "history-row"} aria-selected={selected} data-record={r.id}>
      <Table.Td>
        <button
          type="button"
          className="history-open"
          onClick={() => onOpen(r.id)}
          aria-label={`Open ${r.method} ${target} at ${recordTime(r)}`}
          aria-current={selected || undefined}
        >
          <span className="history-method">{r.method}</span> <span className="history-target">{target}</span>
        </button>
      </Table.Td>
      <Table.Td data-column="status">
        {status !== undefined ? (
          <span className="history-status mono" data-tone={statusColor(status)}>
            {status}
          </span>
        ) : (
          <span className="history-small history-dimmed" title="Not recorded (captured by an older version)">
            —
          </span>
        )}
      </Table.Td>
      <Table.Td visibleFrom="sm">
        <span className="history-small mono nowrap">{r.clientAddress ?? "—"}</span>
      </Table.Td>
      <Table.Td>
        <span className="history-small nowrap" title={recordDateTime(r)}>
          {recordTime(r)}
        </span>
      </Table.Td>
      <Table.Td ta="right" visibleFrom="xs">
        <span className="history-small nowrap">{Number(r.durationMs)} ms</span>
      </Table.Td>
    </Table.Tr>
  );
});

/** The table lays out at fixed column widths (rows arriving at the top do not make the browser measure every row). */
export function HistoryTable({
  records,
  selectedId,
  onOpen,
}: {
  records: TrackedRecord[];
  selectedId: string | undefined;
  onOpen: (id: string) => void;
}) {
  return (
    <Table
      layout="fixed"
      highlightOnHover
      verticalSpacing={4}
      horizontalSpacing="xs"
      stickyHeader
      aria-label="Captured requests"
      data-testid="history-table"
    >
      <Table.Thead>
        <Table.Tr>
          <Table.Th>Request</Table.Th>
          <Table.Th w={76}>Status</Table.Th>
          <Table.Th visibleFrom="sm" w={128}>
            Client
          </Table.Th>
          <Table.Th w={96}>Time</Table.Th>
          <Table.Th ta="right" visibleFrom="xs" w={88}>
            Duration
          </Table.Th>
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {records.map((r) => (
          <Row key={r.id} r={r} selected={r.id === selectedId} onOpen={onOpen} />
        ))}
      </Table.Tbody>
    </Table>
  );
}
