// Create / edit / duplicate a secret. The value is write-only (supplement §7): the API never returns it, so the
// form never shows one; editing offers "replace the value" (empty keeps the current one). The name is immutable.
import { Alert, Button, Group, Stack, Textarea, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { secrets as secretRules } from "../../api/rules.gen";
import { FormModal } from "../../components/form-modal";
import { applyApiError } from "../../components/form";
import { utf8Length } from "../../components/format";
import { MAX_TAGS_PER_ENTITY, TagSelect } from "../../components/tags/tag-select";
import type { Secret } from "./secrets-api";

const NAME_RE = secretRules.SECRET_NAME_RE;
const MAX_VALUE_BYTES = secretRules.MAX_SECRET_VALUE_BYTES;

export interface SecretFormResult {
  name: string;
  value?: string;
  tagIds: string[];
}

export function SecretForm({
  mode,
  initial,
  onSubmit,
  onClose,
}: {
  mode: "create" | "edit" | "duplicate";
  initial?: Secret;
  onSubmit: (v: SecretFormResult) => Promise<unknown>;
  onClose: () => void;
}) {
  const editing = mode === "edit";
  const form = useForm({
    mode: "controlled",
    initialValues: {
      name: initial ? (mode === "duplicate" ? `${initial.name}_copy`.slice(0, secretRules.SECRET_NAME_MAX) : initial.name) : "",
      value: "",
      tagIds: initial?.tagIds ?? ([] as string[]),
    },
    validate: {
      name: (v) =>
        editing || NAME_RE.test(v.trim())
          ? null
          : `Start with a letter; then letters, digits, _ or -, up to ${secretRules.SECRET_NAME_MAX} characters`,
      value: (v) => {
        if (!editing && v === "") return "Enter the value";
        if (utf8Length(v) > MAX_VALUE_BYTES) return `At most ${MAX_VALUE_BYTES.toLocaleString()} bytes`;
        return null;
      },
    },
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = form.onSubmit(async (values) => {
    setBusy(true);
    setError(null);
    try {
      await onSubmit({ name: values.name.trim(), value: values.value === "" ? undefined : values.value, tagIds: values.tagIds });
      form.reset();
    } catch (err) {
      setError(applyApiError(form, err));
    } finally {
      setBusy(false);
    }
  });
  const title = editing ? `Edit secret ${initial?.name ?? ""}` : mode === "duplicate" ? "Duplicate secret" : "New secret";
  return (
    <FormModal opened title={title} dirty={form.isDirty()} onClose={onClose}>
      {(requestClose) => (
        <form onSubmit={submit} noValidate autoComplete="off">
          <Stack>
            {error && (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            )}
            <TextInput
              label="Name"
              description={
                editing
                  ? "A secret's name cannot change; scripts read it as context.secrets.NAME"
                  : "Scripts read it as context.secrets.NAME: a letter, then letters, digits, _ or -"
              }
              required={!editing}
              readOnly={editing}
              data-autofocus={!editing || undefined}
              styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
              {...form.getInputProps("name")}
            />
            <Textarea
              label={editing ? "Replace value" : "Value"}
              description={
                editing
                  ? "The current value is never shown. Leave empty to keep it; anything typed here replaces it."
                  : `Up to ${MAX_VALUE_BYTES / 1024} KiB. Once saved it is encrypted and never shown again.`
              }
              required={!editing}
              autosize
              minRows={2}
              maxRows={8}
              spellCheck={false}
              autoComplete="off"
              data-autofocus={editing || undefined}
              styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
              {...form.getInputProps("value")}
            />
            <TagSelect
              max={MAX_TAGS_PER_ENTITY}
              value={form.getValues().tagIds}
              onChange={(ids) => form.setFieldValue("tagIds", ids)}
              error={form.errors.tagIds}
            />
            <Group justify="flex-end">
              <Button variant="default" type="button" onClick={requestClose}>
                Cancel
              </Button>
              <Button type="submit" loading={busy}>
                {editing ? "Save" : "Create secret"}
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </FormModal>
  );
}
