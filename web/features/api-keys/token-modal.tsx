// The plaintext token exists only in the create/regenerate answer (supplement §5): shown once, with a copy
// button and a warning, and forgotten when this dialog closes.
import { Alert, Button, Code, Group, Modal, Stack, Text } from "@mantine/core";
import { CopyButton } from "../../components/copy-button";

export function TokenModal({ token, name, onClose }: { token: string; name: string; onClose: () => void }) {
  return (
    <Modal opened onClose={onClose} title={`API key “${name}”`} size="lg" closeButtonProps={{ "aria-label": "Close" }}>
      <Stack>
        <Alert color="orange" title="Copy the key now">
          This is the only time the key is shown. Store it somewhere safe (a password manager or your CI's secret store); if you lose it, regenerate
          it.
        </Alert>
        <Code block data-testid="api-key-token" style={{ wordBreak: "break-all", whiteSpace: "pre-wrap" }}>
          {token}
        </Code>
        <Text size="sm" c="dimmed">
          Use it as <Code>Authorization: Bearer {"<key>"}</Code>. API keys can call every endpoint except API key management.
        </Text>
        <Group justify="space-between">
          <CopyButton value={token} label="Copy key" what="API key" variant="filled" size="sm" />
          <Button variant="default" onClick={onClose}>
            Done
          </Button>
        </Group>
      </Stack>
    </Modal>
  );
}
