// "Try it": send a request to this responder from the page and see the response next to the record it left — the
// quickest way to debug a script. The server serves it in-process as a real hit on the responder's own URL
// (POST …/_test, try-request.ts): no cross-origin call from the page (the UI's CSP allows only its own origin), and
// it works for prefixed hosts and every method. The real match decides who answers, which the result says.
import { Alert, Anchor, Button, Grid, Group, Paper, Select, Stack, Text, TextInput, Title } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { Link } from "wouter";
import { responders as responderRules } from "../../api/rules.gen";
import { BodyView } from "../../components/body-view";
import { CodeEditor } from "../../components/code-editor/code-editor";
import { applyApiError } from "../../components/form";
import { headerRow, HeaderListEditor, toHeaderPairs, type HeaderRow } from "../../components/header-list-editor";
import { HeadersTable, RequestDetail } from "./request-detail";
import { StatusBadge } from "./history-table";
import { bodyLanguage, utf8Length } from "./responder-form";
import { baseOf, respondersApi, TRY_METHODS, type Responder, type TryMethod, type TryResult } from "./responders-api";

interface TryValues {
  method: TryMethod;
  path: string;
  headers: HeaderRow[];
  body: string;
}

const { TRY_MAX_BODY_BYTES, TRY_MAX_TARGET, TRY_TARGET_RE } = responderRules;

/** The checks of `_test` that need no server (try-request.ts has the last word: dot segments, headers). */
const tryValidation = {
  path: (v: string) =>
    v.trim().length > TRY_MAX_TARGET
      ? `At most ${TRY_MAX_TARGET} characters`
      : TRY_TARGET_RE.test(v.trim())
        ? null
        : "Start with / and percent-encode other characters (e.g. %20)",
  body: (v: string) => (utf8Length(v) > TRY_MAX_BODY_BYTES ? `At most ${TRY_MAX_BODY_BYTES / 1024 / 1024} MiB` : null),
};

const tryField = (apiField: string, message: string) => {
  const h = /^headers\[(\d+)\]$/.exec(apiField);
  return h ? `headers.${h[1]}.${/value/.test(message) ? "value" : "name"}` : undefined;
};

export function TryItPanel({ responder, names, onSent }: { responder: Responder; names: Map<string, string>; onSent: () => void }) {
  const method = responder.method === "ANY" ? "POST" : responder.method;
  const form = useForm<TryValues>({
    mode: "controlled",
    initialValues: {
      method,
      path: responder.location.path,
      headers: method === "GET" || method === "HEAD" ? [] : [headerRow("content-type", "application/json")],
      body: method === "GET" || method === "HEAD" ? "" : '{"hello": "world"}',
    },
    validate: tryValidation,
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<TryResult | null>(null);
  const v = form.getValues();

  const send = form.onSubmit(async (values) => {
    setBusy(true);
    setError(null);
    try {
      const out = await respondersApi.tryIt(responder.id, {
        method: values.method,
        path: values.path.trim(),
        headers: toHeaderPairs(values.headers),
        body: values.body,
      });
      setResult(out);
      onSent();
    } catch (err) {
      setError(applyApiError(form, err, tryField));
    } finally {
      setBusy(false);
    }
  });

  const res = result?.response;
  const other = result?.responderId && result.responderId !== responder.id ? result.responderId : undefined;
  const contentType = res?.headers.find(([n]) => n === "content-type")?.[1] ?? "";
  return (
    <Stack gap="md">
      <form onSubmit={send} noValidate>
        <Stack gap="sm" maw={900}>
          <Text size="sm" c="dimmed">
            Sends a request to this responder’s URL as a client would, and shows what it answered next to what it recorded. It counts as a real
            request: the script runs and the history records it.
          </Text>
          {error && (
            <Alert color="red" role="alert">
              {error}
            </Alert>
          )}
          <Group align="flex-start" gap="sm" wrap="wrap">
            <Select label="Method" w={140} data={[...TRY_METHODS]} allowDeselect={false} {...form.getInputProps("method")} />
            <TextInput
              label="Path and query"
              description={`Starts with / — the responder listens on ${responder.location.pathType} ${responder.location.path}`}
              style={{ flex: "1 1 320px" }}
              styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
              spellCheck={false}
              {...form.getInputProps("path")}
            />
          </Group>
          <HeaderListEditor
            label="Request headers"
            rows={v.headers}
            max={responderRules.MAX_HEADERS}
            onChange={(rows) => form.setFieldValue("headers", rows)}
            errorOf={(i, part) => form.errors[`headers.${i}.${part}`]}
            error={form.errors.headers}
          />
          <CodeEditor
            label="Request body"
            language={bodyLanguage(v.headers)}
            minHeight={100}
            value={v.body}
            onChange={(b) => form.setFieldValue("body", b)}
            error={form.errors.body}
          />
          <Group>
            <Button type="submit" loading={busy}>
              Send request
            </Button>
          </Group>
        </Stack>
      </form>

      {result && res && (
        <Stack gap="sm" data-testid="try-result">
          {other && (
            <Alert color="yellow" title="Another responder answered">
              A more specific location of yours matched this request:{" "}
              <Anchor component={Link} href={`/responders/${other}`}>
                {names.get(other) ?? "open it"}
              </Anchor>
              . Its history has the record.
            </Alert>
          )}
          {!result.responderId && (
            <Alert color="yellow" title="No responder answered (404)">
              The path or method does not match this responder (or another of yours), or it is disabled.
            </Alert>
          )}
          <Grid gap="md">
            <Grid.Col span={{ base: 12, lg: 6 }}>
              <Paper withBorder p="sm" radius="sm">
                <Stack gap={6}>
                  <Title order={2} size="h4">
                    Response
                  </Title>
                  <Text size="xs" c="dimmed" className="mono" style={{ overflowWrap: "anywhere" }}>
                    {result.request.method} {result.request.url}
                  </Text>
                  <Group gap="xs">
                    <StatusBadge status={Number(res.statusCode)} />
                    <Text size="xs" c="dimmed">
                      in {Number(result.durationMs)} ms
                    </Text>
                  </Group>
                  <HeadersTable headers={res.headers} label="Try it response headers" />
                  <BodyView
                    label="Try it response body"
                    base64={res.body}
                    size={Number(res.bodySize)}
                    contentType={contentType}
                    filename="response.bin"
                  />
                  {res.truncated && (
                    <Text size="xs" c="dimmed">
                      Showing the first 1 MiB of the body.
                    </Text>
                  )}
                </Stack>
              </Paper>
            </Grid.Col>
            <Grid.Col span={{ base: 12, lg: 6 }}>
              {result.record ? (
                <RequestDetail record={result.record} base={baseOf(responder)} title="Captured record" />
              ) : (
                <Stack gap={6}>
                  <Title order={2} size="h4" mt="sm">
                    Captured record
                  </Title>
                  <Text size="sm" c="dimmed">
                    {result.responderId === responder.id && Number(responder.settings.requestsToTrack) === 0
                      ? "None: this responder keeps no requests (Requests to track is 0 in its settings)."
                      : "None: the request was not recorded (the script returned skipRequest, or no responder answered)."}
                  </Text>
                </Stack>
              )}
            </Grid.Col>
          </Grid>
        </Stack>
      )}
    </Stack>
  );
}
