import { Group, Stack, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";

/** A page's title and description, with its actions on the right; `help` (a tool's Help link) comes first there. */
export function PageHeader({ title, description, actions, help }: { title: string; description?: ReactNode; actions?: ReactNode; help?: ReactNode }) {
  return (
    <Group justify="space-between" align="flex-start" mb="md" wrap="wrap" gap="sm">
      <Stack gap={2} style={{ flex: "1 1 320px" }}>
        <Title order={1} size="h2">
          {title}
        </Title>
        {description && (
          <Text c="dimmed" size="sm">
            {description}
          </Text>
        )}
      </Stack>
      {(actions || help) && (
        <Group gap="xs">
          {help}
          {actions}
        </Group>
      )}
    </Group>
  );
}
