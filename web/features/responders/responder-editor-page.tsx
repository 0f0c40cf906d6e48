// Create or edit a responder on its own page: /responders/new (?from=<id> duplicates), /responders/<id>/edit. One
// form: where it listens (method, path type, path, subdomain prefix, the resulting URL as you type), the default
// response (status, ordered headers, body with a mode from its Content-Type), the script (with examples and the
// user's script library), secrets access, history depth and notifications, tags. API errors land on their field.
import {
  Alert,
  Anchor,
  Code,
  Fieldset,
  Group,
  MultiSelect,
  NumberInput,
  SegmentedControl,
  Select,
  Stack,
  Switch,
  Text,
  TextInput,
} from "@mantine/core";
import { useForm } from "@mantine/form";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams, useSearch } from "wouter";
import { responders as responderRules } from "../../api/rules.gen";
import { CodeEditor } from "../../components/code-editor/code-editor";
import { confirmDeleteAndLeave } from "../../components/confirm";
import { EditorActions } from "../../components/editor-actions";
import { CopyButton } from "../../components/copy-button";
import { applyApiError } from "../../components/form";
import { HeaderListEditor } from "../../components/header-list-editor";
import { notifyError, notifySuccess } from "../../components/notify";
import { PageHeader } from "../../components/page-header";
import { dropDoubledSlash } from "../../components/prefill";
import { ErrorState, LoadingState } from "../../components/states";
import { MAX_TAGS_PER_ENTITY, TagSelect } from "../../components/tags/tag-select";
import { navigateSaved, useUnsavedGuard } from "../../components/use-unsaved-guard";
import { confirmScriptsCompile, notifyScriptWarnings } from "../../components/script-check";
import { MailDescription } from "../../components/mail-off";
import { bodyLanguage, formField, initialValues, previewUrl, requestsToTrackRule, toPayload, validate, type ResponderValues } from "./responder-form";
import { METHODS, PATH_TYPES, RESPONDERS_KEY, respondersApi, type Responder, type ResponderInfo } from "./responders-api";
import { ScriptField } from "../scripts/script-field";
import { SCRIPT_EXAMPLES } from "./script-examples";
import { useAllSecrets } from "../secrets/secrets-api";
import { HelpLink } from "../help/help-link";

export function useResponderInfo() {
  return useQuery({ queryKey: [RESPONDERS_KEY, "info"], queryFn: respondersApi.info, staleTime: 60_000 });
}

export function ResponderEditorPage() {
  const params = useParams<{ id?: string }>();
  const from = new URLSearchParams(useSearch()).get("from");
  const sourceId = params.id ?? from ?? undefined;
  const source = useQuery({
    queryKey: [RESPONDERS_KEY, "one", sourceId],
    queryFn: () => respondersApi.get(sourceId!),
    enabled: sourceId !== undefined,
    retry: false,
    staleTime: 0,
  });
  const info = useResponderInfo();
  if ((sourceId && source.isPending) || info.isPending) return <LoadingState />;
  if (sourceId && source.isError)
    return (
      <ErrorState
        error={source.error}
        title="Could not open the responder"
        onRetry={() => source.refetch()}
        back={{ href: "/responders", label: "Back to responders" }}
      />
    );
  if (info.isError) return <ErrorState error={info.error} onRetry={() => info.refetch()} />;
  return (
    <ResponderEditor
      key={`${params.id ?? "new"}-${from ?? ""}`}
      info={info.data}
      existing={params.id ? source.data : undefined}
      copyOf={params.id ? undefined : source.data}
    />
  );
}

