// API trackers (supplement §15, §17.4, §17.5): the kind on the shared tracker service (kind-service.ts: CRUD,
// revisions, logs), `_test`, `_debug`, and the runs of the configurator → requests → extractor pipeline.
import type { AuthUser } from "../../../platform/auth/principal";
import { ApiError } from "../../../platform/core/errors";
import { outboundFetch, OutboundError, type OutboundRequest, type OutboundResponse } from "../../../platform/net/client";
import { tierLimits, type Runtime } from "../../../platform/runtime";
import type { TierLimits } from "../../../config/schema";
import type { SecretsService } from "../../secrets/service";
import type { ExecuteInput, ExecuteOutput, TrackerCore } from "../core";
import { TrackerKindService } from "../kind-service";
import { asBody, parseTimeout } from "../params";
import { cutBytes, lossyText } from "../revisions";
import { API_PHASES, API_TIMEOUT_MS } from "../shared-rules";
import { DEBUG_BODY_BYTES, headersObject, runPipeline, MAX_RESPONSE_BYTES, type DebugTrace, type PipelineEnv } from "./pipeline";
import type { ScriptLimits, ScriptRunner } from "../../../sandbox/types";
import type { ApiTarget, ApiTrackerTestInput, ApiTrackerTestResult } from "./contract";
import { parseTarget } from "./target";

export interface ApiTrackersDeps {
  secrets: SecretsService;
  scripts?: ScriptRunner;
  /** Outbound client; platform/net's by default. */
  fetch?: (req: OutboundRequest) => Promise<OutboundResponse>;
}

export function scriptLimitsFor(limits: TierLimits): ScriptLimits {
  return {
    memoryMib: limits.script_memory_mib,
    timeoutMs: limits.script_timeout_sec * 1000,
    proxyTimeoutMs: limits.proxy_timeout_ms,
    maxProxyBodyBytes: MAX_RESPONSE_BYTES,
  };
}

export class ApiTrackersService extends TrackerKindService<ApiTarget> {
  private readonly fetch: (req: OutboundRequest) => Promise<OutboundResponse>;

  constructor(
    rt: Runtime,
    core: TrackerCore,
    private readonly deps: ApiTrackersDeps,
  ) {
    super(rt, core, deps.secrets, {
      kind: "api",
      tagType: "apiTracker",
      phases: API_PHASES,
      timeout: API_TIMEOUT_MS,
      parseTarget,
      maxCount: (limits) => limits.max_api_trackers,
      scripts: (t) => [
        ...(t.configurator !== undefined ? [{ field: "target.configurator", source: t.configurator, runtime: "quickjs" as const }] : []),
        ...(t.extractor !== undefined ? [{ field: "target.extractor", source: t.extractor, runtime: "quickjs" as const }] : []),
      ],
    });
    this.fetch = deps.fetch ?? outboundFetch;
  }

  /** The sandbox used by configurators and extractors (undefined: none wired). */
  get scriptRunner(): ScriptRunner | undefined {
    return this.deps.scripts;
  }

  /** Wires (or replaces) the sandbox used by configurators and extractors. */
  setScriptRunner(runner: ScriptRunner | undefined): void {
    this.deps.scripts = runner;
  }

  private env(limits: TierLimits, owner: string): PipelineEnv {
    return { fetch: this.fetch, scripts: this.deps.scripts, allowPrivate: this.allowPrivate, scriptLimits: scriptLimitsFor(limits), owner };
  }

  protected async execute(input: ExecuteInput<ApiTarget>): Promise<ExecuteOutput> {
    const { tracker } = input;
    const out = await runPipeline(this.env(input.limits, tracker.userId), {
      target: tracker.target,
      timeoutMs: tracker.config.timeout,
      secrets: input.secrets,
      ...("previousContent" in input ? { previousContent: input.previousContent } : {}),
    });
    return { phases: out.phases, ...(out.value !== undefined ? { value: out.value } : {}), ...(out.error !== undefined ? { error: out.error } : {}) };
  }

  // ---- _test and _debug ----

  /** Sends `requests[0]` without scripts; persists nothing; returns the raw response (supplement §17.4). */
  async test(rawBody: ApiTrackerTestInput): Promise<ApiTrackerTestResult> {
    const body = asBody(rawBody);
    const target = this.parseTarget(body.target);
    const timeoutMs = parseTimeout(body.timeout, API_TIMEOUT_MS, "timeout");
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
      if (err instanceof OutboundError && err.code === "TARGET_NOT_ALLOWED")
        throw new ApiError(400, "TARGET_NOT_ALLOWED", `target.url: ${err.message}`);
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
    const { target, timeoutMs, secrets } = await this.debugInput(user, rawBody);
    const limits = tierLimits(this.rt.config, user.tier);
    const out = await this.inSlot(() => runPipeline(this.env(limits, user.id), { target, timeoutMs, secrets, trace: true }), user.id);
    return out.trace!;
  }
}
