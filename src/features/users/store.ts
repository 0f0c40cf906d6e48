// SQL for users, sessions and recovery tokens, and a user row → the wire `User` (contract.ts).
import type { Db } from "../../platform/db/db";
import type { Tier } from "../../config/schema";
import { isOperatorUser } from "../../platform/auth/principal";
import type { User } from "./contract";

/**
 * How a user proved control of the login email (supplement §3.5): created by the CLI, by an operator (operator
 * sign-up), by a clone, through a consumed recovery link, through a verification code sent to that address, or
 * an account that existed before the rule (migration 0010).
 */
export type EmailProof = "cli" | "operator" | "clone" | "recovery" | "code" | "legacy";

export interface UserRow {
  id: string;
  email: string;
  handle: string;
  password_hash: string | null;
  is_activated: number;
  tier: Tier;
  tier_started_at: number;
  tier_ends_at: number | null;
  unsubscribe_token: string;
  created_at: number;
  updated_at: number;
  /** When the user first proved control of `email`; null = never (then the email grants no operator rights). */
  email_proven_at: number | null;
  email_proof: EmailProof | null;
}

/** The wire `User`; `isOperator` (supplement §3.5) needs the server's `security.operators`. */
export const toUser = (row: UserRow, operators: string[]): User => ({
  id: row.id,
  email: row.email,
  handle: row.handle,
  createdAt: row.created_at,
  isActivated: row.is_activated === 1,
  isOperator: isOperatorUser(operators, { email: row.email, emailProven: row.email_proven_at !== null }),
  subscription: { tier: row.tier, startedAt: row.tier_started_at, ...(row.tier_ends_at !== null ? { endsAt: row.tier_ends_at } : {}) },
});

export interface NewUser {
  id: string;
  email: string;
  handle: string;
  passwordHash: string | null;
  isActivated: boolean;
  tier: Tier;
  unsubscribeToken: string;
  /** Set when the way the account is created proves the email (CLI, operator, clone); null otherwise. */
  emailProof: EmailProof | null;
  now: number;
}

