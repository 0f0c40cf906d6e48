// A responder's own page, /responders/<id> (the link of hit-summary emails): its URL and settings at a glance, the
// live request history with a detail panel (?request=<id>), HAR download and clear, and "Try it" (?tab=try).
import { Alert, Anchor, Badge, Button, Code, Grid, Group, Menu, Paper, ScrollArea, Stack, Tabs, Text, Title } from "@mantine/core";
import { modals } from "@mantine/modals";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useLayoutEffect, useState } from "react";
import { Link, useLocation, useParams } from "wouter";
import { confirmDelete } from "../../components/confirm";
import { CopyButton } from "../../components/copy-button";
import { MAIL_OFF, useMailOff } from "../../components/mail-off";
import { notifyError, notifySuccess } from "../../components/notify";
import { PageHeader } from "../../components/page-header";
import { ErrorState, LoadingState } from "../../components/states";
import { TagBadges } from "../../components/tags/tag-badges";
import { useSearchParam } from "../../components/use-search-param";
import { HistoryTable } from "./history-table";
import { RequestDetail } from "./request-detail";
import { MethodBadge, UrlCell, useResponderStats } from "./responders-page";
import { baseOf, RESPONDERS_KEY, respondersApi, type Responder } from "./responders-api";
import { TryItPanel } from "./try-it-panel";
import { MAX_SHOWN, useLiveHistory, type LiveHistory } from "./use-live-history";
import { HelpLink } from "../help/help-link";

export function ResponderPage() {
  const { id } = useParams<{ id: string }>();
  const responder = useQuery({ queryKey: [RESPONDERS_KEY, "one", id], queryFn: () => respondersApi.get(id), retry: false, staleTime: 0 });
  if (responder.isPending) return <LoadingState />;
  if (responder.isError)
    return (
      <ErrorState
        error={responder.error}
        title="Could not open the responder"
        onRetry={() => responder.refetch()}
        back={{ href: "/responders", label: "Back to responders" }}
      />
    );
  return <ResponderView key={responder.data.id} responder={responder.data} />;
}

