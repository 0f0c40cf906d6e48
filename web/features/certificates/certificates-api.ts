// Certificate templates, generation, sharing and the remote chain fetch (supplement §12.3–§12.6), through the typed
// client. Shared operations (GET, _generate) take the share id of a link: it goes in X-User-Share-ID, and the API
// then serves the owner's template to anyone.
import { api, call } from "../../api/client";
import { certificates as certRules } from "../../api/rules.gen";
import type { CertificateTemplate, ExportedFile, ListQuery, TemplateAttributes, TemplateGetResponse } from "../../api/types";

export const TEMPLATES_KEY = "certificate-templates";

export type GenerateFormat = (typeof certRules.GENERATE_FORMATS)[number];

const shareHeaders = (shareId?: string) => (shareId ? { "X-User-Share-ID": shareId } : undefined);
const path = (id: string) => ({ path: { template_id: id } });

export const templatesApi = {
  list: (query: ListQuery) => call(api.GET("/api/certificates/templates", { params: { query } })),
  get: (id: string, shareId?: string): Promise<TemplateGetResponse> =>
    call(api.GET("/api/certificates/templates/{template_id}", { params: path(id), headers: shareHeaders(shareId) })),
  create: (body: { templateName: string; attributes: TemplateAttributes; tagIds: string[] }): Promise<CertificateTemplate> =>
    call(api.POST("/api/certificates/templates", { body })),
  update: (id: string, body: { templateName?: string; attributes?: TemplateAttributes; tagIds?: string[] }) =>
    call(api.PUT("/api/certificates/templates/{template_id}", { params: path(id), body })),
  remove: (id: string) => call(api.DELETE("/api/certificates/templates/{template_id}", { params: path(id) })),
  generate: (id: string, body: { format: GenerateFormat; passphrase?: string }, shareId?: string): Promise<ExportedFile> =>
    call(api.POST("/api/certificates/templates/{template_id}/_generate", { params: path(id), body, headers: shareHeaders(shareId) })),
  share: (id: string) => call(api.POST("/api/certificates/templates/{template_id}/_share", { params: path(id) })),
  unshare: (id: string) => call(api.POST("/api/certificates/templates/{template_id}/_unshare", { params: path(id) })),
  /** PEM strings of the remote chain, leaf first (§12.5). */
  fetchChain: (url: string): Promise<string[]> => call(api.POST("/api/certificates/_fetch", { body: { url } })),
};

export type { CertificateTemplate, TemplateAttributes, TemplateGetResponse };