export const usersStore = {
  async insert(db: Db, u: NewUser) {
    await db.run(
      `INSERT INTO users (id, email, handle, password_hash, is_activated, tier, tier_started_at, tier_ends_at, unsubscribe_token, created_at, updated_at,
                          email_proven_at, email_proof)
       VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?)`,
      [
        u.id,
        u.email,
        u.handle,
        u.passwordHash,
        u.isActivated ? 1 : 0,
        u.tier,
        u.now,
        u.unsubscribeToken,
        u.now,
        u.now,
        u.emailProof === null ? null : u.now,
        u.emailProof,
      ],
    );
  },
  byId: (db: Db, id: string) => db.get<UserRow>("SELECT * FROM users WHERE id = ?", [id]),
  byEmail: (db: Db, email: string) => db.get<UserRow>("SELECT * FROM users WHERE email = ?", [email]),
  byHandle: (db: Db, handle: string) => db.get<UserRow>("SELECT * FROM users WHERE handle = ?", [handle]),
  byUnsubscribeToken: (db: Db, token: string) => db.get<UserRow>("SELECT * FROM users WHERE unsubscribe_token = ?", [token]),
  list: (db: Db) => db.all<UserRow>("SELECT * FROM users ORDER BY created_at, id"),
  async setPassword(db: Db, id: string, hash: string, activate: boolean, now: number) {
    await db.run(`UPDATE users SET password_hash = ?, is_activated = CASE WHEN ? = 1 THEN 1 ELSE is_activated END, updated_at = ? WHERE id = ?`, [
      hash,
      activate ? 1 : 0,
      now,
      id,
    ]);
  },
  /** Records the first proof of the login email; a user already proven keeps the earlier proof. */
  async recordEmailProof(db: Db, id: string, proof: EmailProof, now: number) {
    await db.run("UPDATE users SET email_proven_at = ?, email_proof = ?, updated_at = ? WHERE id = ? AND email_proven_at IS NULL", [
      now,
      proof,
      now,
      id,
    ]);
  },
  async setSubscription(db: Db, id: string, tier: Tier, startedAt: number, endsAt: number | null, now: number) {
    await db.run("UPDATE users SET tier = ?, tier_started_at = ?, tier_ends_at = ?, updated_at = ? WHERE id = ?", [tier, startedAt, endsAt, now, id]);
  },
  /**
   * Deletes the user; owned rows go with it through ON DELETE CASCADE. Tag links are removed explicitly
   * as well. Call inside a transaction (`db.tx`) so every row goes at once.
   */
  async remove(db: Db, id: string): Promise<boolean> {
    await db.run("DELETE FROM entity_tags WHERE user_id = ?", [id]);
    const res = await db.run("DELETE FROM users WHERE id = ?", [id]);
    return res.changes === 1;
  },

  // Sessions
  async insertSession(db: Db, s: { id: string; userId: string; tokenHash: string; now: number; expiresAt: number }) {
    await db.run("INSERT INTO sessions (id, user_id, token_hash, created_at, refreshed_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)", [
      s.id,
      s.userId,
      s.tokenHash,
      s.now,
      s.now,
      s.expiresAt,
    ]);
  },
  sessionByHash: (db: Db, hash: string, now: number) =>
    db.get<{ id: string; user_id: string; refreshed_at: number; expires_at: number }>(
      "SELECT id, user_id, refreshed_at, expires_at FROM sessions WHERE token_hash = ? AND expires_at > ?",
      [hash, now],
    ),
  refreshSession: (db: Db, id: string, now: number, expiresAt: number) =>
    db.run("UPDATE sessions SET refreshed_at = ?, expires_at = ? WHERE id = ?", [now, expiresAt, id]),
  deleteSession: (db: Db, id: string) => db.run("DELETE FROM sessions WHERE id = ?", [id]),
  deleteSessionByHash: (db: Db, hash: string) => db.run("DELETE FROM sessions WHERE token_hash = ?", [hash]),
  deleteOtherSessions: (db: Db, userId: string, keepId: string | null) =>
    db.run("DELETE FROM sessions WHERE user_id = ? AND id <> ?", [userId, keepId ?? ""]),
  purgeExpiredSessions: (db: Db, now: number) => db.run("DELETE FROM sessions WHERE expires_at <= ?", [now]),
  purgeExpiredRecoveryTokens: (db: Db, now: number) => db.run("DELETE FROM recovery_tokens WHERE expires_at <= ?", [now]),

  // Recovery tokens
  /** Stores a new token and voids the user's older unused ones (call inside a transaction). */
  async insertRecoveryToken(db: Db, r: { id: string; userId: string; tokenHash: string; now: number; expiresAt: number }) {
    await db.run("DELETE FROM recovery_tokens WHERE user_id = ? AND used_at IS NULL", [r.userId]);
    await db.run("INSERT INTO recovery_tokens (id, user_id, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?)", [
      r.id,
      r.userId,
      r.tokenHash,
      r.now,
      r.expiresAt,
    ]);
  },
  async recoveryTokenIsLive(db: Db, hash: string, now: number): Promise<boolean> {
    return (
      (await db.get("SELECT 1 AS ok FROM recovery_tokens WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?", [hash, now])) !== undefined
    );
  },
  /** Marks a live token used and returns its user id; undefined when unknown, used or expired. */
  async consumeRecoveryToken(db: Db, hash: string, now: number): Promise<string | undefined> {
    const row = await db.get<{ id: string; user_id: string }>(
      "SELECT id, user_id FROM recovery_tokens WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?",
      [hash, now],
    );
    if (!row) return undefined;
    const res = await db.run("UPDATE recovery_tokens SET used_at = ? WHERE id = ? AND used_at IS NULL", [now, row.id]);
    return res.changes === 1 ? row.user_id : undefined;
  },
};
