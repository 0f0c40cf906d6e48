// Forgot password: the API answers 204 whatever the address (no account probing); a recovery link is emailed
// when the address has an account and mail is configured. Without mail (status features.mail) the page offers no
// form: it says the link must come from the operator (`secbox users recover`).
import { Alert, Anchor, Button, Code, Stack, Text, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { Link } from "wouter";
import { errorMessage } from "../../api/client";
import { useMailOff } from "../../components/mail-off";
import { AuthLayout } from "./auth-layout";
import { usersApi } from "./users-api";

export function ForgotPage() {
  const mailOff = useMailOff();
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const form = useForm({
    mode: "controlled",
    initialValues: { email: "" },
    validate: { email: (v) => (!/^[^\s@]+@[^\s@]+$/.test(v.trim()) ? "Enter an email address" : null) },
  });
  const submit = form.onSubmit(async (v) => {
    setBusy(true);
    setError(null);
    try {
      await usersApi.forgot({ email: v.email.trim() });
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
      {mailOff ? (
        // No mail: no link can be emailed, so no form (and never "Check your inbox"): the operator makes the link.
        <Alert color="yellow" title="This server cannot email you a link">
          <Stack gap="xs">
            <Text size="sm">Mail is not configured on this server, so no recovery email can be sent.</Text>
            <Text size="sm">
              Ask the operator for a recovery link: they make one with <Code>secbox users recover --email &lt;your email&gt;</Code>. Open it to set a
              new password.
            </Text>
          </Stack>
        </Alert>
      ) : sentTo ? (
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
