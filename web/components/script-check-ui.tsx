// The dialogs of script-check.ts (a lazy chunk with the parser, acorn: none of it is in the first load).
import { Code, List, Stack, Text } from "@mantine/core";
import { modals } from "@mantine/modals";
import { notifications } from "@mantine/notifications";
import { describeProblem, scriptProblem, type EditorScript } from "./code-editor/script-syntax";

/** True to go on with the save: every script compiles, or the user chose "Save anyway". */
export async function confirmScriptsCompile(scripts: EditorScript[]): Promise<boolean> {
  const problems = scripts.flatMap((s) => {
    const p = scriptProblem(s.source, s.runtime);
    return p ? [{ label: s.label, text: describeProblem(p) }] : [];
  });
  if (problems.length === 0) return true;
  return new Promise<boolean>((resolve) => {
    modals.openConfirmModal({
      title: problems.length === 1 ? `The ${problems[0]!.label.toLowerCase()} does not compile` : "Some scripts do not compile",
      children: (
        <Stack gap="xs">
          <List spacing={4} size="sm">
            {problems.map((p) => (
              <List.Item key={p.label}>
                <Text span size="sm" fw={600}>
                  {p.label}:
                </Text>{" "}
                <Code>{p.text}</Code>
              </List.Item>
            ))}
          </List>
          <Text size="sm">It can be saved as it is, but every run fails with this error until it is fixed.</Text>
        </Stack>
      ),
      labels: { confirm: "Save anyway", cancel: "Keep editing" },
      confirmProps: { color: "red.9" },
      closeButtonProps: { "aria-label": "Close" },
      onConfirm: () => resolve(true),
      onClose: () => resolve(false),
    });
  });
}

/** The server's syntax warnings of a save, if any, as a toast that stays long enough to read. */
export function notifyScriptWarnings(warnings: string[] | undefined) {
  if (!warnings || warnings.length === 0) return;
  notifications.show({
    title: "Saved, but a script does not compile",
    message: (
      <Stack gap={4}>
        {warnings.map((w) => (
          <Code key={w} block style={{ whiteSpace: "pre-wrap", color: "var(--mantine-color-text)" }}>
            {w}
          </Code>
        ))}
      </Stack>
    ),
    color: "orange",
    autoClose: 20_000,
  });
}
