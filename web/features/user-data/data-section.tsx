// Settings → "Your data": export (download) and import (preview, choose, import) of everything you own, to back
// up or to move to another account or server (supplement §19).
import { Button, Divider, Group, Stack, Text, Title } from "@mantine/core";
import { SettingsSection } from "../settings/settings-section";
import { useSearchParam } from "../../components/use-search-param";
import { ExportForm } from "./export-form";
import { ImportDialog } from "./import-dialog";

export function DataSection() {
  const [importing, setImporting] = useSearchParam("import");
  return (
    <SettingsSection id="settings-data" title="Your data" description="Back up everything you own, or move it to another account or Secbox server.">
      <Stack gap="md">
        <div>
          <Title order={3} size="h5" mb="xs">
            Export
          </Title>
          <ExportForm />
        </div>
        <Divider />
        <div>
          <Title order={3} size="h5" mb={4}>
            Import
          </Title>
          <Text size="sm" c="dimmed" mb="xs">
            Preview a file first: you see what it holds and what already exists, choose item by item, and then it is imported all at once or not at
            all.
          </Text>
          <Group>
            <Button variant="default" onClick={() => setImporting("1")}>
              Import from a file…
            </Button>
          </Group>
        </div>
      </Stack>
      {importing === "1" && <ImportDialog onClose={() => setImporting(null)} />}
    </SettingsSection>
  );
}
