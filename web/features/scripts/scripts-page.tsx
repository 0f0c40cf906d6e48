// Scripts: a library of JavaScript snippets for responders and trackers (supplement §8). Editing happens on its
// own page (/scripts/<id>) where the editor has room.
import { Anchor, Text } from "@mantine/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { DataTableColumn } from "mantine-datatable";
import { Link, useLocation } from "wouter";
import { confirmDelete } from "../../components/confirm";
import { ListPage } from "../../components/list-page/list-page";
import { useListState } from "../../components/list-page/use-list-state";
import { notifyError, notifySuccess } from "../../components/notify";
import { TagBadges } from "../../components/tags/tag-badges";
import { Time } from "../../components/time";
import { scriptsApi, type ScriptListItem } from "./scripts-api";
import { MAX_SCRIPT_BYTES, scriptTypeLabel } from "./script-types";
import { HelpLink } from "../help/help-link";

const SORTABLE = ["name", "scriptType", "createdAt", "updatedAt"] as const;
export const SCRIPTS_KEY = "scripts";

export function ScriptsPage() {
  const [state, update] = useListState(SORTABLE);
  const [, navigate] = useLocation();
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: (s: ScriptListItem) => scriptsApi.remove(s.id),
    onSuccess: (_r, s) => {
      notifySuccess(`Script “${s.name}” deleted`);
      void qc.invalidateQueries({ queryKey: [SCRIPTS_KEY] });
    },
    onError: (err) => notifyError(err, "Could not delete the script"),
  });

  const columns: DataTableColumn<ScriptListItem>[] = [
    {
      accessor: "name",
      title: "Name",
      sortable: true,
      render: (s) => (
        <Anchor component={Link} href={`/scripts/${s.id}`} size="sm">
          {s.name}
        </Anchor>
      ),
    },
    { accessor: "scriptType", title: "Type", sortable: true, render: (s) => <Text size="sm">{scriptTypeLabel(s.scriptType)}</Text> },
    {
      accessor: "size",
      title: "Size",
      textAlign: "right",
      visibleMediaQuery: "(min-width: 48em)",
      render: (s) => (
        <Text size="sm" className="nowrap" title={`${Number(s.size).toLocaleString()} of ${MAX_SCRIPT_BYTES.toLocaleString()} bytes`}>
          {(Number(s.size) / 1024).toFixed(1)} KiB
        </Text>
      ),
    },
    { accessor: "tags", title: "Tags", render: (s) => <TagBadges tags={s.tags} />, visibleMediaQuery: "(min-width: 36em)" },
    { accessor: "updatedAt", title: "Updated", sortable: true, render: (s) => <Time value={s.updatedAt} /> },
  ];

  return (
    <ListPage<ScriptListItem>
      help={<HelpLink topic="sandbox" />}
      title="Scripts"
      description="Reusable JavaScript for responders and trackers. A responder or tracker keeps its own copy of a script, so editing one here changes nothing that already uses it."
      resource={SCRIPTS_KEY}
      noun="script"
      fetchPage={scriptsApi.list}
      columns={columns}
      taggable
      state={state}
      update={update}
      onCreate={() => navigate("/scripts/new")}
      onEdit={(s) => navigate(`/scripts/${s.id}`)}
      onDuplicate={(s) => navigate(`/scripts/new?from=${s.id}`)}
      empty={{
        title: "No scripts yet",
        body: "Keep the snippets you use in responders and trackers here: response builders, request signers, extractors. Each runs in a sandbox with time and memory limits.",
      }}
      onDelete={(s) =>
        confirmDelete({
          what: "script",
          name: s.name,
          consequence: "Responders and trackers that copied it keep their copy. This cannot be undone.",
          onConfirm: () => remove.mutateAsync(s),
        })
      }
    />
  );
}
