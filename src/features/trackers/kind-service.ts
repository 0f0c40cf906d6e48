// The service part every tracker kind shares (supplement §15.1, §16.1, §17): CRUD, revisions, logs and the members
// of a `_debug` body, on the tracker core (core.ts). A kind (api/, page/) extends TrackerKindService with what is its
// own: the target parser, the timeout range, the tier count limit, the fetching phases (execute) and its extra
// endpoints (`_test`, `_debug`).
import type { TierLimits } from "../../config/schema";
import type { AuthUser } from "../../platform/auth/principal";
import { invalid } from "../../platform/core/errors";
import { tierLimits, type Runtime } from "../../platform/runtime";
import type { SecretsService } from "../secrets/service";
import type { TrackerDraft } from "./transfer";
import type { ScriptChecker, ScriptToCheck } from "../../sandbox/syntax";
import { trackersStore } from "./store";
import type { TaggableType } from "../tags/service";
import type { ExecuteInput, ExecuteOutput, KindHandler, Revision, TrackerCore, TrackerKind, TrackerLog, TrackerWire } from "./core";
import { asBody, isPlainObject, parseConfig, parseTimeout, present, type TargetOptions, type TimeoutRange } from "./params";

/** What distinguishes a kind in the shared CRUD. */
export interface KindSpec<Target> {
  kind: TrackerKind;
  tagType: TaggableType;
  /** The kind's own run phases in order. */
  phases: readonly string[];
  /** `config.timeout` (and `_debug`'s) range in ms. */
  timeout: TimeoutRange;
  /** Validates `target` of create/update/_debug into the stored form. */
  parseTarget: (raw: unknown, opts: TargetOptions) => Target;
  /** How many trackers of this kind the tier allows. */
  maxCount: (limits: TierLimits) => number;
  /** The scripts of a target a save compiles (§27), with their field paths and where they run. */
  scripts: (target: Target) => ScriptToCheck[];
}

/** The members of a `_debug` body every kind reads: target, `config.timeout`, and the secret values the selector grants. */
export interface DebugInput<Target> {
  target: Target;
  timeoutMs: number;
  secrets: Record<string, string>;
}

const UPDATE_MEMBERS = ["name", "enabled", "config", "target", "notifications", "secrets", "tagIds"] as const;

export abstract class TrackerKindService<Target> {
  readonly handler: KindHandler<Target>;
  /** Syntax warnings on save (§27; TrackersService wires it); absent: none. */
  checkScripts: ScriptChecker | undefined;

  protected constructor(
    protected readonly rt: Runtime,
    protected readonly core: TrackerCore,
    protected readonly secretsService: SecretsService,
    private readonly spec: KindSpec<Target>,
  ) {
    this.handler = {
      kind: spec.kind,
      tagType: spec.tagType,
      phases: [...spec.phases],
      execute: (input) => this.execute(input),
    };
    core.registerKind(this.handler);
  }

  /** The kind's fetching phases for one run (scheduled or manual). Must not throw. */
  protected abstract execute(input: ExecuteInput<Target>): Promise<ExecuteOutput>;

  protected get allowPrivate() {
    return this.rt.config.network.allow_private_targets;
  }

  protected parseTarget(raw: unknown): Target {
    return this.spec.parseTarget(raw, { allowPrivate: this.allowPrivate });
  }

  protected parseConfig(raw: unknown, limits: TierLimits) {
    return parseConfig(raw, { limits, nowMs: this.rt.clock.now(), timeout: this.spec.timeout });
  }

  // ---- CRUD (supplement §15.1, §15.2, §16.1) ----

  list(userId: string, query: Record<string, unknown>) {
    return this.core.list<Target>(userId, this.spec.kind, query);
  }

  get(userId: string, rawId: string | undefined): Promise<TrackerWire<Target>> {
    return this.core.get<Target>(userId, this.spec.kind, rawId);
  }

  /** §27: the syntax errors of the target's scripts (compiled as they will run, never run). */
  private async scriptWarnings(user: AuthUser, target: Target): Promise<string[]> {
    const scripts = this.spec.scripts(target);
    return this.checkScripts && scripts.length > 0 ? this.checkScripts(scripts, user.id) : [];
  }