function ResponderView({ responder }: { responder: Responder }) {
  const qc = useQueryClient();
  const [, navigate] = useLocation();
  const [tab, setTab] = useSearchParam("tab", { history: "replace" });
  const [requestId, setRequestId] = useSearchParam("request", { history: "replace" });
  const track = Number(responder.settings.requestsToTrack);
  const mailOff = useMailOff();
  // Bumped by "Try it" so the history polls at once. The live history itself lives in RequestsTab: a poll
  // re-renders the table, not this whole page (the Try it form stays untouched).
  const [tries, setTries] = useState(0);
  const stats = useResponderStats();
  // What the live history holds (RequestsTab reports it): the tab's count follows the rows it shows.
  const [live, setLive] = useState<LiveCount | null>(null);
  const names = useQuery({
    queryKey: [RESPONDERS_KEY, "names"],
    queryFn: async () => new Map((await respondersApi.list({ pageSize: 100 })).items.map((r) => [r.id, r.name])),
  });
  const stored = stats.data?.find((s) => s.responderId === responder.id)?.requestCount;
  const count = requestCount(live, stored === undefined ? undefined : Number(stored));

  const remove = () =>
    confirmDelete({
      what: "responder",
      name: responder.name,
      consequence: "Its URL stops answering; its request history and KV data are deleted. This cannot be undone.",
      onConfirm: async () => {
        try {
          await respondersApi.remove(responder.id);
          notifySuccess(`Responder “${responder.name}” deleted`);
          navigate("/responders", { replace: true });
          qc.removeQueries({ queryKey: [RESPONDERS_KEY, "one", responder.id] });
          await qc.invalidateQueries({ queryKey: [RESPONDERS_KEY, "list"] });
        } catch (err) {
          notifyError(err, "Could not delete the responder");
        }
      },
    });

  const s = responder.settings;
  return (
    <Stack gap="sm">
      <Anchor component={Link} href="/responders" size="sm">
        ← All responders
      </Anchor>
      <PageHeader
        title={responder.name}
        help={<HelpLink topic="responders" />}
        actions={
          <>
            <Button component={Link} href={`/responders/${responder.id}/edit`}>
              Edit
            </Button>
            <Menu position="bottom-end" withinPortal>
              <Menu.Target>
                <Button variant="default" aria-label={`More actions for ${responder.name}`}>
                  ⋯
                </Button>
              </Menu.Target>
              <Menu.Dropdown>
                <Menu.Item onClick={() => navigate(`/responders/new?from=${responder.id}`)}>Duplicate</Menu.Item>
                <Menu.Divider />
                <Menu.Item c="var(--app-danger-text)" onClick={remove}>
                  Delete responder
                </Menu.Item>
              </Menu.Dropdown>
            </Menu>
          </>
        }
      />
      <Paper withBorder p="sm" radius="sm">
        <Stack gap={6}>
          <Group gap="xs" wrap="nowrap">
            <MethodBadge method={responder.method} />
            <UrlCell url={responder.url} name={responder.name} wrap />
            {!responder.enabled && (
              <Badge color="gray" variant="outline" tt="none">
                Disabled: answers 404
              </Badge>
            )}
          </Group>
          <Text size="sm" c="dimmed">
            Path <Code>{responder.location.pathType}</Code> <Code>{responder.location.path}</Code> · default status {Number(s.statusCode)}
            {s.headers?.length ? ` · ${s.headers.length} header${s.headers.length === 1 ? "" : "s"}` : ""} · {s.script ? "scripted" : "static"} ·
            secrets {typeof s.secrets === "string" ? s.secrets : `${s.secrets.selected.length} selected`} ·{" "}
            {track === 0 ? "keeps no requests" : `keeps the last ${track} requests`}
            {s.notifications?.enabled ? ` · email summaries on${mailOff ? ` (${MAIL_OFF.toLowerCase()})` : ""}` : ""}
          </Text>
          <TagBadges tags={responder.tags} />
        </Stack>
      </Paper>

      <Tabs value={tab === "try" ? "try" : "requests"} onChange={(t) => setTab(t === "try" ? "try" : null)} keepMounted>
        <Tabs.List>
          <Tabs.Tab value="requests">Requests{count !== undefined && track > 0 ? ` (${Number(count)})` : ""}</Tabs.Tab>
          <Tabs.Tab value="try">Try it</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="requests" pt="sm">
          <RequestsTab responder={responder} tries={tries} requestId={requestId} onOpen={setRequestId} onCount={setLive} />
        </Tabs.Panel>
        <Tabs.Panel value="try" pt="sm">
          <TryItPanel
            responder={responder}
            names={names.data ?? new Map()}
            onSent={() => {
              setTries((n) => n + 1);
              void qc.invalidateQueries({ queryKey: [RESPONDERS_KEY, "stats"] });
            }}
          />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}

/** The records the live history holds, and whether they are all the server stores. */
interface LiveCount {
  shown: number;
  complete: boolean;
}

/**
 * The count on the Requests tab: the live rows when they are every stored record (the usual case: the history
 * loads up to 50 at once and then every new one), else the larger of the rows and `_stats` (refreshed every 5 s
 * and whenever new rows arrive).
 */
function requestCount(live: LiveCount | null, stored: number | undefined): number | undefined {
  if (!live) return stored;
  if (live.complete) return live.shown;
  return Math.max(live.shown, stored ?? 0);
}

function LiveStatus({ live }: { live: LiveHistory }) {
  if (live.paused)
    return (
      <Badge color="gray" variant="dot" tt="none">
        Paused
      </Badge>
    );
  if (live.error)
    return (
      <Badge color="orange" variant="dot" tt="none" title={String((live.error as Error)?.message ?? live.error)}>
        Connection lost: retrying
      </Badge>
    );
  return (
    <Badge color="green" variant="dot" tt="none">
      Live
    </Badge>
  );
}

/** Rows rendered at first and per "show more" (the page holds up to MAX_SHOWN records). */
const SHOW_STEP = 100;

function RequestsTab({
  responder,
  tries,
  requestId,
  onOpen,
  onCount,
}: {
  responder: Responder;
  tries: number;
  requestId: string | null;
  onOpen: (id: string | null) => void;
  onCount: (c: LiveCount | null) => void;
}) {
  const qc = useQueryClient();
  const track = Number(responder.settings.requestsToTrack);
  const live = useLiveHistory(responder.id, track);
  // Reported before the browser paints, so the tab never shows a count older than the rows. While this panel is
  // hidden (the Try it tab: Mantine keeps it as a hidden Activity, whose effects, the polling included, stop) the
  // count comes from `_stats` again.
  const complete = !live.hasOlder && live.records.length < MAX_SHOWN;
  useLayoutEffect(() => {
    onCount(live.loaded ? { shown: live.records.length, complete } : null);
    return () => onCount(null);
  }, [live.loaded, live.records.length, complete, onCount]);
  // New rows: the per-responder totals (list page, this tab when not every record is loaded) follow too.
  const newest = live.records[0]?.id;
  useEffect(() => {
    if (newest) void qc.invalidateQueries({ queryKey: [RESPONDERS_KEY, "stats"] });
  }, [newest, qc]);
  const { pollNow } = live;
  useEffect(() => {
    if (tries > 0) pollNow();
  }, [tries, pollNow]);
  const [shown, setShown] = useState(SHOW_STEP);
  const visible = live.records.length > shown ? live.records.slice(0, shown) : live.records;
  const selected = requestId ? live.records.find((r) => r.id === requestId) : undefined;
  const open = useCallback((id: string) => onOpen(id), [onOpen]);
  const m = responder.method === "ANY" ? "POST" : responder.method;
  const curl =
    m === "GET"
      ? `curl '${responder.url}?hello=world'`
      : m === "HEAD"
        ? `curl --head '${responder.url}'`
        : `curl -X ${m} '${responder.url}' -H 'content-type: application/json' --data '{"hello":"world"}'`;

  if (track === 0)
    return (
      <Alert color="gray" title="This responder keeps no requests">
        It answers, but records nothing. Set <b>Requests to track</b> in its{" "}
        <Anchor component={Link} href={`/responders/${responder.id}/edit`}>
          settings
        </Anchor>{" "}
        to watch what arrives.
      </Alert>
    );

  const clear = () =>
    modals.openConfirmModal({
      title: `Clear the history of “${responder.name}”?`,
      children: "Every recorded request of this responder is deleted. Its KV data stays. This cannot be undone.",
      labels: { confirm: "Clear history", cancel: "Cancel" },
      confirmProps: { color: "red" },
      closeButtonProps: { "aria-label": "Close" },
      onConfirm: async () => {
        try {
          await respondersApi.clear(responder.id);
          onOpen(null);
          live.reset();
          notifySuccess("History cleared");
          void qc.invalidateQueries({ queryKey: [RESPONDERS_KEY, "stats"] });
        } catch (err) {
          notifyError(err, "Could not clear the history");
        }
      },
    });

  return (
    <Stack gap="sm">
      <Group justify="space-between" gap="xs">
        <Group gap="xs">
          <LiveStatus live={live} />
          <Button size="xs" variant="default" onClick={() => live.setPaused(!live.paused)}>
            {live.paused ? "Resume" : "Pause"}
          </Button>
          <Text size="xs" c="dimmed">
            {live.records.length} shown · keeps the last {track}
          </Text>
        </Group>
        <Group gap="xs">
          <Button size="xs" variant="default" component="a" href={respondersApi.harUrl(responder.id)} download>
            Download HAR
          </Button>
          <Button size="xs" variant="light" color="red" onClick={clear} disabled={live.records.length === 0}>
            Clear history
          </Button>
        </Group>
      </Group>
      {live.loaded && live.records.length === 0 ? (
        <Paper withBorder p="lg" radius="sm">
          <Stack gap="xs" align="flex-start">
            <Title order={2} size="h4">
              Waiting for requests…
            </Title>
            <Text size="sm" c="dimmed">
              New requests appear here within a second. Send one from a terminal, point a webhook at the URL, or use <b>Try it</b>.
            </Text>
            {!responder.enabled && (
              <Alert color="orange" p="xs" w="100%">
                This responder is disabled: it answers 404 and records nothing until you enable it.
              </Alert>
            )}
            <Group gap="xs" wrap="nowrap" w="100%">
              <Code block style={{ flex: 1, minWidth: 0, overflowWrap: "anywhere", whiteSpace: "pre-wrap" }}>
                {curl}
              </Code>
              <CopyButton value={curl} what="Command" />
            </Group>
          </Stack>
        </Paper>
      ) : (
        <Grid gap="md">
          <Grid.Col span={{ base: 12, lg: 7 }}>
            <ScrollArea.Autosize mah="75vh" type="auto" offsetScrollbars>
              <HistoryTable records={visible} selectedId={requestId ?? undefined} onOpen={open} />
            </ScrollArea.Autosize>
            {live.records.length > shown ? (
              <Group justify="center" mt="xs">
                <Button size="xs" variant="default" onClick={() => setShown(shown + SHOW_STEP)}>
                  Show {Math.min(SHOW_STEP, live.records.length - shown)} more
                </Button>
              </Group>
            ) : (
              live.hasOlder && (
                <Group justify="center" mt="xs">
                  <Button size="xs" variant="default" loading={live.loadingOlder} onClick={live.loadOlder}>
                    Load older
                  </Button>
                </Group>
              )
            )}
          </Grid.Col>
          <Grid.Col span={{ base: 12, lg: 5 }}>
            {selected ? (
              <RequestDetail key={selected.id} record={selected} base={baseOf(responder)} />
            ) : (
              <Paper withBorder p="lg" radius="sm">
                <Text size="sm" c="dimmed">
                  {requestId
                    ? "This request is no longer in the history shown (it may have been cleared, or evicted by newer ones)."
                    : "Pick a request to see its headers, body and response."}
                </Text>
              </Paper>
            )}
          </Grid.Col>
        </Grid>
      )}
    </Stack>
  );
}
