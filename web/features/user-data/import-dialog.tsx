// Import a data file (supplement §19.3, §19.4): pick the file and the mode → the preview (totals, conflicts with
// existing items, warnings; in apply mode what would be deleted) → per-item choices (import or skip; rename,
// overwrite or skip on a conflict; which deletions to make) → import, all or nothing → what it did.
import {
  Accordion,
  Alert,
  Badge,
  Button,
  Checkbox,
  FileInput,
  Group,
  List,
  Modal,
  PasswordInput,
  SegmentedControl,
  Select,
  Stack,
  Table,
  Text,
} from "@mantine/core";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ApiError, errorMessage } from "../../api/client";
import { SELF_KEY } from "../users/users-api";
import { conflictsOf, deletionsFor, fileItems, hasSecretValues, initialChoices, selectionsFor, type Choice, type FileItem } from "./import-model";
import {
  ENTITY_TYPES,
  typeLabel,
  userDataApi,
  type EntityType,
  type ImportData,
  type ImportMode,
  type ImportPreview,
  type ImportResult,
  type Resolution,
} from "./user-data-api";

const RESOLUTIONS: { value: Resolution; label: string }[] = [
  { value: "rename", label: "Import renamed" },
  { value: "overwrite", label: "Overwrite the existing one" },
  { value: "skip", label: "Keep the existing one" },
];

interface Loaded {
  fileName: string;
  data: ImportData;
  items: Partial<Record<EntityType, FileItem[]>>;
}

function ItemRows({
  type,
  items,
  preview,
  choices,
  setChoice,
}: {
  type: EntityType;
  items: FileItem[];
  preview: ImportPreview;
  choices: Record<string, Choice>;
  setChoice: (key: string, c: Choice) => void;
}) {
  const conflicts = new Map(conflictsOf(preview, type).map((c) => [c.sourceId.toLowerCase(), c]));
  return (
    <Table layout="fixed" verticalSpacing={4}>
      <Table.Tbody>
        {items.map((item) => {
          const key = `${type}:${item.sourceId}`;
          const choice = choices[key] ?? { import: true };
          const conflict = conflicts.get(item.sourceId);
          return (
            <Table.Tr key={key}>
              <Table.Td>
                <Checkbox
                  label={item.name}
                  checked={choice.import}
                  onChange={(e) => setChoice(key, { ...choice, import: e.currentTarget.checked })}
                  styles={{ label: { overflowWrap: "anywhere" } }}
                />
              </Table.Td>
              <Table.Td w={260}>
                {conflict ? (
                  <Select
                    aria-label={`If “${item.name}” exists`}
                    size="xs"
                    disabled={!choice.import}
                    allowDeselect={false}
                    value={choice.resolution ?? null}
                    data={RESOLUTIONS.map((r) => ({ ...r, disabled: r.value === "rename" && !conflict.renameAllowed }))}
                    onChange={(v) => v && setChoice(key, { ...choice, resolution: v as Resolution })}
                    comboboxProps={{ withinPortal: true }}
                  />
                ) : (
                  <Text size="xs" c="dimmed">
                    New
                  </Text>
                )}
              </Table.Td>
            </Table.Tr>
          );
        })}
      </Table.Tbody>
    </Table>
  );
}

