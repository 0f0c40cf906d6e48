// API keys (supplement §5): for scripts, CI and agents. Listed with expiry and last use; created with an optional
// expiry; the token is shown once (TokenModal); regenerate voids the old token at once; delete asks first.
import { Badge, Button, Group, Menu, ActionIcon, Table, Text } from "@mantine/core";
import { modals } from "@mantine/modals";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { confirmDelete } from "../../components/confirm";
import { notifyError, notifySuccess } from "../../components/notify";
import { ErrorState, LoadingState } from "../../components/states";
import { Time } from "../../components/time";
import { SettingsSection } from "../settings/settings-section";
import { API_KEYS_KEY, apiKeysApi, type ApiKey, type ApiKeyCreated } from "./api-keys-api";
import { CreateKeyForm } from "./create-key-form";
import { TokenModal } from "./token-modal";

const expired = (k: ApiKey) => k.expiresAt !== null && Number(k.expiresAt) * 1000 <= Date.now();

export function ApiKeysSection() {
  const qc = useQueryClient();
  const keys = useQuery({ queryKey: API_KEYS_KEY, queryFn: apiKeysApi.list });
  const [creating, setCreating] = useState(false);
  const [shown, setShown] = useState<ApiKeyCreated | null>(null);
  const refresh = () => qc.invalidateQueries({ queryKey: API_KEYS_KEY });
  const regenerate = useMutation({
    mutationFn: (k: ApiKey) => apiKeysApi.regenerate(k.id),
    onSuccess: (k) => {
      setShown(k);
      void refresh();
    },
    onError: (err) => notifyError(err, "Could not regenerate the key"),
  });
  const remove = useMutation({
    mutationFn: (k: ApiKey) => apiKeysApi.remove(k.id),
    onSuccess: (_r, k) => {
      notifySuccess(`API key “${k.name}” deleted`);
      void refresh();
    },
    onError: (err) => notifyError(err, "Could not delete the key"),
  });

  const askRegenerate = (k: ApiKey) =>
    modals.openConfirmModal({
      title: `Regenerate “${k.name}”?`,
      children: "The current key stops working at once; anything using it needs the new one. The expiry stays the same.",
      labels: { confirm: "Regenerate", cancel: "Cancel" },
      confirmProps: { color: "orange" },
      closeButtonProps: { "aria-label": "Close" },
      onConfirm: () => regenerate.mutate(k),
    });

  let body;
  if (keys.isPending) body = <LoadingState />;
  else if (keys.isError) body = <ErrorState error={keys.error} onRetry={() => keys.refetch()} />;
  else if (keys.data.length === 0)
    body = (
      <Text size="sm" c="dimmed">
        No API keys yet. Create one to call the API from scripts or CI (
        <Text span className="mono">
          Authorization: Bearer …
        </Text>
        ).
      </Text>
    );
  else
    body = (
      <Table.ScrollContainer minWidth={560}>
        <Table verticalSpacing="xs" aria-label="API keys">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th>Created</Table.Th>
              <Table.Th>Expires</Table.Th>
              <Table.Th>Last used</Table.Th>
              <Table.Th>
                <span className="visually-hidden">Actions</span>
              </Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {keys.data.map((k) => (
              <Table.Tr key={k.id}>
                <Table.Td>
                  <Text size="sm" fw={500}>
                    {k.name}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Time value={k.createdAt} />
                </Table.Td>
                <Table.Td>
                  {expired(k) ? (
                    <Badge color="red" variant="light" tt="none">
                      Expired
                    </Badge>
                  ) : (
                    <Time value={k.expiresAt} fallback="Never" />
                  )}
                </Table.Td>
                <Table.Td>
                  <Time value={k.lastUsedAt} fallback="Never used" />
                </Table.Td>
                <Table.Td ta="right">
                  <Menu position="bottom-end" withinPortal>
                    <Menu.Target>
                      <ActionIcon variant="subtle" color="gray" aria-label={`Actions for ${k.name}`}>
                        <span aria-hidden="true" style={{ fontSize: 18, lineHeight: 1 }}>
                          ⋯
                        </span>
                      </ActionIcon>
                    </Menu.Target>
                    <Menu.Dropdown>
                      <Menu.Item onClick={() => askRegenerate(k)}>Regenerate</Menu.Item>
                      <Menu.Divider />
                      <Menu.Item
                        c="var(--app-danger-text)"
                        onClick={() =>
                          confirmDelete({
                            what: "API key",
                            name: k.name,
                            consequence: "Anything using it gets 401 from now on. This cannot be undone.",
                            onConfirm: () => remove.mutateAsync(k),
                          })
                        }
                      >
                        Delete API key
                      </Menu.Item>
                    </Menu.Dropdown>
                  </Menu>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    );

  return (
    <SettingsSection
      id="settings-api-keys"
      title="API keys"
      description="For scripts, CI and agents. A key is shown once, when it is created or regenerated."
    >
      <Group>
        <Button onClick={() => setCreating(true)}>New API key</Button>
      </Group>
      {body}
      {creating && (
        <CreateKeyForm
          onClose={() => setCreating(false)}
          onCreated={(k) => {
            setCreating(false);
            setShown(k);
            void refresh();
          }}
        />
      )}
      {shown && <TokenModal token={shown.token} name={shown.name} onClose={() => setShown(null)} />}
    </SettingsSection>
  );
}
