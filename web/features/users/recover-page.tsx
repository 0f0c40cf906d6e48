// /recover?token=… (the link in recovery emails and `secbox users recover`): set a new password, which also signs
// in and ends every older session.
import { Alert, Anchor, Button, PasswordInput, Stack } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { Link, useLocation, useSearch } from "wouter";
import { ApiError, errorMessage } from "../../api/client";
import { PASSWORD_HINT, passwordRule } from "../settings/password-section";
import { AuthLayout } from "./auth-layout";
import { useSignedIn, usersApi } from "./users-api";

export function RecoverPage() {
  const token = new URLSearchParams(useSearch()).get("token") ?? "";
  const [, navigate] = useLocation();
  const signedIn = useSignedIn();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useForm({
    mode: "controlled",
    initialValues: { password: "", confirm: "" },
    validate: { password: passwordRule, confirm: (v, all) => (v !== all.password ? "The passwords do not match" : null) },
  });
  const submit = form.onSubmit(async (v) => {
    setBusy(true);
    setError(null);
    try {
      const user = await usersApi.recover({ token, newPassword: v.password });
      signedIn(user);
      navigate("/", { replace: true });
    } catch (err) {
      if (err instanceof ApiError && err.code === "INVALID_TOKEN") setError("This link is invalid, used or expired. Ask for a new one.");
      else if (err instanceof ApiError && err.code === "WEAK_PASSWORD") form.setFieldError("password", err.message);
      else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  });
  return (
    <AuthLayout
      title="Set a new password"
      footer={
        <>
          <Anchor component={Link} href="/forgot" size="sm">
            Request a new link
          </Anchor>
          <Anchor component={Link} href="/signin" size="sm">
            Sign in
          </Anchor>
        </>
      }
    >
      {token === "" ? (
        <Alert color="red" role="alert">
          This page needs the link from your recovery email.
        </Alert>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            {error && (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            )}
            <PasswordInput
              label="New password"
              description={PASSWORD_HINT}
              autoComplete="new-password"
              autoFocus
              {...form.getInputProps("password")}
            />
            <PasswordInput label="Repeat the new password" autoComplete="new-password" {...form.getInputProps("confirm")} />
            <Button type="submit" loading={busy} fullWidth>
              Set password and sign in
            </Button>
          </Stack>
        </form>
      )}
    </AuthLayout>
  );
}
