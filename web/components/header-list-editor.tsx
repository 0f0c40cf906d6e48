// An ordered list of HTTP headers: add, remove, move up and down; the same name may appear more than once (the
// APIs keep `[name, value]` pairs in order, supplement §11.2). Each row keeps a stable `key` so moving a row
// keeps its focus and typing state. Errors come per row and part (form paths like "headers.2.name").
import { ActionIcon, Button, Group, Input, Stack, Text, TextInput } from "@mantine/core";
import { useMediaQuery } from "@mantine/hooks";
import type { ReactNode } from "react";

export interface HeaderRow {
  key: string;
  name: string;
  value: string;
}

let nextKey = 0;
export const headerRow = (name = "", value = ""): HeaderRow => ({ key: `h${++nextKey}`, name, value });
export const toHeaderRows = (pairs: readonly (readonly string[])[] | undefined): HeaderRow[] =>
  (pairs ?? []).map(([n, v]) => headerRow(n ?? "", v ?? ""));
/** The pairs to send: rows with neither a name nor a value are left out. */
export const toHeaderPairs = (rows: HeaderRow[]): [string, string][] =>
  rows.filter((r) => r.name.trim() !== "" || r.value !== "").map((r) => [r.name.trim(), r.value]);

function move<T>(list: T[], from: number, to: number): T[] {
  const next = [...list];
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item!);
  return next;
}

export function HeaderListEditor({
  label,
  description,
  rows,
  onChange,
  errorOf,
  error,
  max,
  namePlaceholder = "content-type",
  valuePlaceholder = "application/json",
}: {
  label: string;
  description?: ReactNode;
  rows: HeaderRow[];
  onChange: (rows: HeaderRow[]) => void;
  /** The error of one row's name or value. */
  errorOf?: (index: number, part: "name" | "value") => ReactNode;
  /** An error of the whole list. */
  error?: ReactNode;
  /** Rows the API takes (the feature's rule, e.g. responders' MAX_HEADERS). */
  max: number;
  namePlaceholder?: string;
  valuePlaceholder?: string;
}) {
  const narrow = useMediaQuery("(max-width: 36em)") ?? false;
  const set = (i: number, patch: Partial<HeaderRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <Input.Wrapper label={label} description={description} error={error} labelElement="div">
      <Stack gap={6} mt={6} role="group" aria-label={label}>
        {rows.length === 0 && (
          <Text size="sm" c="dimmed">
            No headers.
          </Text>
        )}
        {rows.map((r, i) => {
          const name = (
            <TextInput
              aria-label={`Header ${i + 1} name`}
              placeholder={i === 0 ? namePlaceholder : undefined}
              value={r.name}
              onChange={(e) => set(i, { name: e.currentTarget.value })}
              error={errorOf?.(i, "name")}
              spellCheck={false}
              autoComplete="off"
              styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
              style={{ flex: narrow ? "1 1 auto" : "0 1 38%", minWidth: 0 }}
            />
          );
          const value = (
            <TextInput
              aria-label={`Header ${i + 1} value`}
              placeholder={i === 0 ? valuePlaceholder : undefined}
              value={r.value}
              onChange={(e) => set(i, { value: e.currentTarget.value })}
              error={errorOf?.(i, "value")}
              spellCheck={false}
              autoComplete="off"
              styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
              style={{ flex: "1 1 auto", minWidth: 0 }}
            />
          );
          const actions = (
            <Group gap={2} wrap="nowrap" mt={4}>
              <ActionIcon
                variant="subtle"
                color="gray"
                aria-label={`Move header ${i + 1} up`}
                disabled={i === 0}
                onClick={() => onChange(move(rows, i, i - 1))}
              >
                <span aria-hidden="true">↑</span>
              </ActionIcon>
              <ActionIcon
                variant="subtle"
                color="gray"
                aria-label={`Move header ${i + 1} down`}
                disabled={i === rows.length - 1}
                onClick={() => onChange(move(rows, i, i + 1))}
              >
                <span aria-hidden="true">↓</span>
              </ActionIcon>
              <ActionIcon variant="subtle" color="red" aria-label={`Remove header ${i + 1}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
                <span aria-hidden="true">✕</span>
              </ActionIcon>
            </Group>
          );
          // Narrow screens: the name with its buttons on one line, the value under it.
          return narrow ? (
            <Stack key={r.key} gap={4} data-testid="header-row" pb={4} style={{ borderBottom: "1px solid var(--mantine-color-default-border)" }}>
              <Group gap={6} align="flex-start" wrap="nowrap">
                {name}
                {actions}
              </Group>
              {value}
            </Stack>
          ) : (
            <Group key={r.key} gap={6} align="flex-start" wrap="nowrap" data-testid="header-row">
              {name}
              {value}
              {actions}
            </Group>
          );
        })}
        <Group>
          <Button variant="default" size="xs" onClick={() => onChange([...rows, headerRow()])} disabled={rows.length >= max}>
            Add header
          </Button>
          {rows.length >= max && (
            <Text size="xs" c="dimmed">
              At most {max} headers
            </Text>
          )}
        </Group>
      </Stack>
    </Input.Wrapper>
  );
}
