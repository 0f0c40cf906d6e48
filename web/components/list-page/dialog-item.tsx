// The item an edit/duplicate dialog works on (from ?edit=<id> / ?duplicate=<id>), fetched by id so the dialog
// survives a reload; while it loads or when it cannot be loaded (deleted, a stale link) a small dialog says so.
import { Button, Group, Loader, Modal, Stack } from "@mantine/core";
import { useQuery, type UseQueryResult } from "@tanstack/react-query";
import { ErrorState } from "../states";
import type { ListState } from "./use-list-state";

export function useDialogItem<T>(resource: string, dialog: ListState["dialog"], get: (id: string) => Promise<T>) {
  const id = dialog && dialog.mode !== "create" ? dialog.id : undefined;
  const query = useQuery({ queryKey: [resource, "one", id], queryFn: () => get(id!), enabled: id !== undefined, retry: false, staleTime: 0 });
  return { id, query, item: id === undefined ? undefined : query.data };
}

export function DialogStatus({
  query,
  dialog,
  noun,
  onClose,
}: {
  query: UseQueryResult<unknown>;
  dialog: ListState["dialog"];
  noun: string;
  onClose: () => void;
}) {
  if (!dialog || dialog.mode === "create" || query.isSuccess) return null;
  return (
    <Modal opened onClose={onClose} title={`Open ${noun}`} closeButtonProps={{ "aria-label": "Close" }}>
      {query.isError ? (
        <Stack>
          <ErrorState error={query.error} title={`Could not open this ${noun}`} />
          <Group justify="flex-end">
            <Button onClick={onClose}>Close</Button>
          </Group>
        </Stack>
      ) : (
        <Group justify="center" py="md">
          <Loader aria-label="Loading" />
        </Group>
      )}
    </Modal>
  );
}
