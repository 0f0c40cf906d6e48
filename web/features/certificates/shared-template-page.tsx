// A shared certificate template (supplement §12.6), opened from a share link /shared/certificate-templates/<id>?share=
// <shareId>: no sign-in needed. It shows the template read-only and offers the shared operation, generate. The share
// id goes to the API in X-User-Share-ID; a stopped share or a wrong link answers 404, shown as "not available".
import { Alert, Button, Group, Stack, Text } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { useParams, useSearch } from "wouter";
import { ApiError } from "../../api/client";
import { SharedLayout } from "../../components/shared-layout";
import { PageHeader } from "../../components/page-header";
import { ErrorState, LoadingState } from "../../components/states";
import { templatesApi } from "./certificates-api";
import { GenerateDialog } from "./generate-dialog";
import { TemplateView } from "./template-view";

export function SharedTemplatePage() {
  const { id } = useParams<{ id: string }>();
  const shareId = new URLSearchParams(useSearch()).get("share") ?? "";
  const [generating, setGenerating] = useState(false);
  const q = useQuery({ queryKey: ["shared-template", id, shareId], queryFn: () => templatesApi.get(id, shareId), retry: false });
  let body: React.ReactNode;
  if (q.isPending) body = <LoadingState />;
  else if (q.isError)
    body =
      q.error instanceof ApiError && q.error.status === 404 ? (
        <Alert color="orange" title="This shared template is not available" role="alert">
          The link is wrong, or its owner stopped sharing the template or deleted it.
        </Alert>
      ) : (
        <ErrorState error={q.error} onRetry={() => q.refetch()} />
      );
  else {
    const t = q.data.template;
    body = (
      <Stack gap="md">
        <PageHeader
          title={`Certificate template “${t.name}”`}
          description="Shared with you read-only. Generate a certificate from it: each one gets a fresh key pair, made on the server and downloaded to you only."
          actions={<Button onClick={() => setGenerating(true)}>Generate…</Button>}
        />
        <TemplateView attributes={t.attributes} />
        <Group>
          <Text size="xs" c="dimmed">
            The template's owner can change or stop sharing it at any time.
          </Text>
        </Group>
        {generating && (
          <GenerateDialog templateId={t.id} templateName={t.name} attributes={t.attributes} shareId={shareId} onClose={() => setGenerating(false)} />
        )}
      </Stack>
    );
  }
  return <SharedLayout>{body}</SharedLayout>;
}
