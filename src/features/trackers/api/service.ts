// API trackers (supplement §15, §17.4, §17.5): CRUD on the tracker core, `_test`, `_debug`, and the kind handler
// that runs the configurator → requests → extractor pipeline for scheduled and manual runs.
import type { AuthUser } from "../../../platform/auth/principal";
import { ApiError, invalid } from "../../../platform/http/errors";
import { outboundFetch, OutboundError, type OutboundRequest, type OutboundResponse } from "../../../platform/net/client";
import { tierLimits, type Runtime } from "../../../platform/runtime";
import type { TierLimits } from "../../../config/schema";
import type { SecretsService } from "../../secrets/service";
import type { ExecuteInput, ExecuteOutput, KindHandler, Revision, TrackerCore, TrackerLog, TrackerWire } from "../core";
import { isPlainObject, parseConfig, parseTimeout, present } from "../params";
import { cutBytes, lossyText } from "../revisions";
import { DEBUG_BODY_BYTES, headersObject, runPipeline, API_PHASES, MAX_RESPONSE_BYTES, type DebugTrace, type PipelineEnv } from "./pipeline";
import type { ScriptLimits, ScriptRunner } from "./scripts";
import { API_TIMEOUT, parseTarget, type ApiTarget } from "./target";

export type ApiTracker = TrackerWire<ApiTarget>;

export interface ApiTrackerTestResult {
  status: number;
  headers: Record<string, string>;
  body: string;
  latencyMs: number;
}

export interface ApiTrackersDeps {
  secrets: SecretsService;
  scripts?: ScriptRunner;
  /** Outbound client; platform/net's by default. */
  fetch?: (req: OutboundRequest) => Promise<OutboundResponse>;
}

const KIND = "api" as const;
const UPDATE_MEMBERS = ["name", "enabled", "config", "target", "notifications", "secrets", "tagIds"] as const;

const asBody = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null) return {};
  if (!isPlainObject(body)) throw invalid("body: must be a JSON object");
  return body;
};

export function scriptLimitsFor(limits: TierLimits): ScriptLimits {
  return { memoryMib: limits.script_memory_mib, timeoutMs: limits.script_timeout_sec * 1000, proxyTimeoutMs: limits.proxy_timeout_ms, maxProxyBodyBytes: MAX_RESPONSE_BYTES };
}

export class ApiTrackersService {
  readonly handler: KindHandler<ApiTarget>;
  private readonly fetch: (req: OutboundRequest) => Promise<OutboundResponse>;

  constructor(
    private readonly rt: Runtime,
    private readonly core: TrackerCore,
    private readonly deps: ApiTrackersDeps,
  ) {
    this.fetch = deps.fetch ?? outboundFetch;
    this.handler = {
      kind: KIND,
      tagType: "apiTracker",
      phases: [...API_PHASES],
      execute: (input) => this.execute(input),
    };
    core.registerKind(this.handler);
  }

  /** The sandbox used by configurators and extractors (undefined: none wired). */
  get scriptRunner(): ScriptRunner | undefined {
    return this.deps.scripts;
  }

  /** Wires (or replaces) the sandbox used by configurators and extractors. */
  setScriptRunner(runner: ScriptRunner | undefined): void {
    this.deps.scripts = runner;
  }

  private get allowPrivate() {
    return this.rt.config.network.allow_private_targets;
  }

  private env(limits: TierLimits): PipelineEnv {
    return { fetch: this.fetch, scripts: this.deps.scripts, allowPrivate: this.allowPrivate, scriptLimits: scriptLimitsFor(limits) };
  }

  private async execute(input: ExecuteInput<ApiTarget>): Promise<ExecuteOutput> {
    const { tracker } = input;
    const out = await runPipeline(this.env(input.limits), {
      target: tracker.target,
      timeoutMs: tracker.config.timeout,
      secrets: input.secrets,
      ...("previousContent" in input ? { previousContent: input.previousContent } : {}),
    });
    return { phases: out.phases, ...(out.value !== undefined ? { value: out.value } : {}), ...(out.error !== undefined ? { error: out.error } : {}) };
  }

  // ---- CRUD (supplement §15.1, §15.2) ----

  list(userId: string, query: Record<string, unknown>) {
    return this.core.list<ApiTarget>(userId, KIND, query);
  }

  get(userId: string, rawId: string | undefined): Promise<ApiTracker> {
    return this.core.get<ApiTarget>(userId, KIND, rawId);
  }

