// Certificate templates (supplement §12.3): the list, with the full-page editor for create/edit/duplicate, generate
// from a row, and "Fetch from a site…" to turn a live site's certificate into a template.
import { Anchor, Badge, Button, Group, Menu, Text } from "@mantine/core";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import type { DataTableColumn } from "mantine-datatable";
import { Link, useLocation } from "wouter";
import type { CertificateTemplate } from "../../api/types";
import { confirmDelete } from "../../components/confirm";
import { ListPage } from "../../components/list-page/list-page";
import { useListState } from "../../components/list-page/use-list-state";
import { notifyError, notifySuccess } from "../../components/notify";
import { TagBadges } from "../../components/tags/tag-badges";
import { Time } from "../../components/time";
import { useSearchParam } from "../../components/use-search-param";
import { describeKeyAlgorithm } from "./algorithms";
import { templatesApi, TEMPLATES_KEY } from "./certificates-api";
import { FetchDialog } from "./fetch-dialog";
import { describeValidity, subjectLine } from "./template-model";
import { HelpLink } from "../help/help-link";

const SORTABLE = ["name", "createdAt", "updatedAt"] as const;

export function TemplatesPage() {
  const [state, update] = useListState(SORTABLE);
  const [, navigate] = useLocation();
  const [fetching, setFetching] = useSearchParam("fetch");
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: (t: CertificateTemplate) => templatesApi.remove(t.id),
    onSuccess: (_r, t) => {
      notifySuccess(`Template “${t.name}” deleted`);
      void qc.invalidateQueries({ queryKey: [TEMPLATES_KEY] });
    },
    onError: (err) => notifyError(err, "Could not delete the template"),
  });

  const columns: DataTableColumn<CertificateTemplate>[] = [
    {
      accessor: "name",
      title: "Name",
      sortable: true,
      render: (t) => (
        <Anchor component={Link} href={`/certificates/templates/${t.id}`} size="sm">
          {t.name}
        </Anchor>
      ),
    },
    {
      accessor: "subject",
      title: "Subject",
      render: (t) => (
        <Text size="sm" className="mono" lineClamp={2} style={{ overflowWrap: "anywhere" }}>
          {subjectLine(t.attributes) || (t.attributes.subjectAltNames ?? []).join(", ")}
        </Text>
      ),
    },
    {
      accessor: "key",
      title: "Key",
      visibleMediaQuery: "(min-width: 48em)",
      render: (t) => (
        <Group gap={4} wrap="nowrap">
          <Text size="sm" className="nowrap">
            {describeKeyAlgorithm(t.attributes.keyAlgorithm)}
          </Text>
          {t.attributes.isCa && (
            <Badge size="xs" variant="light" color="grape" tt="none">
              CA
            </Badge>
          )}
        </Group>
      ),
    },
    {
      accessor: "validity",
      title: "Validity",
      visibleMediaQuery: "(min-width: 62em)",
      render: (t) => <Text size="sm">{describeValidity(Number(t.attributes.notValidBefore), Number(t.attributes.notValidAfter))}</Text>,
    },
    { accessor: "tags", title: "Tags", render: (t) => <TagBadges tags={t.tags} />, visibleMediaQuery: "(min-width: 36em)" },
    { accessor: "updatedAt", title: "Updated", sortable: true, render: (t) => <Time value={t.updatedAt} /> },
  ];

  return (
    <>
      <ListPage<CertificateTemplate>
        help={<HelpLink topic="certificates" />}
        title="Certificate templates"
        description="Recipes for self-signed certificates, like mkcert or step-cli but saved: the subject, key, validity and extensions. Generate a certificate (PEM, PKCS#12, DER) from a template whenever you need one, or share it with a read-only link."
        resource={TEMPLATES_KEY}
        noun="template"
        fetchPage={templatesApi.list}
        columns={columns}
        taggable
        state={state}
        update={update}
        actions={
          <Button variant="default" onClick={() => setFetching("1")}>
            Fetch from a site…
          </Button>
        }
        rowActions={(t) => <Menu.Item onClick={() => navigate(`/certificates/templates/${t.id}?generate=1`)}>Generate…</Menu.Item>}
        onCreate={() => navigate("/certificates/templates/new")}
        onEdit={(t) => navigate(`/certificates/templates/${t.id}`)}
        onDuplicate={(t) => navigate(`/certificates/templates/new?from=${t.id}`)}
        empty={{
          title: "No certificate templates yet",
          body: "Describe a certificate once (names, key, validity, usages) and generate fresh ones from it for local HTTPS, tests or mutual TLS. Or fetch a live site's certificate and start from that.",
        }}
        onDelete={(t) =>
          confirmDelete({
            what: "template",
            name: t.name,
            consequence: "Its share link, if any, stops working. Certificates already generated are not affected. This cannot be undone.",
            onConfirm: () => remove.mutateAsync(t),
          })
        }
      />
      {fetching === "1" && <FetchDialog onClose={() => setFetching(null)} />}
    </>
  );
}
