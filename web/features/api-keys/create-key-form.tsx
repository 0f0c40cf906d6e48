import { Alert, Button, Group, Select, Stack, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { apiKeys as apiKeyRules } from "../../api/rules.gen";
import { FormModal } from "../../components/form-modal";
import { applyApiError } from "../../components/form";
import { apiKeysApi, EXPIRY_OPTIONS, expiryFor, type ApiKeyCreated } from "./api-keys-api";

const NAME_MAX = apiKeyRules.API_KEY_NAME_MAX;

export function CreateKeyForm({ onCreated, onClose }: { onCreated: (k: ApiKeyCreated) => void; onClose: () => void }) {
  const form = useForm({
    mode: "controlled",
    initialValues: { name: "", expiry: "90", date: "" },
    validate: {
      name: (v) =>
        v.trim() === "" ? "Enter a name, e.g. where the key is used" : v.trim().length > NAME_MAX ? `At most ${NAME_MAX} characters` : null,
      date: (v, all) => (all.expiry === "date" && expiryFor("date", v) === null ? "Pick a date in the future" : null),
    },
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = form.onSubmit(async (v) => {
    setBusy(true);
    setError(null);
    try {
      const expiresAt = expiryFor(v.expiry, v.date);
      const created = await apiKeysApi.create({ name: v.name.trim(), ...(typeof expiresAt === "number" ? { expiresAt } : {}) });
      form.reset();
      onCreated(created);
    } catch (err) {
      setError(applyApiError(form, err, { expiresAt: "date" }));
    } finally {
      setBusy(false);
    }
  });
  return (
    <FormModal opened title="New API key" dirty={form.isDirty()} onClose={onClose} size="md">
      {(requestClose) => (
        <form onSubmit={submit} noValidate>
          <Stack>
            {error && (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            )}
            <TextInput label="Name" description="What uses it, e.g. “ci” or “grafana”" data-autofocus required {...form.getInputProps("name")} />
            <Select label="Expiry" data={EXPIRY_OPTIONS} allowDeselect={false} {...form.getInputProps("expiry")} />
            {form.getValues().expiry === "date" && <TextInput type="date" label="Expires at the end of" {...form.getInputProps("date")} />}
            <Group justify="flex-end">
              <Button variant="default" type="button" onClick={requestClose}>
                Cancel
              </Button>
              <Button type="submit" loading={busy}>
                Create key
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </FormModal>
  );
}
