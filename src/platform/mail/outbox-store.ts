// SQL for the outbox table.
import type { Db } from "../db/db";

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
}

export const outboxStore = {
  async insert(db: Db, r: Omit<OutboxRow, "attempts" | "last_error" | "sent_at">) {
    await db.run(
      `INSERT INTO outbox (id, kind, user_id, to_addr, subject, text_body, html_body, headers, message_id, status, attempts, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`,
      [r.id, r.kind, r.user_id, r.to_addr, r.subject, r.text_body, r.html_body, r.headers, r.message_id, r.status, r.next_attempt_at, r.created_at],
    );
  },
  due: (db: Db, now: number, limit: number) =>
    db.all<OutboxRow>("SELECT * FROM outbox WHERE status = 'queued' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?", [now, limit]),
  markSent: (db: Db, id: string, now: number) =>
    db.run("UPDATE outbox SET status = 'sent', attempts = attempts + 1, sent_at = ?, last_error = NULL WHERE id = ?", [now, id]),
  markRetry: (db: Db, id: string, nextAt: number, error: string) =>
    db.run("UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE id = ?", [nextAt, error, id]),
  markFailed: (db: Db, id: string, error: string) =>
    db.run("UPDATE outbox SET status = 'failed', attempts = attempts + 1, last_error = ? WHERE id = ?", [error, id]),
  /** On a start with SMTP configured: recent held messages are queued, older ones fail. */
  async releaseHeld(db: Db, now: number, maxAgeSec: number) {
    await db.run("UPDATE outbox SET status = 'failed', last_error = 'held longer than 7 days without SMTP' WHERE status = 'held' AND created_at < ?", [
      now - maxAgeSec,
    ]);
    await db.run("UPDATE outbox SET status = 'queued', next_attempt_at = ? WHERE status = 'held'", [now]);
  },
  list: (db: Db, status?: string) =>
    status
      ? db.all<OutboxRow>("SELECT * FROM outbox WHERE status = ? ORDER BY created_at, id", [status])
      : db.all<OutboxRow>("SELECT * FROM outbox ORDER BY created_at, id"),
};