  async create(user: AuthUser, rawBody: unknown): Promise<ApiTracker> {
    const body = asBody(rawBody);
    const limits = tierLimits(this.rt.config, user.tier);
    const common = this.core.parseCommon(body, true);
    const target = parseTarget(body.target, { allowPrivate: this.allowPrivate });
    const config = parseConfig(body.config, { limits, nowMs: this.rt.clock.now(), timeout: API_TIMEOUT });
    return this.core.create<ApiTarget>(
      user,
      KIND,
      { name: common.name!, enabled: common.enabled ?? true, config, target, notifications: common.notifications ?? false },
      common,
      limits.max_api_trackers,
    );
  }

  /** Every present top-level member replaces the stored one; `{}` → 400. */
  async update(user: AuthUser, rawId: string | undefined, rawBody: unknown): Promise<void> {
    const body = asBody(rawBody);
    if (!UPDATE_MEMBERS.some((m) => present(body[m]))) throw invalid(`body: at least one of ${UPDATE_MEMBERS.join(", ")} is required`);
    const limits = tierLimits(this.rt.config, user.tier);
    const common = this.core.parseCommon(body, false);
    const target = present(body.target) ? parseTarget(body.target, { allowPrivate: this.allowPrivate }) : undefined;
    const config = present(body.config) ? parseConfig(body.config, { limits, nowMs: this.rt.clock.now(), timeout: API_TIMEOUT }) : undefined;
    await this.core.update<ApiTarget>(user, KIND, rawId, common, (cur) => ({
      name: common.name ?? cur.name,
      enabled: common.enabled ?? cur.enabled,
      config: config ?? cur.config,
      target: target ?? cur.target,
      notifications: common.notifications ?? cur.notifications,
    }));
  }

  delete(userId: string, rawId: string | undefined): Promise<void> {
    return this.core.delete(userId, KIND, rawId);
  }

  // ---- revisions and logs (supplement §17) ----

  history(userId: string, rawId: string | undefined, body: unknown): Promise<Revision[]> {
    return this.core.history(userId, KIND, rawId, body);
  }

  clear(userId: string, rawId: string | undefined) {
    return this.core.clear(userId, KIND, rawId);
  }

  logs(userId: string, rawId: string | undefined): Promise<TrackerLog[]> {
    return this.core.logs(userId, KIND, rawId);
  }

  clearLogs(userId: string, rawId: string | undefined) {
    return this.core.clearLogs(userId, KIND, rawId);
  }

  logsSummary(userId: string): Promise<Record<string, TrackerLog[]>> {
    return this.core.logsSummary(userId, KIND);
  }

  // ---- _test and _debug ----

  /** Sends `requests[0]` without scripts; persists nothing; returns the raw response (supplement §17.4). */
  async test(rawBody: unknown): Promise<ApiTrackerTestResult> {
    const body = asBody(rawBody);
    const target = parseTarget(body.target, { allowPrivate: this.allowPrivate });
    const timeoutMs = parseTimeout(body.timeout, API_TIMEOUT, "timeout");
    const req = target.requests[0]!;
    const started = performance.now();
    let res: OutboundResponse;
    try {
      res = await this.fetch({
        url: req.url,
        method: req.method,
        headers: req.headers,
        ...(req.body !== undefined ? { body: req.body } : {}),
        insecure: req.acceptInvalidCertificates,
        timeoutMs,
        maxBodyBytes: MAX_RESPONSE_BYTES,
        allowPrivate: this.allowPrivate,
      });
    } catch (err) {
      if (err instanceof OutboundError && err.code === "TARGET_NOT_ALLOWED") throw new ApiError(400, "TARGET_NOT_ALLOWED", `target.url: ${err.message}`);
      const reason = err instanceof OutboundError ? err.message : "Upstream request failed";
      throw new ApiError(400, "UPSTREAM_FAILED", `Request failed: ${reason}`);
    }
    return {
      status: res.status,
      headers: headersObject(res.headers),
      body: lossyText(cutBytes(res.body, DEBUG_BODY_BYTES)),
      latencyMs: Math.max(0, Math.round(performance.now() - started)),
    };
  }

  /** The whole pipeline with a trace; persists nothing; shares the API run slots (supplement §17.5). */
  async debug(user: AuthUser, rawBody: unknown): Promise<DebugTrace> {
    const body = asBody(rawBody);
    const target = parseTarget(body.target, { allowPrivate: this.allowPrivate });
    if (present(body.config) && !isPlainObject(body.config)) throw invalid("config: must be an object");
    const timeoutMs = parseTimeout(isPlainObject(body.config) ? body.config.timeout : undefined, API_TIMEOUT, "config.timeout");
    const selector = await this.deps.secrets.normalizeSelector(user.id, body.secrets, "secrets");
    const secrets = await this.deps.secrets.valuesFor(user.id, selector);
    const limits = tierLimits(this.rt.config, user.tier);
    const out = await this.core.inSlot(KIND, () => runPipeline(this.env(limits), { target, timeoutMs, secrets, trace: true }));
    return out.trace!;
  }
}
