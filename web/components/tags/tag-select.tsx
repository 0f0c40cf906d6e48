// Picks tags by name (forms: up to 10 per entity, supplement §1; filters: any number).
import { MultiSelect, type MultiSelectProps } from "@mantine/core";
import { useAllTags } from "./use-all-tags";

export function TagSelect({ value, onChange, label = "Tags", max, ...props }: { value: string[]; onChange: (ids: string[]) => void; label?: string; max?: number } & Omit<MultiSelectProps, "value" | "onChange" | "data">) {
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
