// Revisions of a tracker: a timeline (newest first, with each change's size), a chart when the values are numbers,
// and a comparison of any two revisions side by side or inline (JSON pretty-printed first, as the API's own diffs).
// Page trackers with the resource inventory also get the scripts-and-stylesheets diff. The compared pair and the
// mode are in the URL (?from=&to=&view=). The shown revision can be copied or downloaded.
import {
  Box,
  Button,
  Code,
  Grid,
  Group,
  Paper,
  SegmentedControl,
  Select,
  Stack,
  Text,
  Title,
  UnstyledButton,
  useComputedColorScheme,
} from "@mantine/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { TrackerRevision } from "../../api/types";
import { confirmDelete } from "../../components/confirm";
import { copyWithToast } from "../../components/copy-button";
import { DiffView, type DiffMode } from "../../components/diff-view/diff-view";
import { formatDateTimeSeconds, formatRelative } from "../../components/format";
import { notifyError, notifySuccess } from "../../components/notify";
import { EmptyState, ErrorState, LoadingState } from "../../components/states";
import type { AnyTracker, TrackerKind } from "./kind";
import { changeSize, isJsonData, numericSeries, resourcesOf, revisionFileName, revisionText } from "./revision-values";
import { ResourcesDiff } from "./resources-diff";
import { useSearchParams } from "../../components/use-search-param";
import { invalidateKind, useHistory } from "./trackers-api";
import { ValueChart } from "./value-chart";

const revisionLabel = (r: TrackerRevision) => formatDateTimeSeconds(r.createdAt);

