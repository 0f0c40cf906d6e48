// Server state of trackers (TanStack Query), shared by both kinds: one tracker, its revisions and logs, the logs
// summary, "run now", and the schedule preview (parse_schedule, supplement §14; the kinds' own calls are in
// api/api-trackers-api.ts and page/page-trackers-api.ts). A run is `_history {refresh: true}`, which answers when the run is over; while it is
// pending (in this tab) or the API reports `running` (a scheduled run, another tab), the tracker shows as running
// and "Run now" is disabled, so a run cannot be started twice from here. Queries of a running tracker poll.
import { useIsMutating, useMutation, useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { useDebouncedValue } from "@mantine/hooks";
import { notifications } from "@mantine/notifications";
import { api, call } from "../../api/client";
import type { TrackerLog } from "../../api/types";
import { notifyError } from "../../components/notify";
import type { AnyTracker, TrackerKind } from "./kind";

/** How often a running tracker's data is refetched. */
export const RUNNING_POLL_MS = 2000;

export const trackerKeys = {
  all: (k: { key: string }) => [k.key] as const,
  one: (k: { key: string }, id: string) => [k.key, "one", id] as const,
  history: (k: { key: string }, id: string) => [k.key, "history", id] as const,
  logs: (k: { key: string }, id: string) => [k.key, "logs", id] as const,
  summary: (k: { key: string }) => [k.key, "summary"] as const,
  run: (k: { key: string }, id: string) => [k.key, "run", id] as const,
};

export function useTracker<T extends AnyTracker>(kind: TrackerKind<T>, id: string) {
  const mine = useIsMutating({ mutationKey: trackerKeys.run(kind, id) }) > 0;
  return useQuery({
    queryKey: trackerKeys.one(kind, id),
    queryFn: () => kind.api.get(id),
    retry: false,
    refetchInterval: (q) => (mine || q.state.data?.running ? RUNNING_POLL_MS : false),
  });
}

export function useHistory<T extends AnyTracker>(kind: TrackerKind<T>, id: string) {
  return useQuery({ queryKey: trackerKeys.history(kind, id), queryFn: () => kind.api.history(id, { diff: true }) });
}

export function useLogs<T extends AnyTracker>(kind: TrackerKind<T>, id: string) {
  return useQuery({ queryKey: trackerKeys.logs(kind, id), queryFn: () => kind.api.logs(id) });
}

export function useLogsSummary<T extends AnyTracker>(kind: TrackerKind<T>) {
  return useQuery({ queryKey: trackerKeys.summary(kind), queryFn: () => kind.api.logsSummary() });
}

/** Everything of this kind is stale after a run or an edit (lists, the tracker, history, logs, summary). */
export const invalidateKind = (qc: QueryClient, kind: { key: string }) => qc.invalidateQueries({ queryKey: trackerKeys.all(kind) });

/** Whether a run of this tracker is in progress (this tab's, or one the API reports). */
export function useIsRunning(kind: { key: string }, tracker: { id: string; running?: boolean } | undefined): boolean {
  const mine = useIsMutating({ mutationKey: trackerKeys.run(kind, tracker?.id ?? "") }) > 0;
  return mine || tracker?.running === true;
}

/** "Run now": one manual run, then a toast with its outcome from the newest log. */
export function useRunNow<T extends AnyTracker>(kind: TrackerKind<T>, tracker: { id: string; name: string }) {
  const qc = useQueryClient();
  return useMutation({
    mutationKey: trackerKeys.run(kind, tracker.id),
    mutationFn: async () => {
      await kind.api.history(tracker.id, { refresh: true });
      return (await kind.api.logs(tracker.id))[0];
    },
    onSuccess: (log) => notifyRun(tracker.name, log),
    onError: (err) => notifyError(err, `Could not run “${tracker.name}”`),
    onSettled: () => invalidateKind(qc, kind),
  });
}

function notifyRun(name: string, log: TrackerLog | undefined) {
  if (!log) return;
  if (log.status === "failure") {
    notifications.show({ title: `“${name}” failed`, message: log.error ?? "The run failed; see its log.", color: "red", autoClose: 8000 });
    return;
  }
  notifications.show({
    message: log.hasChanges ? `“${name}” ran: new revision (${Number(log.revisionSize ?? 0).toLocaleString()} B)` : `“${name}” ran: no change`,
    color: "green",
  });
}

/** The tracker's health from its newest logs: never run, ok, or failing (with how many runs in a row). */
export type Health = { state: "never" } | { state: "ok"; log: TrackerLog } | { state: "failing"; log: TrackerLog; streak: number };

export function healthOf(logs: TrackerLog[] | undefined): Health {
  const newest = logs?.[0];
  if (!logs || !newest) return { state: "never" };
  if (newest.status !== "failure") return { state: "ok", log: newest };
  let streak = 0;
  for (const l of logs) {
    if (l.status !== "failure") break;
    streak++;
  }
  return { state: "failing", log: newest, streak };
}

/** The API's reading of a cron while it is typed (debounced): next runs and shortest gap, or its error. */
export function useParsedSchedule(cron: string | undefined) {
  const [debounced] = useDebouncedValue(cron, 350);
  return useQuery({
    queryKey: ["parse-schedule", debounced],
    queryFn: () => call(api.POST("/api/scheduler/parse_schedule", { body: { schedule: debounced ?? "" } })),
    enabled: debounced !== undefined && debounced !== "",
    retry: false,
    staleTime: 30_000,
  });
}
