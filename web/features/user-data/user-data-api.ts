// Data export, import preview and import (supplement §19.1–§19.4). The export is a streamed attachment: it is read
// as a Blob and saved under the file name of its Content-Disposition (secbox-export-<date>.json).
import { api, call } from "../../api/client";
import { userData as userDataRules } from "../../api/rules.gen";
import type { ImportData, ImportPreview, ImportResult } from "../../api/types";
import { attachmentName } from "../../components/download";

export type EntityType = (typeof userDataRules.ENTITY_TYPES)[number];
const LABELS: Record<EntityType, string> = {
  tags: "Tags",
  scripts: "Scripts",
  secrets: "Secrets",
  responders: "Responders",
  certificateTemplates: "Certificate templates",
  privateKeys: "Private keys",
  contentSecurityPolicies: "Content security policies",
  pageTrackers: "Page trackers",
  apiTrackers: "API trackers",
};
/** The API's entity types in file order, with labels; `history`: the export can include their history. */
export const ENTITY_TYPES: { key: EntityType; label: string; history: boolean }[] = userDataRules.ENTITY_TYPES.map((key) => ({
  key,
  label: LABELS[key],
  history: (userDataRules.TYPES_WITH_HISTORY as readonly string[]).includes(key),
}));
export const typeLabel = (t: string) => ENTITY_TYPES.find((e) => e.key === t)?.label ?? t;

export type Resolution = (typeof userDataRules.CONFLICT_RESOLUTIONS)[number];
export type ImportMode = (typeof userDataRules.IMPORT_MODES)[number];
/** `secretsPassphrase` of an export: characters. */
export const { MIN_PASSPHRASE_CHARS } = userDataRules;
export interface Selection {
  sourceId: string;
  action: "import" | "skip";
  conflictResolution?: Resolution;
}

export interface ExportRequest {
  include: Partial<Record<EntityType, { type: "all"; includeHistory?: boolean }>> & { settings?: boolean };
  secretsPassphrase?: string;
}

export const userDataApi = {
  /** Downloads nothing itself: returns the file and the name the API gave it. */
  export: async (body: ExportRequest): Promise<{ blob: Blob; fileName: string }> => {
    const request = api.POST("/api/user/data/_export", { body, parseAs: "blob" });
    const blob = (await call(request)) as unknown as Blob;
    const { response } = await request;
    return { blob, fileName: attachmentName(response.headers.get("content-disposition"), "secbox-export.json") };
  },
  preview: (data: ImportData, mode: ImportMode): Promise<ImportPreview> => call(api.POST("/api/user/data/_import_preview", { body: { data, mode } })),
  import: (body: {
    data: ImportData;
    mode: ImportMode;
    selections: Partial<Record<EntityType, Selection[]>>;
    importSettings: boolean;
    secretsPassphrase?: string;
    applyDeletions?: Partial<Record<EntityType, string[]>>;
  }): Promise<ImportResult> => call(api.POST("/api/user/data/_import", { body })),
};

export type { ImportData, ImportPreview, ImportResult };
