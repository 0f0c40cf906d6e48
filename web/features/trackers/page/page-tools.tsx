// The page tracker editor's Debug: renders the page once in Chromium with the form's unsaved values (`_debug`) and
// shows the result or the error, the page's console output (and refused requests) and the screenshots taken after
// navigation and at the end. Nothing is stored.
import { Alert, Button, Image, Paper, SimpleGrid, Stack, Text } from "@mantine/core";
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage, explainRunError } from "../../../api/client";
import type { PageTrackerDebugParams, PageTrackerDebugTrace } from "../../../api/types";
import { ConsoleLogs, ResultsDrawer, ValueView } from "../debug-views";
import { pageTrackersApi } from "./page-trackers-api";

const SHOT_LABELS: Record<string, string> = { navigated: "After navigation", final: "Final (after waiting and extracting)", error: "When it failed" };

function Trace({ trace }: { trace: PageTrackerDebugTrace }) {
  return (
    <Stack gap="sm" data-testid="debug-trace">
      <Text size="sm" c="dimmed">
        Took {Number(trace.elapsedMs).toLocaleString()} ms. Nothing is stored; no previous content is given to the extractor.
      </Text>
      {trace.error !== undefined ? (
        <Alert color="red" title="The run would fail" role="alert">
          <Text size="sm" style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
            {explainRunError(trace.error)}
          </Text>
        </Alert>
      ) : (
        <Paper withBorder p="sm" radius="sm" data-stage="result">
          <ValueView value={trace.result} label="The value a run would store" />
        </Paper>
      )}
      <Paper withBorder p="sm" radius="sm">
        <ConsoleLogs logs={trace.logs} title="Page console" />
      </Paper>
      <SimpleGrid cols={{ base: 1, md: 2 }} spacing="sm">
        {trace.screenshots.map((s) => (
          <Stack key={s.label} gap={4}>
            <Text size="xs" c="dimmed">
              {SHOT_LABELS[s.label] ?? s.label}
            </Text>
            <Image
              src={`data:${s.mimeType};base64,${s.data}`}
              alt={`Screenshot: ${SHOT_LABELS[s.label] ?? s.label}`}
              radius="sm"
              style={{ border: "1px solid var(--mantine-color-default-border)" }}
              data-shot={s.label}
            />
          </Stack>
        ))}
      </SimpleGrid>
    </Stack>
  );
}

export function PageDebugButton({ body }: { body: () => PageTrackerDebugParams | null }) {
  const [opened, setOpened] = useState(false);
  const debug = useMutation({ mutationFn: pageTrackersApi.debug });
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
        title="Debug: load the page once"
        running={debug.isPending}
        runningText="Loading the page in Chromium…"
        onRerun={start}
      >
        {debug.isError && (
          <Alert color="red" role="alert">
            {errorMessage(debug.error)}
          </Alert>
        )}
        {debug.data && !debug.isPending && <Trace trace={debug.data} />}
      </ResultsDrawer>
    </>
  );
}
