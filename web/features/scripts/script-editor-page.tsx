// Create or edit a script on its own page: /scripts/new (?from=<id> duplicates), /scripts/<id>. The type is fixed
// once created (supplement §8); the size counter follows the 51,200-byte limit as you type, syntax errors are marked
// as you type and a save of a script that does not compile asks first (§27).
import { Alert, Anchor, Group, Select, Stack, Text, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { Link, useParams, useSearch } from "wouter";
import { CodeEditor } from "../../components/code-editor/code-editor";
import { confirmDeleteAndLeave } from "../../components/confirm";
import { EditorActions } from "../../components/editor-actions";
import { confirmScriptsCompile, notifyScriptWarnings } from "../../components/script-check";
import { applyApiError } from "../../components/form";
import { utf8Length } from "../../components/format";
import { notifyError, notifySuccess } from "../../components/notify";
import { PageHeader } from "../../components/page-header";
import { ErrorState, LoadingState } from "../../components/states";
import { MAX_TAGS_PER_ENTITY, TagSelect } from "../../components/tags/tag-select";
import { navigateSaved, useUnsavedGuard } from "../../components/use-unsaved-guard";
import { scriptsApi, type Script, type ScriptType } from "./scripts-api";
import { MAX_SCRIPT_BYTES, MAX_SCRIPT_NAME, SCRIPT_TYPES } from "./script-types";
import { SCRIPTS_KEY } from "./scripts-page";
import { HelpLink } from "../help/help-link";

/** Page extractors run in the Chromium page; every other script in QuickJS (universal ones mostly do). */
const runtimeOf = (type: ScriptType) => (type === "page_extractor" ? "chromium" : "quickjs");

export function ScriptEditorPage() {
  const params = useParams<{ id?: string }>();
  const from = new URLSearchParams(useSearch()).get("from");
  const sourceId = params.id ?? from ?? undefined;
  const source = useQuery({
    queryKey: [SCRIPTS_KEY, "one", sourceId],
    queryFn: () => scriptsApi.get(sourceId!),
    enabled: sourceId !== undefined,
    retry: false,
    staleTime: 0,
  });
  if (sourceId && source.isPending) return <LoadingState />;
  if (sourceId && source.isError)
    return (
      <ErrorState
        error={source.error}
        title="Could not open the script"
        onRetry={() => source.refetch()}
        back={{ href: "/scripts", label: "Back to scripts" }}
      />
    );
  return (
    <ScriptEditor
      key={`${params.id ?? "new"}-${from ?? ""}`}
      existing={params.id ? source.data : undefined}
      copyOf={params.id ? undefined : source.data}
    />
  );
}

function ScriptEditor({ existing, copyOf }: { existing?: Script; copyOf?: Script }) {
  const qc = useQueryClient();
  const base = existing ?? copyOf;
  const form = useForm({
    mode: "controlled",
    initialValues: {
      name: existing ? existing.name : copyOf ? `${copyOf.name} (copy)`.slice(0, MAX_SCRIPT_NAME) : "",
      scriptType: (base?.scriptType ?? "responder") as ScriptType,
      content: base?.content ?? SCRIPT_TYPES[0]!.starter,
      tagIds: base?.tagIds ?? ([] as string[]),
    },
    validate: {
      name: (v) => (v.trim() === "" ? "Enter a name" : v.trim().length > MAX_SCRIPT_NAME ? `At most ${MAX_SCRIPT_NAME} characters` : null),
      content: (v) =>
        v.trim() === ""
          ? "The script is empty"
          : utf8Length(v) > MAX_SCRIPT_BYTES
            ? `Over the ${MAX_SCRIPT_BYTES.toLocaleString()}-byte limit`
            : null,
    },
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const dirty = form.isDirty();
  useUnsavedGuard(dirty);
  const values = form.getValues();
  const size = utf8Length(values.content);
  const type = SCRIPT_TYPES.find((t) => t.value === values.scriptType);

  // A new script's starter follows the chosen type until the user edits it.
  useEffect(() => {
    if (existing || copyOf) return;
    const starters = SCRIPT_TYPES.map((t) => t.starter);
    if (starters.includes(form.getValues().content)) form.setFieldValue("content", type?.starter ?? "");
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [values.scriptType]);

  const submit = form.onSubmit(async (v) => {
    if (!(await confirmScriptsCompile([{ label: "Source", source: v.content, runtime: runtimeOf(v.scriptType) }]))) return;
    setBusy(true);
    setError(null);
    try {
      if (existing) {
        const saved = await scriptsApi.update(existing.id, { name: v.name.trim(), content: v.content, tagIds: v.tagIds });
        form.setInitialValues({ ...v, name: saved.name });
        form.reset();
        notifySuccess(`Script “${saved.name}” saved`);
        notifyScriptWarnings(saved.warnings);
      } else {
        const created = await scriptsApi.create({ name: v.name.trim(), scriptType: v.scriptType, content: v.content, tagIds: v.tagIds });
        form.resetDirty();
        notifySuccess(`Script “${created.name}” created`);
        notifyScriptWarnings(created.warnings);
        await qc.invalidateQueries({ queryKey: [SCRIPTS_KEY] });
        navigateSaved(`/scripts/${created.id}`, { replace: true });
        return;
      }
      await qc.invalidateQueries({ queryKey: [SCRIPTS_KEY] });
    } catch (err) {
      setError(applyApiError(form, err));
    } finally {
      setBusy(false);
    }
  });

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="md" maw={1100}>
        <Anchor component={Link} href="/scripts" size="sm">
          ← All scripts
        </Anchor>
        <PageHeader
          title={existing ? `Script “${existing.name}”` : copyOf ? "Duplicate script" : "New script"}
          description={type?.hint}
          help={<HelpLink topic="sandbox" />}
        />
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
        <Group align="flex-start" grow wrap="wrap" preventGrowOverflow={false}>
          <TextInput label="Name" required miw={240} {...form.getInputProps("name")} />
          <Select
            label="Type"
            miw={240}
            data={SCRIPT_TYPES.map((t) => ({ value: t.value, label: t.label }))}
            allowDeselect={false}
            disabled={existing !== undefined}
            description={existing ? "A script's type cannot change" : undefined}
            {...form.getInputProps("scriptType")}
          />
        </Group>
        <TagSelect max={MAX_TAGS_PER_ENTITY} value={values.tagIds} onChange={(ids) => form.setFieldValue("tagIds", ids)} />
        <CodeEditor
          label="Source"
          lint={runtimeOf(values.scriptType)}
          value={values.content}
          onChange={(c) => form.setFieldValue("content", c)}
          error={form.errors.content}
          description={
            <Text span size="xs" c={size > MAX_SCRIPT_BYTES ? "red" : "dimmed"} aria-live="polite" data-testid="size-counter">
              {size.toLocaleString()} / {MAX_SCRIPT_BYTES.toLocaleString()} bytes
            </Text>
          }
        />
        <EditorActions
          createLabel="Create script"
          existing={!!existing}
          busy={busy}
          dirty={dirty}
          backHref="/scripts"
          saveDisabled={size > MAX_SCRIPT_BYTES}
          onDelete={() =>
            existing &&
            confirmDeleteAndLeave({
              what: "script",
              name: existing.name,
              consequence: "Responders and trackers that copied it keep their copy. This cannot be undone.",
              remove: () => scriptsApi.remove(existing.id),
              beforeLeave: form.resetDirty,
              listPath: "/scripts",
              queryClient: qc,
              queryKey: SCRIPTS_KEY,
              id: existing.id,
            })
          }
        />
      </Stack>
    </form>
  );
}
