// The frame of both tracker editors: /trackers/<kind>/new (?from=<id> duplicates) and /trackers/<kind>/<id>/edit.
// It loads the tracker, owns the form (@mantine/form; leaving with unsaved changes asks first), saves (create or
// update; an API error that names a field goes under that field; a script that does not compile asks first and the
// server's syntax warnings are shown after the save), and lays out the kind's sections with the
// kind's tools (test, debug) in the header. The kind supplies its values, its target body and its sections.
import { Alert, Anchor, Button, Group, Stack } from "@mantine/core";
import { useForm, type UseFormReturnType } from "@mantine/form";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { Link, useParams, useSearch } from "wouter";
import { errorMessage } from "../../api/client";
import { trackers as trackerRules } from "../../api/rules.gen";
import { notifySuccess } from "../../components/notify";
import { confirmScriptsCompile, notifyScriptWarnings, type EditorScript } from "../../components/script-check";
import { PageHeader } from "../../components/page-header";
import { ErrorState, LoadingState } from "../../components/states";
import { navigateSaved, useUnsavedGuard } from "../../components/use-unsaved-guard";
import { errorFieldPath, type CommonValues } from "./editor-values";
import type { AnyTracker, TrackerKind } from "./kind";
import { BasicsFields, RunFields, Section } from "./editor-fields";
import { ScheduleField } from "./schedule-field";
import { invalidateKind, trackerKeys } from "./trackers-api";
import { HelpLink } from "../help/help-link";

export interface EditorSpec<T extends AnyTracker, V extends CommonValues, B> {
  kind: TrackerKind<T>;
  /** The kind's typed create and update (update sends every member, like create). */
  save: {
    create: (body: B) => Promise<{ id: string; warnings?: string[] }>;
    update: (id: string, body: B) => Promise<{ warnings?: string[] } | undefined | void>;
  };
  /** The scripts the form holds: checked before a save (one that does not compile asks first, §27). */
  scripts: (v: V) => EditorScript[];
  /** The create/update body: commonBody(v) plus the kind's target. */
  body: (v: V) => B;
  /** Values for a new tracker (no source), a copy or an existing tracker. */
  initialValues: (source: T | undefined, copy: boolean) => V;
  /** The kind's client-side checks (the common ones are built in). */
  validate: Partial<Record<keyof V, (value: never, values: V) => ReactNode>>;
  /** The kind's API field paths ([n] written .n) → form fields. */
  errorFields: [RegExp, string | ((m: RegExpExecArray) => string)][];
  timeout: { min: number; max: number; help: string };
  /** The kind's sections (target, scripts), between the basics and the schedule. */
  sections: (form: UseFormReturnType<V>) => ReactNode;
  /** Header tools (test, debug) working on the unsaved values. */
  tools: (form: UseFormReturnType<V>) => ReactNode;
}

export function TrackerEditorPage<T extends AnyTracker, V extends CommonValues, B>(spec: EditorSpec<T, V, B>) {
  const params = useParams<{ id?: string }>();
  const from = new URLSearchParams(useSearch()).get("from");
  const sourceId = params.id ?? from ?? undefined;
  const source = useQuery({
    queryKey: trackerKeys.one(spec.kind, sourceId ?? ""),
    queryFn: () => spec.kind.api.get(sourceId!),
    enabled: sourceId !== undefined,
    retry: false,
    staleTime: 0,
  });
  if (sourceId && source.isPending) return <LoadingState />;
  if (sourceId && source.isError)
    return (
      <ErrorState
        error={source.error}
        title={`Could not open the ${spec.kind.noun}`}
        onRetry={() => source.refetch()}
        back={{ href: spec.kind.path, label: `Back to ${spec.kind.title}` }}
      />
    );
  return (
    <Editor
      key={`${params.id ?? "new"}-${from ?? ""}`}
      spec={spec}
      existing={params.id ? source.data : undefined}
      copyOf={params.id ? undefined : source.data}
    />
  );
}

