// A shared content security policy (supplement §12.6), opened from /shared/csp/<id>?share=<shareId> without signing
// in: its directives read-only, and the shared operation, serialize, to copy it as a header or <meta> tag.
import { Alert, Grid, Stack, Text } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useParams, useSearch } from "wouter";
import { ApiError } from "../../api/client";
import { SharedLayout } from "../../components/shared-layout";
import { PageHeader } from "../../components/page-header";
import { ErrorState, LoadingState } from "../../components/states";
import { cspApi } from "./csp-api";
import { DirectiveList } from "./directive-list";
import { SerializePanel } from "./serialize-panel";

export function SharedPolicyPage() {
  const { id } = useParams<{ id: string }>();
  const shareId = new URLSearchParams(useSearch()).get("share") ?? "";
  const q = useQuery({ queryKey: ["shared-policy", id, shareId], queryFn: () => cspApi.get(id, shareId), retry: false });
  let body: React.ReactNode;
  if (q.isPending) body = <LoadingState />;
  else if (q.isError)
    body =
      q.error instanceof ApiError && q.error.status === 404 ? (
        <Alert color="orange" title="This shared policy is not available" role="alert">
          The link is wrong, or its owner stopped sharing the policy or deleted it.
        </Alert>
      ) : (
        <ErrorState error={q.error} onRetry={() => q.refetch()} />
      );
  else {
    const p = q.data.policy;
    body = (
      <Stack gap="md">
        <PageHeader title={`Content security policy “${p.name}”`} description="Shared with you read-only. Copy it as a header or a <meta> tag." />
        <Grid gap="md">
          <Grid.Col span={{ base: 12, md: 7 }}>
            <DirectiveList
              readOnly
              directives={p.directives.map((d, i) => ({ key: i, name: d.name, value: d.value ?? [] }))}
              onChange={() => {}}
              selected={null}
              focusRequest={{ name: null, n: 0 }}
              onSelect={() => {}}
              rowErrors={{}}
            />
          </Grid.Col>
          <Grid.Col span={{ base: 12, md: 5 }}>
            <Stack gap="md">
              <SerializePanel policyId={p.id} updatedAt={p.updatedAt} shareId={shareId} />
              <Text size="xs" c="dimmed">
                The policy's owner can change or stop sharing it at any time.
              </Text>
            </Stack>
          </Grid.Col>
        </Grid>
      </Stack>
    );
  }
  return <SharedLayout>{body}</SharedLayout>;
}
