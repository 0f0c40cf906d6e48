// Private keys (supplement §12.2): the list, create, edit (name, tags, passphrase) and export dialogs, all in the URL
// (?create=1, ?edit=<id>, ?export=<id>). Key material never appears on screen: exports are downloads.
import { Anchor, Badge, Menu, Text } from "@mantine/core";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { DataTableColumn } from "mantine-datatable";
import { confirmDelete } from "../../../components/confirm";
import { DialogStatus, useDialogItem } from "../../../components/list-page/dialog-item";
import { ListPage } from "../../../components/list-page/list-page";
import { useListState } from "../../../components/list-page/use-list-state";
import { notifyError, notifySuccess } from "../../../components/notify";
import { TagBadges } from "../../../components/tags/tag-badges";
import { Time } from "../../../components/time";
import { useSearchParam } from "../../../components/use-search-param";
import { describeKeyAlgorithm } from "../algorithms";
import { ExportDialog } from "./export-dialog";
import { KeyEditForm } from "./key-edit-form";
import { KeyForm } from "./key-form";
import { keysApi, KEYS_KEY, type PrivateKey } from "./keys-api";
import { HelpLink } from "../../help/help-link";

const SORTABLE = ["name", "createdAt", "updatedAt"] as const;

export function KeysPage() {
  const [state, update] = useListState(SORTABLE);
  const [exportId, setExportId] = useSearchParam("export");
  const qc = useQueryClient();
  const { query: current, item } = useDialogItem(KEYS_KEY, state.dialog, keysApi.get);
  const exporting = useQuery({
    queryKey: [KEYS_KEY, "one", exportId],
    queryFn: () => keysApi.get(exportId!),
    enabled: exportId !== null,
    retry: false,
    staleTime: 0,
  });
  const close = () => update({ dialog: null });
  const remove = useMutation({
    mutationFn: (k: PrivateKey) => keysApi.remove(k.id),
    onSuccess: (_r, k) => {
      notifySuccess(`Private key ${k.name} deleted`);
      void qc.invalidateQueries({ queryKey: [KEYS_KEY] });
    },
    onError: (err) => notifyError(err, "Could not delete the key"),
  });

  const columns: DataTableColumn<PrivateKey>[] = [
    {
      accessor: "name",
      title: "Name",
      sortable: true,
      render: (k) => (
        <Anchor component="button" type="button" size="sm" onClick={() => update({ dialog: { mode: "edit", id: k.id } })}>
          {k.name}
        </Anchor>
      ),
    },
    {
      accessor: "alg",
      title: "Algorithm",
      render: (k) => (
        <Text size="sm" className="nowrap">
          {describeKeyAlgorithm(k.alg)}
        </Text>
      ),
    },
    {
      accessor: "encrypted",
      title: "Passphrase",
      render: (k) =>
        k.encrypted ? (
          <Badge variant="light" color="blue" tt="none">
            Protected
          </Badge>
        ) : (
          <Badge variant="light" color="gray" tt="none">
            None
          </Badge>
        ),
    },
    { accessor: "tags", title: "Tags", render: (k) => <TagBadges tags={k.tags} />, visibleMediaQuery: "(min-width: 36em)" },
    { accessor: "createdAt", title: "Created", sortable: true, render: (k) => <Time value={k.createdAt} />, visibleMediaQuery: "(min-width: 48em)" },
    { accessor: "updatedAt", title: "Updated", sortable: true, render: (k) => <Time value={k.updatedAt} /> },
  ];

  const dialog = state.dialog;
  return (
    <>
      <ListPage<PrivateKey>
        help={<HelpLink topic="certificates" section="private-keys" />}
        title="Private keys"
        description="RSA, ECDSA, Ed25519 and DSA keys made and kept on the server, encrypted at rest, optionally behind your own passphrase. Export one as PEM, PKCS#8 or PKCS#12 when you need it; it is never shown on screen."
        resource={KEYS_KEY}
        noun="key"
        fetchPage={keysApi.list}
        columns={columns}
        taggable
        state={state}
        update={update}
        canDuplicate={false}
        rowActions={(k) => <Menu.Item onClick={() => setExportId(k.id)}>Export…</Menu.Item>}
        empty={{
          title: "No private keys yet",
          body: "Create a key here instead of on a laptop: it is generated on the server, stored encrypted, and exported only as a file when you need it.",
        }}
        onDelete={(k) =>
          confirmDelete({
            what: "private key",
            name: k.name,
            consequence: "The key material is destroyed; files exported before stay valid. This cannot be undone.",
            onConfirm: () => remove.mutateAsync(k),
          })
        }
      />
      <DialogStatus query={current} dialog={dialog} noun="key" onClose={close} />
      {dialog?.mode === "create" && (
        <KeyForm
          onClose={close}
          onSubmit={async (v) => {
            const created = await keysApi.create(v);
            notifySuccess(`Private key ${created.name} created${created.encrypted ? ", protected by your passphrase" : ""}`);
            await qc.invalidateQueries({ queryKey: [KEYS_KEY] });
            close();
          }}
        />
      )}
      {dialog?.mode === "edit" && item && (
        <KeyEditForm
          key={item.id}
          item={item}
          onClose={close}
          onSubmit={async (v) => {
            await keysApi.update(item.id, v);
            const what =
              v.newPassphrase === undefined
                ? "saved"
                : v.newPassphrase === null
                  ? "saved without a passphrase"
                  : item.encrypted
                    ? "saved with its new passphrase"
                    : "saved, now protected by a passphrase";
            notifySuccess(`Private key ${v.keyName} ${what}`);
            await qc.invalidateQueries({ queryKey: [KEYS_KEY] });
            close();
          }}
        />
      )}
      <DialogStatus
        query={exporting}
        dialog={exportId === null ? null : { mode: "edit", id: exportId }}
        noun="key"
        onClose={() => setExportId(null)}
      />
      {exportId !== null && exporting.data && <ExportDialog key={exporting.data.id} item={exporting.data} onClose={() => setExportId(null)} />}
    </>
  );
}
