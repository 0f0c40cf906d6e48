// One captured request (supplement §11.10): the request line, when, from where and how long; the query as a table;
// the headers (reverse-proxy headers behind a switch, hidden by default as the contract says); the body as JSON,
// text or hex with a download; the status sent, the stored response (or why there is none) and a script failure
// called out. "Copy as curl" reproduces the request against the responder's URL.
import { Alert, Button, Code, Group, Paper, Stack, Switch, Table, Text, Title } from "@mantine/core";
import { useState } from "react";
import { asText, BodyView, decodeBase64 } from "../../components/body-view";
import { copyWithToast } from "../../components/copy-button";
import { decodeQuery } from "./query";
import { curlCommand } from "./curl";
import { recordDateTime, recordStatus, StatusBadge } from "./history-table";
import { isProxyHeader, type HeaderPairs, type TrackedRecord } from "./responders-api";

const headerValue = (headers: HeaderPairs, name: string) => headers.find(([n]) => (n ?? "").toLowerCase() === name)?.[1] ?? "";

/** Failure bodies of supplement §11.5 step 6 (and §11.7's proxy errors): a script that failed, timed out or whose proxy call did. */
const FAILURE_RE =
  /^(Script failed: |Script timed out|Script queue is full|URL not allowed|Failed to connect to upstream|Upstream |Failed to decompress|Response header |Response could not be sent)/;

export function scriptFailure(record: Pick<TrackedRecord, "response">): string | null {
  const res = record.response;
  if (!res || (Number(res.statusCode) < 500 && Number(res.statusCode) !== 413)) return null;
  if (!/^text\/plain/i.test(headerValue(res.headers, "content-type"))) return null;
  const text = asText(decodeBase64(res.body));
  return text !== null && FAILURE_RE.test(text) ? text : null;
}

export function HeadersTable({ headers, label }: { headers: HeaderPairs; label: string }) {
  if (headers.length === 0)
    return (
      <Text size="sm" c="dimmed">
        No headers
      </Text>
    );
  return (
    <Table withTableBorder verticalSpacing={2} horizontalSpacing="xs" aria-label={label} layout="fixed">
      <Table.Tbody>
        {headers.map(([name, value], i) => (
          <Table.Tr key={`${name}-${i}`}>
            <Table.Td w="32%" className="mono" fz="xs" fw={600} style={{ overflowWrap: "anywhere", verticalAlign: "top" }}>
              {name}
            </Table.Td>
            <Table.Td className="mono" fz="xs" style={{ overflowWrap: "anywhere" }}>
              {value}
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}

function Section({ title, children, actions }: { title: string; children: React.ReactNode; actions?: React.ReactNode }) {
  return (
    <Stack gap={6}>
      <Group justify="space-between" gap="xs">
        <Title order={3} size="h5">
          {title}
        </Title>
        {actions}
      </Group>
      {children}
    </Stack>
  );
}

export function RequestDetail({ record, base, title = "Request" }: { record: TrackedRecord; base: string; title?: string }) {
  const [showProxy, setShowProxy] = useState(false);
  const proxyCount = record.headers.filter(([n]) => isProxyHeader((n ?? "").toLowerCase())).length;
  const headers = showProxy ? record.headers : record.headers.filter(([n]) => !isProxyHeader((n ?? "").toLowerCase()));
  const query = record.rawQuery ? decodeQuery(record.rawQuery) : [];
  const target = record.path + (record.rawQuery ? `?${record.rawQuery}` : "");
  const failure = scriptFailure(record);
  const res = record.response;
  const status = recordStatus(record);
  return (
    <Paper withBorder p="sm" radius="sm" data-testid="request-detail">
      <Stack gap="md">
        <Stack gap={4}>
          <Group justify="space-between" gap="xs" wrap="nowrap" align="flex-start">
            <Title order={2} size="h4">
              {title}
            </Title>
            <Button size="compact-sm" variant="default" onClick={() => void copyWithToast(curlCommand(record, base), "curl command")}>
              Copy as curl
            </Button>
          </Group>
          <Code block className="mono" style={{ overflowWrap: "anywhere", whiteSpace: "pre-wrap" }} data-testid="request-line">
            {`${record.method} ${target} HTTP/1.1`}
          </Code>
          <Text size="xs" c="dimmed">
            {recordDateTime(record)} · {record.clientAddress ? `from ${record.clientAddress}` : "no client address"} · answered in{" "}
            {Number(record.durationMs)} ms
          </Text>
        </Stack>
        {failure && (
          <Alert color="red" title="The script failed" role="alert">
            <Text size="sm" className="mono" style={{ overflowWrap: "anywhere" }}>
              {failure}
            </Text>
          </Alert>
        )}
        {query.length > 0 && (
          <Section title="Query">
            <Table withTableBorder verticalSpacing={2} horizontalSpacing="xs" aria-label="Query parameters" layout="fixed">
              <Table.Tbody>
                {query.map(([k, v], i) => (
                  <Table.Tr key={`${k}-${i}`}>
                    <Table.Td w="32%" className="mono" fz="xs" fw={600} style={{ overflowWrap: "anywhere" }}>
                      {k}
                    </Table.Td>
                    <Table.Td className="mono" fz="xs" style={{ overflowWrap: "anywhere" }}>
                      {v}
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </Section>
        )}
        <Section
          title="Headers"
          actions={
            proxyCount > 0 && (
              <Switch
                size="xs"
                label={`Show proxy headers (${proxyCount})`}
                checked={showProxy}
                onChange={(e) => setShowProxy(e.currentTarget.checked)}
              />
            )
          }
        >
          <HeadersTable headers={headers} label="Request headers" />
        </Section>
        <Section title="Body">
          <BodyView
            label="Request body"
            base64={record.body}
            size={Number(record.bodySize)}
            contentType={headerValue(record.headers, "content-type")}
            filename={`request-${record.id}.bin`}
          />
        </Section>
        <Section title="Response">
          {res ? (
            <Stack gap={6}>
              <Group gap="xs">
                <StatusBadge status={Number(res.statusCode)} />
                {res.truncated && (
                  <Text size="xs" c="dimmed">
                    body stored cut
                  </Text>
                )}
              </Group>
              <HeadersTable headers={res.headers} label="Response headers" />
              <BodyView
                label="Response body"
                base64={res.body}
                size={Number(res.bodySize)}
                contentType={headerValue(res.headers, "content-type")}
                filename={`response-${record.id}.bin`}
              />
            </Stack>
          ) : (
            <Stack gap={6}>
              {status !== undefined && (
                <Group gap="xs">
                  <StatusBadge status={status} />
                </Group>
              )}
              <Text size="sm" c="dimmed">
                {status !== undefined ? "Headers and body not stored." : "Not stored."} A script stores them by returning{" "}
                <Code>trackResponse: true</Code>; a failed script’s response is always stored.
              </Text>
            </Stack>
          )}
        </Section>
      </Stack>
    </Paper>
  );
}
