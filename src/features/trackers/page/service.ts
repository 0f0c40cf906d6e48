// Page trackers (supplement §16, §17): the kind on the shared tracker service (kind-service.ts: CRUD, revisions,
// logs), `_debug`, and the runs that render the page in the shared Chromium (engine.ts). One ChromiumEngine per
// server process, created on the first page run from `[chromium] executable / max_concurrency` and closed by
// close() (TrackersService.stop()).
import { existsSync } from "node:fs";
import type { AuthUser } from "../../../platform/auth/principal";
import type { Runtime } from "../../../platform/runtime";
import type { SecretsService } from "../../secrets/service";
import type { ExecuteInput, ExecuteOutput, TrackerCore } from "../core";
import { TrackerKindService } from "../kind-service";
import { revisionData } from "../revisions";
import { PAGE_PHASES, PAGE_TIMEOUT_MS } from "../shared-rules";
import type { PageTarget, PageTrackerDebugResult } from "./contract";
import { browserFailure, ChromiumEngine, MSG_ENGINE_CLOSED, pageDebugTrace } from "./engine";
import type { PageRunRequest, PageRunResult } from "./run-types";
import { parsePageTarget } from "./target";

export interface PageTrackersDeps {
  secrets: SecretsService;
}

export class PageTrackersService extends TrackerKindService<PageTarget> {
  private engine: ChromiumEngine | null = null;
  private closed = false;

  constructor(rt: Runtime, core: TrackerCore, deps: PageTrackersDeps) {
    super(rt, core, deps.secrets, {
      kind: "page",
      tagType: "pageTracker",
      phases: PAGE_PHASES,
      timeout: PAGE_TIMEOUT_MS,
      parseTarget: parsePageTarget,
      maxCount: (limits) => limits.max_page_trackers,
      scripts: (t) => (t.extractor !== undefined ? [{ field: "target.extractor", source: t.extractor, runtime: "chromium" }] : []),
    });
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
      user: this.rt.config.chromium.user,
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
    if (missing) return browserFailure(missing);
    const engine = this.getEngine();
    if (!engine) return browserFailure(MSG_ENGINE_CLOSED);
    try {
      return await engine.run(req);
    } catch (err) {
      this.rt.log.error("page run failed unexpectedly", { error: String((err as Error)?.message ?? err) });
      return browserFailure("Internal error");
    }
  }

  private request(target: PageTarget, extra: Pick<PageRunRequest, "secrets" | "timeoutMs" | "previousContent" | "debug" | "owner">): PageRunRequest {
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

  protected async execute(input: ExecuteInput<PageTarget>): Promise<ExecuteOutput> {
    const { tracker } = input;
    const r = await this.runPage(
      this.request(tracker.target, {
        secrets: input.secrets,
        timeoutMs: tracker.config.timeout,
        owner: tracker.userId,
        ...("previousContent" in input ? { previousContent: input.previousContent } : {}),
      }),
    );
    return { phases: r.phases, ...(r.ok && r.value !== undefined ? { value: r.value } : { error: r.error ?? "Run failed" }) };
  }

  // ---- _debug (supplement §17.5) ----

  /** One run with screenshots; persists nothing; shares the page run slots. No `previousContent`. */
  async debug(user: AuthUser, rawBody: unknown): Promise<PageTrackerDebugResult> {
    const { target, timeoutMs, secrets } = await this.debugInput(user, rawBody);
    const r = await this.inSlot(() => this.runPage(this.request(target, { secrets, timeoutMs, debug: true, owner: user.id })), user.id);
    return pageDebugTrace(r, revisionData);
  }
}
