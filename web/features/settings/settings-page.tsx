// Settings: appearance, account, notification email, API keys, password, your data (export/import).
import { SegmentedControl, Stack, Table, Text } from "@mantine/core";
import { useSelf } from "../users/users-api";
import { THEME_OPTIONS } from "./theme-toggle";
import { useTheme, type UiTheme } from "./settings-api";
import { PageHeader } from "../../components/page-header";
import { formatDateTime } from "../../components/format";
import { ApiKeysSection } from "../api-keys/api-keys-section";
import { lazyPage } from "../../components/lazy-page";
import { NotificationEmailSection } from "../notification-email/notification-email-section";
import { PasswordSection } from "./password-section";
import { SettingsSection } from "./settings-section";
import { HelpLink } from "../help/help-link";

// Export/import loads on demand (the first load of the app has a size budget).
const DataSection = lazyPage(() => import("../user-data/data-section").then((m) => m.DataSection));

function AppearanceSection() {
  const [theme, setTheme] = useTheme();
  return (
    <SettingsSection id="settings-appearance" title="Appearance" description="Remembered for your account on every browser you sign in from.">
      <div>
        <Text size="sm" fw={500} id="settings-theme-label" mb={4}>
          Theme
        </Text>
        <SegmentedControl aria-labelledby="settings-theme-label" value={theme} onChange={(v) => setTheme(v as UiTheme)} data={THEME_OPTIONS} />
      </div>
    </SettingsSection>
  );
}

function AccountSection() {
  const self = useSelf().data;
  if (!self) return null;
  return (
    <SettingsSection id="settings-account" title="Account">
      <Table variant="vertical" withTableBorder={false} layout="fixed">
        <Table.Tbody>
          <Table.Tr>
            <Table.Th w={160}>Email</Table.Th>
            <Table.Td>{self.email}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Responder handle</Table.Th>
            <Table.Td className="mono">{self.handle}</Table.Td>
          </Table.Tr>
          <Table.Tr>
            <Table.Th>Plan</Table.Th>
            <Table.Td>
              {self.subscription.tier}
              {self.subscription.endsAt !== undefined && ` (until ${formatDateTime(self.subscription.endsAt)})`}
            </Table.Td>
          </Table.Tr>
        </Table.Tbody>
      </Table>
    </SettingsSection>
  );
}

export function SettingsPage() {
  return (
    <Stack gap="md" maw={880}>
      <PageHeader title="Settings" help={<HelpLink topic="data" />} />
      <AppearanceSection />
      <AccountSection />
      <NotificationEmailSection />
      <ApiKeysSection />
      <PasswordSection />
      <DataSection />
    </Stack>
  );
}
