// Import a policy (supplement §13.3): paste its text, or give a URL and where the page delivers the policy (the
// enforcing header, the report-only header, or a <meta> tag); the server fetches and parses it. From the list it
// creates a new policy; from the editor it replaces the policy's directives. What the import dropped or changed
// comes back as warnings, listed here before moving on.
import { Alert, Button, Checkbox, Group, List, Modal, Radio, SegmentedControl, Stack, Text, Textarea, TextInput } from "@mantine/core";
import { useState } from "react";
import { errorField, errorMessage } from "../../api/client";
import { csp as cspRules } from "../../api/rules.gen";
import { dropDoubledScheme } from "../../components/prefill";
import { cspApi, type PolicyContent, type RemoteSource } from "./csp-api";
import { policyNameProblem } from "./directives";

const REMOTE_SOURCES: { value: RemoteSource; label: string; hint: string }[] = [
  { value: "enforcingHeader", label: "Content-Security-Policy header", hint: "The policy the page enforces" },
  { value: "reportOnlyHeader", label: "Content-Security-Policy-Report-Only header", hint: "A policy the page only reports on" },
  { value: "meta", label: "<meta http-equiv> tag", hint: "A policy in the page's HTML" },
];

export function ImportDialog({
  target,
  onDone,
  onClose,
}: {
  target?: { id: string; name: string };
  onDone: (result: { id: string; warnings: string[] }) => void;
  onClose: () => void;
}) {
  const [mode, setMode] = useState<"text" | "url">("text");
  const [name, setName] = useState("");
  const [text, setText] = useState("");
  const [url, setUrl] = useState("https://");
  const [source, setSource] = useState<RemoteSource>("enforcingHeader");
  const [follow, setFollow] = useState(true);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [nameError, setNameError] = useState<string | null>(null);
  const [warnings, setWarnings] = useState<{ id: string; list: string[] } | null>(null);

  const run = async (e: React.FormEvent) => {
    e.preventDefault();
    const nameProblem = target ? null : policyNameProblem(name);
    if (nameProblem) return setNameError(nameProblem);
    if (mode === "text" && text.trim() === "") return setError("Paste a policy");
    setBusy(true);
    setError(null);
    setNameError(null);
    try {
      const content: PolicyContent =
        mode === "text" ? { type: "serialized", value: text } : { type: "remote", value: { url: url.trim(), source, followRedirects: follow } };
      let result: { id: string; warnings: string[] };
      if (target) result = { id: target.id, warnings: await cspApi.update(target.id, { content }) };
      else {
        const created = await cspApi.create({ name: name.trim(), content, tagIds: [] });
        result = { id: created.id, warnings: created.warnings ?? [] };
      }
      if (result.warnings.length) setWarnings({ id: result.id, list: result.warnings });
      else onDone(result);
    } catch (err) {
      if (errorField(err)?.field === "name") setNameError(errorField(err)!.message);
      else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal
      opened
      onClose={onClose}
      title={target ? `Replace “${target.name}” from an import` : "Import a policy"}
      size="lg"
      closeButtonProps={{ "aria-label": "Close" }}
    >
      {warnings ? (
        <Stack>
          <Alert color="yellow" title={`Imported, with ${warnings.list.length} warning${warnings.list.length === 1 ? "" : "s"}`} role="status">
            <Text size="sm" mb="xs">
              Browsers would ignore these parts too, so the imported policy behaves like the original:
            </Text>
            <List size="sm" spacing={2} aria-label="Import warnings">
              {warnings.list.map((w) => (
                <List.Item key={w}>
                  <span className="mono">{w}</span>
                </List.Item>
              ))}
            </List>
          </Alert>
          <Group justify="flex-end">
            <Button onClick={() => onDone({ id: warnings.id, warnings: warnings.list })}>{target ? "Done" : "Open the policy"}</Button>
          </Group>
        </Stack>
      ) : (
        <form onSubmit={run} noValidate>
          <Stack>
            {!target && (
              <TextInput label="Name" required value={name} error={nameError} onChange={(e) => setName(e.currentTarget.value)} data-autofocus />
            )}
            {target && <Text size="sm">The imported directives replace all of this policy's directives.</Text>}
            <SegmentedControl
              aria-label="Import from"
              value={mode}
              onChange={(v) => setMode(v as "text" | "url")}
              data={[
                { value: "text", label: "Paste text" },
                { value: "url", label: "From a URL" },
              ]}
            />
            {mode === "text" ? (
              <Textarea
                label="Policy"
                description="The header's value (Content-Security-Policy: is optional). Unknown directives and invalid values are dropped, as browsers drop them."
                autosize
                minRows={4}
                maxRows={12}
                value={text}
                onChange={(e) => setText(e.currentTarget.value.replace(/^\s*content-security-policy(-report-only)?\s*:\s*/i, ""))}
                styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
                spellCheck={false}
              />
            ) : (
              <>
                <TextInput
                  label="Page URL"
                  description={`Secbox fetches the page (${cspRules.REMOTE_TIMEOUT_MS / 1000} s) and reads the policy it delivers.`}
                  value={url}
                  onChange={(e) => setUrl(dropDoubledScheme(e.currentTarget.value))}
                  styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
                />
                <Radio.Group label="Read the policy from" value={source} onChange={(v) => setSource(v as RemoteSource)}>
                  <Stack gap="xs" mt="xs">
                    {REMOTE_SOURCES.map((s) => (
                      <Radio key={s.value} value={s.value} label={s.label} description={s.hint} />
                    ))}
                  </Stack>
                </Radio.Group>
                <Checkbox
                  label={`Follow redirects (up to ${cspRules.REMOTE_MAX_REDIRECTS})`}
                  checked={follow}
                  onChange={(e) => setFollow(e.currentTarget.checked)}
                />
              </>
            )}
            {error && (
              <Alert color="red" role="alert" title="Could not import">
                {error}
              </Alert>
            )}
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={busy}>
                Import
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  );
}
