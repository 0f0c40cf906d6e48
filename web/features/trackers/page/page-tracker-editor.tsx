// Create or edit a page tracker: /trackers/pages/new (?from=<id> duplicates), /trackers/pages/<id>/edit. The shared
// frame (trackers/editor-page.tsx) holds basics, schedule and run settings; this file adds the page (URL, what to
// wait for, user agent, headers, the resource inventory switch), the in-page extractor and Debug.
import { Code, Group, NumberInput, Stack, Switch, TextInput } from "@mantine/core";
import type { UseFormReturnType } from "@mantine/form";
import type { PageTracker, PageTrackerCreateParams } from "../../../api/types";
import { utf8Length } from "../../../components/format";
import { HeadersField, Section } from "../editor-fields";
import { TrackerEditorPage } from "../editor-page";
import { commonBody, commonFrom, headersBody, headersFrom, secretsBody, type CommonValues, type KeyedHeader } from "../editor-values";
import { ScriptField } from "../../scripts/script-field";
import { MAX_SCRIPT_BYTES } from "../../scripts/script-types";
import { PAGE_EXTRACTOR_EXAMPLES } from "./page-examples";
import { PageDebugButton } from "./page-tools";
import { MAX_DELAY_MS, MAX_USER_AGENT_CHARS, PAGE_TIMEOUT_SEC, PAGE_TRACKERS, pageTrackersApi } from "./page-trackers-api";

interface PageValues extends CommonValues {
  url: string;
  waitSelector: string;
  waitDelayMs: number;
  userAgent: string;
  headers: KeyedHeader[];
  acceptInvalidCertificates: boolean;
  resources: boolean;
  extractor: string;
}

function initialValues(t: PageTracker | undefined, copy: boolean): PageValues {
  return {
    ...commonFrom(t, { copy, timeoutSec: PAGE_TIMEOUT_SEC.default }),
    url: t?.target.url ?? "",
    waitSelector: t?.target.waitFor?.selector ?? "",
    waitDelayMs: Number(t?.target.waitFor?.delayMs ?? 0),
    userAgent: t?.target.userAgent ?? "",
    headers: headersFrom(t?.target.headers),
    acceptInvalidCertificates: t?.target.acceptInvalidCertificates ?? false,
    resources: t?.target.resources ?? false,
    extractor: t?.target.extractor ?? "",
  };
}

function target(v: PageValues): PageTrackerCreateParams["target"] {
  const waitFor = { ...(v.waitSelector.trim() ? { selector: v.waitSelector.trim() } : {}), ...(v.waitDelayMs > 0 ? { delayMs: v.waitDelayMs } : {}) };
  return {
    url: v.url.trim(),
    extractor: v.extractor.trim() === "" ? null : v.extractor,
    ...(Object.keys(waitFor).length ? { waitFor } : {}),
    ...(v.userAgent.trim() ? { userAgent: v.userAgent.trim() } : {}),
    headers: headersBody(v.headers),
    acceptInvalidCertificates: v.acceptInvalidCertificates,
    resources: v.resources,
  };
}

const checkedTarget = (form: UseFormReturnType<PageValues>) => (form.validateField("url").hasError ? null : target(form.getValues()));