function Editor<T extends AnyTracker, V extends CommonValues, B>({
  spec,
  existing,
  copyOf,
}: {
  spec: EditorSpec<T, V, B>;
  existing?: T;
  copyOf?: T;
}) {
  const { kind } = spec;
  const qc = useQueryClient();
  const form = useForm<V>({
    mode: "controlled",
    initialValues: spec.initialValues(existing ?? copyOf, copyOf !== undefined),
    validate: {
      name: (v: string) =>
        v.trim() === "" ? "Enter a name" : v.trim().length > trackerRules.NAME_MAX ? `At most ${trackerRules.NAME_MAX} characters` : null,
      timeoutSec: (v: number) =>
        Number.isInteger(v) && v >= spec.timeout.min && v <= spec.timeout.max ? null : `From ${spec.timeout.min} to ${spec.timeout.max} seconds`,
      revisions: (v: number) => (Number.isInteger(v) && v >= 1 ? null : "At least 1"),
      ...spec.validate,
    } as never,
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const dirty = form.isDirty();
  useUnsavedGuard(dirty);
  const back = existing ? `${kind.path}/${existing.id}` : kind.path;

  const submit = form.onSubmit(
    async (v) => {
      if (!(await confirmScriptsCompile(spec.scripts(v)))) return;
      setBusy(true);
      setError(null);
      try {
        const body = spec.body(v);
        let id: string;
        if (existing) {
          const updated = await spec.save.update(existing.id, body);
          id = existing.id;
          notifySuccess(`“${v.name.trim()}” saved`);
          notifyScriptWarnings(updated ? updated.warnings : undefined);
        } else {
          const created = await spec.save.create(body);
          id = created.id;
          notifySuccess(`${kind.noun.charAt(0).toUpperCase()}${kind.noun.slice(1)} “${v.name.trim()}” created`);
          notifyScriptWarnings(created.warnings);
        }
        form.resetDirty();
        await invalidateKind(qc, kind);
        navigateSaved(`${kind.path}/${id}`, { replace: !existing });
      } catch (err) {
        const f = errorFieldPath(errorMessage(err), spec.errorFields);
        if (f && f.field.split(".")[0]! in form.getValues()) {
          form.setFieldError(f.field as never, f.message);
          setError("The API refused a field; see the message under it.");
        } else setError(errorMessage(err));
      } finally {
        setBusy(false);
      }
    },
    () => setError("Some fields need attention; see the messages under them."),
  );
  const title = existing ? `Edit “${existing.name}”` : copyOf ? `Duplicate “${copyOf.name}”` : `New ${kind.noun}`;
  const anyForm = form as unknown as UseFormReturnType<CommonValues & Record<string, unknown>>;

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="md" maw={1100}>
        <Anchor component={Link} href={back} size="sm">
          ← {existing ? existing.name : `All ${kind.noun}s`}
        </Anchor>
        <PageHeader
          title={title}
          description="Test and debug work on what is in the form, saved or not; nothing they do is stored."
          help={<HelpLink topic={spec.kind.kind === "api" ? "api-trackers" : "page-trackers"} />}
          actions={spec.tools(form)}
        />
        {error && (
          <Alert color="red" role="alert">
            {error}
          </Alert>
        )}
        <BasicsFields form={anyForm} noun={kind.noun} />
        {spec.sections(form)}
        <Section title="Schedule" description="All times are UTC.">
          <ScheduleField
            value={form.getValues().schedule}
            onChange={(s) => form.setFieldValue("schedule", s as never)}
            error={form.errors["schedule.cron"]}
            retryError={form.errors["schedule.retryMinutes"]}
          />
        </Section>
        <RunFields form={anyForm} timeout={spec.timeout} timeoutHelp={spec.timeout.help} />
        <Group gap="xs">
          <Button type="submit" loading={busy}>
            {existing ? "Save" : `Create ${kind.noun}`}
          </Button>
          <Button variant="default" component={Link} href={back}>
            {dirty ? "Cancel" : "Close"}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
