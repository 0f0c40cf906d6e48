// Which trackers this process schedules, and whether it runs them (the tracker core's lifecycle).
//
// Every serving process keeps a job per enabled, scheduled tracker (so `scheduledAt` is right on any instance), but
// only the scheduler leader runs them (Db.elect: SQLite's one process at once; on PostgreSQL one instance holds an
// advisory lock, and when it dies another takes over within ELECT_POLL_MS). The others move their jobs past due
// times without running them. A new leader reloads every job with recovery: a due time missed while nobody led (or
// whose run died with the old leader) runs once, within the catch-up window; run claims (store.claimRun) keep a due
// time the old leader did run from running again.
//
// Jobs follow the trackers whichever process writes them: the other instances hear of a created, changed or deleted
// schedule through Db.publish (TOPIC, payload = tracker id, or "*" after bulk writes: imports, clones, user removal),
// and of the CLI's commits (`secbox data import`, `users clone`) through watchExternalCommits; both resync.
import type { TierLimits } from "../../config/schema";
import { watchExternalCommits } from "../../platform/db/db";
import type { Runtime } from "../../platform/runtime";
import type { CoreAccess } from "./core-access";
import type { TrackerConfig } from "./contract";
import { trackersStore as store } from "./store";

/** How long stop() waits for running jobs. */
const STOP_WAIT_MS = 15_000;
/** Cross-instance event: a tracker's schedule changed (payload: its id, or "*" for many). */
export const SCHEDULE_TOPIC = "trackers";

const errorText = (err: unknown) => String((err as Error)?.message ?? err);

export class TrackerScheduling {
  private stops: (() => void | Promise<void>)[] = [];
  private leading = false;
  private takeover: Promise<void> | undefined;

  constructor(
    private readonly rt: Runtime,
    private readonly core: CoreAccess,
  ) {}

  /** Loads every enabled scheduled tracker (missed runs run once, spread over the first minute), arms the timer and
   *  runs for leadership. */
  async start(): Promise<void> {
    if (!this.rt.config.scheduler.enabled) return;
    const scheduler = this.core.scheduler;
    scheduler.setDispatching(false);
    await this.loadAll();
    this.stops.push(
      await this.rt.db.elect("scheduler", (leader) => {
        this.leading = leader;
        if (!leader) {
          scheduler.setDispatching(false);
          this.rt.log.warn("trackers: no longer the scheduler leader (database connection lost)");
          return;
        }
        if (this.stops.length === 0) return void scheduler.setDispatching(true); // first election: jobs just loaded
        this.takeover = this.loadAll()
          .then(() => {
            if (this.leading) scheduler.setDispatching(true);
            this.rt.log.info("trackers: this instance is now the scheduler leader");
          })
          .catch((err) => this.rt.log.error("trackers: taking over the schedule failed", { error: errorText(err) }))
          .finally(() => (this.takeover = undefined));
      }),
    );
    scheduler.start();
    const resync = () => void this.resync().catch((err) => this.rt.log.error("trackers: resyncing schedules failed", { error: errorText(err) }));
    this.stops.push(
      watchExternalCommits(this.rt.db, resync, (err) =>
        this.rt.log.error("trackers: reading the database version failed", { error: errorText(err) }),
      ),
      this.rt.db.subscribe(SCHEDULE_TOPIC, (payload) => {
        if (payload === "*") return resync();
        this.reschedule(payload).catch((err) => this.rt.log.error("trackers: rescheduling failed", { trackerId: payload, error: errorText(err) }));
      }),
    );
  }

  /** Every job again from the stored trackers, with recovery of missed due times. */
  private async loadAll(): Promise<void> {
    const limitsByUser = new Map<string, TierLimits | undefined>();
    const seen = new Set<string>();
    for (const row of await store.enabled(this.rt.db)) {
      if (!this.core.hasKind(row.kind)) continue;
      if (!limitsByUser.has(row.user_id)) limitsByUser.set(row.user_id, await this.core.limitsFor(row.user_id));
      const limits = limitsByUser.get(row.user_id);
      if (!limits) continue;
      seen.add(row.id);
      this.core.schedule(row, limits, true);
    }
    for (const id of this.core.scheduler.ids()) if (!seen.has(id)) this.core.scheduler.remove(id);
  }

  /**
   * After another process committed: trackers added there (or whose job changed) get their job, trackers removed or
   * disabled there lose it. Jobs this process keeps in step itself are left as they are.
   */
  async resync(): Promise<void> {
    const wanted = new Set<string>();
    const limitsByUser = new Map<string, TierLimits | undefined>();
    const scheduler = this.core.scheduler;
    for (const row of await store.enabled(this.rt.db)) {
      const job = (JSON.parse(row.config) as TrackerConfig).job;
      if (!this.core.hasKind(row.kind) || !job) continue;
      wanted.add(row.id);
      const spec = scheduler.specOf(row.id);
      const rs = job.retryStrategy;
      const retry = JSON.stringify(rs ? { intervalMs: rs.interval, maxAttempts: rs.maxAttempts } : null);
      if (spec && spec.schedule === job.schedule && JSON.stringify(spec.retry ?? null) === retry) continue;
      if (!limitsByUser.has(row.user_id)) limitsByUser.set(row.user_id, await this.core.limitsFor(row.user_id));
      const limits = limitsByUser.get(row.user_id);
      if (limits) this.core.schedule(row, limits);
    }
    for (const id of scheduler.ids()) if (!wanted.has(id)) scheduler.remove(id);
  }

  /** One tracker's job as another instance just wrote it. */
  private async reschedule(id: string): Promise<void> {
    const row = await store.byId(this.rt.db, id);
    const limits = row && (await this.core.limitsFor(row.user_id));
    if (!row || !limits || !this.core.hasKind(row.kind)) return void this.core.scheduler.remove(id);
    this.core.schedule(row, limits);
  }

  /** Tells the other instances that these trackers' schedules changed ("*": many, resync). */
  announce(ids: string[] | "*"): void {
    if (ids !== "*" && ids.length === 0) return;
    const payloads = ids === "*" || ids.length > 20 ? ["*"] : ids;
    for (const p of payloads) {
      this.rt.db.publish(SCHEDULE_TOPIC, p).catch((err) => this.rt.log.error("trackers: telling other instances failed", { error: errorText(err) }));
    }
  }

  get isLeader(): boolean {
    return this.leading;
  }

  /** Stops firing, resigns leadership, drops queued work and waits (bounded) for running jobs. */
  async stop(): Promise<void> {
    const stops = this.stops;
    this.stops = [];
    for (const s of stops.reverse()) await s();
    await this.takeover;
    this.core.scheduler.stop();
    this.core.lanes.close();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([this.core.scheduler.idle(), new Promise<void>((r) => (timer = setTimeout(r, STOP_WAIT_MS)))]);
    clearTimeout(timer);
  }
}
