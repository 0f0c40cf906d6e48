// The certificate template form's fields, by section: subject, key and signature, validity (date pickers and presets),
// version and extensions (CA flag, key usages with plain-language hints), subject alternative names. Only the
// combinations the API accepts can be picked: the signature list follows the key type, extensions need version 3.
import { Alert, Button, Checkbox, Fieldset, Group, Input, SegmentedControl, Select, SimpleGrid, Stack, Switch, Text, TextInput } from "@mantine/core";
import type { UseFormReturnType } from "@mantine/form";
import { useStatus } from "../users/users-api";
import { formatDateTime } from "../../components/format";
import { fittingSignature, KEY_TYPES, keyParams, signaturesFor } from "./algorithms";
import { SanInput } from "./san-input";
import {
  classifySan,
  describeValidity,
  EXTENDED_KEY_USAGES,
  fromLocalInput,
  KEY_USAGES,
  nowSec,
  SUBJECT_FIELDS,
  tlsServerWithoutSan,
  toLocalInput,
  VALIDITY_PRESETS,
  type TemplateFormValues,
} from "./template-model";

type Form = UseFormReturnType<TemplateFormValues>;

function utcOffset(): string {
  const m = -new Date().getTimezoneOffset();
  const sign = m >= 0 ? "+" : "−";
  return `UTC${sign}${String(Math.floor(Math.abs(m) / 60)).padStart(2, "0")}:${String(Math.abs(m) % 60).padStart(2, "0")}`;
}

export function SubjectFields({ form }: { form: Form }) {
  return (
    <Fieldset legend="Subject" variant="filled">
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
        {SUBJECT_FIELDS.map((f) => (
          <TextInput key={f.key} label={f.label} placeholder={f.placeholder} {...form.getInputProps(f.key)} />
        ))}
        <TextInput label="Country (C, two letters)" placeholder="DE" maxLength={2} {...form.getInputProps("country")} />
      </SimpleGrid>
    </Fieldset>
  );
}

export function KeyFields({ form }: { form: Form }) {
  const status = useStatus();
  const dsa = status.data?.features.dsa !== false;
  const v = form.getValues();
  const params = keyParams(v.keyType);
  return (
    <Fieldset legend="Key and signature" variant="filled">
      <SimpleGrid cols={{ base: 1, sm: 3 }} spacing="sm">
        <Select
          label="Key algorithm"
          allowDeselect={false}
          data={KEY_TYPES.map((k) => ({
            value: k.value,
            label: k.value === "dsa" && !dsa ? "DSA (unavailable: no openssl)" : k.label,
            disabled: k.value === "dsa" && !dsa,
          }))}
          {...form.getInputProps("keyType")}
          onChange={(keyType) => {
            if (!keyType) return;
            form.setFieldValue("keyType", keyType);
            form.setFieldValue("keyParam", keyParams(keyType)?.fallback ?? "");
            form.setFieldValue("signatureAlgorithm", fittingSignature(keyType, form.getValues().signatureAlgorithm));
          }}
        />
        {params ? (
          <Select label={params.label} allowDeselect={false} data={params.options} {...form.getInputProps("keyParam")} />
        ) : (
          <TextInput label="Key size" value="Fixed (256 bits)" readOnly disabled />
        )}
        <Select label="Signature algorithm" allowDeselect={false} data={signaturesFor(v.keyType)} {...form.getInputProps("signatureAlgorithm")} />
      </SimpleGrid>
      <Text size="xs" c="dimmed" mt="xs">
        Only the signature algorithms that fit the key are offered. A fresh key pair is made each time a certificate is generated.
      </Text>
    </Fieldset>
  );
}

export function ValidityFields({ form }: { form: Form }) {
  const v = form.getValues();
  const before = fromLocalInput(v.notValidBefore);
  const after = fromLocalInput(v.notValidAfter);
  const utc = (t: number) => (Number.isNaN(t) ? "" : `${new Date(t * 1000).toISOString().replace("T", " ").slice(0, 19)} UTC`);
  const preset = (days: number) => {
    const now = nowSec();
    form.setFieldValue("notValidBefore", toLocalInput(now));
    form.setFieldValue("notValidAfter", toLocalInput(now + days * 86_400));
  };
  return (
    <Fieldset legend="Validity" variant="filled">
      <Stack gap="sm">
        <Group gap="xs" align="center">
          <Text size="sm" id="validity-presets-label">
            From now for
          </Text>
          <Group gap={6} role="group" aria-labelledby="validity-presets-label">
            {VALIDITY_PRESETS.map((p) => (
              <Button key={p.days} size="compact-sm" variant="default" onClick={() => preset(p.days)}>
                {p.label}
              </Button>
            ))}
          </Group>
        </Group>
        <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="sm">
          <TextInput
            type="datetime-local"
            step={1}
            label="Not valid before"
            description={`Local time (${utcOffset()}) · ${utc(before)}`}
            {...form.getInputProps("notValidBefore")}
          />
          <TextInput
            type="datetime-local"
            step={1}
            label="Not valid after"
            description={`Local time (${utcOffset()}) · ${utc(after)}`}
            {...form.getInputProps("notValidAfter")}
          />
        </SimpleGrid>
        {!Number.isNaN(before) && !Number.isNaN(after) && after > before && (
          <Text size="sm" c="dimmed">
            Valid for {describeValidity(before, after)} ({formatDateTime(before)} to {formatDateTime(after)}).
          </Text>
        )}
      </Stack>
    </Fieldset>
  );
}