function download(name: string, text: string, json: boolean) {
  const url = URL.createObjectURL(new Blob([text], { type: json ? "application/json" : "text/plain" }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function Timeline({ revisions, toId, onPick }: { revisions: TrackerRevision[]; toId: string | undefined; onPick: (r: TrackerRevision) => void }) {
  // AA on both the plain and the selected (blue-tinted) row, in either scheme.
  const colours = useComputedColorScheme("light") === "dark" ? { added: "#8ce99a", removed: "#ffa8a8" } : { added: "#1b6b2f", removed: "#a61e1e" };
  return (
    <Stack gap={4} component="ol" style={{ listStyle: "none", padding: 0, margin: 0 }} aria-label="Revisions, newest first">
      {revisions.map((r, i) => {
        const change = changeSize(r.diff);
        const selected = r.id === toId;
        return (
          <li key={r.id}>
            <UnstyledButton
              onClick={() => onPick(r)}
              aria-pressed={selected}
              w="100%"
              p="xs"
              style={{
                borderRadius: 4,
                border: `1px solid ${selected ? "var(--mantine-color-blue-filled)" : "var(--mantine-color-default-border)"}`,
                background: selected ? "var(--mantine-color-blue-light)" : undefined,
              }}
            >
              <Group justify="space-between" gap="xs" wrap="nowrap">
                <Stack gap={0} miw={0}>
                  <Text size="sm" fw={500}>
                    {revisionLabel(r)}
                  </Text>
                  <Text size="xs" c="dimmed">
                    {formatRelative(r.createdAt)} · {Number(r.size).toLocaleString()} B
                  </Text>
                </Stack>
                <Text size="xs" className="nowrap" c="dimmed" data-testid="change-size">
                  {change ? (
                    <>
                      <Text span size="xs" c={colours.added} fw={600}>
                        +{change.added}
                      </Text>{" "}
                      <Text span size="xs" c={colours.removed} fw={600}>
                        −{change.removed}
                      </Text>{" "}
                      lines
                    </>
                  ) : i === revisions.length - 1 ? (
                    "first kept"
                  ) : (
                    ""
                  )}
                </Text>
              </Group>
            </UnstyledButton>
          </li>
        );
      })}
    </Stack>
  );
}

export function RevisionsPanel<T extends AnyTracker>({ kind, tracker }: { kind: TrackerKind<T>; tracker: T }) {
  const history = useHistory(kind, tracker.id);
  const [params, setParams] = useSearchParams();
  const qc = useQueryClient();
  const clear = useMutation({
    mutationFn: () => kind.api.clear(tracker.id),
    onSuccess: () => notifySuccess(`Revisions of “${tracker.name}” deleted`),
    onError: (err) => notifyError(err, "Could not delete the revisions"),
    onSettled: () => invalidateKind(qc, kind),
  });

  if (history.isPending) return <LoadingState label="Loading revisions" />;
  if (history.isError) return <ErrorState error={history.error} onRetry={() => history.refetch()} title="Could not load the revisions" />;
  const revisions = history.data;
  if (revisions.length === 0)
    return (
      <EmptyState title="No revisions yet">
        A revision is stored at the first run and then each time the tracked value changes. Use “Run now” to check it once;{" "}
        {tracker.config.job ? "it also runs on its schedule." : "it has no schedule."}
      </EmptyState>
    );

  const mode: DiffMode = params.get("view") === "unified" ? "unified" : "split";
  const to = revisions.find((r) => r.id === params.get("to")) ?? revisions[0]!;
  const toIndex = revisions.indexOf(to);
  const from = revisions.find((r) => r.id === params.get("from") && r.id !== to.id) ?? revisions[toIndex + 1];
  const series = numericSeries(revisions);
  const options = revisions.map((r) => ({ value: r.id, label: revisionLabel(r) }));
  const toInv = resourcesOf(to.data);
  const fromInv = from ? resourcesOf(from.data) : undefined;
  // With the inventory on both sides, the text diff is of the extracted content; the inventory has its own table.
  const both = toInv !== undefined && fromInv !== undefined;
  const compared = (data: unknown, inv: ReturnType<typeof resourcesOf>) => (both && inv ? inv.content : data);
  const toText = revisionText(to.data);

  return (
    <Grid gap="md">
      <Grid.Col span={{ base: 12, md: 4 }}>
        <Stack gap="sm">
          <Group justify="space-between" gap="xs">
            <Title order={2} size="h5">
              {revisions.length} revision{revisions.length === 1 ? "" : "s"}
            </Title>
            <Button
              size="compact-xs"
              variant="subtle"
              color="red"
              onClick={() =>
                confirmDelete({
                  what: "every revision of",
                  name: tracker.name,
                  consequence: "The next run stores a new first revision. This cannot be undone.",
                  onConfirm: () => clear.mutateAsync(),
                })
              }
            >
              Clear revisions
            </Button>
          </Group>
          {series && (
            <Paper withBorder p="xs" radius="sm">
              <ValueChart points={series} selectedId={to.id} onSelect={(id) => setParams({ to: id, from: undefined })} />
            </Paper>
          )}
          <Timeline revisions={revisions} toId={to.id} onPick={(r) => setParams({ to: r.id, from: undefined })} />
        </Stack>
      </Grid.Col>
      <Grid.Col span={{ base: 12, md: 8 }}>
        <Stack gap="sm">
          <Group gap="sm" align="flex-end" wrap="wrap">
            {from && (
              <Select
                label="Compare"
                data={options}
                value={from.id}
                onChange={(v) => v && setParams({ from: v })}
                allowDeselect={false}
                style={{ flex: "1 1 200px" }}
                comboboxProps={{ withinPortal: true }}
              />
            )}
            <Select
              label={from ? "with" : "Revision"}
              data={options}
              value={to.id}
              onChange={(v) => v && setParams({ to: v, from: from && from.id !== v ? from.id : undefined })}
              allowDeselect={false}
              style={{ flex: "1 1 200px" }}
              comboboxProps={{ withinPortal: true }}
            />
          </Group>
          <Group gap="xs">
            {from && (
              <SegmentedControl
                size="xs"
                aria-label="Diff layout"
                value={mode}
                onChange={(v) => setParams({ view: v === "unified" ? "unified" : undefined })}
                data={[
                  { value: "split", label: "Side by side" },
                  { value: "unified", label: "Inline" },
                ]}
              />
            )}
            <Button size="compact-sm" variant="default" onClick={() => copyWithToast(toText, "Revision")}>
              Copy revision
            </Button>
            <Button
              size="compact-sm"
              variant="default"
              onClick={() => download(revisionFileName(tracker.name, to.createdAt, to.data), toText, isJsonData(to.data))}
            >
              Download
            </Button>
            <Text size="xs" c="dimmed">
              the revision of {revisionLabel(to)}
            </Text>
          </Group>
          {toInv && fromInv && <ResourcesDiff before={fromInv.resources} after={toInv.resources} />}
          {from && both && (
            <Title order={3} size="h5" mt="xs">
              Extracted content
            </Title>
          )}
          {from ? (
            <DiffView
              original={revisionText(compared(from.data, fromInv))}
              modified={revisionText(compared(to.data, toInv))}
              mode={mode}
              language={isJsonData(compared(to.data, toInv)) || isJsonData(compared(from.data, fromInv)) ? "json" : "text"}
              originalLabel={revisionLabel(from)}
              modifiedLabel={revisionLabel(to)}
            />
          ) : (
            <Box>
              <Text size="xs" c="dimmed" mb={4}>
                The oldest revision kept: nothing older to compare with.
              </Text>
              <Code
                block
                tabIndex={0}
                aria-label={`Revision of ${revisionLabel(to)}`}
                style={{ maxHeight: 480, overflow: "auto", whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}
              >
                {toText}
              </Code>
            </Box>
          )}
        </Stack>
      </Grid.Col>
    </Grid>
  );
}
