// /api/web_security/csp: content security policies (supplement §13), sharing (§12.6) and the evaluator.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { CspService } from "./service";
import { media, Named, op, Opt, Page, StringEnum, T, UnixTime, Uuid } from "../../platform/http/contract";
import { ListQueryParams, ListQuerySchema } from "../../platform/http/list-query";
import { TaggedMembers, TagIdsParam } from "../tags/contract";
import { DIRECTIVE_NAMES } from "./directives";
import { CHECKS, SEVERITIES } from "./evaluate";
import { REMOTE_SOURCES } from "./remote";
import { SERIALIZE_SOURCES } from "./serialize";
import { MAX_FINDINGS, MAX_POLICIES } from "./tasks";
import { CONTENT_TYPES } from "./service";

// ---- contract schemas (supplement §13) ----

const DirectiveName = StringEnum(DIRECTIVE_NAMES, { description: "see supplement §13.1 for the value rules of each name" });
export const CspDirective = Named(
  "CspDirective",
  T.Object({
    name: DirectiveName,
    value: T.Optional(T.Array(T.String({ minLength: 1 }), { description: "values (no whitespace, ; or ,); absent for upgrade-insecure-requests" })),
  }),
);
export const ContentSecurityPolicy = Named(
  "ContentSecurityPolicy",
  T.Object({
    id: Uuid(),
    name: T.String(),
    directives: T.Array(CspDirective, { minItems: 1, maxItems: 50, description: "distinct names, in stored order" }),
    ...TaggedMembers,
    createdAt: UnixTime(),
    updatedAt: UnixTime(),
  }),
);
const Warnings = T.Array(T.String(), {
  description: "what the import (serialized text or remote URL) dropped or changed, e.g. \"script-src: dropped 'unsafe_inline' (unknown keyword)\"",
});
export const ContentSecurityPolicyCreated = Named(
  "ContentSecurityPolicyCreated",
  T.Composite([ContentSecurityPolicy, T.Object({ warnings: T.Optional(Warnings) })], { description: "the policy, plus warnings when an import dropped or changed something" }),
);
export const PolicyShare = Named(
  "ContentSecurityPolicyShare",
  T.Object({
    id: Uuid({ description: "share id (UUID v4): send it as X-User-Share-ID" }),
    resource: T.Object({ type: StringEnum(["contentSecurityPolicy"]), policyId: Uuid() }),
    createdAt: UnixTime(),
  }),
);
export const ContentSecurityPolicyGetResponse = Named(
  "ContentSecurityPolicyGetResponse",
  T.Object({ policy: ContentSecurityPolicy, userShare: T.Optional(PolicyShare) }, { description: "to anyone but the owner: tags and tagIds are [] and userShare is included" }),
);
export const CspContent = Named(
  "CspContent",
  T.Union(
    [
      T.Object({ type: StringEnum(["directives"]), value: T.Array(CspDirective, { minItems: 1, maxItems: 50 }) }),
      T.Object({ type: StringEnum(["serialized"]), value: T.String({ description: "policy text: the first policy; invalid parts dropped with warnings" }) }),
      T.Object({
        type: StringEnum(["remote"]),
        value: T.Object({
          url: T.String({ format: "uri", description: "http(s) URL fetched once (10 s)" }),
          source: StringEnum(REMOTE_SOURCES, { description: "enforcingHeader, reportOnlyHeader or meta (<meta http-equiv>)" }),
          followRedirects: Opt(T.Boolean({ description: "default true (up to 10)" })),
        }),
      }),
    ],
    { description: `the policy content: ${CONTENT_TYPES.join(", ")}` },
  ),
);
const PolicyName = T.String({ minLength: 1, description: "1..100 characters after trimming, unique per user" });
export const ContentSecurityPoliciesCreateParams = Named(
  "ContentSecurityPoliciesCreateParams",
  T.Object({ name: PolicyName, content: CspContent, tagIds: TagIdsParam }),
);
export const ContentSecurityPoliciesUpdateParams = Named(
  "ContentSecurityPoliciesUpdateParams",
  T.Object(
    {
      name: Opt(PolicyName),
      directives: Opt(T.Array(CspDirective, { minItems: 1, maxItems: 50, description: "replaces all directives; exclusive with content" })),
      content: Opt(CspContent),
      tagIds: TagIdsParam,
    },
    { description: "at least one member; directives and content are exclusive", minProperties: 1 },
  ),
);
export const ContentSecurityPoliciesSerializeParams = Named(
  "ContentSecurityPoliciesSerializeParams",
  T.Object({
    source: StringEnum(SERIALIZE_SOURCES, { description: "the delivery: meta drops sandbox, frame-ancestors, report-uri and report-to; reportOnlyHeader drops sandbox" }),
  }),
);
export const CspEvaluateParams = Named(
  "CspEvaluateParams",
  T.Object(
    {
      policyId: Opt(Uuid({ description: "a stored policy of yours" })),
      serialized: Opt(
        T.String({
          maxLength: 65_536,
          description: `a policy text of at most 64 KiB (UTF-8; larger → 400) and ${MAX_POLICIES} policies separated by ','; nothing is dropped, so unknown directives reach the checks`,
        }),
      ),
    },
    { description: "exactly one of policyId and serialized" },
  ),
);
export const CspEvaluation = Named(
  "CspEvaluation",
  T.Object({
    findings: T.Array(
      T.Object({
        directive: T.String({ description: "the effective directive the finding is about (after default-src fallback)" }),
        value: T.Optional(T.String({ description: "the offending value" })),
        severity: StringEnum(SEVERITIES),
        code: T.String({ description: `stable kebab-case token: ${Object.keys(CHECKS).join(", ")}` }),
        message: T.String(),
        policyIndex: T.Integer({ minimum: 0, maximum: MAX_POLICIES - 1, description: "the policy the finding is about, 0-based in the order of the text (always 0 for a stored policy)" }),
      }),
      {
        maxItems: MAX_POLICIES * MAX_FINDINGS,
        description: `sorted by severity (high, medium, low, info), policy order kept within a severity; at most ${MAX_FINDINGS} per policy, the most severe`,
      },
    ),
    policyCount: T.Integer({
      minimum: 1,
      maximum: MAX_POLICIES,
      description: "how many policies were evaluated: a text may hold several separated by ',' (browsers enforce every one of them, so a resource must pass each)",
    }),
  }),
);
const tags = ["web_security"];

