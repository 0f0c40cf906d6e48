// Content security policies (supplement §13): CRUD, the three content variants (directives, serialized text,
// remote URL), `_serialize`, sharing (§12.6) and the evaluator. Imports (serialized text, remote URL) answer with
// `warnings` naming everything they dropped or changed (§13.3).
import type { AuthUser, Principal } from "../../platform/auth/principal";
import type { Db } from "../../platform/db/db";
import type { Shares, UserShare } from "../../platform/auth/share";
import { duplicateName, invalid, isUniqueViolation, notFound } from "../../platform/core/errors";
import { isUuid, newId } from "../../platform/core/ids";
import { parseListQuery } from "../../platform/http/list-query";
import type { LooseInput } from "../../platform/http/contract";
import { normalizeName, pathId } from "../../platform/core/validate";
import { nowSec, type Runtime } from "../../platform/runtime";
import type { TagsService } from "../tags/service";
import type { Untagged } from "../tags/contract";
import {
  CONTENT_TYPES,
  type ContentSecurityPoliciesCreateParams,
  type ContentSecurityPoliciesSerializeParams,
  type ContentSecurityPoliciesUpdateParams,
  type ContentSecurityPolicy,
  type CspEvaluateParams,
  type Directive,
  type Evaluation,
  type PolicyCreated,
  type PolicyGetResponse,
  type PolicyShare,
} from "./contract";
import { validateDirectives } from "./directives";
import { importPolicies, parseSerialized } from "./import";
import { evaluateInput, evaluateSize, evaluateTask, INLINE_EVALUATE_CHARS, MAX_EVALUATE_BYTES, type EvaluateInput } from "./tasks";
import type { Work } from "../../platform/work/pool";
import { fetchRemotePolicies, SEVERAL_LABEL, validateRemote, type RemoteSpec } from "./remote";
import { serializePolicy, type SerializeSource } from "./serialize";
import { MAX_POLICY_NAME, SERIALIZE_SOURCES } from "./shared-rules";
import { cspStore, toPolicy, type PolicyRecord } from "./store";

const ENTITY = "contentSecurityPolicy" as const;
const WHAT = "Policy";

/** The wire share of a policy (the platform's share record, shaped as `UserShare`, §12.6). */
const toPolicyShare = (s: UserShare, policyId: string): PolicyShare => ({ id: s.id, resource: { type: ENTITY, policyId }, createdAt: s.createdAt });

/** Directives known after body validation (with the import's warnings, if any), or a remote fetch still to make. */
type ContentPlan = { directives: Directive[]; warnings: string[] } | { remote: RemoteSpec; field: string };

const present = (v: unknown) => v !== undefined && v !== null;

export class CspService {
  constructor(
    private readonly rt: Runtime,
    private readonly tags: TagsService,
    private readonly shares: Shares,
    /** The work pool for long evaluations (absent: everything inline). */
    private readonly work?: Work,
  ) {}

  private get allowPrivate() {
    return this.rt.config.network.allow_private_targets;
  }

  // ---- content variants (§13.3) ----

  /** Body-level validation of `content` (all 400s that need no network). */
  private planContent(raw: unknown, field: string): ContentPlan {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw invalid(`${field}: must be an object {type, value}`);
    const { type, value } = raw as { type?: unknown; value?: unknown };
    if (typeof type !== "string" || !(CONTENT_TYPES as readonly string[]).includes(type))
      throw invalid(`${field}.type: must be one of ${CONTENT_TYPES.join(", ")}`);
    if (type === "directives") return { directives: validateDirectives(value, `${field}.value`), warnings: [] };
    if (type === "serialized") {
      if (typeof value !== "string") throw invalid(`${field}.value: must be a string (the policy text)`);
      return parseSerialized(value, `${field}.value`);
    }
    return { remote: validateRemote(value, `${field}.value`, this.allowPrivate), field: `${field}.value` };
  }

  private async materialize(plan: ContentPlan): Promise<{ directives: Directive[]; warnings: string[] }> {
    if ("directives" in plan) return plan;
    const policies = await fetchRemotePolicies(plan.remote, plan.field, this.allowPrivate);
    const label = SEVERAL_LABEL[plan.remote.source];
    return importPolicies(policies, (n) => `the response holds ${n} (${label})`, `${plan.field}.url`);
  }

  // ---- CRUD ----

  async list(userId: string, rawQuery: Record<string, unknown>): Promise<{ items: ContentSecurityPolicy[]; total: number }> {
    const { rows, total } = await cspStore.list(this.rt.db, userId, parseListQuery(rawQuery));
    const tagMap = await this.tags.tagsFor(
      ENTITY,
      rows.map((r) => r.id),
    );
    return { items: rows.map((r) => toPolicy(r, tagMap.get(r.id) ?? [])), total };
  }

