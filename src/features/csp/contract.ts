// The wire shapes of content security policies (supplement §13), their sharing (§12.6) and the evaluator: the one
// declaration of each (TypeBox: the OpenAPI document and the web types come from it); the TypeScript types are their
// `Static`.
import { Named, Opt, StringEnum, T, UnixTime, Uuid, type Static } from "../../platform/http/contract";
import { TaggedMembers, TagIdsParam } from "../tags/contract";
import {
  MAX_DIRECTIVES,
  MAX_POLICY_NAME,
  OTHER_DIRECTIVES,
  REMOTE_MAX_REDIRECTS,
  REMOTE_SOURCES,
  REMOTE_TIMEOUT_MS,
  SERIALIZE_SOURCES,
  SOURCE_LIST_DIRECTIVES,
} from "./shared-rules";

/** The `type` of a policy's content (§13.3). */
export const CONTENT_TYPES = ["directives", "serialized", "remote"] as const;

// The vocabulary of the wire: directive names, finding severities and codes, and the evaluator's bounds.

/** Every directive a stored policy may hold (§13.1). */
export const DIRECTIVE_NAMES: readonly string[] = [...SOURCE_LIST_DIRECTIVES, ...OTHER_DIRECTIVES];

export const SEVERITIES = ["high", "medium", "low", "info"] as const;
export type Severity = (typeof SEVERITIES)[number];

/** Every code the evaluator can emit, with its severity (missing-base-uri and insecure-scheme vary). */
export const CHECKS: Record<string, Severity | "high|medium" | "high|medium|low|info"> = {
  "missing-script-src": "high",
  "missing-object-src": "high",
  "missing-base-uri": "high|medium",
  "unsafe-inline": "high",
  "unsafe-eval": "medium",
  "wildcard-source": "high",
  "insecure-scheme": "high|medium|low|info",
  "data-scheme": "high",
  "broad-scheme": "high",
  "plain-url-allowlist": "medium",
  "script-bypass-host": "high",
  "permissive-base-uri": "high",
  "strict-dynamic-without-nonce": "medium",
  "nonce-too-short": "medium",
  "invalid-hash": "medium",
  "unsafe-hashes": "low",
  "wasm-unsafe-eval": "info",
  "inline-speculation-rules": "info",
  "missing-frame-ancestors": "low",
  "deprecated-directive": "info",
  "no-reporting": "info",
  "unknown-keyword": "medium",
  "unquoted-keyword": "medium",
  "missing-semicolon": "medium",
  "unknown-directive": "low",
  "ip-source": "info",
  "unreadable-directive": "medium",
};

/** §27: at most this many findings per policy, most severe first. */
export const MAX_FINDINGS = 100;
/** (addition) A `serialized` text of at most this many policies (larger → 400): the answer stays bounded
 *  (MAX_POLICIES × MAX_FINDINGS findings), while real headers carry a handful. */
export const MAX_POLICIES = 20;

