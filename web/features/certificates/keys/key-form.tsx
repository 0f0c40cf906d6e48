// Create a private key (supplement §12.2): name, algorithm with its size or curve, an optional passphrase (the key is
// then stored as encrypted PKCS#8 and every export needs it), tags. The key is made on the server; nothing of it is
// ever shown.
import { Alert, Button, Group, PasswordInput, Select, SimpleGrid, Stack, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { useStatus } from "../../users/users-api";
import { applyApiError } from "../../../components/form";
import { FormModal } from "../../../components/form-modal";
import { MAX_TAGS_PER_ENTITY, TagSelect } from "../../../components/tags/tag-select";
import { keyAlgorithm, KEY_TYPES, keyParams } from "../algorithms";
import { keyNameRule, passphraseRule } from "./keys-api";

export interface KeyFormResult {
  keyName: string;
  alg: ReturnType<typeof keyAlgorithm>;
  passphrase?: string;
  tagIds: string[];
}

export function KeyForm({ onSubmit, onClose }: { onSubmit: (v: KeyFormResult) => Promise<unknown>; onClose: () => void }) {
  const status = useStatus();
  const dsa = status.data?.features.dsa !== false;
  const form = useForm({
    mode: "controlled",
    initialValues: { keyName: "", keyType: "ecdsa", keyParam: "secp256r1", passphrase: "", confirm: "", tagIds: [] as string[] },
    validate: {
      keyName: keyNameRule,
      passphrase: passphraseRule,
      confirm: (v, all) => (v !== all.passphrase ? "The passphrases do not match" : null),
    },
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const v = form.getValues();
  const params = keyParams(v.keyType);
  const submit = form.onSubmit(async (values) => {
    setBusy(true);
    setError(null);
    try {
      await onSubmit({
        keyName: values.keyName.trim(),
        alg: keyAlgorithm(values.keyType, values.keyParam),
        passphrase: values.passphrase === "" ? undefined : values.passphrase,
        tagIds: values.tagIds,
      });
      form.reset();
    } catch (err) {
      setError(applyApiError(form, err, { alg: "keyType", "alg.keySize": "keyParam", "alg.curve": "keyParam" }));
    } finally {
      setBusy(false);
    }
  });
  return (
    <FormModal opened title="New private key" dirty={form.isDirty()} onClose={onClose}>
      {(requestClose) => (
        <form onSubmit={submit} noValidate autoComplete="off">
          <Stack>
            {error && (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            )}
            <TextInput label="Name" required data-autofocus {...form.getInputProps("keyName")} />
            <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
              <Select
                label="Algorithm"
                allowDeselect={false}
                data={KEY_TYPES.map((k) => ({
                  value: k.value,
                  label: k.value === "dsa" && !dsa ? "DSA (unavailable: no openssl)" : k.label,
                  disabled: k.value === "dsa" && !dsa,
                }))}
                value={v.keyType}
                onChange={(keyType) => {
                  if (!keyType) return;
                  form.setFieldValue("keyType", keyType);
                  form.setFieldValue("keyParam", keyParams(keyType)?.fallback ?? "");
                }}
                error={form.errors.keyType}
              />
              {params ? (
                <Select label={params.label} allowDeselect={false} data={params.options} {...form.getInputProps("keyParam")} />
              ) : (
                <TextInput label="Key size" value="Fixed (256 bits)" readOnly disabled />
              )}
            </SimpleGrid>
            <PasswordInput
              label="Passphrase (optional)"
              description="Encrypts the stored key; every export then needs it. It cannot be recovered if lost."
              autoComplete="new-password"
              {...form.getInputProps("passphrase")}
            />
            {v.passphrase !== "" && <PasswordInput label="Repeat the passphrase" autoComplete="new-password" {...form.getInputProps("confirm")} />}
            <TagSelect max={MAX_TAGS_PER_ENTITY} value={v.tagIds} onChange={(ids) => form.setFieldValue("tagIds", ids)} error={form.errors.tagIds} />
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
