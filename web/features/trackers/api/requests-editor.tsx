// The requests of an API tracker (supplement §15.1): 1 to 10, sent in order (the first is the primary one), each
// with method, URL, headers, body, accepted statuses and the invalid-certificates switch; add, remove, reorder.
import { ActionIcon, Button, Group, Paper, Select, Stack, Switch, Text, Textarea, TextInput, Title } from "@mantine/core";
import type { UseFormReturnType } from "@mantine/form";
import { HeadersField } from "../editor-fields";
import { rowKey, type KeyedHeader } from "../editor-values";
import { trackers as trackerRules } from "../../../api/rules.gen";
import { MAX_REQUESTS } from "./api-trackers-api";

export const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

export interface RequestValues {
  key: string;
  method: string;
  url: string;
  headers: KeyedHeader[];
  body: string;
  acceptInvalidCertificates: boolean;
  /** Comma-separated status codes; empty = any 2xx. */
  acceptStatuses: string;
}

export const newRequest = (): RequestValues => ({
  key: rowKey(),
  method: "GET",
  url: "",
  headers: [],
  body: "",
  acceptInvalidCertificates: false,
  acceptStatuses: "",
});

/** "200, 304" → [200, 304]; undefined when empty; null when malformed. */
export function parseStatuses(text: string): number[] | undefined | null {
  if (text.trim() === "") return undefined;
  const parts = text.split(/[\s,]+/).filter(Boolean);
  const nums = parts.map(Number);
  const { API_MIN_STATUS, API_MAX_STATUS, API_MAX_ACCEPT_STATUSES } = trackerRules;
  return nums.length <= API_MAX_ACCEPT_STATUSES && nums.every((n) => Number.isInteger(n) && n >= API_MIN_STATUS && n <= API_MAX_STATUS) ? nums : null;
}

type Form = UseFormReturnType<{ requests: RequestValues[] } & Record<string, unknown>>;

export function RequestsEditor({ form }: { form: Form }) {
  const requests = form.getValues().requests;
  return (
    <Stack gap="sm">
      {requests.map((r, i) => {
        const p = `requests.${i}`;
        const showBody = r.method !== "GET" || r.body !== "";
        return (
          <Paper key={r.key} withBorder p="sm" radius="sm" role="group" aria-label={`Request ${i + 1}`}>
            <Stack gap="xs">
              <Group justify="space-between" gap="xs">
                <Title order={3} size="h5">
                  Request {i + 1}
                  {i === 0 && requests.length > 1 ? " (primary)" : ""}
                </Title>
                <Group gap={4}>
                  <ActionIcon
                    variant="subtle"
                    color="gray"
                    aria-label={`Move request ${i + 1} up`}
                    disabled={i === 0}
                    onClick={() => form.reorderListItem("requests", { from: i, to: i - 1 })}
                  >
                    <span aria-hidden="true">↑</span>
                  </ActionIcon>
                  <ActionIcon
                    variant="subtle"
                    color="gray"
                    aria-label={`Move request ${i + 1} down`}
                    disabled={i === requests.length - 1}
                    onClick={() => form.reorderListItem("requests", { from: i, to: i + 1 })}
                  >
                    <span aria-hidden="true">↓</span>
                  </ActionIcon>
                  <ActionIcon
                    variant="subtle"
                    color="red"
                    aria-label={`Remove request ${i + 1}`}
                    disabled={requests.length === 1}
                    onClick={() => form.removeListItem("requests", i)}
                  >
                    <span aria-hidden="true">✕</span>
                  </ActionIcon>
                </Group>
              </Group>
              <Group gap="xs" align="flex-start" wrap="nowrap">
                <Select
                  label="Method"
                  w={110}
                  data={[...METHODS]}
                  allowDeselect={false}
                  comboboxProps={{ withinPortal: true }}
                  {...form.getInputProps(`${p}.method`)}
                />
                <TextInput
                  label="URL"
                  required
                  placeholder="https://api.example.com/v1/releases"
                  style={{ flex: 1 }}
                  styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
                  {...form.getInputProps(`${p}.url`)}
                />
              </Group>
              <HeadersField
                label={`Request ${i + 1} headers`}
                value={r.headers}
                onChange={(rows) => form.setFieldValue(`${p}.headers` as never, rows as never)}
                error={form.errors[`${p}.headers`]}
              />
              {showBody && (
                <Textarea
                  label="Body"
                  description="Sent as written (no Content-Type is added: set one above); up to 1 MiB"
                  autosize
                  minRows={2}
                  maxRows={12}
                  styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
                  {...form.getInputProps(`${p}.body`)}
                />
              )}
              <Group gap="md" align="flex-end" wrap="wrap">
                <TextInput
                  label="Accepted statuses"
                  placeholder="any 2xx"
                  description="e.g. 200, 304; others fail the run"
                  w={260}
                  {...form.getInputProps(`${p}.acceptStatuses`)}
                />
                <Switch label="Accept invalid TLS certificates" {...form.getInputProps(`${p}.acceptInvalidCertificates`, { type: "checkbox" })} />
              </Group>
            </Stack>
          </Paper>
        );
      })}
      <Group gap="xs">
        <Button
          size="compact-sm"
          variant="light"
          disabled={requests.length >= MAX_REQUESTS}
          onClick={() => form.insertListItem("requests", newRequest())}
        >
          + Add request
        </Button>
        <Text size="xs" c="dimmed">
          Up to {MAX_REQUESTS}, sent in order; the extractor sees every response.
        </Text>
      </Group>
    </Stack>
  );
}