// ---- runtime schemas: Elysia checks these JSON types, the service everything else with the spec's messages ----

const TagIdsSchema = t.Union([t.Array(t.String()), t.Null()]);
const CreateBody = t.Object({
  name: t.String(),
  content: t.Unknown(),
  tagIds: t.Optional(TagIdsSchema),
});
const UpdateBody = t.Object({
  name: t.Optional(t.Unknown()),
  directives: t.Optional(t.Unknown()),
  content: t.Optional(t.Unknown()),
  tagIds: t.Optional(TagIdsSchema),
});
const SerializeBody = t.Object({
  source: t.Unknown(),
});
const EvaluateBody = t.Object({
  policyId: t.Optional(t.Union([t.String(), t.Null()])),
  serialized: t.Optional(t.Union([t.String(), t.Null()])),
});
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
      detail: op({ tags, summary: "List content security policies (common list query)", query: ListQueryParams, responses: { 200: Page("ContentSecurityPolicy", ContentSecurityPolicy) } }),
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
        body: CreateBody,
        detail: op({
          tags,
          summary: "Create a policy from directives, a serialized policy, or a live URL (header or <meta>)",
          description: "An import (serialized, remote) keeps what browsers keep and lists everything it dropped or changed in `warnings`.",
          body: ContentSecurityPoliciesCreateParams,
          responses: { 201: ContentSecurityPolicyCreated },
          errors: { 400: ["TARGET_NOT_ALLOWED", "UPSTREAM_FAILED"], 409: ["DUPLICATE_NAME"] },
          example: { name: "site", content: { type: "serialized", value: "default-src 'self'; script-src 'self' https://cdn.example.com; object-src 'none'" } },
        }),
      },
    )
    .post("/api/web_security/csp/_evaluate", ({ user, body }) => csp.evaluate(user.id, body), {
      auth: "user",
      body: EvaluateBody,
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
        body: UpdateBody,
        detail: op({
          tags,
          summary: "Update a policy's name, directives (or content) and tags",
          description: "204 without a body; 200 {warnings} when imported content (serialized, remote) had something dropped or changed.",
          body: ContentSecurityPoliciesUpdateParams,
          responses: { 200: T.Object({ warnings: Warnings }), 204: null },
          errors: { 400: ["TARGET_NOT_ALLOWED", "UPSTREAM_FAILED"], 409: ["DUPLICATE_NAME"] },
          example: { directives: [{ name: "default-src", value: ["'self'"] }, { name: "object-src", value: ["'none'"] }] },
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
        body: SerializeBody,
        detail: op({
          tags,
          summary: "Serialize a policy for a header or a <meta> tag (the value only: directives joined by \"; \")",
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
        detail: op({ tags, summary: "Stop sharing a policy (204 also when not shared, and for an unknown, foreign or malformed id)", responses: { 204: null } }),
      },
    );
