// /api/web_security/csp: content security policies (supplement §13), sharing (§12.6) and the evaluator, with the
// schemas of contract.ts. Bodies are looseBody: the service checks them with the spec's messages.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { CspService } from "./service";
import { looseBody, media, op, Page, T } from "../../platform/http/contract";
import { ListQueryParams, ListQuerySchema } from "../../platform/http/list-query";
import {
  ContentSecurityPoliciesCreateParams,
  ContentSecurityPoliciesSerializeParams,
  ContentSecurityPoliciesUpdateParams,
  ContentSecurityPolicy,
  ContentSecurityPolicyCreated,
  ContentSecurityPolicyGetResponse,
  CspEvaluateParams,
  CspEvaluation,
  PolicyShare,
  PolicyUpdateWarnings,
} from "./contract";

const tags = ["web_security"];

const IdParams = t.Object({ policy_id: t.String() });
const SHARED =
  "Shared operation: works anonymously with the X-User-Share-ID header (alias X-Secbox-Share-ID) of a live share of this policy; otherwise the owner's own credentials; 404 otherwise, never 401.";

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface CspRoutesDeps {
  auth: AuthPlugin;
  csp: CspService;
}

export const cspRoutes = ({ auth, csp }: CspRoutesDeps) =>
  new Elysia({ name: "feature/csp" })
    .use(auth)
    .get("/api/web_security/csp", ({ user, query }) => csp.list(user.id, query), {
      auth: "user",
      query: ListQuerySchema,
      detail: op({
        tags,
        summary: "List content security policies (common list query)",
        query: ListQueryParams,
        responses: { 200: Page("ContentSecurityPolicy", ContentSecurityPolicy) },
      }),
    })
    .post(
      "/api/web_security/csp",
      async ({ user, body, set }) => {
        const created = await csp.create(user, body);
        set.status = 201;
        return created;
      },
      {
        auth: "user",
        body: looseBody(ContentSecurityPoliciesCreateParams),
        detail: op({
          tags,
          summary: "Create a policy from directives, a serialized policy, or a live URL (header or <meta>)",
          description: "An import (serialized, remote) keeps what browsers keep and lists everything it dropped or changed in `warnings`.",
          body: ContentSecurityPoliciesCreateParams,
          responses: { 201: ContentSecurityPolicyCreated },
          errors: { 400: ["TARGET_NOT_ALLOWED", "UPSTREAM_FAILED"], 409: ["DUPLICATE_NAME"] },
          example: {
            name: "site",
            content: { type: "serialized", value: "default-src 'self'; script-src 'self' https://cdn.example.com; object-src 'none'" },
          },
        }),
      },
    )
    .post("/api/web_security/csp/_evaluate", ({ user, body }) => csp.evaluate(user.id, body), {
      auth: "user",
      body: looseBody(CspEvaluateParams),
      detail: op({
        tags,
        summary: "Evaluate a policy (stored or serialized) for weaknesses",
        description:
          "Findings are sorted by severity (high, medium, low, info). A text holding several policies (separated by ',') is evaluated policy by policy: each finding names its `policyIndex`. A strict nonce + 'strict-dynamic' policy with object-src and base-uri 'none' has no high or medium finding.",
        body: CspEvaluateParams,
        responses: { 200: CspEvaluation },
        errors: { 404: ["NOT_FOUND"], 429: ["RATE_LIMITED"], 503: ["UNAVAILABLE"] },
        example: { serialized: "script-src 'self' 'unsafe-inline'; object-src 'none'" },
      }),
    })
    .get("/api/web_security/csp/:policy_id", ({ request, principal, params }) => csp.get(request, principal, params.policy_id), {
      auth: "shared",
      params: IdParams,
      detail: op({ tags, summary: "Get a policy with its share status", description: SHARED, responses: { 200: ContentSecurityPolicyGetResponse } }),
    })
    .put(
      "/api/web_security/csp/:policy_id",
      async ({ user, params, body, set }) => {
        const result = await csp.update(user.id, params.policy_id, body);
        // 200 {warnings} when imported content had something dropped or changed (§13.3), else 204 without a body.
        if (result) return result;
        set.status = 204;
      },
      {
        auth: "user",
        params: IdParams,
        body: looseBody(ContentSecurityPoliciesUpdateParams),
        detail: op({
          tags,
          summary: "Update a policy's name, directives (or content) and tags",
          description: "204 without a body; 200 {warnings} when imported content (serialized, remote) had something dropped or changed.",
          body: ContentSecurityPoliciesUpdateParams,
          responses: { 200: PolicyUpdateWarnings, 204: null },
          errors: { 400: ["TARGET_NOT_ALLOWED", "UPSTREAM_FAILED"], 409: ["DUPLICATE_NAME"] },
          example: {
            directives: [
              { name: "default-src", value: ["'self'"] },
              { name: "object-src", value: ["'none'"] },
            ],
          },
        }),
      },
    )
    .delete(
      "/api/web_security/csp/:policy_id",
      async ({ user, params, set }) => {
        await csp.delete(user.id, params.policy_id);
        set.status = 204;
      },
      {
        auth: "user",
        params: IdParams,
        detail: op({ tags, summary: "Delete a policy (and its share)", responses: { 204: null } }),
      },
    )
    .post(
      "/api/web_security/csp/:policy_id/_serialize",
      async ({ request, principal, params, body, set }) => {
        const text = await csp.serialize(request, principal, params.policy_id, body);
        set.headers["content-type"] = "text/plain; charset=utf-8";
        return text;
      },
      {
        auth: "shared",
        params: IdParams,
        body: looseBody(ContentSecurityPoliciesSerializeParams),
        detail: op({
          tags,
          summary: 'Serialize a policy for a header or a <meta> tag (the value only: directives joined by "; ")',
          description: SHARED,
          body: ContentSecurityPoliciesSerializeParams,
          responses: { 200: media("text/plain", T.String({ examples: ["default-src 'self'; upgrade-insecure-requests"] })) },
          example: { source: "enforcingHeader" },
        }),
      },
    )
    .post("/api/web_security/csp/:policy_id/_share", ({ user, params }) => csp.share(user.id, params.policy_id), {
      auth: "user",
      params: IdParams,
      detail: op({ tags, summary: "Share a policy (idempotent: returns the existing share)", responses: { 200: PolicyShare } }),
    })
    .post(
      "/api/web_security/csp/:policy_id/_unshare",
      async ({ user, params, set }) => {
        await csp.unshare(user.id, params.policy_id);
        set.status = 204;
      },
      {
        // No params schema: even an id that does not decode answers 204 (supplement §12.3).
        auth: "user",
        detail: op({
          tags,
          summary: "Stop sharing a policy (204 also when not shared, and for an unknown, foreign or malformed id)",
          responses: { 204: null },
        }),
      },
    );
