// The list of one kind of tracker (the common list page: search, tags, paging, sort, row actions) with what a
// tracker list needs at a glance: target, schedule in words, next and last run, status from the logs summary (OK /
// failing / never run / running), revisions stored, an enabled switch and "run now". Failing trackers are also
// named in a banner above the table, whatever page they are on.
import { Alert, Anchor, Button, Group, Stack, Switch, Text, Tooltip } from "@mantine/core";
import { useMutation, useQueries, useQueryClient } from "@tanstack/react-query";
import type { DataTableColumn } from "mantine-datatable";
import { useEffect, useRef, type ReactNode } from "react";
import { Link, useLocation } from "wouter";
import { confirmDelete } from "../../components/confirm";
import { ListPage } from "../../components/list-page/list-page";
import { useListState } from "../../components/list-page/use-list-state";
import { notifyError, notifySuccess } from "../../components/notify";
import { TagBadges } from "../../components/tags/tag-badges";
import { Time } from "../../components/time";
import type { AnyTracker, TrackerKind } from "./kind";
import { scheduleWords } from "./schedule";
import { TrackerStatus } from "./tracker-status";
import { healthOf, invalidateKind, RUNNING_POLL_MS, trackerKeys, useIsRunning, useLogsSummary, useRunNow } from "./trackers-api";
import { HelpLink } from "../help/help-link";

const SORTABLE = ["name", "createdAt", "updatedAt"] as const;
/** Failing trackers named in the banner (each is one GET). */
const BANNER_MAX = 5;

function RunNowButton<T extends AnyTracker>({ kind, tracker }: { kind: TrackerKind<T>; tracker: T }) {
  const run = useRunNow(kind, tracker);
  const running = useIsRunning(kind, tracker);
  return (
    <Button
      size="compact-sm"
      variant="default"
      loading={running}
      disabled={running}
      onClick={() => run.mutate()}
      aria-label={`Run now: ${tracker.name}`}
    >
      Run now
    </Button>
  );
}

function EnabledSwitch<T extends AnyTracker>({ kind, tracker }: { kind: TrackerKind<T>; tracker: T }) {
  const qc = useQueryClient();
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => kind.api.setEnabled(tracker.id, enabled),
    onSuccess: (_r, enabled) => notifySuccess(`“${tracker.name}” ${enabled ? "enabled" : "disabled: it runs only when you run it"}`),
    onError: (err) => notifyError(err, `Could not change “${tracker.name}”`),
    onSettled: () => invalidateKind(qc, kind),
  });
  const checked = toggle.isPending ? toggle.variables : tracker.enabled;
  return (
    <Switch
      checked={checked}
      disabled={toggle.isPending}
      onChange={(e) => toggle.mutate(e.currentTarget.checked)}
      aria-label={`${tracker.name} enabled`}
    />
  );
}

function FailingBanner<T extends AnyTracker>({ kind, failing }: { kind: TrackerKind<T>; failing: string[] }) {
  const named = useQueries({
    queries: failing.slice(0, BANNER_MAX).map((id) => ({ queryKey: trackerKeys.one(kind, id), queryFn: () => kind.api.get(id), retry: false })),
  });
  if (failing.length === 0) return null;
  const links: ReactNode[] = named.map((q, i) =>
    q.data ? (
      <Anchor key={q.data.id} component={Link} href={`${kind.path}/${q.data.id}?tab=logs`} size="sm">
        {q.data.name}
      </Anchor>
    ) : (
      <span key={failing[i]}>…</span>
    ),
  );
  const more = failing.length - links.length;
  return (
    <Alert
      color="red"
      variant="outline"
      title={`${failing.length} ${kind.noun}${failing.length === 1 ? " is" : "s are"} failing`}
      data-testid="failing-banner"
      py="xs"
    >
      <Group gap="xs" wrap="wrap">
        <Text size="sm">Latest run failed:</Text>
        {links.flatMap((l, i) => (i === 0 ? [l] : [<span key={`s${i}`}>·</span>, l]))}
        {more > 0 && <Text size="sm">and {more} more</Text>}
      </Group>
    </Alert>
  );
}

