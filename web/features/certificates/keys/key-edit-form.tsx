// Edit a private key (supplement §12.2): rename, retag, and set, change or remove its passphrase. Changing the
// protection of an encrypted key needs the current passphrase (a wrong one is shown under that field).
import { Alert, Button, Group, Input, PasswordInput, SegmentedControl, Stack, Text, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { ApiError } from "../../../api/client";
import { applyApiError } from "../../../components/form";
import { FormModal } from "../../../components/form-modal";
import { MAX_TAGS_PER_ENTITY, TagSelect } from "../../../components/tags/tag-select";
import { describeKeyAlgorithm } from "../algorithms";
import { keyNameRule, MAX_PASSPHRASE, passphraseRule, type PrivateKey } from "./keys-api";

type Protection = "keep" | "set" | "remove";

export interface KeyEditResult {
  keyName: string;
  tagIds: string[];
  passphrase?: string;
  newPassphrase?: string | null;
}

export function KeyEditForm({
  item,
  onSubmit,
  onClose,
}: {
  item: PrivateKey;
  onSubmit: (v: KeyEditResult) => Promise<unknown>;
  onClose: () => void;
}) {
  const form = useForm({
    mode: "controlled",
    initialValues: { keyName: item.name, tagIds: item.tagIds, protection: "keep" as Protection, passphrase: "", newPassphrase: "", confirm: "" },
    validate: {
      keyName: keyNameRule,
      passphrase: (v, all) => (item.encrypted && all.protection !== "keep" && v === "" ? "Enter the current passphrase" : null),
      newPassphrase: (v, all) => (all.protection === "set" ? (v === "" ? "Enter the new passphrase" : passphraseRule(v)) : null),
      confirm: (v, all) => (all.protection === "set" && v !== all.newPassphrase ? "The passphrases do not match" : null),
    },
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const v = form.getValues();
  const submit = form.onSubmit(async (values) => {
    setBusy(true);
    setError(null);
    try {
      const change = values.protection !== "keep";
      await onSubmit({
        keyName: values.keyName.trim(),
        tagIds: values.tagIds,
        ...(change && item.encrypted ? { passphrase: values.passphrase } : {}),
        ...(change ? { newPassphrase: values.protection === "set" ? values.newPassphrase : null } : {}),
      });
      form.reset();
    } catch (err) {
      if (err instanceof ApiError && err.code === "BAD_PASSPHRASE") form.setFieldError("passphrase", "The current passphrase is not correct");
      else setError(applyApiError(form, err));
    } finally {
      setBusy(false);
    }
  });
  const options = [
    { value: "keep", label: item.encrypted ? "Keep the passphrase" : "No passphrase" },
    { value: "set", label: item.encrypted ? "Change it" : "Set a passphrase" },
    ...(item.encrypted ? [{ value: "remove", label: "Remove it" }] : []),
  ];
  return (
    <FormModal opened title={`Edit private key ${item.name}`} dirty={form.isDirty()} onClose={onClose}>
      {(requestClose) => (
        <form onSubmit={submit} noValidate autoComplete="off">
          <Stack>
            {error && (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            )}
            <TextInput label="Name" required data-autofocus {...form.getInputProps("keyName")} />
            <Text size="sm" c="dimmed">
              {describeKeyAlgorithm(item.alg)} · {item.encrypted ? "protected by a passphrase" : "stored without a passphrase"} (always encrypted at
              rest with the server's key)
            </Text>
            <Input.Wrapper label="Passphrase" labelProps={{ id: "key-protection-label", htmlFor: undefined, component: "div" } as never}>
              <div>
                <SegmentedControl
                  mt={4}
                  aria-labelledby="key-protection-label"
                  data={options}
                  value={v.protection}
                  onChange={(x) => form.setFieldValue("protection", x as Protection)}
                />
              </div>
            </Input.Wrapper>
            {v.protection !== "keep" && item.encrypted && (
              <PasswordInput label="Current passphrase" autoComplete="current-password" {...form.getInputProps("passphrase")} />
            )}
            {v.protection === "set" && (
              <>
                <PasswordInput
                  label="New passphrase"
                  description={`1 to ${MAX_PASSPHRASE} characters; it cannot be recovered if lost`}
                  autoComplete="new-password"
                  {...form.getInputProps("newPassphrase")}
                />
                <PasswordInput label="Repeat the new passphrase" autoComplete="new-password" {...form.getInputProps("confirm")} />
              </>
            )}
            {v.protection === "remove" && (
              <Alert color="orange">The key will be stored without a passphrase: exports will no longer ask for one.</Alert>
            )}
            <TagSelect max={MAX_TAGS_PER_ENTITY} value={v.tagIds} onChange={(ids) => form.setFieldValue("tagIds", ids)} error={form.errors.tagIds} />
            <Group justify="flex-end">
              <Button variant="default" type="button" onClick={requestClose}>
                Cancel
              </Button>
              <Button type="submit" loading={busy}>
                Save
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </FormModal>
  );
}
