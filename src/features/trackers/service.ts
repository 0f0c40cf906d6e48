// Trackers: the shared core (core.ts: scheduling glue, revisions, logs, diffs; runs.ts: runs and their notifications)
// and its kinds (api/: HTTP API trackers; page/: page trackers rendered in Chromium), plus
// `POST /api/scheduler/parse_schedule` (supplement §14), and transfer.ts for user data export, import and clone.
// The wire shapes are contract.ts's (and api/contract.ts's, page/contract.ts's); rows map to them in store.ts.
import type { StorageQuota } from "../../platform/storage/quota";
import type { AuthUser } from "../../platform/auth/principal";
import { invalid } from "../../platform/core/errors";
import { analyzeSchedule } from "../../platform/jobs/cron";
import type { Scheduler } from "../../platform/jobs/scheduler";
import { tierLimits, type Runtime } from "../../platform/runtime";
import type { NotificationEmailService } from "../notification-email/service";
import type { SecretsService } from "../secrets/service";
import type { TagsService } from "../tags/service";
import type { UsersService } from "../users/service";
import { ApiTrackersService } from "./api/service";
import type { ScriptRunner } from "../../sandbox/types";
import type { ParseScheduleInput, SchedulerParseScheduleResult } from "./contract";
import { TrackerCore } from "./core";
import { PageTrackersService } from "./page/service";
import { isPlainObject } from "./params";
import { TrackerTransfer } from "./transfer";

export type { ScriptRunner } from "../../sandbox/types";
import type { ScriptChecker } from "../../sandbox/syntax";

export interface TrackersDeps {
  tags: TagsService;
  secrets: SecretsService;
  users: UsersService;
  notificationEmail: NotificationEmailService;
  /** Per-user storage cap and the free-disk guard (supplement §28). */
  storage: StorageQuota;
  /** The QuickJS pool for configurator/extractor scripts; without it, runs of trackers with scripts fail. */
  scripts?: ScriptRunner;
  /** Syntax warnings on save (§27); absent: none. */
  checkScripts?: ScriptChecker;
}

export class TrackersService {
  readonly core: TrackerCore;
  readonly api: ApiTrackersService;
  readonly page: PageTrackersService;
  /** Export, import and clone of trackers (features/user-data). */
  readonly transfer: TrackerTransfer;

  constructor(
    private readonly rt: Runtime,
    deps: TrackersDeps,
  ) {
    this.core = new TrackerCore(rt, deps);
    this.api = new ApiTrackersService(rt, this.core, { secrets: deps.secrets, scripts: deps.scripts });
    this.page = new PageTrackersService(rt, this.core, { secrets: deps.secrets });
    this.api.checkScripts = this.page.checkScripts = deps.checkScripts;
    this.transfer = new TrackerTransfer(rt, this.core, deps.tags);
  }

  /** The scheduler (tests drive it with tick(now) and idle()). */
  get scheduler(): Scheduler {
    return this.core.scheduler;
  }

  /** The script sandbox in use (the server wires it through deps.scripts). */
  get scriptRunner(): ScriptRunner | undefined {
    return this.api.scriptRunner;
  }

  /** Replaces the script sandbox (tests; undefined = none). */
  setScriptRunner(runner: ScriptRunner | undefined): void {
    this.api.setScriptRunner(runner);
  }

  /** Starts the scheduler (when scheduler.enabled): schedules survive restarts, missed runs run once. */
  async start(): Promise<void> {
    await this.core.start();
  }

  /** Stops the scheduler (running jobs get a bounded wait), then closes the shared Chromium. */
  async stop(): Promise<void> {
    try {
      await this.core.stop();
    } finally {
      await this.page.close();
    }
  }

  /** `{schedule}` → minimum interval (ms) and the next 5 occurrences (unix s); tier minimum enforced. */
  parseSchedule(user: AuthUser, body: ParseScheduleInput): SchedulerParseScheduleResult {
    if (!isPlainObject(body)) throw invalid("body: must be a JSON object {schedule}");
    const limits = tierLimits(this.rt.config, user.tier);
    const a = analyzeSchedule(body.schedule, this.rt.clock.now(), { field: "schedule", minAllowedSec: limits.min_schedule_interval_sec });
    return { minInterval: a.minIntervalMs, nextOccurrences: a.next.map((t) => Math.floor(t / 1000)) };
  }
}
