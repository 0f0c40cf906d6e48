// SQL for the outbox table. A send attempt first claims its row (claimed_at, claimed_by = the claiming instance), so
// no other pass, process or instance sends it at the same time, and a claim left behind by an instance that died
// mid-send is recognised (platform/db/instances.ts). On PostgreSQL concurrent senders take different rows
// (FOR UPDATE SKIP LOCKED) instead of queueing on the same one.
import type { Db } from "../db/db";
import { deadInstance } from "../db/instances";

export type OutboxStatus = "queued" | "sent" | "failed" | "held";

export interface OutboxRow {
  id: string;
  kind: string;
  user_id: string | null;
  to_addr: string;
  subject: string;
  text_body: string;
  html_body: string;
  headers: string;
  message_id: string;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
  /** Set while a send attempt is in progress (unix s); NULL otherwise. */
  claimed_at: number | null;
  /** The instance (Db.instanceId) that holds the claim. */
  claimed_by: string | null;
}

/** last_error of a message whose send was cut off by the end of the process (kill -9, power loss). */
export const INTERRUPTED_ERROR =
  "sending was interrupted (the server stopped during the SMTP transaction); not sent again, so it is never delivered twice; it may or may not have arrived";

export const outboxStore = {
  async insert(db: Db, r: Omit<OutboxRow, "attempts" | "last_error" | "sent_at" | "claimed_at" | "claimed_by">) {
    await db.run(
      `INSERT INTO outbox (id, kind, user_id, to_addr, subject, text_body, html_body, headers, message_id, status, attempts, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
      [r.id, r.kind, r.user_id, r.to_addr, r.subject, r.text_body, r.html_body, r.headers, r.message_id, r.status, r.next_attempt_at, r.created_at],
    );
  },
  /** Claims the next message due at `now` for one send attempt (counted) by this instance; undefined when none is. */
  async claimNext(db: Db, now: number): Promise<OutboxRow | undefined> {
    const skipLocked = db.dialect === "postgres" ? " FOR UPDATE SKIP LOCKED" : "";
    return db.get<OutboxRow>(
      `UPDATE outbox SET claimed_at = ?, claimed_by = ?, attempts = attempts + 1
       WHERE id = (SELECT id FROM outbox WHERE status = 'queued' AND claimed_at IS NULL AND next_attempt_at <= ?
                   ORDER BY next_attempt_at, id LIMIT 1${skipLocked})
         AND status = 'queued' AND claimed_at IS NULL
       RETURNING *`,
      [now, db.instanceId, now],
    );
  },
  markSent: (db: Db, id: string, now: number) =>
    db.run("UPDATE outbox SET status = 'sent', sent_at = ?, last_error = NULL, claimed_at = NULL, claimed_by = NULL WHERE id = ?", [now, id]),
  markRetry: (db: Db, id: string, nextAt: number, error: string) =>
    db.run("UPDATE outbox SET next_attempt_at = ?, last_error = ?, claimed_at = NULL, claimed_by = NULL WHERE id = ?", [nextAt, error, id]),
  markFailed: (db: Db, id: string, error: string) =>
    db.run("UPDATE outbox SET status = 'failed', last_error = ?, claimed_at = NULL, claimed_by = NULL WHERE id = ?", [error, id]),
  /** Claims of an instance that is gone (instances.ts) end as failed: the message may have been delivered, so it is
   *  never sent again (at most once). */
  failInterrupted(db: Db) {
    const dead = deadInstance(db, "claimed_by");
    return db.run(
      `UPDATE outbox SET status = 'failed', last_error = ?, claimed_at = NULL, claimed_by = NULL
       WHERE claimed_at IS NOT NULL AND status = 'queued' AND ${dead.sql}`,
      [INTERRUPTED_ERROR, ...dead.params],
    );
  },
  /** On a start with SMTP configured: recent held messages are queued, older ones fail. */
  async releaseHeld(db: Db, now: number, maxAgeSec: number) {
    await db.run(
      "UPDATE outbox SET status = 'failed', last_error = 'held longer than 7 days without SMTP' WHERE status = 'held' AND created_at < ?",
      [now - maxAgeSec],
    );
    await db.run("UPDATE outbox SET status = 'queued', next_attempt_at = ? WHERE status = 'held'", [now]);
  },
  list: (db: Db, status?: string) =>
    status
      ? db.all<OutboxRow>("SELECT * FROM outbox WHERE status = ? ORDER BY created_at, id", [status])
      : db.all<OutboxRow>("SELECT * FROM outbox ORDER BY created_at, id"),
};
