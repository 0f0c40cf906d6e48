// Tags: coloured labels for organising everything else (supplement §6).
import { Anchor, Text } from "@mantine/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { DataTableColumn } from "mantine-datatable";
import { ListPage } from "../../components/list-page/list-page";
import { useListState } from "../../components/list-page/use-list-state";
import { confirmDelete } from "../../components/confirm";
import { notifyError, notifySuccess } from "../../components/notify";
import { DialogStatus, useDialogItem } from "../../components/list-page/dialog-item";
import { TagBadge } from "../../components/tags/tag-badges";
import { TAGS_KEY } from "../../components/tags/use-all-tags";
import { Time } from "../../components/time";
import { TagForm } from "./tag-form";
import { tagsApi, type Tag } from "./tags-api";
import { HelpLink } from "../help/help-link";

const SORTABLE = ["name", "createdAt", "updatedAt"] as const;

export function TagsPage() {
  const [state, update] = useListState(SORTABLE);
  const qc = useQueryClient();
  const invalidate = () => qc.invalidateQueries({ queryKey: [TAGS_KEY] });
  const { id: dialogId, query: current, item } = useDialogItem(TAGS_KEY, state.dialog, tagsApi.get);
  const close = () => update({ dialog: null });
  const remove = useMutation({
    mutationFn: (t: Tag) => tagsApi.remove(t.id),
    onSuccess: (_r, t) => {
      notifySuccess(`Tag “${t.name}” deleted`);
      // Entities lose the tag: every cached list may show it.
      void qc.invalidateQueries();
    },
    onError: (err) => notifyError(err, "Could not delete the tag"),
  });

  const columns: DataTableColumn<Tag>[] = [
    {
      accessor: "name",
      title: "Name",
      sortable: true,
      render: (t) => (
        <Anchor component="button" type="button" onClick={() => update({ dialog: { mode: "edit", id: t.id } })} aria-label={`Edit tag ${t.name}`}>
          <TagBadge tag={t} />
        </Anchor>
      ),
    },
    {
      accessor: "color",
      title: "Colour",
      render: (t) => (
        <Text size="sm" className="mono">
          {t.color}
        </Text>
      ),
      visibleMediaQuery: "(min-width: 48em)",
    },
    { accessor: "createdAt", title: "Created", sortable: true, render: (t) => <Time value={t.createdAt} />, visibleMediaQuery: "(min-width: 48em)" },
    { accessor: "updatedAt", title: "Updated", sortable: true, render: (t) => <Time value={t.updatedAt} /> },
  ];

  const dialog = state.dialog;
  const formOpen = dialog !== null && (dialog.mode === "create" || item !== undefined);
  return (
    <>
      <ListPage<Tag>
        help={<HelpLink topic="data" section="tags-secrets-scripts-settings" />}
        title="Tags"
        description="Coloured labels you attach to secrets, scripts, responders, certificates, policies and trackers, then filter any list by."
        resource={TAGS_KEY}
        noun="tag"
        fetchPage={tagsApi.list}
        columns={columns}
        state={state}
        update={update}
        empty={{
          title: "No tags yet",
          body: "Tags group related things across every tool, for example “prod”, “staging” or a customer's name. Create one, then pick it when you edit a secret, script or responder.",
        }}
        onDelete={(t) =>
          confirmDelete({
            what: "tag",
            name: t.name,
            consequence: "It is removed from everything that carries it. This cannot be undone.",
            onConfirm: () => remove.mutateAsync(t),
          })
        }
      />
      <DialogStatus query={current} dialog={dialog} noun="tag" onClose={close} />
      {formOpen && (
        <TagForm
          key={`${dialog.mode}-${dialogId ?? "new"}`}
          opened
          mode={dialog.mode}
          initial={dialog.mode === "create" ? undefined : item}
          onClose={close}
          onSubmit={async (v) => {
            if (dialog.mode === "edit") {
              await tagsApi.update(dialogId!, v);
              notifySuccess(`Tag “${v.name.toLowerCase()}” saved`);
            } else {
              await tagsApi.create(v);
              notifySuccess(`Tag “${v.name.toLowerCase()}” created`);
            }
            await invalidate();
            close();
          }}
        />
      )}
    </>
  );
}
