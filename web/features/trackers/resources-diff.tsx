// Page trackers with the resource inventory on: which external scripts and stylesheets were added, removed or
// changed (URL, type, size, SHA-256) between two revisions. A swapped third-party script shows here even when the
// page's text did not change.
import { Group, Paper, Stack, Table, Text, Title, Tooltip } from "@mantine/core";
import { StateBadge } from "./state-badge";
import { diffResources, type Resource, type ResourceChange } from "./revision-values";

const TONES = { added: "ok", removed: "fail", changed: "warn" } as const;
const short = (h: string) => h.slice(0, 10);

function Hash({ before, after }: { before?: Resource; after?: Resource }) {
  const text = (r: Resource) => (
    <Tooltip label={r.sha256} openDelay={300}>
      <span className="mono" tabIndex={0}>
        {short(r.sha256)}
      </span>
    </Tooltip>
  );
  if (before && after)
    return (
      <>
        {text(before)} → {text(after)}
      </>
    );
  return text((after ?? before)!);
}

const size = (c: ResourceChange) => {
  const fmt = (r: Resource) => `${r.size.toLocaleString()} B`;
  if (c.change === "changed") return `${fmt(c.before)} → ${fmt(c.after)}`;
  return fmt(c.change === "added" ? c.after : c.before);
};

export function ResourcesDiff({ before, after }: { before: Resource[]; after: Resource[] }) {
  const { changes, unchanged } = diffResources(before, after);
  return (
    <Paper withBorder p="sm" radius="sm" data-testid="resources-diff">
      <Stack gap="xs">
        <Group justify="space-between" gap="xs">
          <Title order={3} size="h5">
            Scripts and stylesheets
          </Title>
          <Text size="xs" c="dimmed">
            {changes.length === 0 ? "No change" : `${changes.length} changed`} · {unchanged} unchanged · {after.length} loaded now
          </Text>
        </Group>
        {changes.length > 0 && (
          <Table.ScrollContainer minWidth={560} type="native">
            <Table verticalSpacing={4} fz="sm">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Change</Table.Th>
                  <Table.Th>Type</Table.Th>
                  <Table.Th>URL</Table.Th>
                  <Table.Th>Size</Table.Th>
                  <Table.Th>SHA-256</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {changes.map((c) => (
                  <Table.Tr key={`${c.type} ${c.url}`} data-change={c.change}>
                    <Table.Td>
                      <StateBadge tone={TONES[c.change]}>{c.change}</StateBadge>
                    </Table.Td>
                    <Table.Td>{c.type}</Table.Td>
                    <Table.Td className="mono" style={{ overflowWrap: "anywhere", minWidth: 220 }}>
                      {c.url}
                    </Table.Td>
                    <Table.Td className="nowrap">{size(c)}</Table.Td>
                    <Table.Td className="nowrap">
                      <Hash before={"before" in c ? c.before : undefined} after={"after" in c ? c.after : undefined} />
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </Stack>
    </Paper>
  );
}
