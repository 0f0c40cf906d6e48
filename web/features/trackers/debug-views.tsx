// Pieces of the test and debug results: a value or body shown pretty (JSON indented) or raw, a response with its
// status and headers, a script's console output, and a pipeline stage with its input, output, logs and error.
import { Alert, Box, Button, Code, Drawer, Group, Loader, Paper, SegmentedControl, Stack, Table, Text, Title } from "@mantine/core";
import { useState, type ReactNode } from "react";
import { explainRunError } from "../../api/client";
import { CopyButton } from "../../components/copy-button";
import { StateBadge, type Tone } from "./state-badge";

/** JSON text pretty-printed, or undefined when `text` is not JSON. */
function prettyJson(text: string): string | undefined {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return undefined;
  }
}

/** A scrollable, keyboard-focusable block of text. */
export function TextBlock({ text, label, maxHeight = 320 }: { text: string; label: string; maxHeight?: number }) {
  return (
    <Code block tabIndex={0} aria-label={label} style={{ maxHeight, overflow: "auto", whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
      {text === "" ? "(empty)" : text}
    </Code>
  );
}

/** A body: "Pretty" indents JSON, "Raw" shows it as received. */
export function BodyView({ body, label }: { body: string; label: string }) {
  const pretty = prettyJson(body);
  const [mode, setMode] = useState<"pretty" | "raw">("pretty");
  const shown = mode === "pretty" && pretty !== undefined ? pretty : body;
  return (
    <Stack gap={4}>
      <Group gap="xs" justify="space-between">
        <Text size="xs" c="dimmed">
          {label}
          {pretty === undefined ? "" : " (JSON)"}
        </Text>
        <Group gap="xs">
          {pretty !== undefined && (
            <SegmentedControl
              size="xs"
              aria-label={`${label}: pretty or raw`}
              value={mode}
              onChange={(v) => setMode(v as "pretty" | "raw")}
              data={[
                { value: "pretty", label: "Pretty" },
                { value: "raw", label: "Raw" },
              ]}
            />
          )}
          <CopyButton value={shown} what={label} size="compact-xs" />
        </Group>
      </Group>
      <TextBlock text={shown} label={label} />
    </Stack>
  );
}

/** Any value (a script's context or result): JSON, indented. */
export function ValueView({ value, label }: { value: unknown; label: string }) {
  const text = value === undefined ? "undefined" : typeof value === "string" ? value : JSON.stringify(value, null, 2);
  return (
    <Stack gap={4}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <TextBlock text={text} label={label} maxHeight={260} />
    </Stack>
  );
}

export function HeadersTable({ headers, label }: { headers: Record<string, string>; label: string }) {
  const entries = Object.entries(headers);
  if (entries.length === 0)
    return (
      <Text size="xs" c="dimmed">
        No headers.
      </Text>
    );
  return (
    <Box tabIndex={0} aria-label={label} role="region" style={{ maxHeight: 200, overflow: "auto" }}>
      <Table fz="xs" verticalSpacing={2} withRowBorders={false}>
        <Table.Tbody>
          {entries.map(([k, v]) => (
            <Table.Tr key={k}>
              <Table.Td className="mono nowrap" style={{ verticalAlign: "top" }}>
                {k}
              </Table.Td>
              <Table.Td className="mono" style={{ overflowWrap: "anywhere" }}>
                {v}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Box>
  );
}

export function StatusBadge({ status }: { status: number }) {
  const ok = status >= 200 && status < 300;
  return (
    <StateBadge tone={ok ? "ok" : status >= 400 ? "fail" : "warn"} data-testid="response-status">
      HTTP {status}
    </StateBadge>
  );
}

export function ConsoleLogs({ logs, title = "Console" }: { logs: { level: string; message: string }[]; title?: string }) {
  if (logs.length === 0)
    return (
      <Text size="xs" c="dimmed">
        {title}: nothing logged.
      </Text>
    );
  const tone = (l: string): Tone => (l === "error" ? "fail" : l === "warn" ? "warn" : "neutral");
  return (
    <Stack gap={4}>
      <Text size="xs" c="dimmed">
        {title} ({logs.length})
      </Text>
      <Stack gap={2} tabIndex={0} role="log" aria-label={title} style={{ maxHeight: 220, overflow: "auto" }} data-testid="console-logs">
        {logs.map((l, i) => (
          <Group key={i} gap={6} wrap="nowrap" align="flex-start">
            <StateBadge size="xs" tone={tone(l.level)} miw={44}>
              {l.level}
            </StateBadge>
            <Text size="xs" className="mono" style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
              {l.message}
            </Text>
          </Group>
        ))}
      </Stack>
    </Stack>
  );
}

/** One stage of a pipeline: skipped (no script), or its input, output, console and error. */
export function StageCard({
  title,
  stage,
  skipped,
  children,
}: {
  title: string;
  stage?: { params: unknown; result: unknown; error: string | null; logs: { level: string; message: string }[] } | null;
  skipped?: string;
  children?: ReactNode;
}) {
  const state = stage === undefined ? "not run" : stage === null ? "skipped" : stage.error ? "failed" : "ok";
  const tone: Tone = state === "ok" ? "ok" : state === "failed" ? "fail" : "neutral";
  return (
    <Paper withBorder p="sm" radius="sm" data-stage={title.toLowerCase()} data-state={state}>
      <Stack gap="xs">
        <Group justify="space-between" gap="xs">
          <Title order={3} size="h5">
            {title}
          </Title>
          <StateBadge tone={tone}>
            {state === "ok" ? "OK" : state === "failed" ? "Failed" : state === "skipped" ? (skipped ?? "Skipped") : "Not run"}
          </StateBadge>
        </Group>
        {stage?.error && (
          <Alert color="red" p="xs" role="alert">
            <Text size="sm" style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
              {explainRunError(stage.error)}
            </Text>
          </Alert>
        )}
        {stage && <ValueView value={stage.params} label={`${title}: input (context)`} />}
        {stage && !stage.error && <ValueView value={stage.result} label={`${title}: output`} />}
        {stage && <ConsoleLogs logs={stage.logs} title={`${title}: console`} />}
        {children}
      </Stack>
    </Paper>
  );
}

/** The editors' test and debug results: a drawer with "Run again", a running indicator (with `runningText` when the
 *  run takes a while) and the results. */
export function ResultsDrawer(props: {
  opened: boolean;
  onClose: () => void;
  title: string;
  running: boolean;
  runningText?: string;
  onRerun: () => void;
  children: ReactNode;
}) {
  const { opened, onClose, title, running, runningText, onRerun, children } = props;
  return (
    <Drawer opened={opened} onClose={onClose} title={title} position="right" size="xl" closeButtonProps={{ "aria-label": "Close" }}>
      <Stack gap="sm">
        <Group gap="xs">
          <Button size="compact-sm" variant="default" onClick={onRerun} loading={running}>
            Run again
          </Button>
          {running && (
            <Group gap={6}>
              <Loader size="xs" aria-label="Running" />
              {runningText && (
                <Text size="sm" c="dimmed">
                  {runningText}
                </Text>
              )}
            </Group>
          )}
        </Group>
        {children}
      </Stack>
    </Drawer>
  );
}
