// The hit-summary job (supplement §18.2): once a minute, every responder with notifications on, tracked hits since
// its last summary and its throttle window elapsed gets one email, queued in the outbox in the same transaction that
// resets its count. RespondersService (service.ts) starts and stops it; tests call run() directly.
// Owns: the job's timer and the summary emails. Must never: overlap two ticks (run() returns the one in progress),
// queue a summary without resetting its count in the same transaction, or let a failing responder stop the others.
import { nowSec, type Runtime } from "../../platform/runtime";
import type { NotificationEmailService } from "../notification-email/service";
import type { CaptureQueue } from "./capture";
import { respondersStore } from "./store";

const SUMMARY_INTERVAL_MS = 60_000;

const isoUtc = (sec: number) => new Date(sec * 1000).toISOString().replace(".000Z", "Z");

export class HitSummaries {
  private summaryTimer: ReturnType<typeof setInterval> | undefined;
  private summaryRun: Promise<number> | undefined;

  constructor(
    private readonly rt: Runtime,
    private readonly capture: CaptureQueue,
    private readonly deps: { notificationEmail: NotificationEmailService },
  ) {}

  private now() {
    return nowSec(this.rt.clock);
  }

  /** Arms the job's timer (once). */
  start(): void {
    if (this.summaryTimer !== undefined) return;
    this.summaryTimer = setInterval(() => {
      this.run().catch((err) => this.rt.log.error("responders: hit summary job failed", { error: String(err) }));
    }, SUMMARY_INTERVAL_MS);
  }

  /** Stops the timer and waits for a tick in progress. */
  async stop(): Promise<void> {
    clearInterval(this.summaryTimer);
    this.summaryTimer = undefined;
    await this.summaryRun?.catch(() => {});
  }

  /**
   * One tick of the hit-summary job (supplement §18.2), at `rt.clock` time: every responder with
   * notifications on, tracked hits since its last summary and its throttle window elapsed gets one email.
   * Returns the number of summaries queued. Runs do not overlap.
   */
  run(): Promise<number> {
    if (this.summaryRun) return this.summaryRun;
    const run = this.summaryTick().finally(() => {
      this.summaryRun = undefined;
    });
    this.summaryRun = run;
    return run;
  }

  private async summaryTick(): Promise<number> {
    await this.capture.flush();
    const now = this.now();
    let sent = 0;
    for (const r of await respondersStore.dueSummaries(this.rt.db, now)) {
      const n = r.notify_count;
      const from = r.notify_from ?? r.created_at;
      const title = `Responder "${r.name}" received ${n} request(s)`;
      const email = {
        kind: "responder_summary" as const,
        subject: `[Secbox] ${title}`,
        content: {
          heading: title,
          paragraphs: [
            `${n} request(s) were tracked by your responder "${r.name}" since ${isoUtc(from)} (UTC).`,
            "Individual requests do not each cause an email; this summary is sent at most once per notification window.",
          ],
          link: { label: "Open the request history", url: `${this.rt.config.server.public_url}/responders/${r.id}` },
        },
      };
      try {
        // The email and the reset of the count commit together: a crash (or a failed write) between them can
        // neither lose the summary nor send it twice. The reset goes first and only while the window is still
        // open, so of several instances running this job at once only one queues the summary.
        const queued = await this.rt.db.tx(async (tx) => {
          if (!(await respondersStore.markNotified(tx, r.id, n, now))) return false;
          await this.deps.notificationEmail.notify(r.user_id, email, tx);
          return true;
        });
        if (queued) sent++;
      } catch (err) {
        this.rt.log.error("responders: queueing a hit summary failed", { responderId: r.id, error: String(err) });
      }
    }
    return sent;
  }
}
