// The scheduler (supplement §14 "Runner"): cron jobs kept in memory, fired into bounded lanes (queue.ts).
//
// - Time comes from an injectable clock; `tick(now)` fires everything due at `now`, so tests drive schedules by
//   moving a fake clock and calling tick() instead of waiting. start() arms a real timer that calls tick() at
//   the next due time (at most `maxPollMs` apart, which also covers a clock that is moved by hand).
// - A job fires into its lane keyed by its id: one job never runs twice at once. An occurrence that comes due
//   while the job is still waiting or running is skipped (no backlog).
// - `minGapMs` (the owner's tier minimum): scheduled occurrences earlier than the last scheduled fire's due time
//   plus the gap are skipped. Only scheduled (attempt 0, catch-ups included) fires count: manual runs and retries
//   never move the floor, and a fire that started late is measured from when it was due.
// - Retries (`constant`): after a failed scheduled run, retry after `intervalMs`, up to `maxAttempts` times; a
//   retry that would start at or after the next occurrence is dropped.
// - Recovery: add(..., {recover: true}) with the last run time: when an occurrence was missed while the server
//   was down, the job runs once, at a random moment within `catchUpWindowMs` (default 60 s) from now (never
//   before the tier gap since the last scheduled fire allows).
// - Leadership (several instances on one database): only the leader dispatches. setDispatching(false) keeps the jobs
//   and their next occurrences moving (what `dueAt` reports stays current) without running anything; retries and
//   catch-ups planned meanwhile are dropped (the new leader plans its own when it takes over).
// Nothing here knows about trackers; handlers are registered per lane.
import type { Clock } from "../runtime";
import { nextOccurrence } from "./cron";
import { JobLanes, QueueClosedError } from "./queue";

export interface RetryPolicy {
  intervalMs: number;
  maxAttempts: number;
}

export interface JobSpec {
  id: string;
  /** Lane (and handler) name, e.g. "api". */
  kind: string;
  /** Normalized cron pattern (cron.ts). */
  schedule: string;
  /** Scheduled runs never start closer together than this. */
  minGapMs: number;
  /** Whose job it is (a user id): the lane's fair share between owners (queue.ts). */
  owner?: string;
  retry?: RetryPolicy;
}

export interface RunInfo {
  /** 0 = a scheduled (or catch-up) run, n ≥ 1 = the n-th retry. */
  attempt: number;
  /** When the run was due (ms). */
  dueAt: number;
  /** A run missed while the server was down. */
  catchUp: boolean;
}

export interface RunOutcome {
  ok: boolean;
}

export interface JobHandler<R extends RunOutcome = RunOutcome> {
  run(id: string, info: RunInfo): Promise<R>;
  /** After every scheduled run or retry: `retryAt` is set when a retry has been planned. */
  settled?(id: string, info: RunInfo, outcome: R, retryAt: number | undefined): Promise<void> | void;
}

export interface RunEvent {
  id: string;
  kind: string;
  dueAt: number;
  /** When tick() handed it to the lane. */
  dispatchedAt: number;
  /** When the handler started (after waiting for a slot). */
  startedAt: number;
  finishedAt: number;
  ok: boolean;
}

export interface SchedulerOptions {
  clock: Clock;
  lanes: JobLanes;
  random?: () => number;
  catchUpWindowMs?: number;
  maxPollMs?: number;
  onError?: (message: string, fields: Record<string, unknown>) => void;
}

interface JobState {
  spec: JobSpec;
  /** Next cron occurrence (ms); undefined when the pattern never fires again. */
  cronNext?: number;
  /** A one-off run (retry or catch-up) planned before cronNext. */
  oneShot?: { at: number; attempt: number; catchUp: boolean };
  /** Due time of the last scheduled (attempt 0) fire: the tier gap floor. */
  lastFireAt?: number;
}

export class Scheduler {
  private readonly jobs = new Map<string, JobState>();
  private readonly handlers = new Map<string, JobHandler<any>>();
  private readonly observers: ((e: RunEvent) => void)[] = [];
  /** Fired runs until their settle step is done. */
  private readonly pending = new Set<Promise<void>>();
  private readonly clock: Clock;
  private readonly lanes: JobLanes;
  private readonly random: () => number;
  private readonly catchUpWindowMs: number;
  private readonly maxPollMs: number;
  private readonly onError: (message: string, fields: Record<string, unknown>) => void;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When the armed timer fires (clock time). */
  private armedFor: number | undefined;
  private running = false;
  private dispatching = true;

