// Responders: HTTP endpoints on the user's own address (supplement §11). The list shows each one's live URL (copy,
// open in a new tab), method, tags, captured requests and last hit (from `_stats`, refreshed every 5 s while the
// page is visible) and an enabled switch; the totals sit above the table. Create and edit happen on their own
// page (/responders/new, /responders/<id>/edit); a name opens the responder's live request history.
import { ActionIcon, Anchor, Badge, Group, Paper, SimpleGrid, Stack, Switch, Text } from "@mantine/core";
import { useMediaQuery } from "@mantine/hooks";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { DataTableColumn } from "mantine-datatable";
import { Link, useLocation } from "wouter";
import { confirmDelete } from "../../components/confirm";
import { copyWithToast } from "../../components/copy-button";
import { CopyIcon, ExternalIcon } from "../../components/icons";
import { LazyTooltip } from "../../components/lazy-tooltip";
import { ListPage } from "../../components/list-page/list-page";
import { useListState } from "../../components/list-page/use-list-state";
import { notifyError, notifySuccess } from "../../components/notify";
import { TagBadges } from "../../components/tags/tag-badges";
import { Time } from "../../components/time";
import { RESPONDERS_KEY, respondersApi, type Responder, type ResponderStats } from "./responders-api";
import { HelpLink } from "../help/help-link";

const SORTABLE = ["name", "createdAt", "updatedAt", "lastRequestedAt"] as const;

export function useResponderStats() {
  return useQuery({
    queryKey: [RESPONDERS_KEY, "stats"],
    queryFn: respondersApi.stats,
    staleTime: 0,
    refetchInterval: 5000,
    refetchIntervalInBackground: false,
  });
}

export function MethodBadge({ method }: { method: string }) {
  return (
    <Badge variant="light" color={method === "ANY" ? "gray" : "blue"} radius="sm" tt="none" className="mono" styles={{ root: { flexShrink: 0 } }}>
      {method}
    </Badge>
  );
}

/** The live URL: selectable text, copy, open in a new tab. */
export function UrlCell({ url, name, wrap = false, maw = 420 }: { url: string; name: string; wrap?: boolean; maw?: number | string }) {
  return (
    <Group gap={4} wrap="nowrap" maw={wrap ? undefined : maw} style={{ minWidth: 0 }}>
      <Text size="sm" className="mono" truncate={wrap ? undefined : "end"} title={url} style={{ minWidth: 0, overflowWrap: "anywhere" }}>
        {url}
      </Text>
      <LazyTooltip label="Copy URL">
        <ActionIcon variant="subtle" color="gray" size="sm" aria-label={`Copy the URL of ${name}`} onClick={() => void copyWithToast(url, "URL")}>
          <CopyIcon />
        </ActionIcon>
      </LazyTooltip>
      <LazyTooltip label="Open in a new tab">
        <ActionIcon
          component="a"
          href={url}
          target="_blank"
          rel="noopener noreferrer"
          variant="subtle"
          color="gray"
          size="sm"
          aria-label={`Open ${name} in a new tab`}
        >
          <ExternalIcon />
        </ActionIcon>
      </LazyTooltip>
    </Group>
  );
}

/** Totals over all the user's responders (`_stats` has one entry per responder). */
function Totals({ stats }: { stats: ResponderStats[] | undefined }) {
  if (!stats || stats.length === 0) return null;
  const requests = stats.reduce((n, s) => n + Number(s.requestCount), 0);
  const last = stats.reduce<number | undefined>(
    (m, s) => (s.lastRequestedAt !== undefined && (m === undefined || Number(s.lastRequestedAt) > m) ? Number(s.lastRequestedAt) : m),
    undefined,
  );
  const items: [string, React.ReactNode][] = [
    ["Responders", stats.length.toLocaleString()],
    ["With requests", stats.filter((s) => Number(s.requestCount) > 0).length.toLocaleString()],
    ["Requests stored", requests.toLocaleString()],
    ["Last hit", <Time key="t" value={last} fallback="never" />],
  ];
  return (
    <SimpleGrid cols={{ base: 2, sm: 4 }} spacing="xs" maw={720} data-testid="responder-totals">
      {items.map(([label, value]) => (
        <Paper key={label} withBorder px="sm" py={6} radius="sm">
          <Text size="xs" c="dimmed">
            {label}
          </Text>
          <Text size="sm" fw={600}>
            {value}
          </Text>
        </Paper>
      ))}
    </SimpleGrid>
  );
}

