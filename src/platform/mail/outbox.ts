// The durable outbox (supplement §18.1): every email is written to SQLite first and sent by a background
// sender, so restarts and SMTP outages lose nothing. Without SMTP, emails are kept as `held`.
// Delivery is at most once: each attempt first claims the message in the database (one statement: the claim names
// this instance), then talks SMTP, then records the outcome. A clean stop waits for the attempt in progress. If the
// process dies during the attempt (kill -9, power loss) nobody can tell whether the SMTP server accepted the message,
// so the claimed message is marked `failed` with INTERRUPTED_ERROR instead of being sent a second time: at the next
// start, and on every pass of the sender of any instance once the dead instance's lease has lapsed (instances.ts). A
// claim also keeps two senders — a CLI command that queues mail next to the server, or the instances sharing one
// PostgreSQL database, which all send — from sending one message twice.
import type { Db } from "../db/db";
import { newId } from "../core/ids";
import { nowSec, type Runtime } from "../runtime";
import { INTERRUPTED_ERROR, outboxStore, type OutboxRow } from "./outbox-store";

export { INTERRUPTED_ERROR };
import { describeFailure, isPermanentFailure, type MailTransport } from "./transport";

export type EmailKind =
  | "responder_summary"
  | "tracker_change"
  | "tracker_failing"
  | "tracker_recovered"
  | "verification_code"
  | "password_recovery"
  | "operator"
  | "contact";

export interface OutgoingEmail {
  kind: EmailKind;
  userId?: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  /** Extra headers: List-Unsubscribe, List-Unsubscribe-Post, Reply-To. */
  headers?: Record<string, string>;
}

export interface OutboxEntry {
  id: string;
  to: string;
  subject: string;
  kind: string;
  status: OutboxRow["status"];
  attempts: number;
  createdAt: number;
  sentAt?: number;
  lastError?: string;
}

const SCAN_INTERVAL_MS = 10_000;
const FIRST_RETRY_SEC = 30;
const MAX_RETRY_SEC = 3600;
const GIVE_UP_AFTER_SEC = 24 * 3600;
const HELD_MAX_AGE_SEC = 7 * 24 * 3600;

export const retryDelaySec = (attemptsSoFar: number) => Math.min(MAX_RETRY_SEC, FIRST_RETRY_SEC * 2 ** attemptsSoFar);

export class Outbox {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly domain: string;

  constructor(
    private readonly rt: Runtime,
    private readonly transport: MailTransport | null,
  ) {
    const from = rt.config.smtp.from;
    this.domain = /@([^>\s]+)/.exec(from)?.[1] ?? "localhost";
  }

  /** True when SMTP is configured (messages are sent, not held). */
  get configured(): boolean {
    return this.transport !== null;
  }

  /** Writes the email to the outbox; `db` = a transaction the email belongs to (it is then sent only if that
   *  transaction commits: the sender is woken after the commit and never sees a rolled-back message). */
  async enqueue(email: OutgoingEmail, db: Db = this.rt.db): Promise<string> {
    const id = newId();
    const now = nowSec(this.rt.clock);
    await outboxStore.insert(db, {
      id,
      kind: email.kind,
      user_id: email.userId ?? null,
      to_addr: email.to,
      subject: email.subject,
      text_body: email.text,
      html_body: email.html,
      headers: JSON.stringify(email.headers ?? {}),
      message_id: `<${id}@${this.domain}>`,
      status: this.configured ? "queued" : "held",
      next_attempt_at: now,
      created_at: now,
    });
    // A message written inside a transaction is only visible (and sendable) once that commits.
    if (this.configured) db.afterCommit(() => this.kick());
    return id;
  }

  /** Starts the background sender: settles sends a dead instance left claimed, releases held mail when SMTP is
   *  configured, then scans every 10 s (each scan also settles the claims of instances that died since). */
  async start() {
    if (this.timer) return;
    await this.failInterrupted();
    if (!this.configured) return;
    await outboxStore.releaseHeld(this.rt.db, nowSec(this.rt.clock), HELD_MAX_AGE_SEC);
    this.timer = setInterval(() => {
      // Several instances (PostgreSQL): one may die while the others run on; its claims lapse with its lease.
      if (this.rt.db.topology === "multi-instance") {
        this.failInterrupted().catch((err) => this.rt.log.error("mail: settling interrupted sends failed", { error: String(err) }));
      }
      this.kick();
    }, SCAN_INTERVAL_MS);
    this.kick();
  }

  async stop() {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    this.transport?.close();
  }

  /** Sends what is due now, in the background; concurrent kicks coalesce into one more pass. */
  kick() {
    if (!this.configured || this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Resolves when the current send pass (if any) has finished. For tests and shutdown. */
  async idle() {
    while (this.running) await this.running;
  }

  private async drain() {
    try {
      // A stop waits for the attempt in progress, not for the rest of what is due.
      while (!this.stopped) {
        const row = await outboxStore.claimNext(this.rt.db, nowSec(this.rt.clock));
        if (!row) return;
        await this.deliver(row);
      }
    } catch (err) {
      this.rt.log.error("mail: outbox pass failed", { error: String(err) });
    }
  }

  /** Claims of dead instances end as failed (never sent again). */
  private async failInterrupted() {
    const interrupted = (await outboxStore.failInterrupted(this.rt.db)).changes;
    if (interrupted > 0) this.rt.log.warn("mail: sends interrupted by a stopped instance are not repeated (marked failed)", { count: interrupted });
  }

  /** One send attempt of a message this instance has claimed. */
  private async deliver(row: OutboxRow) {
    const db = this.rt.db;
    try {
      await this.transport!.send({
        to: row.to_addr,
        subject: row.subject,
        text: row.text_body,
        html: row.html_body,
        messageId: row.message_id,
        headers: JSON.parse(row.headers),
      });
      await outboxStore.markSent(db, row.id, nowSec(this.rt.clock));
    } catch (err) {
      const now = nowSec(this.rt.clock);
      const reason = describeFailure(err);
      if (isPermanentFailure(err) || now - row.created_at >= GIVE_UP_AFTER_SEC) {
        await outboxStore.markFailed(db, row.id, reason);
        this.rt.log.warn("mail: delivery failed permanently", { id: row.id, kind: row.kind, error: reason });
      } else {
        await outboxStore.markRetry(db, row.id, now + retryDelaySec(row.attempts - 1), reason);
        this.rt.log.info("mail: delivery deferred", { id: row.id, kind: row.kind, attempts: row.attempts, error: reason });
      }
    }
  }

  async list(status?: string): Promise<OutboxEntry[]> {
    const rows = await outboxStore.list(this.rt.db, status);
    return rows.map((r) => ({
      id: r.id,
      to: r.to_addr,
      subject: r.subject,
      kind: r.kind,
      status: r.status,
      attempts: r.attempts,
      createdAt: r.created_at,
      ...(r.sent_at !== null ? { sentAt: r.sent_at } : {}),
      ...(r.last_error !== null ? { lastError: r.last_error } : {}),
    }));
  }
}
