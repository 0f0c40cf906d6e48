// A tracker's state at a glance: running, ok, failing (n runs in a row, with the error on hover) or never run.
import { Loader, Tooltip } from "@mantine/core";
import { formatDateTime } from "../../components/format";
import { StateBadge } from "./state-badge";
import type { Health } from "./trackers-api";

export function TrackerStatus({ health, running }: { health: Health; running: boolean }) {
  if (running)
    return (
      <StateBadge tone="info" leftSection={<Loader size={10} color="currentColor" aria-hidden="true" />} data-status="running">
        Running
      </StateBadge>
    );
  if (health.state === "never")
    return (
      <StateBadge tone="neutral" data-status="never">
        Never run
      </StateBadge>
    );
  const when = formatDateTime(health.log.startedAt);
  if (health.state === "ok")
    return (
      <Tooltip label={`Last run ${when}: ${health.log.hasChanges ? "new revision" : "no change"}`} openDelay={300}>
        <StateBadge tone="ok" data-status="ok" tabIndex={0}>
          OK
        </StateBadge>
      </Tooltip>
    );
  return (
    <Tooltip label={`${when}: ${health.log.error ?? "failed"}`} multiline maw={420} openDelay={200}>
      <StateBadge tone="fail" data-status="failing" tabIndex={0}>
        Failing{health.streak > 1 ? ` ×${health.streak}` : ""}
      </StateBadge>
    </Tooltip>
  );
}
