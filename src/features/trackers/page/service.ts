// Page trackers (supplement §16, §17): CRUD on the tracker core, `_debug`, and the kind handler whose runs render
// the page in the shared Chromium (engine.ts). One ChromiumEngine per server process, created on the first page
// run from `[chromium] executable / max_concurrency` and closed by close() (TrackersService.stop()).
import { existsSync } from "node:fs";
import type { AuthUser } from "../../../platform/auth/principal";
import { invalid } from "../../../platform/http/errors";
import { tierLimits, type Runtime } from "../../../platform/runtime";
import type { SecretsService } from "../../secrets/service";
import type { ExecuteInput, ExecuteOutput, KindHandler, Revision, TrackerCore, TrackerLog, TrackerWire } from "../core";
import { isPlainObject, parseConfig, parseTimeout, present } from "../params";
import { revisionData } from "../revisions";
import { ChromiumEngine, MSG_ENGINE_CLOSED, pageDebugTrace, type PageLog, type PageRunRequest, type PageRunResult, type PageScreenshot } from "./engine";
import { PAGE_TIMEOUT, parsePageTarget, type PageTarget } from "./target";

export type PageTracker = TrackerWire<PageTarget>;

export interface PageDebugTrace {
  result?: unknown;
  error?: string;
  logs: PageLog[];
  screenshots: PageScreenshot[];
  elapsedMs: number;
}

export interface PageTrackersDeps {
  secrets: SecretsService;
}

const KIND = "page" as const;
export const PAGE_PHASES = ["browser", "navigate", "extract"] as const;
const UPDATE_MEMBERS = ["name", "enabled", "config", "target", "notifications", "secrets", "tagIds"] as const;

const asBody = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null) return {};
  if (!isPlainObject(body)) throw invalid("body: must be a JSON object");
  return body;
};

/** A run that never reached the browser (no Chromium, engine shut down). */
function failedRun(error: string): PageRunResult {
  return {
    ok: false,
    error,
    phases: [
      { phase: "browser", durationMs: 0, status: "failure", error },
      { phase: "navigate", durationMs: 0, status: "skipped" },
      { phase: "extract", durationMs: 0, status: "skipped" },
    ],
    logs: [],
    blocked: [],
    elapsedMs: 0,
  };
}

export class PageTrackersService {
  readonly handler: KindHandler<PageTarget>;
  private engine: ChromiumEngine | null = null;
  private closed = false;

  constructor(
    private readonly rt: Runtime,
    private readonly core: TrackerCore,
    private readonly deps: PageTrackersDeps,
  ) {
    this.handler = {
      kind: KIND,
      tagType: "pageTracker",
      phases: [...PAGE_PHASES],
      execute: (input) => this.execute(input),
    };
    core.registerKind(this.handler);
  }

  private get allowPrivate() {
    return this.rt.config.network.allow_private_targets;
  }

  /** Why page runs cannot start Chromium right now, or null when the configured executable exists. */
  chromiumUnavailable(): string | null {
    const exe = this.rt.config.chromium.executable;
    if (exe === "") return "Chromium is not available: [chromium] executable is not configured";
    if (!existsSync(exe)) return `Chromium is not available: ${exe} not found (install chromium or set [chromium] executable)`;
    return null;
  }

  /** The engine of this process (created on first use); null once closed. */
  private getEngine(): ChromiumEngine | null {
    if (this.closed) return null;
    this.engine ??= new ChromiumEngine({
      executable: this.rt.config.chromium.executable,
      maxConcurrency: this.rt.config.chromium.max_concurrency,
      log: this.rt.log,
    });
    return this.engine;
  }

  /** Engine statistics (null before the first page run). */
  engineStats() {
    return this.engine?.stats() ?? null;
  }

  /** Closes the browser; later runs fail with the engine's "shut down" message. */
  async close(): Promise<void> {
    this.closed = true;
    const engine = this.engine;
    this.engine = null;
    if (engine) await engine.close();
  }

  /** One page run with this process's engine; never throws. */
  private async runPage(req: PageRunRequest): Promise<PageRunResult> {
    const missing = this.chromiumUnavailable();
    if (missing) return failedRun(missing);
    const engine = this.getEngine();
    if (!engine) return failedRun(MSG_ENGINE_CLOSED);
    try {
      return await engine.run(req);
    } catch (err) {
      this.rt.log.error("page run failed unexpectedly", { error: String((err as Error)?.message ?? err) });
      return failedRun("Internal error");
    }
  }

