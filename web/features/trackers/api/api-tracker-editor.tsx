// Create or edit an API tracker: /trackers/apis/new (?from=<id> duplicates), /trackers/apis/<id>/edit. The shared
// frame (trackers/editor-page.tsx) holds basics, schedule and run settings; this file adds the requests, the
// configurator and extractor scripts, and the Test and Debug tools.
import { Code, Stack } from "@mantine/core";
import type { UseFormReturnType } from "@mantine/form";
import type { ApiTracker, ApiTrackerCreateParams, ApiTrackerRequestParam } from "../../../api/types";
import { utf8Length } from "../../../components/format";
import { Section } from "../editor-fields";
import { TrackerEditorPage } from "../editor-page";
import { commonBody, commonFrom, headersBody, headersFrom, rowKey, secretsBody, type CommonValues } from "../editor-values";
import { ScriptField } from "../../scripts/script-field";
import { MAX_SCRIPT_BYTES } from "../../scripts/script-types";
import { CONFIGURATOR_EXAMPLES, EXTRACTOR_EXAMPLES } from "./api-examples";
import { API_TIMEOUT_SEC, API_TRACKERS, apiTrackersApi } from "./api-trackers-api";
import { ApiDebugButton, ApiTestButton } from "./api-tools";
import { METHODS, newRequest, parseStatuses, RequestsEditor, type RequestValues } from "./requests-editor";

interface ApiValues extends CommonValues {
  requests: RequestValues[];
  configurator: string;
  extractor: string;
}

function initialValues(t: ApiTracker | undefined, copy: boolean): ApiValues {
  return {
    ...commonFrom(t, { copy, timeoutSec: API_TIMEOUT_SEC.default }),
    requests: t
      ? t.target.requests.map((r) => ({
          key: rowKey(),
          method: r.method,
          url: r.url,
          headers: headersFrom(r.headers),
          body: r.body ?? "",
          acceptInvalidCertificates: r.acceptInvalidCertificates,
          acceptStatuses: (r.acceptStatuses ?? []).join(", "),
        }))
      : [newRequest()],
    configurator: t?.target.configurator ?? "",
    extractor: t?.target.extractor ?? "",
  };
}

function requestBody(r: RequestValues): ApiTrackerRequestParam {
  const statuses = parseStatuses(r.acceptStatuses);
  return {
    url: r.url.trim(),
    method: METHODS.find((m) => m === r.method) ?? "GET",
    headers: headersBody(r.headers),
    ...(r.body !== "" ? { body: r.body } : {}),
    acceptInvalidCertificates: r.acceptInvalidCertificates,
    ...(statuses ? { acceptStatuses: statuses } : {}),
  };
}

function target(v: ApiValues): Extract<ApiTrackerCreateParams["target"], { requests: unknown }> {
  return {
    requests: v.requests.map(requestBody),
    configurator: v.configurator.trim() === "" ? null : v.configurator,
    extractor: v.extractor.trim() === "" ? null : v.extractor,
  };
}

const script = (v: string) => (utf8Length(v) > MAX_SCRIPT_BYTES ? `Over the ${MAX_SCRIPT_BYTES.toLocaleString()}-byte limit` : null);

/** The form's target for the tools, after checking the fields they need (errors go under the fields). */
function checkedTarget(form: UseFormReturnType<ApiValues>) {
  const bad = form
    .getValues()
    .requests.some((_, i) => form.validateField(`requests.${i}.url`).hasError || form.validateField(`requests.${i}.acceptStatuses`).hasError);
  return bad ? null : target(form.getValues());
}

export function ApiTrackerEditorPage() {
  return (
    <TrackerEditorPage<ApiTracker, ApiValues, ApiTrackerCreateParams>
      kind={API_TRACKERS}
      save={apiTrackersApi}
      initialValues={initialValues}
      body={(v) => ({ ...commonBody(v), target: target(v) })}
      scripts={(v) => [
        { label: "Configurator", source: v.configurator, runtime: "quickjs" },
        { label: "Extractor", source: v.extractor, runtime: "quickjs" },
      ]}
      timeout={{ min: API_TIMEOUT_SEC.min, max: API_TIMEOUT_SEC.max, help: `Per request, ${API_TIMEOUT_SEC.min} to ${API_TIMEOUT_SEC.max}` }}
      validate={{
        requests: {
          url: (v: string) => (/^https?:\/\/\S+$/i.test(v.trim()) ? null : "Enter an http:// or https:// URL"),
          acceptStatuses: (v: string) => (parseStatuses(v) === null ? "Status codes from 100 to 599, separated by commas" : null),
        } as never,
        configurator: script as never,
        extractor: script as never,
      }}
      errorFields={[
        [/^target\.requests\.(\d+)\.(url|method|body|acceptStatuses)/, (m) => `requests.${m[1]}.${m[2]}`],
        [/^target\.requests\.(\d+)\.headers/, (m) => `requests.${m[1]}.headers`],
        [/^target\.configurator/, "configurator"],
        [/^target\.extractor/, "extractor"],
      ]}
      sections={(form) => (
        <>
          <Section title="Requests" description="What to call. Private and local addresses are refused unless the operator allows them.">
            <RequestsEditor form={form as never} />
          </Section>
          <Section title="Scripts" description="Optional JavaScript run in the sandbox; both may be async and read the secrets you grant below.">
            <Stack gap="md">
              <ScriptField
                label="Configurator"
                description={
                  <>
                    Runs before the requests; returns <Code>{"{requests}"}</Code> to change them (sign, add headers) or <Code>null</Code>.
                  </>
                }
                value={form.getValues().configurator}
                onChange={(v) => form.setFieldValue("configurator", v)}
                examples={CONFIGURATOR_EXAMPLES}
                error={form.errors.configurator}
                lint="quickjs"
                look="corner"
              />
              <ScriptField
                label="Extractor"
                description={
                  <>
                    Picks the value to track from <Code>context.responses</Code> and returns <Code>{"{body}"}</Code>; without one the last response
                    body is tracked.
                  </>
                }
                value={form.getValues().extractor}
                onChange={(v) => form.setFieldValue("extractor", v)}
                examples={EXTRACTOR_EXAMPLES}
                error={form.errors.extractor}
                lint="quickjs"
                look="corner"
              />
            </Stack>
          </Section>
        </>
      )}
      tools={(form) => (
        <>
          <ApiTestButton target={() => checkedTarget(form)} timeoutSec={form.getValues().timeoutSec} />
          <ApiDebugButton
            body={() => {
              const t = checkedTarget(form);
              return t && { target: t, config: { timeout: form.getValues().timeoutSec * 1000 }, secrets: secretsBody(form.getValues()) };
            }}
          />
        </>
      )}
    />
  );
}
