// The bottom row of an editor page: Save (or "Create …" for a new item), Cancel / Close back to where the user came
// from, and Delete for an existing item (the page passes what Delete does, usually confirmDeleteAndLeave).
import { Button, Group } from "@mantine/core";
import { Link } from "wouter";

export function EditorActions(props: {
  /** "Create script", … (an existing item says "Save") */
  createLabel: string;
  existing: boolean;
  busy: boolean;
  dirty: boolean;
  backHref: string;
  /** a form's submit button unless given */
  onSave?: () => void;
  saveDisabled?: boolean;
  onDelete?: () => void;
}) {
  const { createLabel, existing, busy, dirty, backHref, onSave, saveDisabled, onDelete } = props;
  return (
    <Group justify="space-between">
      <Group gap="xs">
        <Button type={onSave ? "button" : "submit"} onClick={onSave} loading={busy} disabled={saveDisabled}>
          {existing ? "Save" : createLabel}
        </Button>
        <Button variant="default" component={Link} href={backHref}>
          {dirty ? "Cancel" : "Close"}
        </Button>
      </Group>
      {existing && onDelete && (
        <Button color="red" variant="light" onClick={onDelete}>
          Delete
        </Button>
      )}
    </Group>
  );
}
