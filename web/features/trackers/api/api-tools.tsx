// The API tracker editor's tools, on the form's unsaved values, storing nothing:
// - Test: sends each request as written (no configurator or extractor; `_test` once per request, in order) and
//   shows each raw response: status, latency, headers, body pretty or raw.
// - Debug: runs configurator → requests → extractor (`_debug`) and shows each stage's input, output, console
//   logs and error, and the value a run would store.
import { Alert, Button, Group, Paper, Stack, Text, Title } from "@mantine/core";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage, explainRunError } from "../../../api/client";
import type {
  ApiTrackerCreateParams,
  ApiTrackerDebugParams,
  ApiTrackerDebugTrace,
  ApiTrackerRequestParam,
  ApiTrackerTestResult,
} from "../../../api/types";
import { BodyView, HeadersTable, ResultsDrawer, StageCard, StatusBadge, ValueView } from "../debug-views";
import { StateBadge } from "../state-badge";
import { apiTrackersApi } from "./api-trackers-api";

type Target = Extract<ApiTrackerCreateParams["target"], { requests: unknown }>;

type TestOutcome = { request: ApiTrackerRequestParam; result?: ApiTrackerTestResult; error?: string };

function TestResult({ i, outcome }: { i: number; outcome: TestOutcome }) {
  const { request, result, error } = outcome;
  return (
    <Paper withBorder p="sm" radius="sm" data-testid="test-response">
      <Stack gap="xs">
        <Group justify="space-between" gap="xs" wrap="nowrap">
          <Title order={3} size="h5" style={{ overflowWrap: "anywhere" }}>
            {i + 1}. {request.method ?? "GET"} <span className="mono">{request.url}</span>
          </Title>
          {result && (
            <Group gap={6} wrap="nowrap">
              <StatusBadge status={Number(result.status)} />
              <StateBadge tone="neutral">{Number(result.latencyMs)} ms</StateBadge>
            </Group>
          )}
        </Group>
        {error && (
          <Alert color="red" p="xs" role="alert">
            {error}
          </Alert>
        )}
        {result && (
          <>
            <HeadersTable headers={result.headers} label={`Response ${i + 1} headers`} />
            <BodyView body={result.body} label={`Response ${i + 1} body`} />
          </>
        )}
      </Stack>
    </Paper>
  );
}

export function ApiTestButton({ target, timeoutSec }: { target: () => Target | null; timeoutSec: number }) {
  const [opened, setOpened] = useState(false);
  const test = useMutation({
    mutationFn: async (t: Target) => {
      const out: TestOutcome[] = [];
      for (const request of t.requests) {
        try {
          out.push({ request, result: await apiTrackersApi.test({ target: request, timeout: timeoutSec * 1000 }) });
        } catch (err) {
          out.push({ request, error: errorMessage(err) });
        }
      }
      return out;
    },
  });
  const start = () => {
    const t = target();
    if (!t) return;
    setOpened(true);
    test.mutate(t);
  };
  return (
    <>
      <Button variant="default" onClick={start}>
        Test requests
      </Button>
      <ResultsDrawer opened={opened} onClose={() => setOpened(false)} title="Test: raw responses" running={test.isPending} onRerun={start}>
        <Text size="sm" c="dimmed">
          Each request is sent as written, without the configurator or the extractor. Nothing is stored.
        </Text>
        {test.data?.map((o, i) => (
          <TestResult key={i} i={i} outcome={o} />
        ))}
      </ResultsDrawer>
    </>
  );
}

function DebugTrace({ trace }: { trace: ApiTrackerDebugTrace }) {
  const requestsState = trace.configurator?.error ? undefined : trace.requests;
  return (
    <Stack gap="sm" data-testid="debug-trace">
      <StageCard title="Configurator" stage={trace.configurator} skipped="No configurator" />
      <Paper withBorder p="sm" radius="sm" data-stage="requests">
        <Stack gap="xs">
          <Title order={3} size="h5">
            Requests
          </Title>
          {requestsState === undefined || requestsState.length === 0 ? (
            <Text size="sm" c="dimmed">
              Not sent: an earlier stage failed.
            </Text>
          ) : (
            requestsState.map(({ request: req, response: res }, i) => (
              <Paper key={i} withBorder p="xs" radius="sm">
                <Stack gap={6}>
                  <Group justify="space-between" gap="xs" wrap="nowrap">
                    <Text size="sm" fw={500} style={{ overflowWrap: "anywhere" }}>
                      {i + 1}. {req.method} <span className="mono">{req.url}</span>
                    </Text>
                    {"status" in res && <StatusBadge status={res.status} />}
                  </Group>
                  <HeadersTable headers={req.headers} label={`Request ${i + 1} headers as sent`} />
                  {"error" in res ? (
                    <Alert color="red" p="xs" role="alert">
                      {explainRunError(res.error)}
                    </Alert>
                  ) : (
                    <>
                      <Text size="xs" c="dimmed">
                        {res.bodySize.toLocaleString()} B in {res.latencyMs} ms
                      </Text>
                      <HeadersTable headers={res.headers} label={`Response ${i + 1} headers`} />
                      <BodyView body={res.body} label={`Response ${i + 1} body`} />
                    </>
                  )}
                </Stack>
              </Paper>
            ))
          )}
        </Stack>
      </Paper>
      <StageCard
        title="Extractor"
        stage={trace.extractor ?? (trace.result === null ? undefined : null)}
        skipped="No extractor: the last body is the value"
      />
      <Paper withBorder p="sm" radius="sm" data-stage="result">
        {trace.result ? (
          <ValueView value={trace.result.body} label="The value a run would store" />
        ) : (
          <Text size="sm" c="red">
            No value: the run would fail.
          </Text>
        )}
      </Paper>
    </Stack>
  );
}

export function ApiDebugButton({ body }: { body: () => ApiTrackerDebugParams | null }) {
  const [opened, setOpened] = useState(false);
  const debug = useMutation({ mutationFn: apiTrackersApi.debug });
  const start = () => {
    const b = body();
    if (!b) return;
    setOpened(true);
    debug.mutate(b);
  };
  return (
    <>
      <Button variant="default" onClick={start}>
        Debug
      </Button>
      <ResultsDrawer
        opened={opened}
        onClose={() => setOpened(false)}
        title="Debug: configurator → requests → extractor"
        running={debug.isPending}
        onRerun={start}
      >
        {debug.isError && (
          <Alert color="red" role="alert">
            {errorMessage(debug.error)}
          </Alert>
        )}
        {debug.data && (
          <>
            <Text size="sm" c="dimmed">
              Took {Number(debug.data.elapsedMs).toLocaleString()} ms. Nothing is stored; no previous content is given to the scripts.
            </Text>
            <DebugTrace trace={debug.data} />
          </>
        )}
      </ResultsDrawer>
    </>
  );
}
