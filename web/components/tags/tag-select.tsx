// Picks tags by name (forms: up to MAX_TAGS_PER_ENTITY per entity, supplement §1; filters: any number).
import { MultiSelect, type MultiSelectProps } from "@mantine/core";
import { tags as tagRules } from "../../api/rules.gen";
import { useAllTags } from "./use-all-tags";

/** Tags on one entity: the API's rule (a form's `max`). */
export const MAX_TAGS_PER_ENTITY = tagRules.MAX_TAGS_PER_ENTITY;

export function TagSelect({
  value,
  onChange,
  label = "Tags",
  max,
  ...props
}: { value: string[]; onChange: (ids: string[]) => void; label?: string; max?: number } & Omit<MultiSelectProps, "value" | "onChange" | "data">) {
  const tags = useAllTags();
  return (
    <MultiSelect
      label={label}
      searchable
      clearable
      data={(tags.data ?? []).map((t) => ({ value: t.id, label: t.name }))}
      value={value}
      onChange={onChange}
      maxValues={max}
      nothingFoundMessage={tags.isPending ? "Loading tags…" : "No tags yet: create them on the Tags page"}
      comboboxProps={{ withinPortal: true }}
      {...props}
    />
  );
}
