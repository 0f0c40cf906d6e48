import { Anchor, Box, Center, Group, Paper, Stack, Text, Title } from "@mantine/core";
import type { ReactNode } from "react";

/** The frame of the public pages: the product name, a card with the form, links below it. */
export function AuthLayout({ title, children, footer }: { title: string; children: ReactNode; footer?: ReactNode }) {
  return (
    <Center mih="100vh" p="md" component="main">
      <Box w="100%" maw={420}>
        <Stack gap="lg">
          <Stack gap={2} align="center">
            <Text fw={800} fz={28}>
              Secbox
            </Text>
            <Text c="dimmed" size="sm" ta="center">
              Self-hosted security toolbox
            </Text>
          </Stack>
          <Paper withBorder shadow="sm" p="xl" radius="md">
            <Stack gap="md">
              <Title order={1} size="h3">
                {title}
              </Title>
              {children}
            </Stack>
          </Paper>
          {footer && (
            <Group justify="center" gap="lg">
              {footer}
            </Group>
          )}
          <Text size="xs" c="dimmed" ta="center">
            API:{" "}
            <Anchor href="/api-docs" size="xs">
              /api-docs
            </Anchor>
          </Text>
        </Stack>
      </Box>
    </Center>
  );
}
