// Loading, error and empty states shared by every page.
import { Alert, Button, Center, Group, Loader, Paper, Stack, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";
import { errorMessage } from "../api/client";

export function ErrorState({ error, onRetry, title = "Something went wrong" }: { error: unknown; onRetry?: () => void; title?: string }) {
  return (
    <Alert color="red" title={title} role="alert" m="md">
      <Stack gap="xs" align="flex-start">
        <Text size="sm">{errorMessage(error)}</Text>
        {onRetry && (
          <Button size="xs" variant="default" onClick={onRetry}>
            Try again
          </Button>
        )}
      </Stack>
    </Alert>
  );
}

export function LoadingState({ label = "Loading" }: { label?: string }) {
  return (
    <Center py="xl">
      <Loader aria-label={label} />
    </Center>
  );
}

/** What a tool is for, and the action that starts using it. */
export function EmptyState({ title, children, action }: { title: string; children: ReactNode; action?: ReactNode }) {
  return (
    <Paper withBorder p="xl" radius="md">
      <Stack align="center" gap="sm" maw={560} mx="auto" ta="center">
        <Title order={2} size="h3">
          {title}
        </Title>
        <Text c="dimmed" size="sm">
          {children}
        </Text>
        {action && <Group mt="sm">{action}</Group>}
      </Stack>
    </Paper>
  );
}
