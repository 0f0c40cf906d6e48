// Create or edit a content security policy on its own page: /csp/new (?from=<id> duplicates), /csp/<id>. The
// directive list on the left, the evaluator beside it (updated as you edit), and for a saved policy the serialized
// line to copy and sharing. ?import=1 replaces the directives from pasted text or a live URL.
import { Alert, Anchor, Button, Grid, Group, Stack, Text, TextInput } from "@mantine/core";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { Link, useParams, useSearch } from "wouter";
import { errorField, errorMessage } from "../../api/client";
import { confirmDeleteAndLeave } from "../../components/confirm";
import { EditorActions } from "../../components/editor-actions";
import { notifyError, notifySuccess } from "../../components/notify";
import { PageHeader } from "../../components/page-header";
import { SharePanel, shareLink } from "../../components/share-panel";
import { ErrorState, LoadingState } from "../../components/states";
import { MAX_TAGS_PER_ENTITY, TagSelect } from "../../components/tags/tag-select";
import { useSearchParam } from "../../components/use-search-param";
import { navigateSaved, useUnsavedGuard } from "../../components/use-unsaved-guard";
import { cspApi, CSP_KEY, type PolicyGetResponse } from "./csp-api";
import { DirectiveList, type DraftDirective } from "./directive-list";
import { directiveInfo, listProblem, MAX_POLICY_NAME, policyNameProblem, serializeDirectives, toApiDirectives } from "./directives";
import { EvaluatorPanel } from "./evaluator-panel";
import { ImportDialog } from "./import-dialog";
import { SerializePanel } from "./serialize-panel";
import { useEvaluation } from "./use-evaluation";
import { HelpLink } from "../help/help-link";

export function PolicyEditorPage() {
  const params = useParams<{ id?: string }>();
  const from = new URLSearchParams(useSearch()).get("from");
  const sourceId = params.id ?? from ?? undefined;
  const source = useQuery({
    queryKey: [CSP_KEY, "one", sourceId],
    queryFn: () => cspApi.get(sourceId!),
    enabled: sourceId !== undefined,
    retry: false,
    staleTime: 0,
  });
  if (sourceId && source.isPending) return <LoadingState />;
  if (sourceId && source.isError)
    return (
      <ErrorState
        error={source.error}
        title="Could not open the policy"
        onRetry={() => source.refetch()}
        back={{ href: "/csp", label: "Back to content security policies" }}
      />
    );
  return (
    <PolicyEditor
      key={`${params.id ?? "new"}-${from ?? ""}-${params.id ? source.data?.policy.updatedAt : ""}`}
      existing={params.id ? source.data : undefined}
      copyOf={params.id ? undefined : source.data}
    />
  );
}

let nextKey = 1;
/** A new policy starts from `default-src 'self'`: same-origin only, the usual first step. */
const STARTER = [{ name: "default-src", value: ["'self'"] }];
const drafts = (p: PolicyGetResponse["policy"] | undefined): DraftDirective[] =>
  (p?.directives ?? STARTER).map((d) => ({ key: nextKey++, name: d.name, value: d.value ?? [] }));
const snapshot = (name: string, tagIds: string[], ds: DraftDirective[]) => JSON.stringify([name.trim(), tagIds, ds.map((d) => [d.name, d.value])]);
/** `directives[2].value[0]: …` / `content.value[2]…: …` → the row it names. */
const ROW_ERROR = /^(?:content\.value|directives)\[(\d+)\][^:]*: (.+)$/;

