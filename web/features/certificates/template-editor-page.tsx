// Create or edit a certificate template on its own page: /certificates/templates/new (?from=<id> duplicates),
// /certificates/templates/<id> (?generate=1 opens the generate dialog, so the list's "Generate…" is a link). Beside
// the form: generate and sharing, which work on the saved template.
import { Alert, Anchor, Button, Grid, Group, Paper, Stack, Text, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams, useSearch } from "wouter";
import { certificates as certRules } from "../../api/rules.gen";
import type { TemplateGetResponse } from "../../api/types";
import { confirmDeleteAndLeave } from "../../components/confirm";
import { EditorActions } from "../../components/editor-actions";
import { applyApiError } from "../../components/form";
import { notifyError, notifySuccess } from "../../components/notify";
import { PageHeader } from "../../components/page-header";
import { SharePanel, shareLink } from "../../components/share-panel";
import { ErrorState, LoadingState } from "../../components/states";
import { MAX_TAGS_PER_ENTITY, TagSelect } from "../../components/tags/tag-select";
import { Time } from "../../components/time";
import { useSearchParam } from "../../components/use-search-param";
import { navigateSaved, useUnsavedGuard } from "../../components/use-unsaved-guard";
import { templatesApi, TEMPLATES_KEY } from "./certificates-api";
import { GenerateDialog } from "./generate-dialog";
import { ExtensionFields, KeyFields, SubjectFields, ValidityFields } from "./template-fields";
import { API_FIELD_MAP, defaultAttributes, takeSanDraft, templateValidation, toAttributes, toFormValues } from "./template-model";
import { HelpLink } from "../help/help-link";

export function TemplateEditorPage() {
  const params = useParams<{ id?: string }>();
  const from = new URLSearchParams(useSearch()).get("from");
  const sourceId = params.id ?? from ?? undefined;
  const source = useQuery({
    queryKey: [TEMPLATES_KEY, "one", sourceId],
    queryFn: () => templatesApi.get(sourceId!),
    enabled: sourceId !== undefined,
    retry: false,
    staleTime: 0,
  });
  if (sourceId && source.isPending) return <LoadingState />;
  if (sourceId && source.isError)
    return (
      <ErrorState
        error={source.error}
        title="Could not open the template"
        onRetry={() => source.refetch()}
        back={{ href: "/certificates/templates", label: "Back to certificate templates" }}
      />
    );
  return (
    <TemplateEditor
      key={`${params.id ?? "new"}-${from ?? ""}`}
      existing={params.id ? source.data : undefined}
      copyOf={params.id ? undefined : source.data}
    />
  );
}

