// The policy editor's directive list: each directive is a row with its description and its values as tokens
// (suggestions per directive: keywords, schemes, a fresh nonce; each token checked as it is added); rows can be
// reordered and removed; new ones come from a picker of the known directives. The selected row (picked here or
// from an evaluator finding) is highlighted and its value input focused.
import { ActionIcon, Box, Group, Paper, Select, Stack, TagsInput, Text } from "@mantine/core";
import { useEffect, useRef, useState } from "react";
import { DIRECTIVES, directiveInfo, listProblem, MAX_DIRECTIVES, suggestions, valueProblem } from "./directives";

export interface DraftDirective {
  /** Stable React key (names can be re-added). */
  key: number;
  name: string;
  value: string[];
}

function DirectiveRow({
  d,
  index,
  count,
  selected,
  focusRequest,
  apiError,
  readOnly,
  onSelect,
  onChange,
  onMove,
  onRemove,
}: {
  d: DraftDirective;
  index: number;
  count: number;
  selected: boolean;
  /** Changes when this row should scroll into view and focus its value input (a finding was clicked). */
  focusRequest: number;
  apiError?: string;
  readOnly?: boolean;
  onSelect: () => void;
  onChange: (value: string[]) => void;
  onMove: (delta: -1 | 1) => void;
  onRemove: () => void;
}) {
  const info = directiveInfo(d.name);
  const [problem, setProblem] = useState<string | null>(null);
  const [options] = useState(() => suggestions(d.name));
  const ref = useRef<HTMLLIElement>(null);
  useEffect(() => {
    if (!focusRequest || !ref.current) return;
    ref.current.scrollIntoView({ block: "nearest" });
    ref.current.querySelector<HTMLInputElement>("input:not([type=hidden])")?.focus({ preventScroll: true });
  }, [focusRequest]);
  const listError = listProblem(d.name, d.value);
  return (
    <Paper
      ref={ref}
      withBorder
      p="sm"
      radius="md"
      component="li"
      data-directive={d.name}
      aria-current={selected ? "true" : undefined}
      onFocusCapture={onSelect}
      style={{
        borderColor: selected ? "var(--mantine-primary-color-filled)" : undefined,
        boxShadow: selected ? "0 0 0 1px var(--mantine-primary-color-filled)" : undefined,
      }}
    >
      <Stack gap={6}>
        <Group justify="space-between" wrap="nowrap" align="flex-start">
          <Box style={{ minWidth: 0 }}>
            <Text fw={700} className="mono" size="sm">
              {d.name}
            </Text>
            <Text size="xs" c="dimmed">
              {info?.description ?? "Not a directive this editor knows"}
            </Text>
          </Box>
          {!readOnly && (
            <Group gap={2} wrap="nowrap">
              <ActionIcon variant="subtle" color="gray" aria-label={`Move ${d.name} up`} disabled={index === 0} onClick={() => onMove(-1)}>
                <span aria-hidden="true">↑</span>
              </ActionIcon>
              <ActionIcon variant="subtle" color="gray" aria-label={`Move ${d.name} down`} disabled={index === count - 1} onClick={() => onMove(1)}>
                <span aria-hidden="true">↓</span>
              </ActionIcon>
              <ActionIcon variant="subtle" color="red" aria-label={`Remove ${d.name}`} onClick={onRemove}>
                <span aria-hidden="true">×</span>
              </ActionIcon>
            </Group>
          )}
        </Group>
        {info?.kind === "none" ? (
          <Text size="sm" c="dimmed">
            No value.
          </Text>
        ) : readOnly ? (
          <Text size="sm" className="mono" style={{ overflowWrap: "anywhere" }}>
            {d.value.join(" ") || "(empty)"}
          </Text>
        ) : (
          <TagsInput
            aria-label={`${d.name} values`}
            placeholder={d.value.length ? "Add a value" : "Type a value and press Enter, or pick a suggestion"}
            data={options.filter((o) => !d.value.includes(o))}
            value={d.value}
            splitChars={[" ", ","]}
            clearable={false}
            maxDropdownHeight={240}
            comboboxProps={{ withinPortal: true }}
            onChange={(next) => {
              const added = next.filter((v) => !d.value.includes(v));
              const bad = added.map((v) => [v, valueProblem(d.name, v)] as const).find(([, p]) => p !== null);
              setProblem(bad ? `${bad[0]}: ${bad[1]}` : null);
              onChange(next.filter((v) => d.value.includes(v) || valueProblem(d.name, v) === null));
            }}
            error={problem ?? apiError}
            styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" }, pill: { fontFamily: "var(--mantine-font-family-monospace)" } }}
          />
        )}
        {!readOnly && listError && !problem && !apiError && (
          <Text size="xs" c="dimmed">
            {listError}
          </Text>
        )}
      </Stack>
    </Paper>
  );
}

export function DirectiveList({
  directives,
  onChange,
  selected,
  focusRequest,
  onSelect,
  rowErrors,
  readOnly,
}: {
  directives: DraftDirective[];
  onChange: (next: DraftDirective[]) => void;
  selected: string | null;
  focusRequest: { name: string | null; n: number };
  /** `focus`: also scroll to it and focus its input. */
  onSelect: (name: string, focus?: boolean) => void;
  rowErrors: Record<number, string>;
  readOnly?: boolean;
}) {
  const [picker, setPicker] = useState<string | null>(null);
  const present = new Set(directives.map((d) => d.name));
  const move = (i: number, delta: -1 | 1) => {
    const next = [...directives];
    const [d] = next.splice(i, 1);
    next.splice(i + delta, 0, d!);
    onChange(next);
  };
  return (
    <Stack gap="sm">
      {directives.length > 0 && (
        <Stack component="ul" gap="xs" m={0} p={0} style={{ listStyle: "none" }} aria-label="Directives">
          {directives.map((d, i) => (
            <DirectiveRow
              key={d.key}
              d={d}
              index={i}
              count={directives.length}
              selected={selected === d.name}
              focusRequest={focusRequest.name === d.name ? focusRequest.n : 0}
              apiError={rowErrors[i]}
              readOnly={readOnly}
              onSelect={() => onSelect(d.name)}
              onChange={(value) => onChange(directives.map((x) => (x.key === d.key ? { ...x, value } : x)))}
              onMove={(delta) => move(i, delta)}
              onRemove={() => onChange(directives.filter((x) => x.key !== d.key))}
            />
          ))}
        </Stack>
      )}
      {!readOnly && (
        <Select
          label="Add a directive"
          placeholder={directives.length >= MAX_DIRECTIVES ? `At most ${MAX_DIRECTIVES} directives` : "Pick a directive"}
          searchable
          disabled={directives.length >= MAX_DIRECTIVES}
          value={picker}
          nothingFoundMessage="No such directive (or it is already in the policy)"
          data={DIRECTIVES.filter((d) => !present.has(d.name)).map((d) => ({ value: d.name, label: d.name }))}
          renderOption={({ option }) => (
            <div>
              <Text size="sm" className="mono">
                {option.value}
              </Text>
              <Text size="xs" className="option-hint">
                {directiveInfo(option.value)?.description}
              </Text>
            </div>
          )}
          maxDropdownHeight={320}
          comboboxProps={{ withinPortal: true }}
          onChange={(name) => {
            if (!name) return;
            onChange([...directives, { key: Date.now() + Math.random(), name, value: [] }]);
            setPicker(null);
            onSelect(name, true);
          }}
        />
      )}
    </Stack>
  );
}
