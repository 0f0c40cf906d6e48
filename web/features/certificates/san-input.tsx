// Subject alternative names: type or paste names (several at once, separated by commas, spaces or lines); each is
// classified as the API will (DNS, wildcard, IP, email, URI) and shown with its kind; invalid ones are refused with
// the reason (the valid ones of a pasted list are still added), so the list only holds what the API accepts. What is
// typed and not added yet belongs to the form, which takes it on save (template-model.ts takeSanDraft).
import { ActionIcon, Badge, Button, Group, Input, Stack, Text, TextInput } from "@mantine/core";
import { useId, useState } from "react";
import { classifySan, splitSans, takeSans, type SanKind } from "./template-model";

const KIND_COLOR: Record<SanKind, string> = { DNS: "blue", Wildcard: "grape", IP: "indigo", Email: "red", URI: "pink" };

export function SanKindBadge({ value }: { value: string }) {
  const c = classifySan(value);
  const kind = "kind" in c ? c.kind : "?";
  return (
    <Badge variant="light" color={"kind" in c ? KIND_COLOR[c.kind] : "red"} size="sm" radius="sm" w={72} style={{ flexShrink: 0 }} tt="none">
      {kind}
    </Badge>
  );
}

export function SanInput({
  value,
  onChange,
  text,
  onTextChange,
  error,
  disabled,
}: {
  value: string[];
  onChange: (v: string[]) => void;
  /** What is typed and not added yet (kept by the form, which takes it on save). */
  text: string;
  onTextChange: (t: string) => void;
  error?: React.ReactNode;
  disabled?: boolean;
}) {
  const id = useId();
  const [problem, setProblem] = useState<string | null>(null);
  const preview = text.trim() ? splitSans(text) : [];
  const previewKind = preview.length === 1 ? classifySan(preview[0]!) : null;

  // Every valid name is added; refused ones stay in the box, named with the reason.
  const add = () => {
    if (splitSans(text).length === 0) return;
    const t = takeSans(value, text);
    if (t.next !== value) onChange(t.next);
    onTextChange(t.left);
    setProblem(t.problem);
  };

  // The error sits right under the box it is about; the list of added names follows.
  const field = (
    <Input.Wrapper
      label="Subject alternative names"
      description="The names the certificate is valid for: DNS names (example.com), wildcards (*.example.com), IP addresses, email addresses or URIs. Paste several at once."
      error={problem ?? error}
      id={`${id}-wrapper`}
      labelProps={{ htmlFor: `${id}-input` }}
    >
      <Group gap="xs" align="flex-start" wrap="nowrap" mt={4}>
        <TextInput
          id={`${id}-input`}
          aria-label="Add subject alternative name"
          placeholder="example.com, *.example.com, 10.0.0.1"
          value={text}
          disabled={disabled}
          onChange={(e) => {
            onTextChange(e.currentTarget.value);
            setProblem(null);
          }}
          onKeyDown={(e) => {
            if (e.key === "Enter") {
              e.preventDefault();
              add();
            }
          }}
          error={problem !== null || !!error}
          rightSectionWidth={80}
          rightSection={
            previewKind ? (
              <Text size="xs" c={"kind" in previewKind ? "dimmed" : "red"}>
                {"kind" in previewKind ? previewKind.kind : "invalid"}
              </Text>
            ) : undefined
          }
          style={{ flex: 1 }}
          styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)" } }}
        />
        <Button variant="default" onClick={add} disabled={disabled || text.trim() === ""}>
          Add
        </Button>
      </Group>
    </Input.Wrapper>
  );
  return (
    <Stack gap={6}>
      {field}
      {value.length > 0 && (
        <Stack gap={4} component="ul" m={0} p={0} style={{ listStyle: "none" }} aria-label="Subject alternative names">
          {value.map((san) => (
            <Group key={san} component="li" gap="xs" wrap="nowrap">
              <SanKindBadge value={san} />
              <Text size="sm" className="mono" style={{ flex: 1, minWidth: 0, overflowWrap: "anywhere" }}>
                {san}
              </Text>
              <ActionIcon
                variant="subtle"
                color="gray"
                aria-label={`Remove ${san}`}
                disabled={disabled}
                onClick={() => onChange(value.filter((v) => v !== san))}
              >
                <span aria-hidden="true">×</span>
              </ActionIcon>
            </Group>
          ))}
        </Stack>
      )}
    </Stack>
  );
}
