// Data export, import preview and import (supplement §19.1–§19.4). The export is a streamed attachment: it is read
// as a Blob and saved under the file name of its Content-Disposition (secbox-export-<date>.json).
import { api, call } from "../../api/client";
import type { ImportData, ImportPreview, ImportResult } from "../../api/types";
import { attachmentName } from "../../components/download";

export const ENTITY_TYPES = [
  { key: "tags", label: "Tags" },
  { key: "scripts", label: "Scripts" },
  { key: "secrets", label: "Secrets" },
  { key: "responders", label: "Responders", history: "requests" },
  { key: "certificateTemplates", label: "Certificate templates" },
  { key: "privateKeys", label: "Private keys" },
  { key: "contentSecurityPolicies", label: "Content security policies" },
  { key: "pageTrackers", label: "Page trackers", history: "revisions" },
  { key: "apiTrackers", label: "API trackers", history: "revisions" },
] as const;
export type EntityType = (typeof ENTITY_TYPES)[number]["key"];
export const typeLabel = (t: string) => ENTITY_TYPES.find((e) => e.key === t)?.label ?? t;

export type Resolution = "rename" | "overwrite" | "skip";
export type ImportMode = "merge" | "apply";
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
