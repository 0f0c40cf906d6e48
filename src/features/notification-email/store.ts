// SQL for notification email destinations and verification sends, and a destination row → the wire
// `UserNotificationDestination` (contract.ts; never the code hash).
import type { Db } from "../../platform/db/db";
import type { UserNotificationDestination } from "./contract";

export interface DestinationRow {
  id: string;
  user_id: string;
  address: string;
  status: "pending" | "verified";
  code_hash: string | null;
  code_expires_at: number | null;
  failed_attempts: number;
  verification_sent_at: number | null;
  verified_at: number | null;
  created_at: number;
  updated_at: number;
}

/** The times of a pending verification show only while pending, `verifiedAt` only when verified. */
export const toDestination = (r: DestinationRow): UserNotificationDestination => ({
  id: r.id,
  kind: "email",
  address: r.address,
  status: r.status,
  ...(r.status === "pending" && r.verification_sent_at !== null ? { verificationSentAt: r.verification_sent_at } : {}),
  ...(r.status === "pending" && r.code_expires_at !== null ? { verificationExpiresAt: r.code_expires_at } : {}),
  ...(r.status === "verified" && r.verified_at !== null ? { verifiedAt: r.verified_at } : {}),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export const destinationsStore = {
  byUser: (db: Db, userId: string) => db.get<DestinationRow>("SELECT * FROM notification_destinations WHERE user_id = ?", [userId]),

  /** Creates or restarts the user's destination as pending with a fresh code. */
  async upsertPending(db: Db, r: { id: string; userId: string; address: string; codeHash: string; expiresAt: number; now: number }) {
    await db.run(
      `INSERT INTO notification_destinations (id, user_id, address, status, code_hash, code_expires_at, failed_attempts, verification_sent_at, verified_at, created_at, updated_at)
       VALUES (?, ?, ?, 'pending', ?, ?, 0, ?, NULL, ?, ?)
       ON CONFLICT (user_id) DO UPDATE SET address = excluded.address, status = 'pending', code_hash = excluded.code_hash,
         code_expires_at = excluded.code_expires_at, failed_attempts = 0, verification_sent_at = excluded.verification_sent_at,
         verified_at = NULL, updated_at = excluded.updated_at`,
      [r.id, r.userId, r.address, r.codeHash, r.expiresAt, r.now, r.now, r.now],
    );
  },

  newCode: (db: Db, id: string, codeHash: string, expiresAt: number, now: number) =>
    db.run(
      "UPDATE notification_destinations SET code_hash = ?, code_expires_at = ?, failed_attempts = 0, verification_sent_at = ?, updated_at = ? WHERE id = ?",
      [codeHash, expiresAt, now, now, id],
    ),

  failedAttempt: (db: Db, id: string, now: number) =>
    db.run("UPDATE notification_destinations SET failed_attempts = failed_attempts + 1, updated_at = ? WHERE id = ?", [now, id]),

  markVerified: (db: Db, id: string, now: number) =>
    db.run(
      "UPDATE notification_destinations SET status = 'verified', code_hash = NULL, code_expires_at = NULL, verification_sent_at = NULL, verified_at = ?, updated_at = ? WHERE id = ?",
      [now, now, id],
    ),

  remove: (db: Db, userId: string) => db.run("DELETE FROM notification_destinations WHERE user_id = ?", [userId]),

  recordSend: (db: Db, userId: string, now: number) => db.run("INSERT INTO verification_sends (user_id, sent_at) VALUES (?, ?)", [userId, now]),

  async sendsSince(db: Db, userId: string, since: number): Promise<number[]> {
    const rows = await db.all<{ sent_at: number }>("SELECT sent_at FROM verification_sends WHERE user_id = ? AND sent_at > ? ORDER BY sent_at", [
      userId,
      since,
    ]);
    return rows.map((r) => r.sent_at);
  },

  pruneSends: (db: Db, before: number) => db.run("DELETE FROM verification_sends WHERE sent_at <= ?", [before]),
};