function UsageChecks<T extends string>({
  label,
  description,
  options,
  value,
  onChange,
  disabled,
}: {
  label: string;
  description: string;
  options: { value: T; label: string; hint: string }[];
  value: T[];
  onChange: (v: T[]) => void;
  disabled: boolean;
}) {
  return (
    <Checkbox.Group label={label} description={description} value={value} onChange={(v) => onChange(v as T[])}>
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="xs" mt="xs">
        {options.map((o) => (
          <Checkbox key={o.value} value={o.value} label={o.label} description={o.hint} disabled={disabled} />
        ))}
      </SimpleGrid>
    </Checkbox.Group>
  );
}

/** A TLS server certificate without alternative names: browsers ignore the common name and refuse it. */
function NoSanWarning({ commonName, onAdd }: { commonName: string; onAdd: (name: string) => void }) {
  const cn = commonName.trim();
  const kind = cn === "" ? null : classifySan(cn);
  const cnUsable = kind !== null && "kind" in kind && (kind.kind === "DNS" || kind.kind === "Wildcard" || kind.kind === "IP");
  return (
    <Alert color="yellow" variant="light" title="No subject alternative name" data-testid="no-san-warning">
      <Stack gap="xs" align="flex-start">
        <Text size="sm">
          This template is for a TLS server, and browsers accept a server certificate only for the names listed under subject alternative names: the
          common name alone is ignored. Add the host names or IP addresses the server is reached at.
        </Text>
        {cnUsable && (
          <Button size="compact-sm" variant="default" onClick={() => onAdd(cn)}>
            Add “{cn}” from the common name
          </Button>
        )}
      </Stack>
    </Alert>
  );
}

export function ExtensionFields({ form }: { form: Form }) {
  const v = form.getValues();
  const v3 = v.version === "3";
  return (
    <Fieldset legend="Version and extensions" variant="filled">
      <Stack gap="md">
        <Input.Wrapper
          label="Version"
          description={
            v3
              ? "Version 3 carries the extensions below"
              : "Versions 1 and 2 have no extensions: the CA flag, key usages and alternative names need version 3"
          }
          error={form.errors.version}
          labelProps={{ id: "cert-version-label", htmlFor: undefined, component: "div" } as never}
        >
          <div>
            <SegmentedControl
              mt={4}
              aria-labelledby="cert-version-label"
              data={[
                { value: "1", label: "v1" },
                { value: "2", label: "v2" },
                { value: "3", label: "v3" },
              ]}
              value={v.version}
              onChange={(x) => form.setFieldValue("version", x)}
            />
          </div>
        </Input.Wrapper>
        <Switch
          label="Certificate authority (CA)"
          description="May sign other certificates; a CA usually also has the Certificate signing and CRL signing key usages"
          disabled={!v3}
          {...form.getInputProps("isCa", { type: "checkbox" })}
        />
        <UsageChecks
          label="Key usage"
          description="What the key may be used for (marked critical)"
          options={KEY_USAGES}
          value={v.keyUsage}
          onChange={(x) => form.setFieldValue("keyUsage", x)}
          disabled={!v3}
        />
        <UsageChecks
          label="Extended key usage"
          description="The purposes the certificate is for"
          options={EXTENDED_KEY_USAGES}
          value={v.extendedKeyUsage}
          onChange={(x) => form.setFieldValue("extendedKeyUsage", x)}
          disabled={!v3}
        />
        <SanInput
          value={v.subjectAltNames}
          onChange={(x) => form.setFieldValue("subjectAltNames", x)}
          text={v.sanDraft}
          onTextChange={(t) => {
            form.setFieldValue("sanDraft", t);
            form.clearFieldError("sanDraft");
          }}
          error={form.errors.sanDraft ?? form.errors.subjectAltNames}
          disabled={!v3}
        />
        {tlsServerWithoutSan(v) && <NoSanWarning commonName={v.commonName} onAdd={(name) => form.setFieldValue("subjectAltNames", [name])} />}
      </Stack>
    </Fieldset>
  );
}