  constructor(opts: SchedulerOptions) {
    this.clock = opts.clock;
    this.lanes = opts.lanes;
    this.random = opts.random ?? Math.random;
    this.catchUpWindowMs = opts.catchUpWindowMs ?? 60_000;
    this.maxPollMs = opts.maxPollMs ?? 1000;
    this.onError = opts.onError ?? (() => {});
  }

  setHandler<R extends RunOutcome>(kind: string, handler: JobHandler<R>): void {
    this.handlers.set(kind, handler);
  }

  /** Called after every fired run (metrics, benchmarks). */
  observe(fn: (e: RunEvent) => void): void {
    this.observers.push(fn);
  }

  get size(): number {
    return this.jobs.size;
  }

  get isRunning(): boolean {
    return this.running;
  }

  /**
   * Adds or replaces a job. `anchorAt` is when the schedule took effect (creation, change, re-enable); `lastRunAt`
   * the start of its latest run of any kind (manual ones included); `lastFireAt` the due time of its latest
   * scheduled fire (the tier gap floor; manual runs and retries do not count). With `recover`, an occurrence after
   * max(anchorAt, lastRunAt) that is already past means a run was missed: it runs once, spread over the catch-up
   * window.
   */
  add(spec: JobSpec, opts: { anchorAt: number; lastRunAt?: number; lastFireAt?: number; recover?: boolean }): void {
    const now = this.clock.now();
    const ref = Math.max(opts.anchorAt, opts.lastRunAt ?? 0);
    const state: JobState = { spec };
    if (opts.lastFireAt !== undefined) state.lastFireAt = opts.lastFireAt;
    state.cronNext = this.nextAllowed(state, Math.max(now, ref));
    if (opts.recover) {
      const missed = nextOccurrence(spec.schedule, ref);
      if (missed !== undefined && missed <= now) {
        const floor = state.lastFireAt !== undefined ? state.lastFireAt + spec.minGapMs : Number.NEGATIVE_INFINITY;
        const at = Math.max(now + Math.floor(this.random() * this.catchUpWindowMs), floor);
        if (state.cronNext === undefined || at < state.cronNext) state.oneShot = { at, attempt: 0, catchUp: true };
      }
    }
    this.jobs.set(spec.id, state);
    const at = this.due(state);
    if (this.running && at !== undefined && (this.armedFor === undefined || at < this.armedFor)) this.rearm();
  }

  /** Updates the tier gap and retry policy of a job in place; a planned occurrence that a larger gap forbids moves on. */
  update(id: string, patch: Partial<Pick<JobSpec, "minGapMs" | "retry">>): void {
    const state = this.jobs.get(id);
    if (!state) return;
    state.spec = { ...state.spec, ...patch };
    if (
      patch.minGapMs !== undefined &&
      state.cronNext !== undefined &&
      state.lastFireAt !== undefined &&
      state.cronNext < state.lastFireAt + patch.minGapMs
    ) {
      state.cronNext = this.nextAllowed(state, this.clock.now());
    }
  }

  remove(id: string): void {
    this.jobs.delete(id);
  }

  has(id: string): boolean {
    return this.jobs.has(id);
  }

  /** The spec a job was added with (undefined when there is no such job). */
  specOf(id: string): JobSpec | undefined {
    return this.jobs.get(id)?.spec;
  }

  /** Ids of every job. */
  ids(): string[] {
    return [...this.jobs.keys()];
  }

  /** Next planned start (ms) of a job, or undefined. */
  dueAt(id: string): number | undefined {
    const s = this.jobs.get(id);
    return s ? this.due(s) : undefined;
  }

  private due(s: JobState): number | undefined {
    if (s.oneShot && (s.cronNext === undefined || s.oneShot.at < s.cronNext)) return s.oneShot.at;
    return s.cronNext;
  }

  /** First occurrence strictly after `after` that also respects the tier gap since the last scheduled fire. */
  private nextAllowed(s: JobState, after: number): number | undefined {
    const floor = s.lastFireAt !== undefined ? s.lastFireAt + s.spec.minGapMs - 1 : Number.NEGATIVE_INFINITY;
    return nextOccurrence(s.spec.schedule, Math.max(after, floor));
  }