  /** The created tracker, plus `warnings` when one of its scripts does not compile (§27). */
  async create(user: AuthUser, rawBody: unknown): Promise<TrackerWire<Target> & { warnings?: string[] }> {
    const body = asBody(rawBody);
    const limits = tierLimits(this.rt.config, user.tier);
    const common = this.core.parseCommon(body, true);
    const target = this.parseTarget(body.target);
    const config = this.parseConfig(body.config, limits);
    const warnings = await this.scriptWarnings(user, target);
    const created = await this.core.create<Target>(
      user,
      this.spec.kind,
      { name: common.name!, enabled: common.enabled ?? true, config, target, notifications: common.notifications ?? false },
      common,
      this.spec.maxCount(limits),
    );
    return warnings.length > 0 ? { ...created, warnings } : created;
  }

  /** Every present top-level member replaces the stored one; `{}` → 400. Returns the warnings of a new target's
   *  scripts (§27; the route answers 200 `{warnings}` instead of 204 when there are some). */
  async update(user: AuthUser, rawId: string | undefined, rawBody: unknown): Promise<string[]> {
    const body = asBody(rawBody);
    if (!UPDATE_MEMBERS.some((m) => present(body[m]))) throw invalid(`body: at least one of ${UPDATE_MEMBERS.join(", ")} is required`);
    const limits = tierLimits(this.rt.config, user.tier);
    const common = this.core.parseCommon(body, false);
    const target = present(body.target) ? this.parseTarget(body.target) : undefined;
    const config = present(body.config) ? this.parseConfig(body.config, limits) : undefined;
    const warnings = target ? await this.scriptWarnings(user, target) : [];
    await this.core.update<Target>(user, this.spec.kind, rawId, common, (cur) => ({
      name: common.name ?? cur.name,
      enabled: common.enabled ?? cur.enabled,
      config: config ?? cur.config,
      target: target ?? cur.target,
      notifications: common.notifications ?? cur.notifications,
    }));
    return warnings;
  }

  delete(userId: string, rawId: string | undefined): Promise<void> {
    return this.core.delete(userId, this.spec.kind, rawId);
  }

  /** The create rules for an imported tracker (features/user-data) under `limits` (the importing user's tier, or
   *  wider for a clone); the secrets selector's entries are left unresolved (they name secrets of the file). */
  checkImport(raw: Record<string, unknown>, limits: TierLimits): TrackerDraft<Target> {
    const common = this.core.parseCommon(raw, true);
    const target = this.parseTarget(raw.target);
    const config = this.parseConfig(raw.config, limits);
    const secrets = this.secretsService.parseSelector(raw.secrets, "secrets");
    return { name: common.name!, enabled: common.enabled ?? true, config, target, notifications: common.notifications ?? false, secrets };
  }

  // ---- revisions and logs (supplement §17) ----

  history(userId: string, rawId: string | undefined, body: unknown): Promise<Revision[]> {
    return this.core.history(userId, this.spec.kind, rawId, body);
  }

  clear(userId: string, rawId: string | undefined) {
    return this.core.clear(userId, this.spec.kind, rawId);
  }

  logs(userId: string, rawId: string | undefined): Promise<TrackerLog[]> {
    return this.core.logs(userId, this.spec.kind, rawId);
  }

  clearLogs(userId: string, rawId: string | undefined) {
    return this.core.clearLogs(userId, this.spec.kind, rawId);
  }

  logsSummary(userId: string): Promise<Record<string, TrackerLog[]>> {
    return this.core.logsSummary(userId, this.spec.kind);
  }

  // ---- helpers of the kinds' `_debug` (supplement §17.5) ----

  /** `{target, config?: {timeout?}, secrets?}` of a `_debug` body, validated, with the granted secret values. */
  protected async debugInput(user: AuthUser, rawBody: unknown): Promise<DebugInput<Target>> {
    const body = asBody(rawBody);
    const target = this.parseTarget(body.target);
    if (present(body.config) && !isPlainObject(body.config)) throw invalid("config: must be an object");
    const timeoutMs = parseTimeout(isPlainObject(body.config) ? body.config.timeout : undefined, this.spec.timeout, "config.timeout");
    const selector = await this.secretsService.normalizeSelector(user.id, body.secrets, "secrets");
    const secrets = await this.secretsService.valuesFor(user.id, selector);
    return { target, timeoutMs, secrets };
  }

  /** Runs `fn` in this kind's run slots (`_debug` shares them with real runs), as `owner`'s (a user id). */
  protected inSlot<T>(fn: () => Promise<T>, owner: string): Promise<T> {
    return this.core.inSlot(this.spec.kind, fn, owner);
  }
}