  /** Shared operation (§12.6): the owner sees tags and userShare when shared; anyone else sees no tags, and userShare. */
  async get(request: Request, principal: Principal | undefined, rawId: string | undefined): Promise<PolicyGetResponse> {
    const { row, viaShare } = await this.resolveShared(request, principal, rawId);
    const share = await this.shares.forResource(ENTITY, row.id);
    const tags = viaShare ? [] : ((await this.tags.tagsFor(ENTITY, [row.id])).get(row.id) ?? []);
    const policy = toPolicy(row, tags);
    return share ? { policy, userShare: toPolicyShare(share, row.id) } : { policy };
  }

  async create(user: AuthUser, input: LooseInput<typeof ContentSecurityPoliciesCreateParams>): Promise<PolicyCreated> {
    if (!present(input.name)) throw invalid("name: is required");
    const name = normalizeName(input.name, MAX_POLICY_NAME);
    if (!present(input.content)) throw invalid("content: is required");
    const plan = this.planContent(input.content, "content");
    const tagIds = present(input.tagIds) ? await this.tags.resolveTagIds(user.id, input.tagIds) : [];
    const { directives, warnings } = await this.materialize(plan);
    const now = nowSec(this.rt.clock);
    const row: PolicyRecord = { id: newId(), user_id: user.id, name, directives, created_at: now, updated_at: now };
    try {
      await this.rt.db.tx(async (tx) => {
        await cspStore.insert(tx, row);
        await this.tags.setEntityTags(tx, ENTITY, row.id, user.id, tagIds);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName(WHAT, name);
      throw err;
    }
    const policy = toPolicy(row, (await this.tags.tagsFor(ENTITY, [row.id])).get(row.id) ?? []);
    return warnings.length > 0 ? { ...policy, warnings } : policy;
  }

  /** Returns the import's warnings when `content` was imported with some (the route then answers 200, else 204). */
  async update(
    userId: string,
    rawId: string | undefined,
    input: LooseInput<typeof ContentSecurityPoliciesUpdateParams>,
  ): Promise<{ warnings: string[] } | undefined> {
    // Body checks first (supplement §1 check order), then the resource, then the fetch and stored-data rules.
    const name = present(input.name) ? normalizeName(input.name, MAX_POLICY_NAME) : undefined;
    const hasDirectives = present(input.directives);
    const hasContent = present(input.content);
    const hasTags = present(input.tagIds);
    if (hasDirectives && hasContent) throw invalid("directives, content: give one or the other, not both");
    if (name === undefined && !hasDirectives && !hasContent && !hasTags)
      throw invalid("body: at least one of name, directives, content or tagIds is required");
    const plan: ContentPlan | undefined = hasDirectives
      ? { directives: validateDirectives(input.directives, "directives"), warnings: [] }
      : hasContent
        ? this.planContent(input.content, "content")
        : undefined;

    const id = pathId(rawId, WHAT);
    const current = await cspStore.get(this.rt.db, userId, id);
    if (!current) throw notFound(WHAT);
    const tagIds = hasTags ? await this.tags.resolveTagIds(userId, input.tagIds) : undefined;
    const imported = plan ? await this.materialize(plan) : undefined;
    const directives = imported?.directives;

    const next: PolicyRecord = {
      ...current,
      name: name ?? current.name,
      directives: directives ?? current.directives,
      updated_at: nowSec(this.rt.clock),
    };
    try {
      await this.rt.db.tx(async (tx) => {
        if ((await cspStore.update(tx, next)).changes === 0) throw notFound(WHAT);
        if (tagIds) await this.tags.setEntityTags(tx, ENTITY, id, userId, tagIds);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName(WHAT, next.name);
      throw err;
    }
    return imported && imported.warnings.length > 0 ? { warnings: imported.warnings } : undefined;
  }

  /** Deletes the policy, its tag links and its share in one transaction. */
  async delete(userId: string, rawId: string | undefined): Promise<void> {
    const id = pathId(rawId, WHAT);
    await this.rt.db.tx(async (tx) => {
      if ((await cspStore.delete(tx, userId, id)).changes === 0) throw notFound(WHAT);
      await this.tags.removeEntity(tx, ENTITY, id);
      await this.shares.remove(tx, ENTITY, id);
    });
  }

  // ---- serialization (§13.4) ----

  async serialize(
    request: Request,
    principal: Principal | undefined,
    rawId: string | undefined,
    input: LooseInput<typeof ContentSecurityPoliciesSerializeParams>,
  ): Promise<string> {
    const source = input.source;
    if (typeof source !== "string" || !(SERIALIZE_SOURCES as readonly string[]).includes(source))
      throw invalid(`source: must be one of ${SERIALIZE_SOURCES.join(", ")}`);
    const { row } = await this.resolveShared(request, principal, rawId);
    return serializePolicy(row.directives, source as SerializeSource);
  }

  // ---- sharing (§12.6) ----

  async share(userId: string, rawId: string | undefined): Promise<PolicyShare> {
    const id = pathId(rawId, WHAT);
    if (!(await cspStore.get(this.rt.db, userId, id))) throw notFound(WHAT);
    return toPolicyShare(await this.shares.share(userId, ENTITY, id), id);
  }

  /** 204 whatever the id: unknown, foreign and malformed ids are ignored (§13.2, as for templates). */
  async unshare(userId: string, rawId: string | undefined): Promise<void> {
    if (!isUuid(rawId)) return;
    const id = rawId.toLowerCase();
    if ((await cspStore.ownerOf(this.rt.db, id)) !== userId) return;
    await this.shares.unshare(ENTITY, id);
  }

  // ---- evaluator (§13.2 `_evaluate`) ----

  /** At most 100 findings per policy (most severe first) for a text of at most 64 KiB (§27), each with its
   *  `policyIndex`; a large input is evaluated on the work pool under the caller's share (tasks.ts), a small one
   *  inline. */
  async evaluate(userId: string, input: LooseInput<typeof CspEvaluateParams>): Promise<Evaluation> {
    const hasId = present(input.policyId);
    const hasText = present(input.serialized);
    if (hasId === hasText) throw invalid("policyId, serialized: give exactly one of them");
    if (hasText) {
      if (typeof input.serialized !== "string") throw invalid("serialized: must be a string");
      if (input.serialized.length > MAX_EVALUATE_BYTES || Buffer.byteLength(input.serialized, "utf8") > MAX_EVALUATE_BYTES)
        throw invalid(`serialized: must be at most ${MAX_EVALUATE_BYTES} bytes (64 KiB)`);
      // As browsers read it (§13.2, §27): every policy of a comma-joined text, every token, directives with
      // unreadable characters ignored.
      return this.evaluated(userId, { text: input.serialized });
    }
    if (!isUuid(input.policyId)) throw invalid("policyId: must be a UUID");
    const row = await cspStore.get(this.rt.db, userId, input.policyId.toLowerCase());
    if (!row) throw notFound(WHAT);
    return this.evaluated(userId, { directives: row.directives });
  }

  private async evaluated(userId: string, input: EvaluateInput): Promise<Evaluation> {
    if (!this.work || evaluateSize(input) <= INLINE_EVALUATE_CHARS) return evaluateInput(input);
    return this.work.run(userId, evaluateTask, input);
  }

  // ---- helpers ----

  private async resolveShared(
    request: Request,
    principal: Principal | undefined,
    rawId: string | undefined,
  ): Promise<{ row: PolicyRecord; viaShare: boolean }> {
    const access = await this.shares.resolve(request, principal, ENTITY, rawId ?? "", (id) => cspStore.ownerOf(this.rt.db, id), WHAT);
    const row = await cspStore.get(this.rt.db, access.ownerId, (rawId ?? "").toLowerCase());
    if (!row) throw notFound(WHAT);
    return { row, viaShare: access.viaShare };
  }

  // ---- user data: export, import, clone (features/user-data). Writes take the import transaction's handle. ----

  /** Every policy of the user, name ascending (tags not included). */
  async exportAll(userId: string): Promise<Untagged<ContentSecurityPolicy>[]> {
    return cspStore.allOfUser(this.rt.db, userId);
  }

  /** The rules for an imported policy: name and `directives` (§13.1). */
  checkImport(raw: { name?: unknown; directives?: unknown }): { name: string; directives: Directive[] } {
    return { name: normalizeName(raw.name, MAX_POLICY_NAME), directives: validateDirectives(raw.directives, "directives") };
  }

  importRefs = (db: Db, userId: string) => cspStore.refs(db, userId);
  importCount = (db: Db, userId: string) => cspStore.count(db, userId);

  async importInsert(
    tx: Db,
    userId: string,
    id: string,
    p: { name: string; directives: Directive[] },
    createdAt: number,
    updatedAt: number,
  ): Promise<void> {
    await cspStore.insert(tx, { id, user_id: userId, name: p.name, directives: p.directives, created_at: createdAt, updated_at: updatedAt });
  }

  async importReplace(tx: Db, userId: string, id: string, p: { name: string; directives: Directive[] }, now: number): Promise<void> {
    await cspStore.update(tx, { id, user_id: userId, name: p.name, directives: p.directives, updated_at: now });
  }

  /** Deletes the policy, its tag links and its share. */
  async importDelete(tx: Db, userId: string, id: string): Promise<void> {
    if ((await cspStore.delete(tx, userId, id)).changes === 0) return;
    await this.tags.removeEntity(tx, ENTITY, id);
    await this.shares.remove(tx, ENTITY, id);
  }
}
