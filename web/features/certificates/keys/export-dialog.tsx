// Export a private key (supplement §12.2) as PEM, PKCS#8 DER or PKCS#12: an encrypted key needs its passphrase; the
// file can get its own passphrase. The file downloads under the API's name and is never shown.
import { Alert, Button, Group, Modal, PasswordInput, Radio, Stack, Text } from "@mantine/core";
import { useState } from "react";
import { ApiError, errorMessage } from "../../../api/client";
import { downloadExported, formatFileSize } from "../../../components/download";
import { describeKeyAlgorithm } from "../algorithms";
import { keysApi, MAX_PASSPHRASE, type KeyExportFormat, type PrivateKey } from "./keys-api";

const FORMATS: { value: KeyExportFormat; label: string; hint: string }[] = [
  { value: "pem", label: "PEM (.pem)", hint: "PKCS#8 text: BEGIN PRIVATE KEY, or BEGIN ENCRYPTED PRIVATE KEY with a file passphrase" },
  { value: "pkcs8", label: "PKCS#8 DER (.p8)", hint: "The same, binary" },
  { value: "pkcs12", label: "PKCS#12 (.pfx)", hint: "The key alone in a PFX; the file passphrase is its password (empty when none)" },
];

export function ExportDialog({ item, onClose }: { item: PrivateKey; onClose: () => void }) {
  const [format, setFormat] = useState<KeyExportFormat>("pem");
  const [passphrase, setPassphrase] = useState("");
  const [exportPassphrase, setExportPassphrase] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [passphraseError, setPassphraseError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const run = async () => {
    if (item.encrypted && passphrase === "") {
      setPassphraseError("Enter the key's passphrase");
      return;
    }
    setBusy(true);
    setError(null);
    setPassphraseError(null);
    setDone(null);
    try {
      const file = await keysApi.export(item.id, {
        format,
        ...(item.encrypted ? { passphrase } : {}),
        ...(exportPassphrase ? { exportPassphrase } : {}),
      });
      const bytes = downloadExported(file);
      setDone(`Downloaded ${file.fileName} (${formatFileSize(bytes.byteLength)})${exportPassphrase ? ", protected by the file passphrase" : ""}`);
    } catch (err) {
      if (err instanceof ApiError && err.code === "BAD_PASSPHRASE") setPassphraseError("The passphrase is not correct");
      else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal opened onClose={onClose} title={`Export private key ${item.name}`} size="lg" closeButtonProps={{ "aria-label": "Close" }}>
      <Stack>
        <Text size="sm" c="dimmed">
          {describeKeyAlgorithm(item.alg)}. The file is downloaded, never shown; keep it somewhere safe.
        </Text>
        <Radio.Group label="Format" value={format} onChange={(v) => setFormat(v as KeyExportFormat)}>
          <Stack gap="xs" mt="xs">
            {FORMATS.map((f) => (
              <Radio key={f.value} value={f.value} label={f.label} description={f.hint} />
            ))}
          </Stack>
        </Radio.Group>
        {item.encrypted && (
          <PasswordInput
            label="Key passphrase"
            description="The key is stored encrypted: its passphrase unlocks it for the export"
            required
            autoComplete="current-password"
            value={passphrase}
            error={passphraseError}
            onChange={(e) => {
              setPassphrase(e.currentTarget.value);
              setPassphraseError(null);
            }}
            data-autofocus
          />
        )}
        <PasswordInput
          label="File passphrase (optional)"
          description="Protects the exported file; leave empty for an unprotected file"
          autoComplete="new-password"
          value={exportPassphrase}
          onChange={(e) => setExportPassphrase(e.currentTarget.value)}
          maxLength={MAX_PASSPHRASE}
        />
        {error && (
          <Alert color="red" role="alert" title="Could not export">
            {error}
          </Alert>
        )}
        {done && (
          <Alert color="green" role="status">
            {done}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            {done ? "Done" : "Cancel"}
          </Button>
          <Button onClick={run} loading={busy}>
            Export and download
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
