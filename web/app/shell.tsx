// The app shell: a "Skip to content" link (the first tab stop), header (menu button on narrow screens, name, search
// box, theme switch, account menu with Settings and Help), navigation by area (Settings and Help at its foot), and
// the page. The navigation collapses into a drawer below
// the `sm` breakpoint and closes after a choice. A route change moves focus to the new page's heading
// (components/focus.ts).
import { Alert, AppShell, Burger, Group, Menu, NavLink, ScrollArea, Stack, Text, UnstyledButton } from "@mantine/core";
import { useDisclosure } from "@mantine/hooks";
import type { ReactNode } from "react";
import { Link, useLocation } from "wouter";
import { focusMain, MAIN_ID, useFocusOnRouteChange } from "../components/focus";
import { useSelf, useSignOut, useStatus } from "../features/users/users-api";
import { HELP, NAV, SETTINGS } from "./nav";
import { HeaderSearch } from "../features/search/header-search";
import { ThemeToggle } from "../features/settings/theme-toggle";
import { useThemeSync } from "../features/settings/settings-api";

const isActive = (location: string, path: string) => location === path || location.startsWith(`${path}/`);

export function Shell({ children }: { children: ReactNode }) {
  const [opened, { toggle, close }] = useDisclosure(false);
  const [location, navigate] = useLocation();
  const self = useSelf();
  const status = useStatus();
  const signOut = useSignOut();
  useThemeSync();
  useFocusOnRouteChange(location);

  const link = (label: string, path: string) => (
    <NavLink
      key={path}
      component={Link}
      href={path}
      label={label}
      active={isActive(location, path)}
      aria-current={isActive(location, path) ? "page" : undefined}
      onClick={close}
    />
  );

  return (
    <AppShell header={{ height: 52 }} navbar={{ width: 240, breakpoint: "sm", collapsed: { mobile: !opened } }} padding="md">
      <a
        href={`#${MAIN_ID}`}
        className="skip-link"
        onClick={(e) => {
          e.preventDefault();
          focusMain();
        }}
      >
        Skip to content
      </a>
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger
              opened={opened}
              onClick={toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label={opened ? "Close navigation" : "Open navigation"}
              aria-expanded={opened}
              aria-controls="main-navigation"
            />
            <UnstyledButton component={Link} href="/" fw={700} fz="lg" aria-label="Secbox home">
              Secbox
            </UnstyledButton>
          </Group>
          <Group gap="xs" wrap="nowrap">
            <HeaderSearch />
            <ThemeToggle />
            <Menu position="bottom-end" withinPortal>
              <Menu.Target>
                <UnstyledButton aria-label={`Account menu: ${self.data?.email ?? ""}`} px="xs" py={4} style={{ borderRadius: 4 }}>
                  <Text size="sm" truncate maw={{ base: 120, sm: 260 }}>
                    {self.data?.email}
                  </Text>
                </UnstyledButton>
              </Menu.Target>
              <Menu.Dropdown>
                <Menu.Label>{self.data?.email}</Menu.Label>
                <Menu.Item onClick={() => navigate("/settings")}>Settings</Menu.Item>
                <Menu.Item onClick={() => navigate(HELP.path)}>Help</Menu.Item>
                <Menu.Item
                  onClick={async () => {
                    await signOut();
                    navigate("/signin");
                  }}
                >
                  Sign out
                </Menu.Item>
              </Menu.Dropdown>
            </Menu>
          </Group>
        </Group>
      </AppShell.Header>

      <AppShell.Navbar aria-label="Main navigation" id="main-navigation">
        <AppShell.Section grow component={ScrollArea} p="xs">
          <Stack gap="sm">
            {NAV.map((area) => (
              <div key={area.label}>
                <Text size="xs" fw={700} tt="uppercase" c="dimmed" px="sm" pb={4} component="h2">
                  {area.label}
                </Text>
                {area.items.map((item) => link(item.label, item.path))}
              </div>
            ))}
          </Stack>
        </AppShell.Section>
        <AppShell.Section p="xs" style={{ borderTop: "1px solid var(--app-shell-border-color)" }}>
          {link(SETTINGS.label, SETTINGS.path)}
          {link(HELP.label, HELP.path)}
        </AppShell.Section>
      </AppShell.Navbar>

      <AppShell.Main id={MAIN_ID} tabIndex={-1}>
        {status.data?.level === "unavailable" && (
          <Alert color="orange" mb="md" title="Service marked unavailable">
            The operator has marked this server as unavailable; some things may not work as expected.
          </Alert>
        )}
        {children}
      </AppShell.Main>
    </AppShell>
  );
}
