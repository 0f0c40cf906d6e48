// Sign in (supplement §3.3): wrong credentials, throttling (429 with Retry-After) and deactivated accounts each
// get their own message.
import { Alert, Anchor, Button, PasswordInput, Stack, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { Link } from "wouter";
import { ApiError, formatWait } from "../../api/client";
import { AuthLayout } from "./auth-layout";
import { useSignedIn, usersApi, useStatus } from "./users-api";

export function signInError(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 401) return "Wrong email or password.";
    if (err.status === 429) return `Too many failed attempts. Try again in ${formatWait(err.retryAfter ?? 900)}.`;
    if (err.code === "NOT_ACTIVATED") return "This account is not activated. Use the link from your invitation email, or ask the operator.";
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

export function SignInPage() {
  const status = useStatus();
  const signedIn = useSignedIn();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useForm({
    mode: "controlled",
    initialValues: { email: "", password: "" },
    validate: { email: (v) => (v.trim() === "" ? "Enter your email" : null), password: (v) => (v === "" ? "Enter your password" : null) },
  });
  const submit = form.onSubmit(async (v) => {
    setBusy(true);
    setError(null);
    try {
      // The route guard moves on to ?next= (or home) once the user is known.
      signedIn(await usersApi.signIn({ email: v.email.trim(), password: v.password }));
    } catch (err) {
      setError(signInError(err));
    } finally {
      setBusy(false);
    }
  });
  return (
    <AuthLayout
      title="Sign in"
      footer={
        <>
          <Anchor component={Link} href="/forgot" size="sm">
            Forgot your password?
          </Anchor>
          {status.data?.features.signup && (
            <Anchor component={Link} href="/signup" size="sm">
              Create an account
            </Anchor>
          )}
        </>
      }
    >
      <form onSubmit={submit} noValidate>
        <Stack>
          {error && (
            <Alert color="red" role="alert">
              {error}
            </Alert>
          )}
          <TextInput label="Email" type="email" autoComplete="username" data-autofocus autoFocus {...form.getInputProps("email")} />
          <PasswordInput label="Password" autoComplete="current-password" {...form.getInputProps("password")} />
          <Button type="submit" loading={busy} fullWidth>
            Sign in
          </Button>
        </Stack>
      </form>
    </AuthLayout>
  );
}