function TemplateEditor({ existing, copyOf }: { existing?: TemplateGetResponse; copyOf?: TemplateGetResponse }) {
  const qc = useQueryClient();
  const [generateParam, setGenerateParam] = useSearchParam("generate");
  const base = existing?.template ?? copyOf?.template;
  const form = useForm({
    mode: "controlled",
    initialValues: toFormValues(
      existing ? existing.template.name : copyOf ? `${copyOf.template.name} (copy)`.slice(0, certRules.NAME_MAX) : "",
      base?.tagIds ?? [],
      base?.attributes ?? defaultAttributes(),
    ),
    validate: templateValidation,
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const dirty = form.isDirty();
  useUnsavedGuard(dirty);
  const generating = existing !== undefined && generateParam === "1";
  const setGenerating = (open: boolean) => setGenerateParam(open ? "1" : null);

  const submit = form.onSubmit(async (v) => {
    setBusy(true);
    setError(null);
    try {
      const attributes = toAttributes(v);
      if (existing) {
        await templatesApi.update(existing.template.id, { templateName: v.name.trim(), attributes, tagIds: v.tagIds });
        form.setInitialValues(v);
        form.reset();
        notifySuccess(`Template “${v.name.trim()}” saved`);
        await qc.invalidateQueries({ queryKey: [TEMPLATES_KEY] });
      } else {
        const created = await templatesApi.create({ templateName: v.name.trim(), attributes, tagIds: v.tagIds });
        form.resetDirty();
        notifySuccess(`Template “${created.name}” created`);
        await qc.invalidateQueries({ queryKey: [TEMPLATES_KEY] });
        navigateSaved(`/certificates/templates/${created.id}`, { replace: true });
      }
    } catch (err) {
      setError(applyApiError(form, err, API_FIELD_MAP));
    } finally {
      setBusy(false);
    }
  });

  const refresh = () => qc.invalidateQueries({ queryKey: [TEMPLATES_KEY, "one", existing?.template.id] });
  const remove = () =>
    confirmDeleteAndLeave({
      what: "template",
      name: existing!.template.name,
      consequence: existing!.userShare
        ? "Its share link stops working. Certificates already generated are not affected. This cannot be undone."
        : "Certificates already generated are not affected. This cannot be undone.",
      remove: () => templatesApi.remove(existing!.template.id),
      beforeLeave: form.resetDirty,
      listPath: "/certificates/templates",
      queryClient: qc,
      queryKey: TEMPLATES_KEY,
      id: existing!.template.id,
    });

  return (
    <Stack gap="md" maw={1200}>
      <Anchor component={Link} href="/certificates/templates" size="sm">
        ← All certificate templates
      </Anchor>
      <PageHeader
        title={existing ? `Template “${existing.template.name}”` : copyOf ? "Duplicate template" : "New certificate template"}
        help={<HelpLink topic="certificates" />}
        description="A recipe for self-signed certificates: the subject, key, validity and extensions. Save it, then generate certificates from it as often as you need."
        actions={
          existing && (
            <Stack gap={2} align="flex-end">
              <Button onClick={() => setGenerating(true)} disabled={dirty}>
                Generate…
              </Button>
              {dirty && (
                <Text size="xs" c="dimmed">
                  Save your changes first
                </Text>
              )}
            </Stack>
          )
        }
      />
      <Grid gap="md">
        <Grid.Col span={{ base: 12, lg: 8 }}>
          <form
            onSubmit={(e) => {
              // Names still typed in the SAN box are taken, not dropped; an invalid one stops the save (its validation).
              form.setValues(takeSanDraft(form.getValues()));
              submit(e);
            }}
            noValidate
          >
            <Stack gap="md">
              {error && (
                <Alert color="red" role="alert">
                  {error}
                </Alert>
              )}
              <Group grow align="flex-start" wrap="wrap" preventGrowOverflow={false}>
                <TextInput label="Template name" required miw={240} {...form.getInputProps("name")} />
                <TagSelect
                  max={MAX_TAGS_PER_ENTITY}
                  miw={240}
                  value={form.getValues().tagIds}
                  onChange={(ids) => form.setFieldValue("tagIds", ids)}
                />
              </Group>
              <SubjectFields form={form} />
              <KeyFields form={form} />
              <ValidityFields form={form} />
              <ExtensionFields form={form} />
              <EditorActions
                createLabel="Create template"
                existing={!!existing}
                busy={busy}
                dirty={dirty}
                backHref="/certificates/templates"
                onDelete={remove}
              />
            </Stack>
          </form>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 4 }}>
          {existing ? (
            <Stack gap="md">
              <SharePanel
                shareId={existing.userShare?.id}
                link={(s) => shareLink("certificate-templates", existing.template.id, s)}
                noun="template"
                what="view this template and generate certificates from it"
                onShare={async () => {
                  await templatesApi.share(existing.template.id);
                  await refresh();
                }}
                onUnshare={async () => {
                  await templatesApi.unshare(existing.template.id);
                  await refresh();
                }}
              />
              <Text size="xs" c="dimmed">
                Created <Time value={existing.template.createdAt} /> · updated <Time value={existing.template.updatedAt} />
              </Text>
            </Stack>
          ) : (
            <Paper withBorder p="md" radius="md">
              <Text size="sm" c="dimmed">
                Once created, you can generate certificates from this template and share it with a read-only link.
              </Text>
            </Paper>
          )}
        </Grid.Col>
      </Grid>
      {generating && existing && (
        <GenerateDialog
          templateId={existing.template.id}
          templateName={existing.template.name}
          attributes={existing.template.attributes}
          onClose={() => setGenerating(false)}
        />
      )}
    </Stack>
  );
}
