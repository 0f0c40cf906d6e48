// /api/web_security/csp: content security policies (supplement §13), sharing (§12.6) and the evaluator.
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { CspService } from "./service";
import { ListQuerySchema } from "../../platform/http/list-query";
import { DIRECTIVE_NAMES } from "./directives";
import { CHECKS, SEVERITIES } from "./evaluate";
import { REMOTE_SOURCES } from "./remote";
import { SERIALIZE_SOURCES } from "./serialize";
import { CONTENT_TYPES } from "./service";

const TAGS = ["web_security"];

const DirectiveSchema = t.Object(
  {
    name: t.String({ description: `one of ${DIRECTIVE_NAMES.join(", ")}` }),
    value: t.Optional(t.Array(t.String(), { description: "values; absent for upgrade-insecure-requests" })),
  },
  { description: "a directive; see supplement §13.1 for the value rules of each name" },
);
const TagRefSchema = t.Object({ id: t.String(), name: t.String(), color: t.String() });
const PolicySchema = t.Object({
  id: t.String(),
  name: t.String(),
  directives: t.Array(DirectiveSchema),
  tags: t.Array(TagRefSchema),
  tagIds: t.Array(t.String()),
  createdAt: t.Integer(),
  updatedAt: t.Integer(),
});
const UserShareSchema = t.Object({
  id: t.String({ description: "share id (UUID v4), sent as X-User-Share-ID" }),
  resource: t.Object({ type: t.Literal("contentSecurityPolicy"), policyId: t.String() }),
  createdAt: t.Integer(),
});
const GetResponseSchema = t.Object({ policy: PolicySchema, userShare: t.Optional(UserShareSchema) });
const WarningsSchema = t.Array(t.String(), {
  description: "what the import (serialized text or remote URL) dropped or changed, e.g. \"script-src: dropped 'unsafe_inline' (unknown keyword)\"; omitted when none",
});
const CreatedSchema = t.Composite([PolicySchema, t.Object({ warnings: t.Optional(WarningsSchema) })]);

const TagIdsSchema = t.Union([t.Array(t.String()), t.Null()], { description: "tag ids (at most 10); null = not set" });
/** Loose on purpose: the service validates each variant and names the failing field (`content.value[2].name: …`). */
const ContentSchema = t.Object(
  {
    type: t.String({ description: CONTENT_TYPES.join(" | ") }),
    value: t.Unknown({
      description:
        `directives: [{name, value?}] (1..50, distinct names); serialized: the policy text (the first policy; unknown directives and invalid values dropped, with warnings); ` +
        `remote: {url, source: ${REMOTE_SOURCES.join(" | ")}, followRedirects?: boolean (default true)}`,
    }),
  },
  { description: "the policy content" },
);

const CreateBody = t.Object({
  name: t.String({ description: "1..100 characters after trimming, unique per user" }),
  content: t.Unknown({ description: ContentSchema.description }),
  tagIds: t.Optional(TagIdsSchema),
});
const UpdateBody = t.Object({
  name: t.Optional(t.Unknown({ description: "1..100 characters after trimming" })),
  directives: t.Optional(t.Unknown({ description: "replaces all directives; exclusive with content" })),
  content: t.Optional(t.Unknown({ description: "replaces all directives from a content variant; exclusive with directives" })),
  tagIds: t.Optional(TagIdsSchema),
});
const SerializeBody = t.Object({
  source: t.Unknown({ description: `${SERIALIZE_SOURCES.join(" | ")}: the delivery; meta drops sandbox, frame-ancestors, report-uri and report-to, reportOnlyHeader drops sandbox` }),
});
const EvaluateBody = t.Object({
  policyId: t.Optional(t.Union([t.String(), t.Null()], { description: "a stored policy of the caller" })),
  serialized: t.Optional(t.Union([t.String(), t.Null()], { description: "a policy text; nothing dropped, so unknown directives reach the checks" })),
});
const FindingSchema = t.Object({
  directive: t.String({ description: "the effective directive the finding is about (after default-src fallback)" }),
  value: t.Optional(t.String({ description: "the offending value" })),
  severity: t.Union([t.Literal("high"), t.Literal("medium"), t.Literal("low"), t.Literal("info")], { description: SEVERITIES.join(" | ") }),
  code: t.String({ description: `stable token: ${Object.keys(CHECKS).join(", ")}` }),
  message: t.String(),
});
const EvaluateResponse = t.Object({ findings: t.Array(FindingSchema) });

const IdParams = t.Object({ policy_id: t.String() });
const SHARED = "Shared access: X-User-Share-ID (alias X-Secbox-Share-ID) naming a share of this policy serves it anonymously.";

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
      response: t.Object({ items: t.Array(PolicySchema), total: t.Integer() }),
      detail: { tags: TAGS, summary: "List content security policies" },
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
        response: { 201: CreatedSchema },
        detail: {
          tags: TAGS,
          summary: "Create a policy from directives, a serialized policy, or a live URL (header or <meta>)",
          description: "An import (serialized, remote) keeps what browsers keep and lists everything it dropped or changed in `warnings`.",
        },
      },
    )
    .post("/api/web_security/csp/_evaluate", ({ user, body }) => csp.evaluate(user.id, body), {
      auth: "user",
      body: EvaluateBody,
      response: EvaluateResponse,
      detail: {
        tags: TAGS,
        summary: "Evaluate a policy (stored or serialized) for weaknesses",
        description: "Findings are sorted by severity (high, medium, low, info). A strict nonce + 'strict-dynamic' policy with object-src and base-uri 'none' has no high or medium finding.",
      },
    })
    .get("/api/web_security/csp/:policy_id", ({ request, principal, params }) => csp.get(request, principal, params.policy_id), {
      auth: "shared",
      params: IdParams,
      response: GetResponseSchema,
      detail: { tags: TAGS, summary: "Get a policy with its share status", description: SHARED },
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
        response: { 200: t.Object({ warnings: WarningsSchema }), 204: t.Void({ description: "no body" }) },
        detail: {
          tags: TAGS,
          summary: "Update a policy's name, directives (or content) and tags",
          description: "204 without a body; 200 {warnings} when imported content (serialized, remote) had something dropped or changed.",
        },
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
        detail: { tags: TAGS, summary: "Delete a policy (and its share)" },
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
        response: t.String({ description: "text/plain: the policy value, directives joined by \"; \"" }),
        detail: { tags: TAGS, summary: "Serialize a policy for a header or a <meta> tag", description: SHARED },
      },
    )
    .post("/api/web_security/csp/:policy_id/_share", ({ user, params }) => csp.share(user.id, params.policy_id), {
      auth: "user",
      params: IdParams,
      response: UserShareSchema,
      detail: { tags: TAGS, summary: "Share a policy (idempotent)" },
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
        detail: { tags: TAGS, summary: "Stop sharing a policy (204 for any id)" },
      },
    );
