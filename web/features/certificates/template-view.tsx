// A certificate template's attributes, read-only: the shared page shows this to whoever opens a share link.
import { Group, Table, Text } from "@mantine/core";
import type { TemplateAttributes } from "../../api/types";
import { formatDateTime } from "../../components/format";
import { describeKeyAlgorithm, signatureLabel } from "./algorithms";
import { SanKindBadge } from "./san-input";
import { describeValidity, SUBJECT_FIELDS, usageLabel } from "./template-model";

function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <Table.Tr>
      <Table.Th w={200} style={{ verticalAlign: "top" }}>
        {label}
      </Table.Th>
      <Table.Td>{children}</Table.Td>
    </Table.Tr>
  );
}

const none = (
  <Text span size="sm" c="dimmed">
    none
  </Text>
);

export function TemplateView({ attributes: a }: { attributes: TemplateAttributes }) {
  const before = Number(a.notValidBefore);
  const after = Number(a.notValidAfter);
  return (
    <Table variant="vertical" layout="fixed" withTableBorder>
      <Table.Tbody>
        {SUBJECT_FIELDS.filter((f) => a[f.key]).map((f) => (
          <Row key={f.key} label={f.label}>
            {a[f.key]}
          </Row>
        ))}
        {a.country && <Row label="Country (C)">{a.country}</Row>}
        <Row label="Key">{describeKeyAlgorithm(a.keyAlgorithm)}</Row>
        <Row label="Signature">{signatureLabel(a.signatureAlgorithm)}</Row>
        <Row label="Validity">
          {formatDateTime(before)} to {formatDateTime(after)} ({describeValidity(before, after)})
        </Row>
        <Row label="Version">v{String(a.version)}</Row>
        <Row label="Certificate authority">{a.isCa ? "Yes" : "No"}</Row>
        <Row label="Key usage">{a.keyUsage?.length ? a.keyUsage.map(usageLabel).join(", ") : none}</Row>
        <Row label="Extended key usage">{a.extendedKeyUsage?.length ? a.extendedKeyUsage.map(usageLabel).join(", ") : none}</Row>
        <Row label="Alternative names">
          {a.subjectAltNames?.length ? (
            <Group gap={4} component="ul" m={0} p={0} style={{ listStyle: "none", flexDirection: "column", alignItems: "flex-start" }}>
              {a.subjectAltNames.map((s) => (
                <Group key={s} component="li" gap="xs" wrap="nowrap">
                  <SanKindBadge value={s} />
                  <Text size="sm" className="mono" style={{ overflowWrap: "anywhere" }}>
                    {s}
                  </Text>
                </Group>
              ))}
            </Group>
          ) : (
            none
          )}
        </Row>
      </Table.Tbody>
    </Table>
  );
}