const DirectiveName = StringEnum(DIRECTIVE_NAMES, { description: "see supplement §13.1 for the value rules of each name" });
export const CspDirective = Named(
  "CspDirective",
  T.Object({
    name: DirectiveName,
    value: T.Optional(T.Array(T.String({ minLength: 1 }), { description: "values (no whitespace, ; or ,); absent for upgrade-insecure-requests" })),
  }),
);
/** A directive as stored: `value` absent only for `upgrade-insecure-requests`. */
export type Directive = Static<typeof CspDirective>;
export const ContentSecurityPolicy = Named(
  "ContentSecurityPolicy",
  T.Object({
    id: Uuid(),
    name: T.String(),
    directives: T.Array(CspDirective, { minItems: 1, maxItems: MAX_DIRECTIVES, description: "distinct names, in stored order" }),
    ...TaggedMembers,
    createdAt: UnixTime(),
    updatedAt: UnixTime(),
  }),
);
export type ContentSecurityPolicy = Static<typeof ContentSecurityPolicy>;
const Warnings = T.Array(T.String(), {
  description: "what the import (serialized text or remote URL) dropped or changed, e.g. \"script-src: dropped 'unsafe_inline' (unknown keyword)\"",
});
export const ContentSecurityPolicyCreated = Named(
  "ContentSecurityPolicyCreated",
  T.Composite([ContentSecurityPolicy, T.Object({ warnings: T.Optional(Warnings) })], {
    description: "the policy, plus warnings when an import dropped or changed something",
  }),
);
/** A created policy; `warnings` when an import dropped or changed something (§13.3). */
export type PolicyCreated = Static<typeof ContentSecurityPolicyCreated>;
export const PolicyShare = Named(
  "ContentSecurityPolicyShare",
  T.Object({
    id: Uuid({ description: "share id (UUID v4): send it as X-User-Share-ID" }),
    resource: T.Object({ type: StringEnum(["contentSecurityPolicy"]), policyId: Uuid() }),
    createdAt: UnixTime(),
  }),
);
/** `UserShare` of a policy (§12.6). */
export type PolicyShare = Static<typeof PolicyShare>;
export const ContentSecurityPolicyGetResponse = Named(
  "ContentSecurityPolicyGetResponse",
  T.Object(
    { policy: ContentSecurityPolicy, userShare: T.Optional(PolicyShare) },
    { description: "to anyone but the owner: tags and tagIds are [] and userShare is included" },
  ),
);
export type PolicyGetResponse = Static<typeof ContentSecurityPolicyGetResponse>;
export const CspContent = Named(
  "CspContent",
  T.Union(
    [
      T.Object({ type: StringEnum(["directives"]), value: T.Array(CspDirective, { minItems: 1, maxItems: MAX_DIRECTIVES }) }),
      T.Object({
        type: StringEnum(["serialized"]),
        value: T.String({ description: "policy text: the first policy; invalid parts dropped with warnings" }),
      }),
      T.Object({
        type: StringEnum(["remote"]),
        value: T.Object({
          url: T.String({ format: "uri", description: `http(s) URL fetched once (${REMOTE_TIMEOUT_MS / 1000} s)` }),
          source: StringEnum(REMOTE_SOURCES, { description: "enforcingHeader, reportOnlyHeader or meta (<meta http-equiv>)" }),
          followRedirects: Opt(T.Boolean({ description: `default true (up to ${REMOTE_MAX_REDIRECTS})` })),
        }),
      }),
    ],
    { description: `the policy content: ${CONTENT_TYPES.join(", ")}` },
  ),
);
const PolicyName = T.String({ minLength: 1, description: `1..${MAX_POLICY_NAME} characters after trimming, unique per user` });
export const ContentSecurityPoliciesCreateParams = Named(
  "ContentSecurityPoliciesCreateParams",
  T.Object({ name: PolicyName, content: CspContent, tagIds: TagIdsParam }),
);
export const ContentSecurityPoliciesUpdateParams = Named(
  "ContentSecurityPoliciesUpdateParams",
  T.Object(
    {
      name: Opt(PolicyName),
      directives: Opt(
        T.Array(CspDirective, { minItems: 1, maxItems: MAX_DIRECTIVES, description: "replaces all directives; exclusive with content" }),
      ),
      content: Opt(CspContent),
      tagIds: TagIdsParam,
    },
    { description: "at least one member; directives and content are exclusive", minProperties: 1 },
  ),
);
export const ContentSecurityPoliciesSerializeParams = Named(
  "ContentSecurityPoliciesSerializeParams",
  T.Object({
    source: StringEnum(SERIALIZE_SOURCES, {
      description: "the delivery: meta drops sandbox, frame-ancestors, report-uri and report-to; reportOnlyHeader drops sandbox",
    }),
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
        policyIndex: T.Integer({
          minimum: 0,
          maximum: MAX_POLICIES - 1,
          description: "the policy the finding is about, 0-based in the order of the text (always 0 for a stored policy)",
        }),
      }),
      {
        maxItems: MAX_POLICIES * MAX_FINDINGS,
        description: `sorted by severity (high, medium, low, info), policy order kept within a severity; at most ${MAX_FINDINGS} per policy, the most severe`,
      },
    ),
    policyCount: T.Integer({
      minimum: 1,
      maximum: MAX_POLICIES,
      description:
        "how many policies were evaluated: a text may hold several separated by ',' (browsers enforce every one of them, so a resource must pass each)",
    }),
  }),
);
/** A `_evaluate` answer; `findings[i].policyIndex` names the policy of a text holding several. */
export type Evaluation = Static<typeof CspEvaluation>;
export type PolicyFinding = Evaluation["findings"][number];

/** The `_update` answer when an import had something dropped or changed (200; else 204). */
export const PolicyUpdateWarnings = T.Object({ warnings: Warnings });
