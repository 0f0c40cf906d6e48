// The evaluator beside the editor (Google's CSP Evaluator, next to the policy): findings of `_evaluate` grouped by
// severity with colours; each names the directive it is about, and a click selects that directive in the editor.
import { Alert, Badge, Group, Loader, Paper, Stack, Text, Title, UnstyledButton, VisuallyHidden } from "@mantine/core";
import { errorMessage } from "../../api/client";
import type { Finding } from "./csp-api";

export const SEVERITIES: { value: Finding["severity"]; label: string; color: string }[] = [
  { value: "high", label: "High", color: "red" },
  { value: "medium", label: "Medium", color: "orange" },
  { value: "low", label: "Low", color: "yellow" },
  { value: "info", label: "Info", color: "blue" },
];

export function EvaluatorPanel({
  findings,
  loading,
  error,
  empty,
  present,
  onSelect,
}: {
  findings: Finding[] | undefined;
  loading: boolean;
  error: unknown;
  empty: boolean;
  /** Directives in the policy (a finding about an absent one says so). */
  present: Set<string>;
  onSelect: (directive: string) => void;
}) {
  const count = (s: Finding["severity"]) => findings?.filter((f) => f.severity === s).length ?? 0;
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby="evaluator-title" aria-busy={loading}>
      <Stack gap="sm">
        <Group justify="space-between" wrap="nowrap">
          <Title order={2} size="h5" id="evaluator-title">
            Evaluation
          </Title>
          {loading && <Loader size="xs" aria-label="Evaluating" />}
        </Group>
        {empty ? (
          <Text size="sm" c="dimmed">
            Add a directive to see how strong the policy is.
          </Text>
        ) : error ? (
          <Alert color="red" role="alert">
            {errorMessage(error)}
          </Alert>
        ) : findings ? (
          <>
            <Group gap={6} aria-label="Findings by severity" role="group">
              {SEVERITIES.map((s) => (
                <Badge
                  key={s.value}
                  color={s.color}
                  variant={count(s.value) ? "filled" : "outline"}
                  tt="none"
                  c={(s.value === "low" || s.value === "medium") && count(s.value) ? "black" : undefined}
                >
                  {count(s.value)} {s.label.toLowerCase()}
                </Badge>
              ))}
            </Group>
            {findings.length === 0 && (
              <Text size="sm" c="dimmed">
                No findings: nothing the evaluator knows how to bypass.
              </Text>
            )}
            {SEVERITIES.filter((s) => count(s.value) > 0).map((s) => (
              <Stack key={s.value} gap={4} component="section" aria-label={`${s.label} findings`}>
                <Text size="xs" fw={700} tt="uppercase" c="dimmed">
                  {s.label}
                </Text>
                <Stack gap={4} component="ul" m={0} p={0} style={{ listStyle: "none" }}>
                  {findings
                    .filter((f) => f.severity === s.value)
                    .map((f, i) => (
                      <li key={`${f.code}-${f.directive}-${i}`} data-finding={f.code} data-severity={f.severity}>
                        <UnstyledButton
                          onClick={() => onSelect(f.directive)}
                          w="100%"
                          p={6}
                          style={{ borderLeft: `3px solid var(--mantine-color-${s.color}-filled)`, borderRadius: 4 }}
                        >
                          <VisuallyHidden>{s.label}: </VisuallyHidden>
                          <Group gap={6} wrap="nowrap" align="flex-start">
                            <Badge size="sm" variant="light" color="gray" tt="none" className="mono" style={{ flexShrink: 0 }}>
                              {f.directive}
                            </Badge>
                            <Text size="sm" style={{ minWidth: 0, overflowWrap: "anywhere" }}>
                              {f.message}
                              {f.value && (
                                <Text span size="xs" className="mono" c="dimmed">
                                  {" "}
                                  ({f.value})
                                </Text>
                              )}
                              {!present.has(f.directive) && <VisuallyHidden> ({f.directive} is not in the policy)</VisuallyHidden>}
                            </Text>
                          </Group>
                        </UnstyledButton>
                      </li>
                    ))}
                </Stack>
              </Stack>
            ))}
          </>
        ) : (
          <Loader size="sm" aria-label="Evaluating" />
        )}
      </Stack>
    </Paper>
  );
}
