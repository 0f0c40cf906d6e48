// Form pieces both tracker editors use: a titled section, the basics (name, tags, enabled, notifications), the run
// settings (timeout, revisions kept, secrets access) and an editable list of HTTP headers.
import { ActionIcon, Button, Group, MultiSelect, NumberInput, Paper, SegmentedControl, Stack, Switch, Text, TextInput, Title } from "@mantine/core";
import type { UseFormReturnType } from "@mantine/form";
import { useQuery } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { MailDescription } from "../../components/mail-off";
import { MAX_TAGS_PER_ENTITY, TagSelect } from "../../components/tags/tag-select";
import { secretsApi } from "../secrets/secrets-api";
import { rowKey, type CommonValues, type KeyedHeader, type SecretsMode } from "./editor-values";

export function Section({
  title,
  description,
  children,
  actions,
}: {
  title: string;
  description?: ReactNode;
  children: ReactNode;
  actions?: ReactNode;
}) {
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-label={title}>
      <Stack gap="sm">
        <Group justify="space-between" gap="xs" wrap="wrap">
          <Stack gap={0}>
            <Title order={2} size="h4">
              {title}
            </Title>
            {description && (
              <Text size="sm" c="dimmed">
                {description}
              </Text>
            )}
          </Stack>
          {actions && <Group gap="xs">{actions}</Group>}
        </Group>
        {children}
      </Stack>
    </Paper>
  );
}

type Form = UseFormReturnType<CommonValues & Record<string, unknown>>;

export function BasicsFields({ form, noun }: { form: Form; noun: string }) {
  const v = form.getValues();
  return (
    <Section title="Basics">
      <Group align="flex-start" grow wrap="wrap" preventGrowOverflow={false}>
        <TextInput label="Name" required miw={240} description={`Unique among your ${noun}s`} {...form.getInputProps("name")} />
        <TagSelect
          max={MAX_TAGS_PER_ENTITY}
          miw={240}
          value={v.tagIds}
          onChange={(ids) => form.setFieldValue("tagIds", ids)}
          error={form.errors.tagIds}
        />
      </Group>
      <Group gap="xl">
        <Switch
          label="Enabled"
          aria-label="Enabled"
          description="Disabled trackers do not run on schedule"
          {...form.getInputProps("enabled", { type: "checkbox" })}
        />
        <Switch
          label="Email me on change"
          aria-label="Email me on change"
          description={<MailDescription normal="With the diff, to your notification email" />}
          {...form.getInputProps("notifications", { type: "checkbox" })}
        />
      </Group>
    </Section>
  );
}

function SecretsAccess({ form }: { form: Form }) {
  const v = form.getValues();
  const secrets = useQuery({
    queryKey: ["secrets", "all"],
    queryFn: async () => (await secretsApi.list({ pageSize: 100, sort: "name" })).items,
    enabled: v.secretsMode === "selected",
  });
  return (
    <Stack gap={6}>
      <Text size="sm" fw={500} id="secrets-access-label">
        Secrets the scripts can read
      </Text>
      <SegmentedControl
        aria-labelledby="secrets-access-label"
        style={{ alignSelf: "flex-start" }}
        value={v.secretsMode}
        onChange={(m) => form.setFieldValue("secretsMode", m as SecretsMode)}
        data={[
          { value: "none", label: "None" },
          { value: "selected", label: "Selected" },
          { value: "all", label: "All" },
        ]}
      />
      {v.secretsMode === "selected" && (
        <MultiSelect
          label="Secrets"
          placeholder={v.secretIds.length ? undefined : "Pick secrets"}
          searchable
          data={(secrets.data ?? []).map((s) => ({ value: s.id, label: s.name }))}
          nothingFoundMessage={secrets.isPending ? "Loading secrets…" : "No secrets yet: create them on the Secrets page"}
          comboboxProps={{ withinPortal: true }}
          maw={520}
          {...form.getInputProps("secretIds")}
        />
      )}
      <Text size="xs" c="dimmed">
        Scripts read them by name as <span className="mono">context.params.secrets.NAME</span>; debug output shows them as ********.
      </Text>
    </Stack>
  );
}

export function RunFields({ form, timeout, timeoutHelp }: { form: Form; timeout: { min: number; max: number }; timeoutHelp: string }) {
  return (
    <Section title="Runs">
      <Group gap="md" align="flex-start" wrap="wrap">
        {/* Out of range is said (validation, the API's 400 under the field), never clamped silently (issue 30). */}
        <NumberInput
          label="Timeout (seconds)"
          description={timeoutHelp}
          min={timeout.min}
          max={timeout.max}
          clampBehavior="none"
          allowDecimal={false}
          w={240}
          {...form.getInputProps("timeoutSec")}
        />
        <NumberInput
          label="Revisions to keep"
          description="Older ones are removed; your plan sets the maximum"
          min={1}
          max={1000}
          clampBehavior="none"
          allowDecimal={false}
          w={240}
          {...form.getInputProps("revisions")}
        />
      </Group>
      <SecretsAccess form={form} />
    </Section>
  );
}

/** Name/value rows with add and remove; `label` names the list for screen readers. */
export function HeadersField({
  value,
  onChange,
  label,
  error,
}: {
  value: KeyedHeader[];
  onChange: (rows: KeyedHeader[]) => void;
  label: string;
  error?: ReactNode;
}) {
  const set = (i: number, patch: Partial<KeyedHeader>) => onChange(value.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <Stack gap={6} role="group" aria-label={label}>
      <Text size="sm" fw={500}>
        {label}
      </Text>
      {value.length === 0 && (
        <Text size="xs" c="dimmed">
          None.
        </Text>
      )}
      {value.map((r, i) => (
        <Group key={r.key} gap="xs" wrap="nowrap" align="flex-start">
          <TextInput
            aria-label={`${label}: name ${i + 1}`}
            placeholder="name"
            value={r.name}
            onChange={(e) => set(i, { name: e.currentTarget.value })}
            style={{ flex: "0 1 220px" }}
            styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
          />
          <TextInput
            aria-label={`${label}: value ${i + 1}`}
            placeholder="value"
            value={r.value}
            onChange={(e) => set(i, { value: e.currentTarget.value })}
            style={{ flex: "1 1 auto" }}
            styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
          />
          <ActionIcon
            variant="subtle"
            color="gray"
            size="lg"
            aria-label={`Remove header ${r.name || i + 1}`}
            onClick={() => onChange(value.filter((_, j) => j !== i))}
          >
            <span aria-hidden="true">✕</span>
          </ActionIcon>
        </Group>
      ))}
      {error && (
        <Text size="xs" c="red" role="alert">
          {error}
        </Text>
      )}
      <Button
        size="compact-sm"
        variant="subtle"
        style={{ alignSelf: "flex-start" }}
        onClick={() => onChange([...value, { key: rowKey(), name: "", value: "" }])}
        disabled={value.length >= 100}
      >
        + Add header
      </Button>
    </Stack>
  );
}
