// Loading, error and empty states shared by every page.
import { Alert, Button, Center, Group, Loader, Paper, Stack, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";
import { Link } from "wouter";
import { ApiError, errorMessage } from "../api/client";

/** Whether asking again may help: not for a refusal of the request itself (404, 400, 403…), which answers the same. */
const retryable = (err: unknown) => !(err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429);

/**
 * A failed load. "Try again" only when trying again may help (a network or server error); `back` leads to the
 * list the item belonged to (what a not-found item needs instead).
 */
export function ErrorState({
  error,
  onRetry,
  title = "Something went wrong",
  back,
}: {
  error: unknown;
  onRetry?: () => void;
  title?: string;
  back?: { href: string; label: string };
}) {
  return (
    <Alert color="red" title={title} role="alert" m="md">
      <Stack gap="xs" align="flex-start">
        <Text size="sm">{errorMessage(error)}</Text>
        {(back || (onRetry && retryable(error))) && (
          <Group gap="xs">
            {back && (
              <Button size="xs" variant="default" component={Link} href={back.href}>
                {back.label}
              </Button>
            )}
            {onRetry && retryable(error) && (
              <Button size="xs" variant="default" onClick={onRetry}>
                Try again
              </Button>
            )}
          </Group>
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
