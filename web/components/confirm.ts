import { modals } from "@mantine/modals";

/** Asks before deleting; `onConfirm` runs only on "Delete". */
export function confirmDelete(opts: { what: string; name: string; consequence?: string; onConfirm: () => unknown }) {
  modals.openConfirmModal({
    title: `Delete ${opts.what} “${opts.name}”?`,
    children: opts.consequence ?? "This cannot be undone.",
    labels: { confirm: "Delete", cancel: "Cancel" },
    confirmProps: { color: "red" },
    closeButtonProps: { "aria-label": "Close" },
    onConfirm: () => void opts.onConfirm(),
  });
}
