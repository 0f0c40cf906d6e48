// Change password (supplement §3.3): the user's other sessions end; this one stays signed in.
import { Alert, Button, Group, PasswordInput, Stack } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { ApiError, errorMessage } from "../../api/client";
import { users as userRules } from "../../api/rules.gen";
import { notifySuccess } from "../../components/notify";
import { usersApi } from "../users/users-api";
import { useUnsavedGuard } from "../../components/use-unsaved-guard";
import { SettingsSection } from "./settings-section";

const { PASSWORD_MIN, PASSWORD_MAX } = userRules;
/** The API's password rule (characters are code points, as the API counts them). */
export const passwordRule = (v: string) => {
  const n = [...v].length;
  return n < PASSWORD_MIN ? `At least ${PASSWORD_MIN} characters` : n > PASSWORD_MAX ? `At most ${PASSWORD_MAX} characters` : null;
};
export const PASSWORD_HINT = `${PASSWORD_MIN} to ${PASSWORD_MAX} characters`;

export function PasswordSection() {
  const form = useForm({
    mode: "controlled",
    initialValues: { currentPassword: "", newPassword: "", confirm: "" },
    validate: {
      currentPassword: (v) => (v === "" ? "Enter your current password" : null),
      newPassword: passwordRule,
      confirm: (v, all) => (v !== all.newPassword ? "The passwords do not match" : null),
    },
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useUnsavedGuard(form.isDirty());
  const submit = form.onSubmit(async (v) => {
    setBusy(true);
    setError(null);
    try {
      await usersApi.changePassword({ currentPassword: v.currentPassword, newPassword: v.newPassword });
      form.reset();
      notifySuccess("Password changed. Your other sessions were signed out.");
    } catch (err) {
      if (err instanceof ApiError && err.code === "BAD_PASSWORD") form.setFieldError("currentPassword", "The current password is not correct");
      else if (err instanceof ApiError && err.code === "WEAK_PASSWORD") form.setFieldError("newPassword", err.message);
      else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  });
  return (
    <SettingsSection id="settings-password" title="Password" description="Changing it signs out your other sessions.">
      <form onSubmit={submit} noValidate>
        <Stack gap="sm" maw={420}>
          {error && (
            <Alert color="red" role="alert">
              {error}
            </Alert>
          )}
          <PasswordInput label="Current password" autoComplete="current-password" {...form.getInputProps("currentPassword")} />
          <PasswordInput label="New password" description={PASSWORD_HINT} autoComplete="new-password" {...form.getInputProps("newPassword")} />
          <PasswordInput label="Repeat the new password" autoComplete="new-password" {...form.getInputProps("confirm")} />
          <Group>
            <Button type="submit" loading={busy}>
              Change password
            </Button>
          </Group>
        </Stack>
      </form>
    </SettingsSection>
  );
}
