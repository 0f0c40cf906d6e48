// The header's search box (issue 30 item 8): a button that looks like a search field (an icon on phones) and the
// shortcuts Ctrl/⌘+K (anywhere) and "/" (not while typing in a field or an editor) open the search palette, which
// loads on first use (search-palette.tsx).
import { ActionIcon, Group, Kbd, Text, UnstyledButton } from "@mantine/core";
import { useHotkeys, useOs } from "@mantine/hooks";
import { lazy, Suspense, useState } from "react";
import { openPalette, usePalette } from "../../components/palette-store";

const SearchPalette = lazy(() => import("./search-palette"));

function SearchIcon({ size = 16 }: { size?: number }) {
  return (
    <svg
      width={size}
      height={size}
      viewBox="0 0 24 24"
      fill="none"
      stroke="currentColor"
      strokeWidth={2}
      strokeLinecap="round"
      strokeLinejoin="round"
      aria-hidden="true"
    >
      <circle cx="11" cy="11" r="7" />
      <path d="m20 20-3.5-3.5" />
    </svg>
  );
}

export function HeaderSearch() {
  const { opened } = usePalette();
  const [loaded, setLoaded] = useState(false);
  const mac = useOs() === "macos";
  if (opened && !loaded) setLoaded(true);
  const open = () => openPalette();
  // Ctrl/⌘+K works in fields and editors too; "/" only outside them (it is a character there) and not over an open
  // dialog.
  useHotkeys([["mod+K", open]], [], true);
  useHotkeys([["/", () => document.querySelector('[role="dialog"][aria-modal="true"]') === null && open()]]);
  return (
    <>
      <UnstyledButton
        onClick={open}
        visibleFrom="sm"
        aria-keyshortcuts={mac ? "Meta+K /" : "Control+K /"}
        px="sm"
        h={34}
        w={260}
        style={{
          border: "1px solid var(--mantine-color-default-border)",
          borderRadius: "var(--mantine-radius-sm)",
          background: "var(--mantine-color-default)",
        }}
      >
        <Group gap={8} wrap="nowrap" justify="space-between">
          <Group gap={8} wrap="nowrap" c="dimmed">
            <SearchIcon />
            <Text size="sm" c="dimmed">
              Search everything
            </Text>
          </Group>
          <Kbd size="xs" aria-hidden="true">
            {mac ? "⌘ K" : "Ctrl K"}
          </Kbd>
        </Group>
      </UnstyledButton>
      <ActionIcon onClick={open} hiddenFrom="sm" variant="default" size="lg" aria-label="Search everything">
        <SearchIcon size={18} />
      </ActionIcon>
      {loaded && (
        <Suspense fallback={null}>
          <SearchPalette />
        </Suspense>
      )}
    </>
  );
}
