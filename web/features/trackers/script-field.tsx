// A tracker script (configurator, extractor) in the lazy CodeMirror editor, with insertable examples and the
// 51,200-byte limit counted as you type, syntax errors marked as you type (where it runs: `runtime`). Empty means
// "no script" (the API stores null).
import { Button, Group, Menu, Text } from "@mantine/core";
import { modals } from "@mantine/modals";
import type { ReactNode } from "react";
import { CodeEditor } from "../../components/code-editor/code-editor";
import { scripts as scriptRules } from "../../api/rules.gen";
import { utf8Length } from "../../components/format";
import type { ScriptRuntime } from "../../components/code-editor/script-syntax";

export const MAX_SCRIPT_BYTES = scriptRules.MAX_SCRIPT_BYTES;

export type { ScriptExample } from "./script-example";
import type { ScriptExample } from "./script-example";

export function ScriptField({
  label,
  description,
  value,
  onChange,
  examples,
  error,
  runtime,
}: {
  label: string;
  description: ReactNode;
  value: string;
  onChange: (v: string) => void;
  examples: ScriptExample[];
  error?: ReactNode;
  /** Where it runs: syntax errors are marked as you type, checked as it will run. */
  runtime: ScriptRuntime;
}) {
  const size = utf8Length(value);
  const insert = (ex: ScriptExample) => {
    if (value.trim() === "") return onChange(ex.code);
    modals.openConfirmModal({
      title: `Replace the ${label.toLowerCase()}?`,
      children: `“${ex.label}” replaces what is in the editor now.`,
      labels: { confirm: "Replace", cancel: "Keep mine" },
      closeButtonProps: { "aria-label": "Close" },
      onConfirm: () => onChange(ex.code),
    });
  };
  return (
    <div>
      <Group justify="flex-end" gap="xs" mb={-26} style={{ position: "relative", zIndex: 1 }}>
        <Menu position="bottom-end" withinPortal>
          <Menu.Target>
            <Button size="compact-xs" variant="light" aria-label={`Insert example into the ${label.toLowerCase()}`}>
              Insert example
            </Button>
          </Menu.Target>
          <Menu.Dropdown>
            {examples.map((ex) => (
              <Menu.Item key={ex.label} onClick={() => insert(ex)}>
                {ex.label}
              </Menu.Item>
            ))}
          </Menu.Dropdown>
        </Menu>
        {value !== "" && (
          <Button size="compact-xs" variant="subtle" color="gray" onClick={() => onChange("")} aria-label={`Remove the ${label.toLowerCase()}`}>
            Remove
          </Button>
        )}
      </Group>
      <CodeEditor
        label={label}
        lint={runtime}
        value={value}
        onChange={onChange}
        minHeight={value === "" ? 90 : 200}
        error={error}
        description={
          <>
            {description}{" "}
            <Text span size="xs" c={size > MAX_SCRIPT_BYTES ? "red" : "dimmed"} aria-live="polite">
              {value === "" ? "No script." : `${size.toLocaleString()} / ${MAX_SCRIPT_BYTES.toLocaleString()} bytes.`}
            </Text>
          </>
        }
      />
    </div>
  );
}
