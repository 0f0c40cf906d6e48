// Sign up (when `security.signup` is open; status.features.signup tells).
import { Alert, Anchor, Button, PasswordInput, Stack, Text, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { Link } from "wouter";
import { ApiError, errorMessage } from "../../api/client";
import { PASSWORD_HINT, passwordRule } from "../settings/password-section";
import { AuthLayout } from "./auth-layout";
import { useSignedIn, usersApi, useStatus } from "./users-api";

export function SignUpPage() {
  const status = useStatus();
  const signedIn = useSignedIn();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useForm({
    mode: "controlled",
    initialValues: { email: "", password: "", confirm: "" },
    validate: {
      email: (v) => (!/^[^\s@]+@[^\s@]+$/.test(v.trim()) ? "Enter an email address" : null),
      password: passwordRule,
      confirm: (v, all) => (v !== all.password ? "The passwords do not match" : null),
    },
  });
  const submit = form.onSubmit(async (v) => {
    setBusy(true);
    setError(null);
    try {
      signedIn(await usersApi.signUp({ email: v.email.trim(), password: v.password }));
    } catch (err) {
      if (err instanceof ApiError && err.code === "EMAIL_TAKEN")
        form.setFieldError("email", "An account with this email exists already. Sign in, or reset its password.");
      else if (err instanceof ApiError && err.code === "WEAK_PASSWORD") form.setFieldError("password", err.message);
      else if (err instanceof ApiError && err.code === "SIGNUP_CLOSED")
        setError("Sign-up is closed on this server. Ask the operator for an account.");
      else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  });
  const closed = status.data && !status.data.features.signup;
  return (
    <AuthLayout
      title="Create an account"
      footer={
        <Anchor component={Link} href="/signin" size="sm">
          Already have an account? Sign in
        </Anchor>
      }
    >
      {closed ? (
        <Alert color="yellow" role="status">
          Sign-up is closed on this server. Ask the operator for an account (
          <Text span className="mono">
            secbox users add
          </Text>
          ).
        </Alert>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            {error && (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            )}
            <TextInput label="Email" type="email" autoComplete="username" autoFocus {...form.getInputProps("email")} />
            <PasswordInput label="Password" description={PASSWORD_HINT} autoComplete="new-password" {...form.getInputProps("password")} />
            <PasswordInput label="Repeat the password" autoComplete="new-password" {...form.getInputProps("confirm")} />
            <Button type="submit" loading={busy} fullWidth>
              Create account
            </Button>
          </Stack>
        </form>
      )}
    </AuthLayout>
  );
}
