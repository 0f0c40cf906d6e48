// A create/edit dialog. Closing it (Escape, the close button, Cancel, the overlay) with unsaved changes asks
// first; so does navigating to another page while it is open. `children` receives that guarded close for Cancel.
import { Modal } from "@mantine/core";
import type { ReactNode } from "react";
import { confirmDiscard, useUnsavedGuard } from "./use-unsaved-guard";

export function FormModal({
  opened,
  title,
  dirty,
  onClose,
  children,
  size = "lg",
}: {
  opened: boolean;
  title: string;
  dirty: boolean;
  onClose: () => void;
  children: (requestClose: () => void) => ReactNode;
  size?: string;
}) {
  useUnsavedGuard(opened && dirty);
  const requestClose = () => (dirty ? confirmDiscard(onClose) : onClose());
  return (
    <Modal opened={opened} onClose={requestClose} title={title} size={size} closeButtonProps={{ "aria-label": "Close" }}>
      {children(requestClose)}
    </Modal>
  );
}