export function TrackerListPage<T extends AnyTracker>({
  kind,
  description,
  empty,
}: {
  kind: TrackerKind<T>;
  description: ReactNode;
  empty: { title: string; body: ReactNode };
}) {
  const [state, update] = useListState(SORTABLE);
  const [, navigate] = useLocation();
  const qc = useQueryClient();
  const summary = useLogsSummary(kind);
  const failing = Object.entries(summary.data ?? {})
    .filter(([, logs]) => healthOf(logs).state === "failing")
    .map(([id]) => id);
  const remove = useMutation({
    mutationFn: (t: T) => kind.api.remove(t.id),
    onSuccess: (_r, t) => notifySuccess(`${kind.noun.charAt(0).toUpperCase()}${kind.noun.slice(1)} “${t.name}” deleted`),
    onError: (err) => notifyError(err, `Could not delete the ${kind.noun}`),
    onSettled: () => invalidateKind(qc, kind),
  });

  const columns: DataTableColumn<T>[] = [
    {
      accessor: "name",
      title: "Name",
      sortable: true,
      render: (t) => (
        <Stack gap={0} miw={0}>
          <Anchor component={Link} href={`${kind.path}/${t.id}`} size="sm" fw={500} style={{ overflowWrap: "anywhere" }}>
            {t.name}
          </Anchor>
          <Text size="xs" c="dimmed" className="mono" style={{ overflowWrap: "anywhere" }} lineClamp={1} title={kind.targetUrl(t)}>
            {kind.targetUrl(t)}
          </Text>
        </Stack>
      ),
    },
    {
      accessor: "status",
      title: "Status",
      render: (t) => <StatusCell kind={kind} tracker={t} logs={summary.data?.[t.id]} />,
    },
    {
      accessor: "schedule",
      title: "Schedule",
      visibleMediaQuery: "(min-width: 62em)",
      render: (t) => (
        <Stack gap={0}>
          <Text size="sm" c={t.enabled ? undefined : "dimmed"}>
            {t.enabled || !t.config.job ? scheduleWords(t.config.job?.schedule) : "Paused (disabled)"}
          </Text>
          {t.scheduledAt !== undefined && (
            <Text size="xs" c="dimmed">
              Next <Time value={t.scheduledAt} />
            </Text>
          )}
        </Stack>
      ),
    },
    {
      accessor: "lastRanAt",
      title: "Last run",
      visibleMediaQuery: "(min-width: 48em)",
      render: (t) => <Time value={t.lastRanAt} fallback="Never" />,
    },
    {
      accessor: "revisionCount",
      title: "Revisions",
      textAlign: "right",
      visibleMediaQuery: "(min-width: 48em)",
      render: (t) => (
        <Tooltip label={`${t.revisionCount} stored, up to ${t.config.revisions} kept`} openDelay={300}>
          <Text size="sm" tabIndex={0}>
            {String(t.revisionCount)} / {String(t.config.revisions)}
          </Text>
        </Tooltip>
      ),
    },
    { accessor: "tags", title: "Tags", visibleMediaQuery: "(min-width: 75em)", render: (t) => <TagBadges tags={t.tags} /> },
    { accessor: "enabled", title: "Enabled", render: (t) => <EnabledSwitch kind={kind} tracker={t} /> },
    { accessor: "run", title: "Run", visibleMediaQuery: "(min-width: 36em)", render: (t) => <RunNowButton kind={kind} tracker={t} /> },
  ];

  return (
    <ListPage<T>
      help={<HelpLink topic={kind.kind === "api" ? "api-trackers" : "page-trackers"} />}
      title={kind.title}
      description={description}
      resource={kind.key}
      noun={kind.noun}
      fetchPage={kind.api.list}
      columns={columns}
      taggable
      state={state}
      update={update}
      banner={<FailingBanner kind={kind} failing={failing} />}
      refetchInterval={(items) => (items.some((t) => t.running) ? RUNNING_POLL_MS : false)}
      onCreate={() => navigate(`${kind.path}/new`)}
      onEdit={(t) => navigate(`${kind.path}/${t.id}/edit`)}
      onDuplicate={(t) => navigate(`${kind.path}/new?from=${t.id}`)}
      empty={empty}
      onDelete={(t) =>
        confirmDelete({
          what: kind.noun,
          name: t.name,
          consequence: "Its revisions and logs are deleted with it. This cannot be undone.",
          onConfirm: () => remove.mutateAsync(t),
        })
      }
    />
  );
}

function StatusCell<T extends AnyTracker>({ kind, tracker, logs }: { kind: TrackerKind<T>; tracker: T; logs: Parameters<typeof healthOf>[0] }) {
  const running = useIsRunning(kind, tracker);
  const qc = useQueryClient();
  // A run seen through polling (the schedule, another tab) ended: its log and revision count are new.
  const wasRunning = useRef(running);
  useEffect(() => {
    if (wasRunning.current && !running) void invalidateKind(qc, kind);
    wasRunning.current = running;
  }, [running, qc, kind]);
  return <TrackerStatus health={healthOf(logs)} running={running} />;
}
