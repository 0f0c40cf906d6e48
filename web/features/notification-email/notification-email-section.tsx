// Notification email (supplement §10): none → pending (a 6-digit code was emailed) → verified. Until verified,
// notifications go to the login email. Resend is possible 60 s after the last code email (the countdown shows);
// the API's COOLDOWN message covers the hourly cap.
import { Alert, Badge, Button, Group, PinInput, Stack, Text, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useInterval } from "@mantine/hooks";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { errorMessage } from "../../api/client";
import { useSelf, useStatus } from "../users/users-api";
import { formatDateTime } from "../../components/format";
import { notifyError, notifySuccess } from "../../components/notify";
import { ErrorState, LoadingState } from "../../components/states";
import { SettingsSection } from "../settings/settings-section";
import {
  CODE_DIGITS,
  NOTIFICATION_EMAIL_KEY,
  notificationEmailApi,
  RESEND_COOLDOWN_SEC,
  type NotificationDestination,
} from "./notification-email-api";

function useNow(active: boolean) {
  const [now, setNow] = useState(Date.now());
  const interval = useInterval(() => setNow(Date.now()), 1000);
  useEffect(() => {
    if (active) interval.start();
    else interval.stop();
    return interval.stop;
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [active]);
  return now;
}

function AddressForm({ current, onDone, onCancel }: { current?: string; onDone: (d: NotificationDestination) => void; onCancel?: () => void }) {
  const self = useSelf().data;
  const form = useForm({
    mode: "controlled",
    initialValues: { email: "" },
    validate: {
      email: (v) =>
        !/^[^\s@]+@[^\s@]+$/.test(v.trim())
          ? "Enter an email address"
          : v.trim().toLowerCase() === self?.email
            ? "That is your login email already; notifications go there by default"
            : v.trim().toLowerCase() === current
              ? "That address is already set"
              : null,
    },
  });
  const [busy, setBusy] = useState(false);
  const submit = form.onSubmit(async (v) => {
    setBusy(true);
    try {
      onDone(await notificationEmailApi.set(v.email.trim()));
      form.reset();
    } catch (err) {
      form.setFieldError("email", errorMessage(err));
    } finally {
      setBusy(false);
    }
  });
  return (
    <form onSubmit={submit} noValidate>
      <Group align="flex-start" gap="sm" wrap="wrap">
        <TextInput
          label="Notification email"
          type="email"
          autoComplete="email"
          style={{ flex: "1 1 260px" }}
          maw={380}
          {...form.getInputProps("email")}
        />
        <Group gap="xs" mt={25}>
          <Button type="submit" loading={busy}>
            Send code
          </Button>
          {onCancel && (
            <Button variant="default" onClick={onCancel}>
              Cancel
            </Button>
          )}
        </Group>
      </Group>
    </form>
  );
}

function PendingPanel({ dest, onChange }: { dest: NotificationDestination; onChange: (d: NotificationDestination | null) => void }) {
  const [code, setCode] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const sentAt = Number(dest.verificationSentAt ?? 0) * 1000;
  const expiresAt = Number(dest.verificationExpiresAt ?? 0) * 1000;
  const now = useNow(true);
  const wait = Math.max(0, Math.ceil((sentAt + RESEND_COOLDOWN_SEC * 1000 - now) / 1000));
  const codeExpired = expiresAt > 0 && now >= expiresAt;
  const qc = useQueryClient();

  const verify = async () => {
    setBusy(true);
    setError(null);
    try {
      onChange(await notificationEmailApi.verify(code.trim()));
      notifySuccess(`${dest.address} verified: notifications go there now`);
    } catch (err) {
      setError(errorMessage(err));
      setCode("");
    } finally {
      setBusy(false);
    }
  };
  const resend = useMutation({
    mutationFn: notificationEmailApi.resend,
    onSuccess: async () => {
      setError(null);
      notifySuccess(`A new code was sent to ${dest.address}`);
      await qc.invalidateQueries({ queryKey: NOTIFICATION_EMAIL_KEY });
    },
    onError: (err) => setError(errorMessage(err)),
  });

  return (
    <Stack gap="sm">
      <Group gap="xs">
        <Text size="sm">{dest.address}</Text>
        <Badge color="yellow" variant="light" tt="none">
          Pending verification
        </Badge>
      </Group>
      <Text size="sm" c="dimmed">
        We emailed a {CODE_DIGITS}-digit code to {dest.address}
        {sentAt > 0 && ` at ${formatDateTime(sentAt / 1000)}`}.{" "}
        {codeExpired ? "That code has expired: send a new one." : `It is valid until ${formatDateTime(expiresAt / 1000)}.`} Until you enter it,
        notifications keep going to your login email.
      </Text>
      {error && (
        <Alert color="red" role="alert">
          {error}
        </Alert>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (code.length === CODE_DIGITS) void verify();
        }}
      >
        <Group gap="sm" align="flex-end" wrap="wrap">
          <div>
            <Text size="sm" fw={500} id="verification-code-label" mb={4}>
              Verification code
            </Text>
            <PinInput
              length={CODE_DIGITS}
              type="number"
              oneTimeCode
              value={code}
              onChange={setCode}
              aria-labelledby="verification-code-label"
              getInputProps={(i) => ({ "aria-label": `Digit ${i + 1} of ${CODE_DIGITS}` })}
            />
          </div>
          <Button type="submit" loading={busy} disabled={code.length !== CODE_DIGITS}>
            Verify
          </Button>
        </Group>
      </form>
      <Group gap="xs">
        <Button variant="default" size="xs" onClick={() => resend.mutate()} loading={resend.isPending} disabled={wait > 0}>
          {wait > 0 ? `Resend code (${wait} s)` : "Resend code"}
        </Button>
      </Group>
    </Stack>
  );
}

export function NotificationEmailSection() {
  const qc = useQueryClient();
  const status = useStatus();
  const self = useSelf().data;
  const dest = useQuery({ queryKey: NOTIFICATION_EMAIL_KEY, queryFn: notificationEmailApi.get });
  const [changing, setChanging] = useState(false);
  const set = (d: NotificationDestination | null) => {
    qc.setQueryData(NOTIFICATION_EMAIL_KEY, d);
    setChanging(false);
  };
  const remove = useMutation({
    mutationFn: notificationEmailApi.remove,
    onSuccess: () => {
      set(null);
      notifySuccess("Notification email removed: notifications go to your login email");
    },
    onError: (err) => notifyError(err, "Could not remove the notification email"),
  });

  let body;
  if (dest.isPending) body = <LoadingState />;
  else if (dest.isError) body = <ErrorState error={dest.error} onRetry={() => dest.refetch()} />;
  else if (!dest.data || changing)
    body = (
      <Stack gap="xs">
        {!dest.data && (
          <Text size="sm">
            Notifications currently go to your login email, <b>{self?.email}</b>.
          </Text>
        )}
        <AddressForm current={dest.data?.address} onDone={set} onCancel={changing ? () => setChanging(false) : undefined} />
      </Stack>
    );
  else if (dest.data.status === "pending") body = <PendingPanel dest={dest.data} onChange={set} />;
  else
    body = (
      <Group gap="xs">
        <Text size="sm">{dest.data.address}</Text>
        <Badge color="green" variant="light" tt="none">
          Verified
        </Badge>
      </Group>
    );

  return (
    <SettingsSection
      id="settings-notification-email"
      title="Notification email"
      description="Where tracker changes and responder summaries are sent, if not to your login email."
    >
      {status.data && !status.data.features.mail && (
        <Alert color="yellow" title="Mail is not configured on this server">
          Codes and notifications are queued but not sent until the operator configures SMTP.
        </Alert>
      )}
      {body}
      {dest.data && !changing && (
        <Group gap="xs">
          <Button variant="default" size="xs" onClick={() => setChanging(true)}>
            Use another address
          </Button>
          <Button variant="subtle" color="red" size="xs" loading={remove.isPending} onClick={() => remove.mutate()}>
            Remove
          </Button>
        </Group>
      )}
    </SettingsSection>
  );
}
