// Secrets: encrypted values scripts can read (supplement §7). The list shows metadata only; values are write-only.
import { Anchor, Code } from "@mantine/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { DataTableColumn } from "mantine-datatable";
import { confirmDelete } from "../../components/confirm";
import { DialogStatus, useDialogItem } from "../../components/list-page/dialog-item";
import { ListPage } from "../../components/list-page/list-page";
import { useListState } from "../../components/list-page/use-list-state";
import { notifyError, notifySuccess } from "../../components/notify";
import { TagBadges } from "../../components/tags/tag-badges";
import { Time } from "../../components/time";
import { SecretForm } from "./secret-form";
import { secretsApi, type Secret } from "./secrets-api";
import { HelpLink } from "../help/help-link";

const SORTABLE = ["name", "createdAt", "updatedAt"] as const;
const KEY = "secrets";

export function SecretsPage() {
  const [state, update] = useListState(SORTABLE);
  const qc = useQueryClient();
  const { query: current, item } = useDialogItem(KEY, state.dialog, secretsApi.get);
  const close = () => update({ dialog: null });
  const remove = useMutation({
    mutationFn: (s: Secret) => secretsApi.remove(s.id),
    onSuccess: (_r, s) => {
      notifySuccess(`Secret ${s.name} deleted`);
      void qc.invalidateQueries({ queryKey: [KEY] });
    },
    onError: (err) => notifyError(err, "Could not delete the secret"),
  });

  const columns: DataTableColumn<Secret>[] = [
    {
      accessor: "name",
      title: "Name",
      sortable: true,
      render: (s) => (
        <Anchor component="button" type="button" className="mono" size="sm" onClick={() => update({ dialog: { mode: "edit", id: s.id } })}>
          {s.name}
        </Anchor>
      ),
    },
    { accessor: "tags", title: "Tags", render: (s) => <TagBadges tags={s.tags} /> },
    { accessor: "createdAt", title: "Created", sortable: true, render: (s) => <Time value={s.createdAt} />, visibleMediaQuery: "(min-width: 48em)" },
    { accessor: "updatedAt", title: "Updated", sortable: true, render: (s) => <Time value={s.updatedAt} /> },
  ];

  const dialog = state.dialog;
  return (
    <>
      <ListPage<Secret>
        help={<HelpLink topic="data" section="tags-secrets-scripts-settings" />}
        title="Secrets"
        description={
          <>
            Encrypted values (API tokens, passwords) that responder and tracker scripts read as <Code>context.secrets.NAME</Code>. A value is never
            shown again after it is saved; you can only replace it.
          </>
        }
        resource={KEY}
        noun="secret"
        fetchPage={secretsApi.list}
        columns={columns}
        taggable
        state={state}
        update={update}
        empty={{
          title: "No secrets yet",
          body: "Keep tokens and passwords out of your scripts: store them here, encrypted at rest, and give a responder or tracker access to the ones it needs.",
        }}
        onDelete={(s) =>
          confirmDelete({
            what: "secret",
            name: s.name,
            consequence: "Scripts that read it get undefined from now on. This cannot be undone.",
            onConfirm: () => remove.mutateAsync(s),
          })
        }
      />
      <DialogStatus query={current} dialog={dialog} noun="secret" onClose={close} />
      {dialog && (dialog.mode === "create" || item) && (
        <SecretForm
          key={`${dialog.mode}-${item?.id ?? "new"}`}
          mode={dialog.mode}
          initial={item}
          onClose={close}
          onSubmit={async (v) => {
            if (dialog.mode === "edit") {
              await secretsApi.update(item!.id, { tagIds: v.tagIds, ...(v.value !== undefined ? { value: v.value } : {}) });
              notifySuccess(v.value !== undefined ? `Secret ${v.name} saved with its new value` : `Secret ${v.name} saved`);
            } else {
              await secretsApi.create({ name: v.name, value: v.value ?? "", tagIds: v.tagIds });
              notifySuccess(`Secret ${v.name} created`);
            }
            await qc.invalidateQueries({ queryKey: [KEY] });
            close();
          }}
        />
      )}
    </>
  );
}
