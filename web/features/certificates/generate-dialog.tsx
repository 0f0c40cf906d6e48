// Generate a certificate from a template (supplement §12.4): pick the format and an optional passphrase; the file
// downloads under the API's file name, and a line says what it holds (subject, SANs, validity, fingerprint). Works for
// the owner and, with the share id, on the shared page.
import { Alert, Button, Code, Group, Modal, PasswordInput, Radio, Stack, Text } from "@mantine/core";
import { useState } from "react";
import { errorMessage } from "../../api/client";
import { certificates as certRules } from "../../api/rules.gen";
import type { TemplateAttributes } from "../../api/types";
import { downloadExported, formatFileSize } from "../../components/download";
import { templatesApi, type GenerateFormat } from "./certificates-api";

export const GENERATE_FORMATS: { value: GenerateFormat; label: string; hint: string; passphrase: string | null }[] = [
  {
    value: "pem",
    label: "PEM bundle (.zip)",
    hint: "certificate.crt and private_key.key, as web servers (nginx, Apache, HAProxy) take them",
    passphrase: "Encrypts private_key.key; leave empty for an unencrypted key",
  },
  {
    value: "pkcs12",
    label: "PKCS#12 (.pfx)",
    hint: "Certificate and key in one password-protected file (Windows, Java keystores, browsers)",
    passphrase: "The file's password; leave empty for an empty password",
  },
  { value: "der", label: "DER certificate (.der)", hint: "The certificate alone, binary; no private key", passphrase: null },
  {
    value: "pkcs8",
    label: "PKCS#8 private key (.p8)",
    hint: "The private key alone, binary DER; no certificate",
    passphrase: "Encrypts the key; leave empty for an unencrypted key",
  },
];

export function GenerateDialog({
  templateId,
  templateName,
  attributes,
  shareId,
  onClose,
}: {
  templateId: string;
  templateName: string;
  attributes: TemplateAttributes;
  shareId?: string;
  onClose: () => void;
}) {
  const [format, setFormat] = useState<GenerateFormat>("pem");
  const [passphrase, setPassphrase] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<{ fileName: string; size: number; summary: string } | null>(null);
  const chosen = GENERATE_FORMATS.find((f) => f.value === format)!;

  const generate = async () => {
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const withPassphrase = chosen.passphrase !== null && passphrase !== "";
      const file = await templatesApi.generate(templateId, { format, ...(withPassphrase ? { passphrase } : {}) }, shareId);
      const bytes = downloadExported(file);
      let summary: string;
      try {
        const { summarizeGenerated } = await import("./cert-info");
        summary = await summarizeGenerated(format, bytes, attributes, withPassphrase);
      } catch (err) {
        summary = `Could not read the file back: ${errorMessage(err)}`;
      }
      setResult({ fileName: file.fileName, size: bytes.byteLength, summary });
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal opened onClose={onClose} title={`Generate a certificate from “${templateName}”`} size="lg" closeButtonProps={{ "aria-label": "Close" }}>
      <Stack>
        <Text size="sm" c="dimmed">
          Each generation makes a fresh key pair and a new self-signed certificate. Nothing is stored: the file is only downloaded.
        </Text>
        <Radio.Group label="Format" value={format} onChange={(v) => setFormat(v as GenerateFormat)}>
          <Stack gap="xs" mt="xs">
            {GENERATE_FORMATS.map((f) => (
              <Radio key={f.value} value={f.value} label={f.label} description={f.hint} />
            ))}
          </Stack>
        </Radio.Group>
        {chosen.passphrase !== null && (
          <PasswordInput
            label="Passphrase (optional)"
            description={chosen.passphrase}
            autoComplete="new-password"
            value={passphrase}
            onChange={(e) => setPassphrase(e.currentTarget.value)}
            maxLength={certRules.MAX_PASSPHRASE}
          />
        )}
        {error && (
          <Alert color="red" role="alert" title="Could not generate">
            {error}
          </Alert>
        )}
        {result && (
          <Alert color="green" title={`Downloaded ${result.fileName} (${formatFileSize(result.size)})`} role="status">
            <Code block data-testid="generate-summary" style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere" }}>
              {result.summary}
            </Code>
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {result ? "Done" : "Cancel"}
          </Button>
          <Button onClick={generate} loading={busy}>
            Generate and download
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