export function ImportDialog({ onClose }: { onClose: () => void }) {
  const qc = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const [mode, setMode] = useState<ImportMode>("merge");
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [preview, setPreview] = useState<ImportPreview | null>(null);
  const [choices, setChoices] = useState<Record<string, Choice>>({});
  const [deletions, setDeletions] = useState<Set<string>>(new Set());
  const [importSettings, setImportSettings] = useState(true);
  const [passphrase, setPassphrase] = useState("");
  const [passphraseError, setPassphraseError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<ImportResult | null>(null);

  const runPreview = async () => {
    if (!file) return;
    setBusy(true);
    setError(null);
    try {
      const text = await file.text();
      // A JSON object goes as it is; anything else as its text, and the preview says what is wrong with it.
      let data: ImportData = text;
      try {
        const parsed: unknown = JSON.parse(text);
        if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) data = parsed as ImportData;
      } catch {}
      const p = await userDataApi.preview(data, mode);
      const items = fileItems(data);
      setLoaded({ fileName: file.name, data, items });
      setPreview(p);
      setChoices(initialChoices(items, p, mode));
      setDeletions(new Set());
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  const runImport = async () => {
    if (!loaded || !preview) return;
    setBusy(true);
    setError(null);
    setPassphraseError(null);
    try {
      const needsPassphrase = hasSecretValues(loaded.data) && (loaded.items.secrets ?? []).some((s) => choices[`secrets:${s.sourceId}`]?.import);
      const r = await userDataApi.import({
        data: loaded.data,
        mode,
        selections: selectionsFor(loaded.items, choices),
        importSettings,
        ...(needsPassphrase && passphrase ? { secretsPassphrase: passphrase } : {}),
        ...(mode === "apply" ? { applyDeletions: deletionsFor(preview, deletions) } : {}),
      });
      setResult(r);
      // Everything may have changed: every list refetches.
      await qc.invalidateQueries({ predicate: (q) => q.queryKey[0] !== SELF_KEY[0] });
    } catch (err) {
      if (err instanceof ApiError && err.code === "BAD_PASSPHRASE") setPassphraseError(err.message);
      else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  const types = preview ? ENTITY_TYPES.filter((t) => preview.summary[t.key] !== undefined) : [];
  const toDelete = preview?.toDelete
    ? (Object.entries(preview.toDelete) as [EntityType, { id: string; name: string }[]][]).filter(([, l]) => l.length > 0)
    : [];

  let body: React.ReactNode;
  if (result) {
    body = (
      <Stack>
        <Alert color="green" title="Imported" role="status">
          Everything was imported in one step.
        </Alert>
        <Table withTableBorder aria-label="Import result">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Type</Table.Th>
              <Table.Th ta="right">Imported</Table.Th>
              <Table.Th ta="right">Updated</Table.Th>
              <Table.Th ta="right">Skipped</Table.Th>
              <Table.Th ta="right">Deleted</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {ENTITY_TYPES.filter((t) => result.results[t.key]).map((t) => {
              const r = result.results[t.key]!;
              return (
                <Table.Tr key={t.key}>
                  <Table.Td>{t.label}</Table.Td>
                  <Table.Td ta="right">{String(r.imported)}</Table.Td>
                  <Table.Td ta="right">{String(r.updated)}</Table.Td>
                  <Table.Td ta="right">{String(r.skipped)}</Table.Td>
                  <Table.Td ta="right">{String(r.deleted)}</Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
        <Text size="sm">Settings: {result.results.settings?.imported ? "imported" : "not imported"}.</Text>
        {result.warnings.length > 0 && (
          <Alert color="yellow" title="Warnings">
            <List size="sm">
              {result.warnings.map((w) => (
                <List.Item key={w}>{w}</List.Item>
              ))}
            </List>
          </Alert>
        )}
        <Group justify="flex-end">
          <Button onClick={onClose}>Done</Button>
        </Group>
      </Stack>
    );
  } else if (preview && loaded) {
    body = (
      <Stack>
        <Text size="sm">
          <b>{loaded.fileName}</b> · {mode === "merge" ? "merge: added to what you have" : "apply: your data is made to match the file"}
        </Text>
        {!preview.valid ? (
          <Alert color="red" title="This file cannot be imported" role="alert">
            <List size="sm">
              {preview.warnings.map((w) => (
                <List.Item key={w}>{w}</List.Item>
              ))}
            </List>
          </Alert>
        ) : (
          <>
            <Table withTableBorder aria-label="Import preview">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Type</Table.Th>
                  <Table.Th ta="right">In the file</Table.Th>
                  <Table.Th ta="right">Already exist</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {types.map((t) => (
                  <Table.Tr key={t.key}>
                    <Table.Td>{t.label}</Table.Td>
                    <Table.Td ta="right">{String(preview.summary[t.key]!.total)}</Table.Td>
                    <Table.Td ta="right">{preview.summary[t.key]!.conflicts.length || "—"}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
            {types.some((t) => (loaded.items[t.key] ?? []).length > 0) && (
              <Accordion variant="contained" multiple>
                {types
                  .filter((t) => (loaded.items[t.key] ?? []).length > 0)
                  .map((t) => (
                    <Accordion.Item key={t.key} value={t.key}>
                      <Accordion.Control>
                        <Group gap="xs">
                          <Text size="sm">Choose {t.label.toLowerCase()}</Text>
                          {conflictsOf(preview, t.key).length > 0 && (
                            <Badge size="sm" variant="light" color="red" tt="none">
                              {conflictsOf(preview, t.key).length} already exist
                            </Badge>
                          )}
                        </Group>
                      </Accordion.Control>
                      <Accordion.Panel>
                        <ItemRows
                          type={t.key}
                          items={loaded.items[t.key]!}
                          preview={preview}
                          choices={choices}
                          setChoice={(k, c) => setChoices((all) => ({ ...all, [k]: c }))}
                        />
                      </Accordion.Panel>
                    </Accordion.Item>
                  ))}
              </Accordion>
            )}
            {toDelete.length > 0 && (
              <Alert color="orange" title="Not in the file: tick what to delete">
                <Stack gap={4}>
                  {toDelete.flatMap(([type, list]) =>
                    list.map((e) => (
                      <Checkbox
                        key={e.id}
                        label={`${typeLabel(type)}: ${e.name}`}
                        checked={deletions.has(e.id)}
                        onChange={(ev) => {
                          const next = new Set(deletions);
                          if (ev.currentTarget.checked) next.add(e.id);
                          else next.delete(e.id);
                          setDeletions(next);
                        }}
                      />
                    )),
                  )}
                </Stack>
              </Alert>
            )}
            {preview.summary.settings?.included && (
              <Checkbox
                label={`Import settings (${mode === "merge" ? "merged into yours" : "replacing yours"})`}
                checked={importSettings}
                onChange={(e) => setImportSettings(e.currentTarget.checked)}
              />
            )}
            {hasSecretValues(loaded.data) && (
              <PasswordInput
                label="Secrets passphrase"
                description="The passphrase the file was exported with: it decrypts the secrets' values. Untick the secrets to import without it."
                autoComplete="off"
                value={passphrase}
                error={passphraseError}
                onChange={(e) => setPassphrase(e.currentTarget.value)}
              />
            )}
            {preview.warnings.length > 0 && (
              <Alert color="yellow" title="Warnings">
                <List size="sm">
                  {preview.warnings.map((w) => (
                    <List.Item key={w}>{w}</List.Item>
                  ))}
                </List>
              </Alert>
            )}
          </>
        )}
        {error && (
          <Alert color="red" role="alert" title="Nothing was imported">
            {error}
          </Alert>
        )}
        <Group justify="space-between">
          <Button variant="default" onClick={() => setPreview(null)}>
            Back
          </Button>
          <Group gap="xs">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            {preview.valid && (
              <Button onClick={runImport} loading={busy}>
                Import
              </Button>
            )}
          </Group>
        </Group>
      </Stack>
    );
  } else {
    body = (
      <Stack>
        <FileInput
          label="Export file"
          description="A secbox-export-….json file from this or another Secbox (up to 10 MiB)"
          placeholder="Choose a file"
          accept="application/json,.json"
          value={file}
          onChange={setFile}
          clearable
          styles={{ placeholder: { color: "var(--mantine-color-dimmed)" } }}
        />
        <div>
          <Text size="sm" fw={500} id="import-mode-label" mb={4}>
            Mode
          </Text>
          <SegmentedControl
            aria-labelledby="import-mode-label"
            value={mode}
            onChange={(v) => setMode(v as ImportMode)}
            data={[
              { value: "merge", label: "Merge" },
              { value: "apply", label: "Apply" },
            ]}
          />
          <Text size="xs" c="dimmed" mt={4}>
            {mode === "merge"
              ? "Adds the file's items to yours; a name that exists gets renamed by default."
              : "Makes your data match the file: existing items are overwritten, and you choose which of yours that the file lacks are deleted."}
          </Text>
        </div>
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>
            Cancel
          </Button>
          <Button onClick={runPreview} loading={busy} disabled={!file}>
            Preview
          </Button>
        </Group>
      </Stack>
    );
  }

  return (
    <Modal opened onClose={onClose} title="Import data" size="xl" closeButtonProps={{ "aria-label": "Close" }}>
      {body}
    </Modal>
  );
}
