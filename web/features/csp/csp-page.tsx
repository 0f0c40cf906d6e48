// Content security policies (supplement §13): the list, the full-page editor for create/edit/duplicate, and
// "Import…" (pasted text or a live page's header or <meta>) to start from an existing policy.
import { Anchor, Button, Text } from "@mantine/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { DataTableColumn } from "mantine-datatable";
import { Link, useLocation } from "wouter";
import { confirmDelete } from "../../components/confirm";
import { ListPage } from "../../components/list-page/list-page";
import { useListState } from "../../components/list-page/use-list-state";
import { notifyError, notifySuccess } from "../../components/notify";
import { TagBadges } from "../../components/tags/tag-badges";
import { Time } from "../../components/time";
import { useSearchParam } from "../../components/use-search-param";
import { navigateSaved } from "../../components/use-unsaved-guard";
import { cspApi, CSP_KEY, type Policy } from "./csp-api";
import { ImportDialog } from "./import-dialog";
import { HelpLink } from "../help/help-link";

const SORTABLE = ["name", "createdAt", "updatedAt"] as const;

export function CspPage() {
  const [state, update] = useListState(SORTABLE);
  const [, navigate] = useLocation();
  const [importing, setImporting] = useSearchParam("import");
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: (p: Policy) => cspApi.remove(p.id),
    onSuccess: (_r, p) => {
      notifySuccess(`Policy “${p.name}” deleted`);
      void qc.invalidateQueries({ queryKey: [CSP_KEY] });
    },
    onError: (err) => notifyError(err, "Could not delete the policy"),
  });

  const columns: DataTableColumn<Policy>[] = [
    {
      accessor: "name",
      title: "Name",
      sortable: true,
      render: (p) => (
        <Anchor component={Link} href={`/csp/${p.id}`} size="sm">
          {p.name}
        </Anchor>
      ),
    },
    {
      accessor: "directives",
      title: "Directives",
      render: (p) => (
        <Text size="sm" className="mono" lineClamp={2} style={{ overflowWrap: "anywhere" }} title={p.directives.map((d) => d.name).join(", ")}>
          {p.directives.map((d) => d.name).join(" · ")}
        </Text>
      ),
    },
    { accessor: "tags", title: "Tags", render: (p) => <TagBadges tags={p.tags} />, visibleMediaQuery: "(min-width: 36em)" },
    { accessor: "updatedAt", title: "Updated", sortable: true, render: (p) => <Time value={p.updatedAt} /> },
  ];

  return (
    <>
      <ListPage<Policy>
        help={<HelpLink topic="csp" />}
        title="Content security policies"
        description="Build Content-Security-Policy headers directive by directive, with an evaluator that points at what an attacker could bypass. Import one from text or a live site, copy it as a header or <meta> tag, share it read-only."
        resource={CSP_KEY}
        noun="policy"
        fetchPage={cspApi.list}
        columns={columns}
        taggable
        state={state}
        update={update}
        actions={
          <Button variant="default" onClick={() => setImporting("1")}>
            Import…
          </Button>
        }
        onCreate={() => navigate("/csp/new")}
        onEdit={(p) => navigate(`/csp/${p.id}`)}
        onDuplicate={(p) => navigate(`/csp/new?from=${p.id}`)}
        empty={{
          title: "No policies yet",
          body: "Start a policy from scratch, or import the one a site already sends (its header or <meta> tag) and see what the evaluator finds.",
        }}
        onDelete={(p) =>
          confirmDelete({
            what: "policy",
            name: p.name,
            consequence: "Its share link, if any, stops working. This cannot be undone.",
            onConfirm: () => remove.mutateAsync(p),
          })
        }
      />
      {importing === "1" && (
        <ImportDialog
          onClose={() => setImporting(null)}
          onDone={async ({ id }) => {
            notifySuccess("Policy imported");
            await qc.invalidateQueries({ queryKey: [CSP_KEY] });
            navigateSaved(`/csp/${id}`);
          }}
        />
      )}
    </>
  );
}
