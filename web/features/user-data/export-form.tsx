// Export your data (supplement §19.1): pick the types, whether to add history (responder requests, tracker
// revisions) and settings, and optionally a passphrase that adds secret values (encrypted with it); the file
// downloads under the API's name.
import { Alert, Button, Checkbox, Group, PasswordInput, SimpleGrid, Stack, Text } from "@mantine/core";
import { useState } from "react";
import { errorMessage } from "../../api/client";
import { downloadBlob, formatFileSize } from "../../components/download";
import { ENTITY_TYPES, MIN_PASSPHRASE_CHARS, userDataApi, type ExportRequest } from "./user-data-api";

export function ExportForm() {
  const [types, setTypes] = useState<string[]>(ENTITY_TYPES.map((t) => t.key));
  const [settings, setSettings] = useState(true);
  const [history, setHistory] = useState(false);
  const [passphrase, setPassphrase] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const passphraseError = passphrase !== "" && [...passphrase].length < MIN_PASSPHRASE_CHARS ? `At least ${MIN_PASSPHRASE_CHARS} characters` : null;

  const run = async (e: React.FormEvent) => {
    e.preventDefault();
    if (passphraseError) return;
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const include: ExportRequest["include"] = { settings };
      for (const t of ENTITY_TYPES) if (types.includes(t.key)) include[t.key] = { type: "all", ...(t.history ? { includeHistory: history } : {}) };
      const { blob, fileName } = await userDataApi.export({ include, ...(passphrase ? { secretsPassphrase: passphrase } : {}) });
      downloadBlob(blob, fileName);
      setDone(`Downloaded ${fileName} (${formatFileSize(blob.size)})`);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={run} noValidate>
      <Stack gap="sm">
        <Checkbox.Group label="What to export" description="Tags used by exported items are always included." value={types} onChange={setTypes}>
          <SimpleGrid cols={{ base: 1, xs: 2, sm: 3 }} spacing="xs" mt="xs">
            {ENTITY_TYPES.map((t) => (
              <Checkbox key={t.key} value={t.key} label={t.label} />
            ))}
          </SimpleGrid>
        </Checkbox.Group>
        <Group gap="lg">
          <Checkbox label="Settings" checked={settings} onChange={(e) => setSettings(e.currentTarget.checked)} />
          <Checkbox label="History (responder requests, tracker revisions)" checked={history} onChange={(e) => setHistory(e.currentTarget.checked)} />
        </Group>
        <PasswordInput
          label="Secrets passphrase (optional)"
          description={`Adds your secrets' values to the file, encrypted with this passphrase (${MIN_PASSPHRASE_CHARS} characters or more). Without it, secrets are exported without values.`}
          autoComplete="new-password"
          value={passphrase}
          error={passphraseError}
          onChange={(e) => setPassphrase(e.currentTarget.value)}
          maw={420}
        />
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
        {done && (
          <Text size="sm" role="status">
            {done}. Private keys are in it as stored (encrypted ones stay encrypted with their passphrase).
          </Text>
        )}
        <Group>
          <Button type="submit" loading={busy} disabled={types.length === 0 && !settings}>
            Export
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