export function RespondersPage() {
  const [state, update] = useListState(SORTABLE);
  const [, navigate] = useLocation();
  const qc = useQueryClient();
  const stats = useResponderStats();
  const byId = new Map((stats.data ?? []).map((s) => [s.responderId, s]));
  // The URL column's breakpoint (md).
  const wide = useMediaQuery("(min-width: 62em)", true, { getInitialValueInEffect: false });
  const remove = useMutation({
    mutationFn: (r: Responder) => respondersApi.remove(r.id),
    onSuccess: (_x, r) => {
      notifySuccess(`Responder “${r.name}” deleted`);
      void qc.invalidateQueries({ queryKey: [RESPONDERS_KEY] });
    },
    onError: (err) => notifyError(err, "Could not delete the responder"),
  });
  const toggle = useMutation({
    mutationFn: ({ r, enabled }: { r: Responder; enabled: boolean }) => respondersApi.update(r.id, { enabled }),
    onSuccess: (saved) => {
      notifySuccess(saved.enabled ? `“${saved.name}” enabled` : `“${saved.name}” disabled: it answers 404`);
      void qc.invalidateQueries({ queryKey: [RESPONDERS_KEY, "list"] });
      qc.setQueryData([RESPONDERS_KEY, "one", saved.id], saved);
    },
    onError: (err) => notifyError(err, "Could not change the responder"),
  });

  const columns: DataTableColumn<Responder>[] = [
    {
      accessor: "name",
      title: "Name",
      sortable: true,
      render: (r) => (
        <Stack gap={2}>
          <Anchor component={Link} href={`/responders/${r.id}`} size="sm" style={{ overflowWrap: "anywhere" }}>
            {r.name}
          </Anchor>
          {/* Narrow screens have no URL column: the URL goes under the name (rendered only there: a row costs less). */}
          {!wide && <UrlCell url={r.url} name={r.name} maw="min(52vw, 420px)" />}
        </Stack>
      ),
    },
    { accessor: "method", title: "Method", render: (r) => <MethodBadge method={r.method} />, visibleMediaQuery: "(min-width: 36em)" },
    { accessor: "url", title: "URL", render: (r) => <UrlCell url={r.url} name={r.name} />, visibleMediaQuery: "(min-width: 62em)" },
    { accessor: "tags", title: "Tags", render: (r) => <TagBadges tags={r.tags} />, visibleMediaQuery: "(min-width: 75em)" },
    {
      accessor: "requests",
      title: "Requests",
      textAlign: "right",
      visibleMediaQuery: "(min-width: 48em)",
      render: (r) => {
        const n = Number(byId.get(r.id)?.requestCount ?? 0);
        const track = Number(r.settings.requestsToTrack);
        return (
          <Text
            size="sm"
            className="nowrap"
            title={track === 0 ? "This responder tracks no requests" : `Keeps the last ${track}`}
            c={track === 0 ? "dimmed" : undefined}
          >
            {track === 0 ? "off" : n.toLocaleString()}
          </Text>
        );
      },
    },
    {
      accessor: "lastRequestedAt",
      title: "Last hit",
      sortable: true,
      visibleMediaQuery: "(min-width: 36em)",
      render: (r) => <Time value={byId.get(r.id)?.lastRequestedAt} fallback="never" />,
    },
    {
      accessor: "enabled",
      title: "Enabled",
      render: (r) => (
        <Switch
          aria-label={`Enabled: ${r.name}`}
          checked={r.enabled}
          disabled={toggle.isPending && toggle.variables?.r.id === r.id}
          onChange={(e) => toggle.mutate({ r, enabled: e.currentTarget.checked })}
        />
      ),
    },
  ];

  return (
    <ListPage<Responder>
      help={<HelpLink topic="responders" />}
      title="Responders"
      description="HTTP endpoints on your own address: point a webhook, an app or a test at one, answer with a fixed or scripted response, and watch what arrives."
      resource={RESPONDERS_KEY}
      noun="responder"
      fetchPage={respondersApi.list}
      columns={columns}
      taggable
      state={state}
      update={update}
      above={<Totals stats={stats.data} />}
      onCreate={() => navigate("/responders/new")}
      onEdit={(r) => navigate(`/responders/${r.id}/edit`)}
      onDuplicate={(r) => navigate(`/responders/new?from=${r.id}`)}
      empty={{
        title: "No responders yet",
        body: "Create one, send a request to its URL (curl, a webhook from another service, your browser) and see it arrive here within a second. A script can shape the answer: routing, authentication checks, proxying to a real server.",
      }}
      onDelete={(r) =>
        confirmDelete({
          what: "responder",
          name: r.name,
          consequence: "Its URL stops answering; its request history and KV data are deleted. This cannot be undone.",
          onConfirm: () => remove.mutateAsync(r),
        })
      }
    />
  );
}