function ResponderEditor({ info, existing, copyOf }: { info: ResponderInfo; existing?: Responder; copyOf?: Responder }) {
  const qc = useQueryClient();
  const secrets = useAllSecrets();
  const start = initialValues(existing ?? copyOf, copyOf !== undefined);
  if (!existing && !copyOf) start.requestsToTrack = Math.min(Number(start.requestsToTrack), Number(info.maxRequestsToTrack));
  if (!info.notificationThrottles.map(Number).includes(Number(start.throttle)) && info.notificationThrottles.length)
    start.throttle = String(info.notificationThrottles[0]);
  // Numbers out of range are said at once (on blur), never clamped silently (issue 30).
  const form = useForm<ResponderValues>({
    mode: "controlled",
    initialValues: start,
    validate: { ...validate, requestsToTrack: requestsToTrackRule(Number(info.maxRequestsToTrack)) },
    validateInputOnBlur: ["statusCode", "requestsToTrack"],
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const dirty = form.isDirty();
  useUnsavedGuard(dirty);
  const v = form.getValues();
  const url = previewUrl(info, v);
  const track = Number(v.requestsToTrack) || 0;
  const pathType = PATH_TYPES.find((p) => p.value === v.pathType)!;
  const prefixUnavailable = info.urlStyle === "path";
  const back = existing ? `/responders/${existing.id}` : "/responders";

  const submit = form.onSubmit(
    async (values) => {
      if (!(await confirmScriptsCompile([{ label: "Script source", source: values.script, runtime: "quickjs" }]))) return;
      setBusy(true);
      setError(null);
      try {
        const payload = toPayload(values);
        const { warnings, ...saved } = existing ? await respondersApi.update(existing.id, payload) : await respondersApi.create(payload);
        form.resetDirty();
        notifySuccess(existing ? `Responder “${saved.name}” saved` : `Responder “${saved.name}” created`);
        notifyScriptWarnings(warnings);
        qc.setQueryData([RESPONDERS_KEY, "one", saved.id], saved);
        await qc.invalidateQueries({ queryKey: [RESPONDERS_KEY, "list"] });
        navigateSaved(`/responders/${saved.id}`, { replace: !existing });
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === "DUPLICATE_NAME") {
          form.setFieldError("name", "You already have a responder with this name");
          setError(null);
        } else setError(applyApiError(form, err, formField));
      } finally {
        setBusy(false);
      }
    },
    () => setError("Some fields need attention: see the messages under them."),
  );

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="md" maw={1100}>
        <Anchor component={Link} href={back} size="sm">
          {existing ? `← Back to “${existing.name}”` : "← All responders"}
        </Anchor>
        <PageHeader
          title={existing ? `Edit “${existing.name}”` : copyOf ? "Duplicate responder" : "New responder"}
          help={<HelpLink topic="responders" />}
          description="An HTTP endpoint on your own address: it answers with the response below (or what the script returns) and records what it receives."
        />
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}

        <Fieldset legend="Where it listens">
          <Stack gap="sm">
            <Group align="flex-start" grow wrap="wrap" preventGrowOverflow={false}>
              <TextInput label="Name" required miw={240} description="Unique among your responders" {...form.getInputProps("name")} data-autofocus />
              <Select
                label="Method"
                miw={160}
                maw={220}
                data={[...METHODS]}
                allowDeselect={false}
                description="ANY answers every method"
                {...form.getInputProps("method")}
              />
            </Group>
            <div>
              <Text component="div" size="sm" fw={500} id="path-type-label">
                Path type
              </Text>
              <SegmentedControl
                aria-labelledby="path-type-label"
                data={PATH_TYPES.map((p) => ({ value: p.value, label: p.label }))}
                value={v.pathType}
                onChange={(t) => form.setFieldValue("pathType", t as ResponderValues["pathType"])}
              />
              <Text size="xs" c="dimmed" mt={4} data-testid="path-type-hint">
                <Code>{v.pathType}</Code> {pathType.hint}
              </Text>
            </div>
            <Group align="flex-start" grow wrap="wrap" preventGrowOverflow={false}>
              <TextInput
                label="Path"
                required
                miw={240}
                description="Starts with /; letters, digits, - . _ ~ and %XX escapes"
                styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
                spellCheck={false}
                {...form.getInputProps("path")}
                onChange={(e) => form.setFieldValue("path", dropDoubledSlash(e.currentTarget.value))}
              />
              <TextInput
                label="Subdomain prefix"
                miw={200}
                disabled={prefixUnavailable}
                description={
                  prefixUnavailable ? "Not available: this server gives responders path URLs" : "Optional: a separate host for this responder"
                }
                styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
                spellCheck={false}
                {...form.getInputProps("subdomainPrefix")}
              />
            </Group>
            {url && (
              <Group gap="xs" wrap="nowrap" align="center">
                <Text size="sm" fw={500} style={{ flexShrink: 0 }}>
                  URL
                </Text>
                <Code data-testid="url-preview" style={{ overflowWrap: "anywhere", minWidth: 0 }}>
                  {url}
                </Code>
                <div style={{ flexShrink: 0 }}>
                  <CopyButton value={url} what="URL" label="Copy" />
                </div>
              </Group>
            )}
          </Stack>
        </Fieldset>

        <Fieldset legend="Default response">
          <Stack gap="sm">
            <NumberInput
              label="Status code"
              required
              min={responderRules.MIN_STATUS}
              max={responderRules.MAX_STATUS}
              clampBehavior="none"
              allowDecimal={false}
              w={180}
              {...form.getInputProps("statusCode")}
            />
            <HeaderListEditor
              label="Headers"
              description="Sent in this order; a name may repeat (e.g. several set-cookie). ${secrets.NAME} in a value is replaced when the responder has access to that secret."
              rows={v.headers}
              max={responderRules.MAX_HEADERS}
              onChange={(rows) => form.setFieldValue("headers", rows)}
              errorOf={(i, part) => form.errors[`headers.${i}.${part}`]}
              error={form.errors.headers}
            />
            <CodeEditor
              label="Body"
              language={bodyLanguage(v.headers)}
              minHeight={140}
              value={v.body}
              onChange={(b) => form.setFieldValue("body", b)}
              error={form.errors.body}
              description="Up to 1 MiB; the editor follows the Content-Type header. ${secrets.NAME} is replaced as in headers."
            />
          </Stack>
        </Fieldset>

        <Fieldset legend="Script (optional)">
          <ScriptField
            label="Script source"
            description={
              <>
                Runs for every request with <code>context</code> (method, path, query, headers, body, secrets) and returns{" "}
                <code>{"{statusCode, headers, body}"}</code> or null for the default response.
              </>
            }
            value={v.script}
            onChange={(s) => form.setFieldValue("script", s)}
            examples={SCRIPT_EXAMPLES}
            error={form.errors.script}
            lint="quickjs"
            look="toolbar"
            library="responder"
          />
        </Fieldset>

        <Fieldset legend="Secrets and history">
          <Stack gap="sm">
            <div>
              <Text component="div" size="sm" fw={500} id="secrets-mode-label">
                Secrets the script can read
              </Text>
              <SegmentedControl
                aria-labelledby="secrets-mode-label"
                value={v.secretsMode}
                onChange={(m) => form.setFieldValue("secretsMode", m as ResponderValues["secretsMode"])}
                data={[
                  { value: "none", label: "None" },
                  { value: "all", label: "All" },
                  { value: "selected", label: "Selected" },
                ]}
              />
              <Text size="xs" c="dimmed" mt={4}>
                As <Code>context.secrets.NAME</Code> in the script and <Code>{"${secrets.NAME}"}</Code> in the body and header values. “All” includes
                secrets you add later.
              </Text>
            </div>
            {v.secretsMode === "selected" && (
              <MultiSelect
                label="Selected secrets"
                searchable
                data={(secrets.data ?? []).map((s) => ({ value: s.id, label: s.name }))}
                nothingFoundMessage={secrets.isPending ? "Loading secrets…" : "No secrets yet: add them on the Secrets page"}
                comboboxProps={{ withinPortal: true }}
                {...form.getInputProps("secretIds")}
              />
            )}
            <Group align="flex-start" wrap="wrap" gap="lg">
              <NumberInput
                label="Requests to track"
                description={`How many recent requests to keep (0 = none; at most ${info.maxRequestsToTrack} on your plan)`}
                min={0}
                max={Number(info.maxRequestsToTrack)}
                clampBehavior="none"
                allowDecimal={false}
                w={260}
                {...form.getInputProps("requestsToTrack")}
              />
              <Stack gap={6} mt={4}>
                <Switch
                  label="Email a summary of new requests"
                  aria-label="Email a summary of new requests"
                  disabled={track === 0}
                  description={track === 0 ? "Needs requests to track" : <MailDescription normal="One email per window, never one per request" />}
                  checked={v.notify && track > 0}
                  onChange={(e) => form.setFieldValue("notify", e.currentTarget.checked)}
                  error={form.errors.notify}
                />
                {v.notify && track > 0 && (
                  <Select
                    label="At most one email every"
                    w={220}
                    allowDeselect={false}
                    data={info.notificationThrottles.map((t: number | string) => ({ value: String(t), label: formatThrottle(Number(t)) }))}
                    {...form.getInputProps("throttle")}
                  />
                )}
              </Stack>
            </Group>
          </Stack>
        </Fieldset>

        <Group align="flex-end" wrap="wrap" gap="lg">
          <TagSelect
            max={MAX_TAGS_PER_ENTITY}
            value={v.tagIds}
            onChange={(ids) => form.setFieldValue("tagIds", ids)}
            error={form.errors.tagIds}
            style={{ flex: "1 1 320px" }}
            maw={520}
          />
          <Switch label="Enabled" description="A disabled responder answers 404" {...form.getInputProps("enabled", { type: "checkbox" })} />
        </Group>

        <EditorActions
          createLabel="Create responder"
          existing={!!existing}
          busy={busy}
          dirty={dirty}
          backHref={back}
          onDelete={() =>
            existing &&
            confirmDeleteAndLeave({
              what: "responder",
              name: existing.name,
              consequence: "Its URL stops answering; its request history and KV data are deleted. This cannot be undone.",
              remove: () => respondersApi.remove(existing.id),
              beforeLeave: form.resetDirty,
              listPath: "/responders",
              queryClient: qc,
              queryKey: RESPONDERS_KEY,
              id: existing.id,
            })
          }
        />
      </Stack>
    </form>
  );
}

export function formatThrottle(sec: number): string {
  if (sec % 86400 === 0) return sec === 86400 ? "day" : `${sec / 86400} days`;
  if (sec % 3600 === 0) return sec === 3600 ? "hour" : `${sec / 3600} hours`;
  if (sec % 60 === 0) return `${sec / 60} minutes`;
  return `${sec} seconds`;
}
