// Forgot password: the API answers 204 whatever the address (no account probing); a recovery link is emailed
// when the address has an account and mail is configured.
import { Alert, Anchor, Button, Stack, Text, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { Link } from "wouter";
import { api, call, errorMessage } from "../../api/client";
import { AuthLayout } from "./auth-layout";
import { useStatus } from "./session";

export function ForgotPage() {
  const status = useStatus();
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useForm({ mode: "controlled", initialValues: { email: "" }, validate: { email: (v) => (!/^[^\s@]+@[^\s@]+$/.test(v.trim()) ? "Enter an email address" : null) } });
  const submit = form.onSubmit(async (v) => {
    setBusy(true);
    setError(null);
    try {
      await call(api.POST("/api/auth/forgot", { body: { email: v.email.trim() } }));
      setSentTo(v.email.trim());
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  });
  return (
    <AuthLayout
      title="Reset your password"
      footer={
        <Anchor component={Link} href="/signin" size="sm">
          Back to sign in
        </Anchor>
      }
    >
      {status.data && !status.data.features.mail && (
        <Alert color="yellow">
          This server has no mail configured, so no link can be emailed. Ask the operator for a recovery link (<Text span className="mono">secbox users recover --email …</Text>).
        </Alert>
      )}
      {sentTo ? (
        <Alert color="green" role="status" title="Check your inbox">
          If {sentTo} has an account, a link to set a new password is on its way. It is valid for one hour.
        </Alert>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            <Text size="sm" c="dimmed">
              Enter your account's email and we will send you a link to set a new password.
            </Text>
            {error && (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            )}
            <TextInput label="Email" type="email" autoComplete="username" autoFocus {...form.getInputProps("email")} />
            <Button type="submit" loading={busy} fullWidth>
              Send link
            </Button>
          </Stack>
        </form>
      )}
    </AuthLayout>
  );
}
