// Create / edit / duplicate a tag: a name and one of the documented colours (supplement §6) or a custom hex colour.
import { Alert, Button, ColorInput, ColorSwatch, Group, Radio, Stack, Text, TextInput } from "@mantine/core";
import { useForm } from "@mantine/form";
import { useState } from "react";
import { tags as tagRules } from "../../api/rules.gen";
import { FormModal } from "../../components/form-modal";
import { applyApiError } from "../../components/form";
import { HEX_COLOR, isNamedColor, mantineColor, TAG_COLOR_LABELS, TAG_COLORS } from "../../components/tags/colors";
import { TagBadge } from "../../components/tags/tag-badges";
import type { Tag } from "./tags-api";

export interface TagFormValues {
  name: string;
  color: string;
  custom: string;
}

export function TagForm({
  opened,
  mode,
  initial,
  onSubmit,
  onClose,
}: {
  opened: boolean;
  mode: "create" | "edit" | "duplicate";
  initial?: Tag;
  onSubmit: (v: { name: string; color: string }) => Promise<unknown>;
  onClose: () => void;
}) {
  const named = initial ? isNamedColor(initial.color) : true;
  const form = useForm<TagFormValues>({
    mode: "controlled",
    initialValues: {
      name: initial ? (mode === "duplicate" ? `${initial.name}-copy` : initial.name) : "",
      color: initial ? (named ? initial.color : "custom") : "default",
      custom: initial && !named ? initial.color : "#",
    },
    validate: {
      name: (v) =>
        v.trim() === "" ? "Enter a name" : v.trim().length > tagRules.TAG_NAME_MAX ? `At most ${tagRules.TAG_NAME_MAX} characters` : null,
      custom: (v, values) => (values.color === "custom" && !HEX_COLOR.test(v) ? "Use #rgb or #rrggbb" : null),
    },
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const v = form.getValues();
  const color = v.color === "custom" ? v.custom : v.color;

  const submit = form.onSubmit(async (values) => {
    setBusy(true);
    setError(null);
    try {
      await onSubmit({ name: values.name.trim(), color: values.color === "custom" ? values.custom.toLowerCase() : values.color });
      form.resetDirty();
    } catch (err) {
      setError(applyApiError(form, err, { color: "custom" }));
    } finally {
      setBusy(false);
    }
  });

  const title = mode === "edit" ? "Edit tag" : mode === "duplicate" ? "Duplicate tag" : "New tag";
  return (
    <FormModal opened={opened} title={title} dirty={form.isDirty()} onClose={onClose} size="md">
      {(requestClose) => (
        <form onSubmit={submit} noValidate>
          <Stack>
            {error && (
              <Alert color="red" role="alert">
                {error}
              </Alert>
            )}
            <TextInput label="Name" description="Lower-cased, up to 50 characters" data-autofocus required {...form.getInputProps("name")} />
            <Radio.Group label="Colour" {...form.getInputProps("color")}>
              <Stack gap={6} mt={4}>
                {TAG_COLORS.map((c) => (
                  <Radio
                    key={c}
                    value={c}
                    label={
                      <Group gap={8} wrap="nowrap">
                        <ColorSwatch
                          color={`var(--mantine-color-${mantineColor(c)}-9)`}
                          size={16}
                          aria-hidden="true"
                          style={{ border: "1px solid var(--mantine-color-default-border)" }}
                        />
                        <Text size="sm">{TAG_COLOR_LABELS[c]}</Text>
                      </Group>
                    }
                  />
                ))}
                <Radio value="custom" label="Custom colour" />
              </Stack>
            </Radio.Group>
            {v.color === "custom" && <ColorInput label="Custom colour (hex)" format="hex" withEyeDropper={false} {...form.getInputProps("custom")} />}
            <Group gap="xs">
              <Text size="sm" c="dimmed">
                Preview:
              </Text>
              <TagBadge
                tag={{ name: v.name.trim().toLowerCase() || "tag", color: HEX_COLOR.test(color) || isNamedColor(color) ? color : "default" }}
              />
            </Group>
            <Group justify="flex-end">
              <Button variant="default" type="button" onClick={requestClose}>
                Cancel
              </Button>
              <Button type="submit" loading={busy}>
                {mode === "edit" ? "Save" : "Create tag"}
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </FormModal>
  );
}