export function PageTrackerEditorPage() {
  return (
    <TrackerEditorPage<PageTracker, PageValues, PageTrackerCreateParams>
      kind={PAGE_TRACKERS}
      save={pageTrackersApi}
      initialValues={initialValues}
      body={(v) => ({ ...commonBody(v), target: target(v) })}
      scripts={(v) => [{ label: "In-page extractor", source: v.extractor, runtime: "chromium" }]}
      timeout={{
        min: PAGE_TIMEOUT_SEC.min,
        max: PAGE_TIMEOUT_SEC.max,
        help: `For the whole check, ${PAGE_TIMEOUT_SEC.min} to ${PAGE_TIMEOUT_SEC.max}`,
      }}
      validate={{
        url: ((v: string) => (/^https?:\/\/\S+$/i.test(v.trim()) ? null : "Enter an http:// or https:// URL")) as never,
        waitDelayMs: ((v: number) =>
          Number.isInteger(v) && v >= 0 && v <= MAX_DELAY_MS ? null : `From 0 to ${MAX_DELAY_MS.toLocaleString()} ms`) as never,
        userAgent: ((v: string) => (v.length > MAX_USER_AGENT_CHARS ? `At most ${MAX_USER_AGENT_CHARS} characters` : null)) as never,
        extractor: ((v: string) => (utf8Length(v) > MAX_SCRIPT_BYTES ? `Over the ${MAX_SCRIPT_BYTES.toLocaleString()}-byte limit` : null)) as never,
      }}
      errorFields={[
        [/^target\.url/, "url"],
        [/^target\.waitFor\.selector/, "waitSelector"],
        [/^target\.waitFor/, "waitDelayMs"],
        [/^target\.userAgent/, "userAgent"],
        [/^target\.headers/, "headers"],
        [/^target\.extractor/, "extractor"],
      ]}
      sections={(form) => {
        const v = form.getValues();
        return (
          <>
            <Section
              title="Page"
              description="Loaded in a fresh incognito Chromium context (1280×800) for every check; all its traffic goes through the private-address guard."
            >
              <TextInput
                label="URL"
                required
                placeholder="https://status.example.com/"
                styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
                {...form.getInputProps("url")}
              />
              <Group gap="md" align="flex-start" wrap="wrap">
                <TextInput
                  label="Wait for selector"
                  description="After the load event, wait until this CSS selector matches (missing → the check fails)"
                  placeholder="#content"
                  style={{ flex: "1 1 280px" }}
                  styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
                  {...form.getInputProps("waitSelector")}
                />
                <NumberInput
                  label="Then wait (ms)"
                  description={`0 to ${MAX_DELAY_MS.toLocaleString("en-US")}`}
                  min={0}
                  max={MAX_DELAY_MS}
                  step={250}
                  clampBehavior="none"
                  allowDecimal={false}
                  w={180}
                  {...form.getInputProps("waitDelayMs")}
                />
              </Group>
              <TextInput label="User agent" placeholder="Chromium's own" {...form.getInputProps("userAgent")} />
              <HeadersField
                label="Extra request headers"
                value={v.headers}
                onChange={(rows) => form.setFieldValue("headers", rows)}
                error={form.errors.headers}
              />
              <Stack gap="xs">
                <Switch
                  label="Track loaded scripts and stylesheets"
                  // The name is the label; the description stays a description (Mantine puts both in the <label>).
                  aria-label="Track loaded scripts and stylesheets"
                  description="Stores every external script and stylesheet (URL, size, SHA-256) with the content, so a swapped third-party script is a change even when the text is not"
                  {...form.getInputProps("resources", { type: "checkbox" })}
                />
                <Switch label="Accept invalid TLS certificates" {...form.getInputProps("acceptInvalidCertificates", { type: "checkbox" })} />
              </Stack>
            </Section>
            <Section title="Extractor" description="Optional; without one the page's visible text is tracked.">
              <ScriptField
                label="In-page extractor"
                description={
                  <>
                    Runs inside the page (the DOM is there, its globals are not): an expression or a function body returning a string or JSON;{" "}
                    <Code>context.params.secrets</Code> holds the secrets you grant.
                  </>
                }
                value={v.extractor}
                onChange={(x) => form.setFieldValue("extractor", x)}
                examples={PAGE_EXTRACTOR_EXAMPLES}
                error={form.errors.extractor}
                lint="chromium"
                look="corner"
              />
            </Section>
          </>
        );
      }}
      tools={(form) => (
        <PageDebugButton
          body={() => {
            const t = checkedTarget(form);
            return t && { target: t, config: { timeout: form.getValues().timeoutSec * 1000 }, secrets: secretsBody(form.getValues()) };
          }}
        />
      )}
    />
  );
}
