// The search palette (issue 30 item 8): one box over `POST /api/search` (supplement §20), results grouped by tool,
// ↑/↓ to move, Enter to open, Escape to close. A combobox with a listbox (aria-activedescendant), so screen readers
// hear the highlighted result. Typing is debounced and a newer query cancels the older request (TanStack Query
// aborts it through its signal); a 429 (one search at a time per user) is retried after its Retry-After, never
// shown. Queries of 1–2 characters match names and ids only, and the palette says so. A lazy chunk: loaded on the
// first open.
import { Badge, Group, Loader, Modal, Stack, Text, TextInput, UnstyledButton } from "@mantine/core";
import { useDebouncedValue, useMediaQuery } from "@mantine/hooks";
import { useEffect, useId, useMemo, useState } from "react";
import { useLocation } from "wouter";
import { errorMessage } from "../../api/client";
import { closePalette, usePalette } from "../../components/palette-store";
import { search as searchRules } from "../../api/rules.gen";
import { useSearch } from "./search-api";
import { CONTENT_MIN, groupResults, matchNote, type SearchItem } from "./search-targets";

const DEBOUNCE_MS = 200;

export default function SearchPalette() {
  const { opened, query: initial, seq } = usePalette();
  const phone = useMediaQuery("(max-width: 48em)");
  return (
    <Modal
      opened={opened}
      onClose={closePalette}
      title="Search everything"
      size="lg"
      yOffset="8vh"
      fullScreen={phone}
      closeButtonProps={{ "aria-label": "Close search" }}
      // the list scrolls inside; the modal body keeps the box in view
      styles={{ body: { paddingTop: 4 } }}
    >
      {opened && <PaletteBody key={seq} initial={initial} />}
    </Modal>
  );
}

function PaletteBody({ initial }: { initial: string }) {
  const [, navigate] = useLocation();
  const [text, setText] = useState(initial);
  const [debounced] = useDebouncedValue(text.trim(), DEBOUNCE_MS);
  // the first query (a list page's "Search everywhere for …") goes out at once
  const query = text.trim() === initial.trim() ? initial.trim() : debounced;
  const search = useSearch(query);
  const [active, setActive] = useState(0);
  const id = useId();
  const listId = `${id}-list`;
  // characters as the API counts them (code points)
  const short = query.length > 0 && [...query].length < CONTENT_MIN;
  const data = query !== "" && search.data ? search.data : null;
  // 1–2 characters: names and ids only (the API's rule; content matches are dropped here too, so nothing claims
  // contents were searched)
  const shown = useMemo(() => {
    if (!data) return null;
    if (!short) return data;
    const items = data.items.filter((i) => i.matched !== "content");
    return { items, total: items.length };
  }, [data, short]);
  const groups = useMemo(() => groupResults((shown?.items ?? []) as SearchItem[]), [shown]);
  const flat = groups.flatMap((g) => g.items);
  const optionId = (i: number) => `${id}-opt-${i}`;
  useEffect(() => setActive(0), [shown]);

  const open = (item: SearchItem | undefined) => {
    if (!item) return;
    closePalette();
    const g = groups.find((x) => x.type === item.type)!;
    navigate(g.target.href(item.id));
  };
  const onKeyDown = (e: React.KeyboardEvent) => {
    if (flat.length === 0) return;
    if (e.key === "ArrowDown") {
      e.preventDefault();
      setActive((a) => (a + 1) % flat.length);
    } else if (e.key === "ArrowUp") {
      e.preventDefault();
      setActive((a) => (a - 1 + flat.length) % flat.length);
    } else if (e.key === "Home" && e.ctrlKey) {
      setActive(0);
    } else if (e.key === "End" && e.ctrlKey) {
      setActive(flat.length - 1);
    } else if (e.key === "Enter") {
      e.preventDefault();
      open(flat[active]);
    }
  };
  useEffect(() => {
    document.getElementById(optionId(active))?.scrollIntoView({ block: "nearest" });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [active]);

  let status: string;
  if (text.trim() === "") status = "Type to search names, ids, script sources, responder paths and tracker URLs.";
  else if (search.isError && !shown) status = `Search failed: ${errorMessage(search.error)}`;
  else if (!shown || search.isPlaceholderData) status = "Searching…";
  else if (shown.total === 0)
    status = short
      ? `No name or id matches “${query}”. Type ${CONTENT_MIN} characters or more to search contents too.`
      : `Nothing matches “${query}”.`;
  else {
    const count = shown.total > flat.length ? `${flat.length} of ${shown.total} results` : `${shown.total} result${shown.total === 1 ? "" : "s"}`;
    status = short ? `${count} by name or id. Type ${CONTENT_MIN} characters or more to search contents too.` : `${count} by name, id or content.`;
  }
  let n = -1;
  return (
    <Stack gap="xs">
      <TextInput
        data-autofocus
        aria-label="Search everything"
        placeholder="Name, id, script text, path or URL"
        maxLength={searchRules.MAX_QUERY_CHARS}
        value={text}
        onChange={(e) => setText(e.currentTarget.value)}
        onKeyDown={onKeyDown}
        role="combobox"
        aria-expanded={flat.length > 0}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-activedescendant={flat.length > 0 ? optionId(active) : undefined}
        rightSection={search.isFetching ? <Loader size="xs" aria-hidden /> : null}
        size="md"
        autoComplete="off"
        spellCheck={false}
      />
      <Text
        size="xs"
        c="dimmed"
        role="status"
        aria-live="polite"
        data-testid="search-status"
        data-for={shown && !search.isPlaceholderData ? query : undefined}
      >
        {status}
      </Text>
      <div
        id={listId}
        role="listbox"
        aria-label="Search results"
        data-testid="search-results"
        style={{ maxHeight: "min(60vh, 520px)", overflowY: "auto" }}
      >
        {groups.map((g) => (
          <div key={g.type} role="group" aria-labelledby={`${id}-${g.type}`}>
            <Text id={`${id}-${g.type}`} size="xs" fw={700} tt="uppercase" c="dimmed" px="xs" pt="sm" pb={4}>
              {g.target.group}
            </Text>
            {g.items.map((item) => {
              const i = ++n;
              const note = matchNote(item);
              const selected = i === active;
              return (
                <UnstyledButton
                  key={`${item.type}-${item.id}`}
                  component="div"
                  id={optionId(i)}
                  role="option"
                  aria-selected={selected}
                  tabIndex={-1}
                  onMouseMove={() => setActive(i)}
                  onClick={() => open(item)}
                  px="xs"
                  py={6}
                  w="100%"
                  style={{
                    borderRadius: 4,
                    background: selected ? "var(--mantine-primary-color-light)" : undefined,
                    boxShadow: selected ? "inset 3px 0 0 var(--mantine-primary-color-filled)" : undefined,
                  }}
                >
                  <Group gap="xs" wrap="nowrap" justify="space-between">
                    <Text size="sm" truncate>
                      {item.name}
                    </Text>
                    {note && (
                      <Badge size="sm" variant="light" color="gray" style={{ flexShrink: 0 }}>
                        {note}
                      </Badge>
                    )}
                  </Group>
                </UnstyledButton>
              );
            })}
          </div>
        ))}
      </div>
      <Text size="xs" c="dimmed" visibleFrom="sm">
        ↑ ↓ to move · Enter to open · Esc to close
      </Text>
    </Stack>
  );
}
