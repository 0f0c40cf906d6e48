// Sharing of a template or a policy (supplement §12.6): "Share" makes a read-only link anyone can open without
// signing in (the share id travels in the link and, from the shared page, in the X-User-Share-ID header); "Stop
// sharing" deletes the share, so the link stops working (a later share gets a new id).
import { Button, Group, Paper, Stack, Text, TextInput, Title } from "@mantine/core";
import { useState } from "react";
import { CopyButton } from "./copy-button";
import { notifyError, notifySuccess } from "./notify";

/** The in-app URL of a shared view: `/shared/<kind>/<id>?share=<shareId>`, absolute for copying. */
export const shareLink = (kind: "certificate-templates" | "csp", id: string, shareId: string) =>
  `${window.location.origin}/shared/${kind}/${encodeURIComponent(id)}?share=${encodeURIComponent(shareId)}`;

export function SharePanel({
  shareId,
  link,
  noun,
  what,
  onShare,
  onUnshare,
}: {
  /** The live share's id, or undefined when not shared. */
  shareId: string | undefined;
  link: (shareId: string) => string;
  noun: string;
  /** What someone with the link can do, e.g. "view this template and generate certificates from it". */
  what: string;
  onShare: () => Promise<unknown>;
  onUnshare: () => Promise<unknown>;
}) {
  const [busy, setBusy] = useState(false);
  const run = async (f: () => Promise<unknown>, done: string, failed: string) => {
    setBusy(true);
    try {
      await f();
      notifySuccess(done);
    } catch (err) {
      notifyError(err, failed);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby="share-panel-title">
      <Stack gap="xs">
        <Title order={2} size="h5" id="share-panel-title">
          Sharing
        </Title>
        {shareId ? (
          <>
            <Text size="sm">Anyone with this link can {what}, without signing in. Tags are not shown to them.</Text>
            <Group gap="xs" align="flex-end" wrap="nowrap">
              <TextInput
                label="Share link"
                readOnly
                value={link(shareId)}
                style={{ flex: 1, minWidth: 0 }}
                onFocus={(e) => e.currentTarget.select()}
                styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)", fontSize: 12 } }}
              />
              <CopyButton value={link(shareId)} label="Copy link" what="Link" size="sm" />
            </Group>
            <Group>
              <Button
                variant="light"
                color="red"
                size="xs"
                loading={busy}
                onClick={() => run(onUnshare, `The ${noun} is no longer shared`, "Could not stop sharing")}
              >
                Stop sharing
              </Button>
            </Group>
          </>
        ) : (
          <>
            <Text size="sm" c="dimmed">
              Not shared. Sharing makes a link anyone can open to {what}, without signing in; you can stop sharing at any time.
            </Text>
            <Group>
              <Button
                variant="default"
                size="xs"
                loading={busy}
                onClick={() => run(onShare, `Share link created for the ${noun}`, "Could not share")}
              >
                Share
              </Button>
            </Group>
          </>
        )}
      </Stack>
    </Paper>
  );
}
