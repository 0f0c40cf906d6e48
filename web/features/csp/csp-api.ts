// Content security policies (supplement §13) through the typed client: CRUD, imports (serialized text, a live URL)
// with their warnings, `_serialize` (text/plain), `_evaluate`, sharing. Shared operations (GET, _serialize) take
// the share id of a link (X-User-Share-ID).
import { api, call } from "../../api/client";
import { csp as cspRules } from "../../api/rules.gen";
import type { Directive, Finding, ListQuery, Policy, PolicyContent, PolicyCreated, PolicyGetResponse } from "../../api/types";

export const CSP_KEY = "csp";

/** `_serialize` deliveries, and where a remote import reads the policy: the API's lists. */
export type SerializeSource = (typeof cspRules.SERIALIZE_SOURCES)[number];
export type RemoteSource = (typeof cspRules.REMOTE_SOURCES)[number];

const shareHeaders = (shareId?: string) => (shareId ? { "X-User-Share-ID": shareId } : undefined);
const path = (id: string) => ({ path: { policy_id: id } });

export const cspApi = {
  list: (query: ListQuery) => call(api.GET("/api/web_security/csp", { params: { query } })),
  get: (id: string, shareId?: string): Promise<PolicyGetResponse> =>
    call(api.GET("/api/web_security/csp/{policy_id}", { params: path(id), headers: shareHeaders(shareId) })),
  create: (body: { name: string; content: PolicyContent; tagIds: string[] }): Promise<PolicyCreated> =>
    call(api.POST("/api/web_security/csp", { body })),
  /** Resolves to the import's warnings (200 {warnings}) or [] (204). */
  update: async (id: string, body: { name?: string; directives?: Directive[]; content?: PolicyContent; tagIds?: string[] }): Promise<string[]> => {
    const res = await call(api.PUT("/api/web_security/csp/{policy_id}", { params: path(id), body }));
    return (res as { warnings?: string[] } | undefined)?.warnings ?? [];
  },
  remove: (id: string) => call(api.DELETE("/api/web_security/csp/{policy_id}", { params: path(id) })),
  /** The policy value for a delivery (no header name, no <meta>). */
  serialize: (id: string, source: SerializeSource, shareId?: string): Promise<string> =>
    call(
      api.POST("/api/web_security/csp/{policy_id}/_serialize", {
        params: path(id),
        body: { source },
        headers: shareHeaders(shareId),
        parseAs: "text",
      }),
    ),
  evaluate: (body: { policyId: string } | { serialized: string }): Promise<Finding[]> =>
    call(api.POST("/api/web_security/csp/_evaluate", { body })).then((r) => r.findings),
  share: (id: string) => call(api.POST("/api/web_security/csp/{policy_id}/_share", { params: path(id) })),
  unshare: (id: string) => call(api.POST("/api/web_security/csp/{policy_id}/_unshare", { params: path(id) })),
};

export type { Directive, Finding, Policy, PolicyContent, PolicyGetResponse };
