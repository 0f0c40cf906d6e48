// One tracker: what it watches and when, its state (running, OK, failing), "Run now", and two tabs: revisions
// (timeline, chart, diffs) and logs (phases, errors). The tab is in the URL (?tab=logs). Editing, debugging and
// testing happen on the edit page.
import { ActionIcon, Anchor, Badge, Button, Group, Menu, Stack, Tabs, Text } from "@mantine/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useEffect, useRef, type ReactNode } from "react";
import { Link, useLocation, useParams } from "wouter";
import { confirmDelete } from "../../components/confirm";
import { copyWithToast } from "../../components/copy-button";
import { MAIL_OFF, useMailOff } from "../../components/mail-off";
import { notifyError, notifySuccess } from "../../components/notify";
import { PageHeader } from "../../components/page-header";
import { ErrorState, LoadingState } from "../../components/states";
import { TagBadges } from "../../components/tags/tag-badges";
import { Time } from "../../components/time";
import type { AnyTracker, TrackerKind } from "./kind";
import { LogsPanel } from "./logs-panel";
import { RevisionsPanel } from "./revisions-panel";
import { scheduleWords } from "./schedule";
import { TrackerStatus } from "./tracker-status";
import { useSearchParams } from "../../components/use-search-param";
import { healthOf, invalidateKind, useIsRunning, useLogsSummary, useRunNow, useTracker } from "./trackers-api";
import { HelpLink } from "../help/help-link";

export function TrackerPage<T extends AnyTracker>({ kind, details }: { kind: TrackerKind<T>; details?: (t: T) => ReactNode }) {
  const { id } = useParams<{ id: string }>();
  const tracker = useTracker(kind, id);
  if (tracker.isPending) return <LoadingState />;
  if (tracker.isError)
    return (
      <ErrorState
        error={tracker.error}
        title={`Could not open this ${kind.noun}`}
        onRetry={() => tracker.refetch()}
        back={{ href: kind.path, label: `Back to ${kind.title}` }}
      />
    );
  return <TrackerView key={id} kind={kind} tracker={tracker.data} details={details} />;
}

export function Fact({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Stack gap={0}>
      <Text size="xs" c="dimmed">
        {label}
      </Text>
      <Text size="sm" component="div">
        {children}
      </Text>
    </Stack>
  );
}

function TrackerView<T extends AnyTracker>({ kind, tracker, details }: { kind: TrackerKind<T>; tracker: T; details?: (t: T) => ReactNode }) {
  const [params, setParams] = useSearchParams();
  const [, navigate] = useLocation();
  const qc = useQueryClient();
  const summary = useLogsSummary(kind);
  const running = useIsRunning(kind, tracker);
  const run = useRunNow(kind, tracker);
  const mailOff = useMailOff();
  // A run that someone else started (the schedule, another tab) ended: its revision and log are new.
  const wasRunning = useRef(running);
  useEffect(() => {
    if (wasRunning.current && !running) void invalidateKind(qc, kind);
    wasRunning.current = running;
  }, [running, qc, kind]);
  const remove = useMutation({
    mutationFn: () => kind.api.remove(tracker.id),
    onSuccess: () => {
      notifySuccess(`“${tracker.name}” deleted`);
      navigate(kind.path, { replace: true });
      qc.removeQueries({ queryKey: [kind.key, "one", tracker.id] });
      void invalidateKind(qc, kind);
    },
    onError: (err) => notifyError(err, `Could not delete the ${kind.noun}`),
  });
  const tab = params.get("tab") === "logs" ? "logs" : "revisions";
  const job = tracker.config.job;

  return (
    <Stack gap="md">
      <Anchor component={Link} href={kind.path} size="sm">
        ← All {kind.noun}s
      </Anchor>
      <PageHeader
        title={tracker.name}
        help={<HelpLink topic={kind.kind === "api" ? "api-trackers" : "page-trackers"} />}
        description={
          <Text span size="sm" className="mono" style={{ overflowWrap: "anywhere" }}>
            {kind.targetUrl(tracker)}
          </Text>
        }
        actions={
          <>
            <Button onClick={() => run.mutate()} loading={running} disabled={running}>
              Run now
            </Button>
            <Button variant="default" component={Link} href={`${kind.path}/${tracker.id}/edit`}>
              Edit
            </Button>
            <Menu position="bottom-end" withinPortal>
              <Menu.Target>
                <ActionIcon variant="default" size="lg" aria-label={`More actions for ${tracker.name}`}>
                  <span aria-hidden="true">⋯</span>
                </ActionIcon>
              </Menu.Target>
              <Menu.Dropdown>
                <Menu.Item onClick={() => navigate(`${kind.path}/new?from=${tracker.id}`)}>Duplicate</Menu.Item>
                <Menu.Item onClick={() => copyWithToast(tracker.id, "ID")}>Copy ID</Menu.Item>
                <Menu.Divider />
                <Menu.Item
                  c="var(--app-danger-text)"
                  onClick={() =>
                    confirmDelete({
                      what: kind.noun,
                      name: tracker.name,
                      consequence: "Its revisions and logs are deleted with it. This cannot be undone.",
                      onConfirm: () => remove.mutateAsync(),
                    })
                  }
                >
                  Delete {kind.noun}
                </Menu.Item>
              </Menu.Dropdown>
            </Menu>
          </>
        }
      />
      <Group gap="xl" wrap="wrap" align="flex-start" data-testid="tracker-facts">
        <Fact label="Status">
          <TrackerStatus health={healthOf(summary.data?.[tracker.id])} running={running} />
        </Fact>
        <Fact label="Schedule">
          {scheduleWords(job?.schedule)}
          {!tracker.enabled && (
            <Badge ml={6} color="gray" variant="light" tt="none">
              Disabled
            </Badge>
          )}
        </Fact>
        <Fact label="Next run">
          {tracker.scheduledAt !== undefined ? (
            <Time value={tracker.scheduledAt} />
          ) : (
            <Text span size="sm" c="dimmed">
              {job && !tracker.enabled ? "Not while disabled" : "—"}
            </Text>
          )}
        </Fact>
        <Fact label="Last run">
          <Time value={tracker.lastRanAt} fallback="Never" />
        </Fact>
        <Fact label="Revisions">
          {String(tracker.revisionCount)} stored · up to {String(tracker.config.revisions)} kept
        </Fact>
        <Fact label="Notifications">
          {tracker.notifications ? (mailOff ? `Email on change (${MAIL_OFF.toLowerCase()})` : "Email on change") : "Off"}
        </Fact>
        {details?.(tracker)}
        {tracker.tags.length > 0 && (
          <Fact label="Tags">
            <TagBadges tags={tracker.tags} />
          </Fact>
        )}
      </Group>
      <Tabs
        value={tab}
        onChange={(v) => setParams({ tab: v === "logs" ? "logs" : undefined, from: undefined, to: undefined }, { replace: false })}
        keepMounted={false}
      >
        <Tabs.List>
          <Tabs.Tab value="revisions">Revisions</Tabs.Tab>
          <Tabs.Tab value="logs">Logs</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="revisions" pt="md">
          <RevisionsPanel kind={kind} tracker={tracker} />
        </Tabs.Panel>
        <Tabs.Panel value="logs" pt="md">
          <LogsPanel kind={kind} tracker={tracker} />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}
