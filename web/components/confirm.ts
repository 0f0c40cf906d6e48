import { modals } from "@mantine/modals";
import type { QueryClient } from "@tanstack/react-query";
import { notifyError, notifySuccess } from "./notify";
import { navigateSaved } from "./use-unsaved-guard";

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

/**
 * An editor's Delete: asks first, then deletes, forgets the item's cached query, leaves for the list (as a saved
 * form: no unsaved-changes prompt) and refreshes the lists; a failure is a toast and the page stays.
 * Query keys follow the features' convention: [key, "one", id] for the item, [key, "list"] for its lists.
 */
export function confirmDeleteAndLeave(opts: {
  what: string;
  name: string;
  consequence?: string;
  remove: () => Promise<unknown>;
  /** e.g. the form's resetDirty, so leaving does not ask about unsaved changes */
  beforeLeave?: () => void;
  listPath: string;
  queryClient: QueryClient;
  queryKey: string;
  id: string;
}) {
  confirmDelete({
    what: opts.what,
    name: opts.name,
    consequence: opts.consequence,
    onConfirm: async () => {
      try {
        await opts.remove();
        opts.beforeLeave?.();
        notifySuccess(`${opts.what.charAt(0).toUpperCase()}${opts.what.slice(1)} “${opts.name}” deleted`);
        // Leave first and forget the deleted item (refetching it would be a 404), then refresh the lists.
        navigateSaved(opts.listPath, { replace: true });
        opts.queryClient.removeQueries({ queryKey: [opts.queryKey, "one", opts.id] });
        await opts.queryClient.invalidateQueries({ queryKey: [opts.queryKey, "list"] });
      } catch (err) {
        notifyError(err, `Could not delete the ${opts.what}`);
      }
    },
  });
}