function PolicyEditor({ existing, copyOf }: { existing?: PolicyGetResponse; copyOf?: PolicyGetResponse }) {
  const qc = useQueryClient();
  const base = existing?.policy ?? copyOf?.policy;
  const [name, setName] = useState(existing ? existing.policy.name : copyOf ? `${copyOf.policy.name} (copy)`.slice(0, MAX_POLICY_NAME) : "");
  const [tagIds, setTagIds] = useState<string[]>(base?.tagIds ?? []);
  const [directives, setDirectives] = useState<DraftDirective[]>(() => drafts(base));
  const [initial, setInitial] = useState(() =>
    existing ? snapshot(existing.policy.name, existing.policy.tagIds, drafts(existing.policy)) : snapshot("", [], drafts(undefined)),
  );
  const [selected, setSelected] = useState<string | null>(null);
  // Set only by a finding's click or a newly added directive: that row scrolls into view and focuses its input.
  const [focusRequest, setFocusRequest] = useState<{ name: string | null; n: number }>({ name: null, n: 0 });
  const [rowErrors, setRowErrors] = useState<Record<number, string>>({});
  const [nameError, setNameError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [importing, setImporting] = useSearchParam("import");
  const dirty = snapshot(name, tagIds, directives) !== initial;
  useUnsavedGuard(dirty);

  const serialized = useMemo(() => serializeDirectives(directives), [directives]);
  const evaluation = useEvaluation(serialized, existing && !dirty ? { id: existing.policy.id, updatedAt: existing.policy.updatedAt } : null);
  const present = new Set(directives.map((d) => d.name));
  const select = (directive: string) => {
    const target = present.has(directive)
      ? directive
      : present.has("default-src") && directiveInfo(directive)?.kind === "sources"
        ? "default-src"
        : null;
    if (!target) return;
    setSelected(target);
    setFocusRequest((f) => ({ name: target, n: f.n + 1 }));
  };

  const save = async () => {
    setError(null);
    setNameError(null);
    const problems: Record<number, string> = {};
    directives.forEach((d, i) => {
      const p = listProblem(d.name, d.value);
      if (p) problems[i] = p;
    });
    setRowErrors(problems);
    const nameProblem = policyNameProblem(name);
    if (nameProblem) setNameError(nameProblem);
    if (directives.length === 0) setError("Add at least one directive");
    if (nameProblem || directives.length === 0 || Object.keys(problems).length) return;
    setBusy(true);
    try {
      const value = toApiDirectives(directives);
      if (existing) {
        await cspApi.update(existing.policy.id, { name: name.trim(), directives: value, tagIds });
        setInitial(snapshot(name, tagIds, directives));
        notifySuccess(`Policy “${name.trim()}” saved`);
        navigateSaved(`/csp/${existing.policy.id}`, { replace: true });
        await qc.invalidateQueries({ queryKey: [CSP_KEY] });
      } else {
        const created = await cspApi.create({ name: name.trim(), content: { type: "directives", value }, tagIds });
        notifySuccess(`Policy “${created.name}” created`);
        await qc.invalidateQueries({ queryKey: [CSP_KEY] });
        navigateSaved(`/csp/${created.id}`, { replace: true });
      }
    } catch (err) {
      const field = errorField(err);
      const row = field ? ROW_ERROR.exec(`${field.field}: ${field.message}`) : ROW_ERROR.exec(errorMessage(err));
      if (field?.field === "name") setNameError(field.message);
      else if (row) setRowErrors({ [Number(row[1])]: row[2]! });
      else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  const remove = () =>
    confirmDeleteAndLeave({
      what: "policy",
      name: existing!.policy.name,
      consequence: existing!.userShare ? "Its share link stops working. This cannot be undone." : "This cannot be undone.",
      remove: () => cspApi.remove(existing!.policy.id),
      listPath: "/csp",
      queryClient: qc,
      queryKey: CSP_KEY,
      id: existing!.policy.id,
    });

  return (
    <Stack gap="md" maw={1300}>
      <Anchor component={Link} href="/csp" size="sm">
        ← All policies
      </Anchor>
      <PageHeader
        title={existing ? `Policy “${existing.policy.name}”` : copyOf ? "Duplicate policy" : "New content security policy"}
        help={<HelpLink topic="csp" />}
        description="Build the policy directive by directive; the evaluation beside it updates as you type and points at what to fix."
        actions={
          existing && (
            <Button variant="default" onClick={() => setImporting("1")}>
              Replace from import…
            </Button>
          )
        }
      />
      <Grid gap="md">
        <Grid.Col span={{ base: 12, md: 7 }}>
          <Stack gap="md">
            {error && (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            )}
            <Group grow align="flex-start" wrap="wrap" preventGrowOverflow={false}>
              <TextInput label="Name" required miw={220} value={name} error={nameError} onChange={(e) => setName(e.currentTarget.value)} />
              <TagSelect max={MAX_TAGS_PER_ENTITY} miw={220} value={tagIds} onChange={setTagIds} />
            </Group>
            <DirectiveList
              directives={directives}
              onChange={(next) => {
                setDirectives(next);
                setRowErrors({});
              }}
              selected={selected}
              focusRequest={focusRequest}
              onSelect={(n, focus) => {
                setSelected(n);
                if (focus) setFocusRequest((f) => ({ name: n, n: f.n + 1 }));
              }}
              rowErrors={rowErrors}
            />
            <EditorActions
              createLabel="Create policy"
              existing={!!existing}
              busy={busy}
              dirty={dirty}
              backHref="/csp"
              onSave={save}
              onDelete={remove}
            />
          </Stack>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 5 }}>
          <Stack gap="md">
            <EvaluatorPanel
              findings={evaluation.data}
              loading={evaluation.isFetching}
              error={evaluation.error}
              empty={directives.length === 0}
              present={present}
              onSelect={select}
            />
            {existing ? (
              <>
                <SerializePanel policyId={existing.policy.id} updatedAt={existing.policy.updatedAt} stale={dirty} />
                <SharePanel
                  shareId={existing.userShare?.id}
                  link={(s) => shareLink("csp", existing.policy.id, s)}
                  noun="policy"
                  what="view this policy and copy it as a header or <meta> tag"
                  onShare={async () => {
                    await cspApi.share(existing.policy.id);
                    await qc.invalidateQueries({ queryKey: [CSP_KEY, "one", existing.policy.id] });
                  }}
                  onUnshare={async () => {
                    await cspApi.unshare(existing.policy.id);
                    await qc.invalidateQueries({ queryKey: [CSP_KEY, "one", existing.policy.id] });
                  }}
                />
              </>
            ) : (
              <Text size="sm" c="dimmed">
                Once created, the policy can be copied as a header or a &lt;meta&gt; tag and shared with a read-only link.
              </Text>
            )}
          </Stack>
        </Grid.Col>
      </Grid>
      {importing === "1" && existing && (
        <ImportDialog
          target={{ id: existing.policy.id, name: existing.policy.name }}
          onClose={() => setImporting(null)}
          onDone={async () => {
            notifySuccess(`Policy “${existing.policy.name}” replaced from the import`);
            setImporting(null);
            await qc.invalidateQueries({ queryKey: [CSP_KEY] });
          }}
        />
      )}
    </Stack>
  );
}