  private request(target: PageTarget, extra: Pick<PageRunRequest, "secrets" | "timeoutMs" | "previousContent" | "debug">): PageRunRequest {
    return {
      url: target.url,
      ...(target.extractor !== undefined ? { extractor: target.extractor } : {}),
      ...(target.waitFor !== undefined ? { waitFor: target.waitFor } : {}),
      ...(target.userAgent !== undefined ? { userAgent: target.userAgent } : {}),
      headers: target.headers,
      acceptInvalidCertificates: target.acceptInvalidCertificates,
      resources: target.resources,
      allowPrivate: this.allowPrivate,
      ...extra,
    };
  }

  private async execute(input: ExecuteInput<PageTarget>): Promise<ExecuteOutput> {
    const { tracker } = input;
    const r = await this.runPage(
      this.request(tracker.target, {
        secrets: input.secrets,
        timeoutMs: tracker.config.timeout,
        ...("previousContent" in input ? { previousContent: input.previousContent } : {}),
      }),
    );
    return { phases: r.phases, ...(r.ok && r.value !== undefined ? { value: r.value } : { error: r.error ?? "Run failed" }) };
  }

  // ---- CRUD (supplement §16.1) ----

  list(userId: string, query: Record<string, unknown>) {
    return this.core.list<PageTarget>(userId, KIND, query);
  }

  get(userId: string, rawId: string | undefined): Promise<PageTracker> {
    return this.core.get<PageTarget>(userId, KIND, rawId);
  }

  async create(user: AuthUser, rawBody: unknown): Promise<PageTracker> {
    const body = asBody(rawBody);
    const limits = tierLimits(this.rt.config, user.tier);
    const common = this.core.parseCommon(body, true);
    const target = parsePageTarget(body.target, { allowPrivate: this.allowPrivate });
    const config = parseConfig(body.config, { limits, nowMs: this.rt.clock.now(), timeout: PAGE_TIMEOUT });
    return this.core.create<PageTarget>(
      user,
      KIND,
      { name: common.name!, enabled: common.enabled ?? true, config, target, notifications: common.notifications ?? false },
      common,
      limits.max_page_trackers,
    );
  }

  /** Every present top-level member replaces the stored one; `{}` → 400. */
  async update(user: AuthUser, rawId: string | undefined, rawBody: unknown): Promise<void> {
    const body = asBody(rawBody);
    if (!UPDATE_MEMBERS.some((m) => present(body[m]))) throw invalid(`body: at least one of ${UPDATE_MEMBERS.join(", ")} is required`);
    const limits = tierLimits(this.rt.config, user.tier);
    const common = this.core.parseCommon(body, false);
    const target = present(body.target) ? parsePageTarget(body.target, { allowPrivate: this.allowPrivate }) : undefined;
    const config = present(body.config) ? parseConfig(body.config, { limits, nowMs: this.rt.clock.now(), timeout: PAGE_TIMEOUT }) : undefined;
    await this.core.update<PageTarget>(user, KIND, rawId, common, (cur) => ({
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

  // ---- _debug (supplement §17.5) ----

  /** One run with screenshots; persists nothing; shares the page run slots. No `previousContent`. */
  async debug(user: AuthUser, rawBody: unknown): Promise<PageDebugTrace> {
    const body = asBody(rawBody);
    const target = parsePageTarget(body.target, { allowPrivate: this.allowPrivate });
    if (present(body.config) && !isPlainObject(body.config)) throw invalid("config: must be an object");
    const timeoutMs = parseTimeout(isPlainObject(body.config) ? body.config.timeout : undefined, PAGE_TIMEOUT, "config.timeout");
    const selector = await this.deps.secrets.normalizeSelector(user.id, body.secrets, "secrets");
    const secrets = await this.deps.secrets.valuesFor(user.id, selector);
    const r = await this.core.inSlot(KIND, () => this.runPage(this.request(target, { secrets, timeoutMs, debug: true })));
    return pageDebugTrace(r, revisionData);
  }
}
