// The import dialog's model (supplement §19.3, §19.4): the items of each type in the file (for per-item choices),
// the default resolution of a conflict, and the `selections` / `applyDeletions` an import sends.
import type { ImportPreview } from "../../api/types";
import { ENTITY_TYPES, type EntityType, type ImportMode, type Resolution, type Selection } from "./user-data-api";

export interface FileItem {
  sourceId: string;
  name: string;
}

/** The entities of each type in a parsed export file: `{sourceId, name}` (ids lower-cased, as the API compares them). */
export function fileItems(file: unknown): Partial<Record<EntityType, FileItem[]>> {
  const data = (file as { data?: Record<string, unknown> } | null)?.data;
  const out: Partial<Record<EntityType, FileItem[]>> = {};
  if (!data || typeof data !== "object") return out;
  for (const t of ENTITY_TYPES) {
    const list = data[t.key];
    if (!Array.isArray(list)) continue;
    out[t.key] = list
      .filter((e): e is { id: string; name?: unknown } => typeof e === "object" && e !== null && typeof (e as { id?: unknown }).id === "string")
      .map((e) => ({ sourceId: e.id.toLowerCase(), name: typeof e.name === "string" ? e.name : e.id }));
  }
  return out;
}

export type Conflict = NonNullable<ImportPreview["summary"]["tags"]>["conflicts"][number];

export const conflictsOf = (preview: ImportPreview, type: EntityType): Conflict[] => preview.summary[type]?.conflicts ?? [];

/** What an import does with a conflict unless told otherwise (§19.4). */
export function defaultResolution(mode: ImportMode, c: Conflict): Resolution {
  if (mode === "apply") return "overwrite";
  return c.renameAllowed ? "rename" : "skip";
}

export interface Choice {
  import: boolean;
  resolution?: Resolution;
}

/** Every item's choice before the user changes anything: import all, conflicts resolved by default. */
export function initialChoices(items: Partial<Record<EntityType, FileItem[]>>, preview: ImportPreview, mode: ImportMode): Record<string, Choice> {
  const out: Record<string, Choice> = {};
  for (const [type, list] of Object.entries(items) as [EntityType, FileItem[]][]) {
    const conflicts = new Map(conflictsOf(preview, type).map((c) => [c.sourceId.toLowerCase(), c]));
    for (const item of list) {
      const c = conflicts.get(item.sourceId);
      out[`${type}:${item.sourceId}`] = { import: true, ...(c ? { resolution: defaultResolution(mode, c) } : {}) };
    }
  }
  return out;
}

export function selectionsFor(
  items: Partial<Record<EntityType, FileItem[]>>,
  choices: Record<string, Choice>,
): Partial<Record<EntityType, Selection[]>> {
  const out: Partial<Record<EntityType, Selection[]>> = {};
  for (const [type, list] of Object.entries(items) as [EntityType, FileItem[]][]) {
    out[type] = list.map((item) => {
      const c = choices[`${type}:${item.sourceId}`] ?? { import: true };
      return {
        sourceId: item.sourceId,
        action: c.import ? "import" : "skip",
        ...(c.import && c.resolution ? { conflictResolution: c.resolution } : {}),
      };
    });
  }
  return out;
}

/** The `toDelete` entries (apply mode) the user ticked, by type. */
export function deletionsFor(preview: ImportPreview, ticked: Set<string>): Partial<Record<EntityType, string[]>> {
  const out: Partial<Record<EntityType, string[]>> = {};
  for (const [type, list] of Object.entries(preview.toDelete ?? {}) as [EntityType, { id: string }[]][]) {
    const ids = list.filter((e) => ticked.has(e.id)).map((e) => e.id);
    if (ids.length) out[type] = ids;
  }
  return out;
}

/** Whether the file carries secret values (they need the export's passphrase). */
export const hasSecretValues = (file: unknown) => typeof (file as { secretsEncryption?: unknown } | null)?.secretsEncryption === "object";
