// "Serialize": the saved policy as the exact line to paste, for the chosen delivery (supplement §13.4): the
// enforcing header, the report-only header, or the full <meta> tag (which browsers read without frame-ancestors,
// report-uri, report-to and sandbox, so `_serialize` leaves those out).
import { Alert, Code, Group, Paper, SegmentedControl, Stack, Text, Title } from "@mantine/core";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "../../api/client";
import { CopyButton } from "../../components/copy-button";
import { cspApi, CSP_KEY, type SerializeSource } from "./csp-api";

const SOURCES: { value: SerializeSource; label: string; note: string }[] = [
  { value: "enforcingHeader", label: "Header", note: "Browsers enforce it: violations are blocked (and reported)." },
  {
    value: "reportOnlyHeader",
    label: "Report-only header",
    note: "Browsers only report violations: try a policy without breaking the site. sandbox is left out (not allowed here).",
  },
  {
    value: "meta",
    label: "<meta> tag",
    note: "For pages you cannot set headers for; put it early in <head>. frame-ancestors, report-uri, report-to and sandbox do not work in <meta> and are left out.",
  },
];

const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The exact line: `Content-Security-Policy: …`, `Content-Security-Policy-Report-Only: …` or the `<meta>` tag. */
export function deliveryLine(source: SerializeSource, value: string): string {
  if (source === "meta") return `<meta http-equiv="Content-Security-Policy" content="${escapeAttr(value)}">`;
  return `${source === "reportOnlyHeader" ? "Content-Security-Policy-Report-Only" : "Content-Security-Policy"}: ${value}`;
}

export function SerializePanel({
  policyId,
  updatedAt,
  shareId,
  stale,
}: {
  policyId: string;
  updatedAt: string | number;
  shareId?: string;
  stale?: boolean;
}) {
  const [source, setSource] = useState<SerializeSource>("enforcingHeader");
  const q = useQuery({
    queryKey: [CSP_KEY, "serialize", policyId, source, updatedAt, shareId],
    queryFn: () => cspApi.serialize(policyId, source, shareId),
  });
  const line = q.data !== undefined ? deliveryLine(source, q.data) : "";
  const note = SOURCES.find((s) => s.value === source)!.note;
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby="serialize-title">
      <Stack gap="sm">
        <Title order={2} size="h5" id="serialize-title">
          Serialize
        </Title>
        <SegmentedControl
          aria-label="Delivery"
          value={source}
          onChange={(v) => setSource(v as SerializeSource)}
          data={SOURCES.map(({ value, label }) => ({ value, label }))}
          fullWidth
        />
        <Text size="xs" c="dimmed">
          {note}
          {stale ? " This is the saved policy: save to include your changes." : ""}
        </Text>
        {q.isError ? (
          <Alert color="red" role="alert">
            {errorMessage(q.error)}
          </Alert>
        ) : (
          <Code block data-testid="serialized-line" style={{ whiteSpace: "pre-wrap", overflowWrap: "anywhere", minHeight: 40 }}>
            {q.isPending ? "…" : line}
          </Code>
        )}
        <Group>
          <CopyButton
            value={line}
            label={source === "meta" ? "Copy tag" : "Copy header"}
            what={source === "meta" ? "Meta tag" : "Header"}
            disabled={!line}
          />
        </Group>
      </Stack>
    </Paper>
  );
}