  /** Whether due jobs run (the leader) or are only moved past (an instance that does not lead). */
  setDispatching(on: boolean): void {
    this.dispatching = on;
  }

  get isDispatching(): boolean {
    return this.dispatching;
  }

  /** Fires every job due at `now`; returns how many were handed to their lanes. */
  tick(now: number = this.clock.now()): number {
    let fired = 0;
    const due: { id: string; state: JobState; info: RunInfo }[] = [];
    for (const [id, s] of this.jobs) {
      const at = this.due(s);
      if (at === undefined || at > now) continue;
      let info: RunInfo;
      if (s.oneShot && s.oneShot.at === at) {
        info = { attempt: s.oneShot.attempt, dueAt: at, catchUp: s.oneShot.catchUp };
        s.oneShot = undefined;
      } else {
        info = { attempt: 0, dueAt: at, catchUp: false };
        s.oneShot = undefined; // a pending retry is superseded by the occurrence itself
      }
      if (info.attempt === 0) {
        // The next occurrence after now that also keeps the tier gap from this one's planned time (late ticks
        // skip past occurrences, never replay them).
        s.lastFireAt = at;
        s.cronNext = this.nextAllowed(s, now);
      }
      due.push({ id, state: s, info });
    }
    if (!this.dispatching) return 0;
    due.sort((a, b) => a.info.dueAt - b.info.dueAt);
    for (const { id, state, info } of due) {
      if (this.lanes.isBusy(id)) continue; // still waiting or running: this occurrence is skipped
      this.dispatch(id, state, info, now);
      fired++;
    }
    return fired;
  }

  private dispatch(id: string, state: JobState, info: RunInfo, dispatchedAt: number) {
    const kind = state.spec.kind;
    const handler = this.handlers.get(kind);
    if (!handler) {
      this.onError("scheduler: no handler for job kind", { kind, id });
      return;
    }
    let startedAt = dispatchedAt;
    const chain = this.lanes
      .run(
        kind,
        id,
        async () => {
          startedAt = this.clock.now();
          return (await handler.run(id, info)) as RunOutcome;
        },
        state.spec.owner,
      )
      .then(
        async (outcome) => {
          const finishedAt = this.clock.now();
          for (const o of this.observers) o({ id, kind, dueAt: info.dueAt, dispatchedAt, startedAt, finishedAt, ok: outcome.ok });
          let retryAt: number | undefined;
          const current = this.jobs.get(id);
          const retry = current?.spec.retry;
          if (!outcome.ok && current === state && retry && info.attempt < retry.maxAttempts) {
            const at = finishedAt + retry.intervalMs;
            if (state.cronNext === undefined || at < state.cronNext) {
              state.oneShot = { at, attempt: info.attempt + 1, catchUp: false };
              retryAt = at;
              this.rearm();
            }
          }
          await handler.settled?.(id, info, outcome, retryAt);
        },
        (err: unknown) => {
          if (err instanceof QueueClosedError) return;
          throw err;
        },
      )
      .catch((err: unknown) => this.onError("scheduler: job failed", { kind, id, error: String((err as Error)?.message ?? err) }));
    this.pending.add(chain);
    void chain.finally(() => this.pending.delete(chain));
  }

  /** Resolves when no fired job is waiting, running or settling, and the lanes are idle. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
    await this.lanes.idle();
  }

  /** Arms the timer; tick() runs at every due time. */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.rearm();
  }

  /** Stops firing. Running jobs continue; await idle() (or the lanes) to let them finish. */
  stop(): void {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.armedFor = undefined;
  }

  private rearm() {
    if (!this.running) return;
    if (this.timer) clearTimeout(this.timer);
    let next: number | undefined;
    for (const s of this.jobs.values()) {
      const at = this.due(s);
      if (at !== undefined && (next === undefined || at < next)) next = at;
    }
    const now = this.clock.now();
    const delay = next === undefined ? this.maxPollMs : Math.min(this.maxPollMs, Math.max(0, next - now));
    this.armedFor = now + delay;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.armedFor = undefined;
      try {
        this.tick();
      } catch (err) {
        this.onError("scheduler: tick failed", { error: String((err as Error)?.message ?? err) });
      }
      this.rearm();
    }, delay);
    (this.timer as { unref?: () => void }).unref?.();
  }
}
