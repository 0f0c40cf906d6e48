// Compares two texts side by side or inline (one column with removed lines above the added ones), read-only, with
// syntax highlighting for JSON/JavaScript and long unchanged stretches collapsed. Built on @codemirror/merge, which
// is loaded on demand: the merge view (~10 KiB gz) and CodeMirror (~150 KiB gz, shared with the code editor) are
// separate chunks fetched only when a page shows a diff.
import { Box, Group, Text } from "@mantine/core";
import { lazy, Suspense } from "react";
import { LoadingState } from "../states";
import type { DiffMode, DiffViewProps } from "./props";

export type { DiffMode, DiffViewProps };

const MergeView = lazy(() => import("./merge-view"));

export function DiffView(props: DiffViewProps) {
  const same = props.original === props.modified;
  return (
    <Box data-testid="diff-view" data-mode={props.mode}>
      {props.mode === "split" ? (
        <Group grow gap={0} mb={4} wrap="nowrap" aria-hidden="true">
          <Text size="xs" c="dimmed" truncate>
            − {props.originalLabel}
          </Text>
          <Text size="xs" c="dimmed" truncate>
            + {props.modifiedLabel}
          </Text>
        </Group>
      ) : (
        <Text size="xs" c="dimmed" mb={4} aria-hidden="true">
          − {props.originalLabel} · + {props.modifiedLabel}
        </Text>
      )}
      {same && (
        <Text size="sm" c="dimmed" mb={4}>
          The two texts are identical.
        </Text>
      )}
      <Suspense fallback={<LoadingState label="Loading the diff view" />}>
        <MergeView {...props} />
      </Suspense>
    </Box>
  );
}
