// The responder's script: a JavaScript editor with insertable examples and a copy from the user's script library
// (responders keep their own copy, supplement §8). Inserting over a script that is there asks first. Empty = no
// script (the default response is sent as it is).
import { Button, Group, Menu, Stack, Text } from "@mantine/core";
import { modals } from "@mantine/modals";
import { CodeEditor } from "../../components/code-editor/code-editor";
import { notifyError } from "../../components/notify";
import { scriptsApi, useScriptLibrary } from "../scripts/scripts-api";
import { SCRIPT_EXAMPLES } from "./script-examples";

export function ScriptField({ value, onChange, error, size, max }: { value: string; onChange: (v: string) => void; error?: React.ReactNode; size: number; max: number }) {
  const library = useScriptLibrary("responder");
  const put = (source: string, what: string) => {
    if (value.trim() === "") return onChange(source);
    modals.openConfirmModal({
      title: "Replace the script?",
      children: `The script in the editor is replaced by “${what}”.`,
      labels: { confirm: "Replace", cancel: "Keep mine" },
      closeButtonProps: { "aria-label": "Close" },
      onConfirm: () => onChange(source),
    });
  };
  const fromLibrary = async (id: string, name: string) => {
    try {
      const s = await scriptsApi.get(id);
      put(s.content, name);
    } catch (err) {
      notifyError(err, "Could not load the script");
    }
  };
  return (
    <Stack gap={6}>
      <Group gap="xs">
        <Menu position="bottom-start" withinPortal>
          <Menu.Target>
            <Button variant="default" size="xs">
              Insert example
            </Button>
          </Menu.Target>
          <Menu.Dropdown maw={420}>
            {SCRIPT_EXAMPLES.map((ex) => (
              <Menu.Item key={ex.id} onClick={() => put(ex.source, ex.label)}>
                <Text size="sm">{ex.label}</Text>
                <Text size="xs" c="dimmed">
                  {ex.hint}
                </Text>
              </Menu.Item>
            ))}
          </Menu.Dropdown>
        </Menu>
        {(library.data?.length ?? 0) > 0 && (
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
        )}
        {value.trim() !== "" && (
          <Button variant="subtle" color="gray" size="xs" onClick={() => onChange("")}>
            Remove script
          </Button>
        )}
      </Group>
      <CodeEditor
        label="Script source"
        lint="quickjs"
        value={value}
        onChange={onChange}
        error={error}
        minHeight={220}
        description={
          <>
            Runs for every request with <code>context</code> (method, path, query, headers, body, secrets) and returns{" "}
            <code>{"{statusCode, headers, body}"}</code> or null for the default response.{" "}
            <Text span size="xs" c={size > max ? "red" : "dimmed"} data-testid="script-size">
              {size.toLocaleString()} / {max.toLocaleString()} bytes
            </Text>
          </>
        }
      />
    </Stack>
  );
}
