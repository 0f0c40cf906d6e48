// A script field (responders, API and page trackers): the lazy CodeMirror editor with insertable examples, syntax
// errors marked as you type (where it runs: `lint`), the byte limit counted as you type, and a button that empties
// it. Inserting over a script that is there asks first. Empty means "no script" (the API stores null; a responder
// then sends its default response). Responders also copy from the user's script library (they keep their own copy,
// supplement §8). Two looks, kept as each editor had them:
// - "toolbar": a row of buttons above the editor, examples with a one-line hint (the responder editor);
// - "corner": compact buttons named for the field at the right of its label, "No script." when empty (trackers).
import { Button, Group, Menu, Stack, Text } from "@mantine/core";
import { modals } from "@mantine/modals";
import type { ReactNode } from "react";
import { CodeEditor } from "../../components/code-editor/code-editor";
import type { ScriptRuntime } from "../../components/code-editor/script-syntax";
import { utf8Length } from "../../components/format";
import { notifyError } from "../../components/notify";
import type { ScriptExample } from "./script-example";
import { MAX_SCRIPT_BYTES } from "./script-types";
import { scriptsApi, useScriptLibrary } from "./scripts-api";

export interface ScriptFieldProps {
  label: string;
  /** What the script gets and returns; the size counter follows it. */
  description: ReactNode;
  value: string;
  onChange: (v: string) => void;
  examples: ScriptExample[];
  error?: ReactNode;
  /** Where it runs: syntax errors are marked as you type, checked as it will run. */
  lint: ScriptRuntime;
  look: "toolbar" | "corner";
  /** Offer "Copy from your scripts" with the library's scripts of this context. */
  library?: "responder";
}

export function ScriptField({ label, description, value, onChange, examples, error, lint, look, library }: ScriptFieldProps) {
  const size = utf8Length(value);
  const toolbar = look === "toolbar";
  const put = (source: string, what: string) => {
    if (value.trim() === "") return onChange(source);
    modals.openConfirmModal({
      title: toolbar ? "Replace the script?" : `Replace the ${label.toLowerCase()}?`,
      children: toolbar ? `The script in the editor is replaced by “${what}”.` : `“${what}” replaces what is in the editor now.`,
      labels: { confirm: "Replace", cancel: "Keep mine" },
      closeButtonProps: { "aria-label": "Close" },
      onConfirm: () => onChange(source),
    });
  };
  const examplesMenu = (
    <Menu position={toolbar ? "bottom-start" : "bottom-end"} withinPortal>
      <Menu.Target>
        {toolbar ? (
          <Button variant="default" size="xs">
            Insert example
          </Button>
        ) : (
          <Button size="compact-xs" variant="light" aria-label={`Insert example into the ${label.toLowerCase()}`}>
            Insert example
          </Button>
        )}
      </Menu.Target>
      <Menu.Dropdown maw={toolbar ? 420 : undefined}>
        {examples.map((ex) => (
          <Menu.Item key={ex.label} onClick={() => put(ex.source, ex.label)}>
            {ex.hint === undefined ? (
              ex.label
            ) : (
              <>
                <Text size="sm">{ex.label}</Text>
                <Text size="xs" c="dimmed">
                  {ex.hint}
                </Text>
              </>
            )}
          </Menu.Item>
        ))}
      </Menu.Dropdown>
    </Menu>
  );
  const editor = (
    <CodeEditor
      label={label}
      lint={lint}
      value={value}
      onChange={onChange}
      error={error}
      minHeight={toolbar ? 220 : value === "" ? 90 : 200}
      description={
        <>
          {description}{" "}
          {toolbar ? (
            <Text span size="xs" c={size > MAX_SCRIPT_BYTES ? "red" : "dimmed"} data-testid="script-size">
              {size.toLocaleString()} / {MAX_SCRIPT_BYTES.toLocaleString()} bytes
            </Text>
          ) : (
            <Text span size="xs" c={size > MAX_SCRIPT_BYTES ? "red" : "dimmed"} aria-live="polite">
              {value === "" ? "No script." : `${size.toLocaleString()} / ${MAX_SCRIPT_BYTES.toLocaleString()} bytes.`}
            </Text>
          )}
        </>
      }
    />
  );
  if (!toolbar)
    return (
      <div>
        <Group justify="flex-end" gap="xs" mb={-26} style={{ position: "relative", zIndex: 1 }}>
          {examplesMenu}
          {value !== "" && (
            <Button size="compact-xs" variant="subtle" color="gray" onClick={() => onChange("")} aria-label={`Remove the ${label.toLowerCase()}`}>
              Remove
            </Button>
          )}
        </Group>
        {editor}
      </div>
    );
  return (
    <Stack gap={6}>
      <Group gap="xs">
        {examplesMenu}
        {library !== undefined && <LibraryMenu context={library} onPick={put} />}
        {value.trim() !== "" && (
          <Button variant="subtle" color="gray" size="xs" onClick={() => onChange("")}>
            Remove script
          </Button>
        )}
      </Group>
      {editor}
    </Stack>
  );
}

/** "Copy from your scripts": shown once the library has a script of this context. */
function LibraryMenu({ context, onPick }: { context: "responder"; onPick: (source: string, name: string) => void }) {
  const library = useScriptLibrary(context);
  const fromLibrary = async (id: string, name: string) => {
    try {
      onPick((await scriptsApi.get(id)).content, name);
    } catch (err) {
      notifyError(err, "Could not load the script");
    }
  };
  if ((library.data?.length ?? 0) === 0) return null;
  return (
    <Menu position="bottom-start" withinPortal>
      <Menu.Target>
        <Button variant="default" size="xs">
          Copy from your scripts
        </Button>
      </Menu.Target>
      <Menu.Dropdown>
        {library.data!.map((s) => (
          <Menu.Item key={s.id} onClick={() => void fromLibrary(s.id, s.name)}>
            {s.name}
          </Menu.Item>
        ))}
      </Menu.Dropdown>
    </Menu>
  );
}
