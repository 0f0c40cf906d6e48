// The frame of a shared (read-only) page: opened from a share link, usually by someone who is not signed in, so it
// stands outside the shell. The theme switch here changes only this browser (there is no account to store it in).
import { Anchor, Box, Container, Group, SegmentedControl, Text, useMantineColorScheme, VisuallyHidden, type MantineColorScheme } from "@mantine/core";
import type { ReactNode } from "react";
import { Link } from "wouter";
import { useSelf } from "../features/users/users-api";

export function SharedLayout({ children }: { children: ReactNode }) {
  const self = useSelf();
  const { colorScheme, setColorScheme } = useMantineColorScheme();
  return (
    <Box mih="100vh">
      <Box component="header" px="md" py="xs" style={{ borderBottom: "1px solid var(--mantine-color-default-border)" }}>
        <Group justify="space-between" wrap="nowrap">
          <Group gap="xs" wrap="nowrap">
            <Text fw={700} fz="lg">
              Secbox
            </Text>
            <Text size="sm" c="dimmed" visibleFrom="xs">
              shared read-only view
            </Text>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <VisuallyHidden id="shared-theme-label">Theme</VisuallyHidden>
            <SegmentedControl
              size="xs"
              visibleFrom="sm"
              aria-labelledby="shared-theme-label"
              value={colorScheme}
              onChange={(v) => setColorScheme(v as MantineColorScheme)}
              data={[
                { value: "light", label: "Light" },
                { value: "dark", label: "Dark" },
                { value: "auto", label: "System" },
              ]}
            />
            {self.data ? (
              <Anchor component={Link} href="/" size="sm">
                Open Secbox
              </Anchor>
            ) : (
              <Anchor component={Link} href="/signin" size="sm">
                Sign in
              </Anchor>
            )}
          </Group>
        </Group>
      </Box>
      <Container size="lg" py="md" component="main">
        {children}
      </Container>
    </Box>
  );
}
