// Users slice, sessions and sign-in (supplement §3.2, §3.3): the session and email parts of platform/auth's
// IdentityLookup, session creation, refresh and purge, the session cookie, sign-in (throttled per email and
// client), sign-out and password change. Extends accounts.ts; UsersService (service.ts) is the whole.
import { clearedSessionCookie, sessionCookie, sessionCookieName } from "../../platform/auth/cookies";
import { ApiError, forbidden, rateLimited, unauthenticated } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import { normalizeEmail, required, requiredString } from "../../platform/core/validate";
import { hashPassword, verifyPassword } from "../../platform/crypto/passwords";
import { randomBase64Url, sha256Hex } from "../../platform/crypto/tokens";
import { rateLimiter } from "../../platform/db/rate-events";
import type { RateLimiter } from "../../platform/http/rate-limit";
import { checkPassword, UserAccounts } from "./accounts";
import type { User } from "./contract";
import { usersStore } from "./store";

/** A signed-in user and the new session token (the route turns it into the cookie). */
export interface SignedIn {
  user: User;
  sessionToken: string;
}

const SESSION_REFRESH_AFTER_SEC = 3600;
const SIGNIN_MAX_FAILURES = 10;
const SIGNIN_WINDOW_MS = 15 * 60 * 1000;
const INVALID_CREDENTIALS = "Invalid email or password";

/** Sessions, cookies, sign-in and sign-out, password change. */
export class UserSessions extends UserAccounts {
  private readonly secureCookie = this.rt.config.server.public_url.startsWith("https:");
  /** `__Host-<security.session_cookie>` on https (supplement §28.1). */
  private readonly cookieName = sessionCookieName(this.rt.config);
  /** Failed sign-ins per (email, client IP), sliding 15 minutes (supplement §3.3). Shared by the instances on one
   *  PostgreSQL database; in memory on SQLite. */
  private readonly signinFailures: RateLimiter = rateLimiter(this.rt.db, "signin", SIGNIN_MAX_FAILURES, SIGNIN_WINDOW_MS);

  // IdentityLookup (platform/auth)
  async byEmail(email: string) {
    const row = await this.getRowByEmail(email);
    return row ? this.toAuthUser(row) : undefined;
  }

  async bySessionHash(hash: string) {
    const now = this.now();
    const session = await usersStore.sessionByHash(this.rt.db, hash, now);
    if (!session) return undefined;
    const row = await usersStore.byId(this.rt.db, session.user_id);
    if (!row) return undefined;
    let refreshed = false;
    if (now - session.refreshed_at > SESSION_REFRESH_AFTER_SEC) {
      await usersStore.refreshSession(this.rt.db, session.id, now, now + this.rt.config.security.session_ttl);
      refreshed = true;
    }
    return { user: this.toAuthUser(row), sessionId: session.id, refreshed };
  }

  /** A new session for the user; returns the cookie token (only its hash is stored). */
  async createSession(userId: string): Promise<string> {
    const token = randomBase64Url(32);
    const now = this.now();
    await usersStore.insertSession(this.rt.db, {
      id: newId(),
      userId,
      tokenHash: sha256Hex(token),
      now,
      expiresAt: now + this.rt.config.security.session_ttl,
    });
    return token;
  }

  /** Deletes expired sessions and recovery tokens (run hourly by the scheduler, and at start). */
  async purgeExpiredSessions(): Promise<void> {
    const now = this.now();
    await usersStore.purgeExpiredSessions(this.rt.db, now);
    await usersStore.purgeExpiredRecoveryTokens(this.rt.db, now);
  }

  // Cookies (supplement §3.2)
  sessionCookie(token: string): string {
    return sessionCookie(this.cookieName, token, this.rt.config.security.session_ttl, this.secureCookie);
  }

  clearedSessionCookie(): string {
    return clearedSessionCookie(this.cookieName, this.secureCookie);
  }

  // Browser auth (supplement §3.3)

  /**
   * Throttled per (email, client): after 10 failures within 15 minutes every attempt is 429 until the oldest
   * failure leaves the window; a success clears the count. `clientKey` is platform/http's clientRateKey (an
   * IPv6 client counts by its /64, so rotating addresses inside it does not escape). Unknown emails and users
   * without a password still cost one argon2id verification.
   */
  async signin(rawEmail: unknown, rawPassword: unknown, clientKey: string): Promise<SignedIn> {
    const email = normalizeEmail(required(rawEmail, "email"));
    const password = requiredString(rawPassword, "password");
    const key = `${email}\n${clientKey}`;
    const retryAfter = await this.signinFailures.retryAfter(key, this.rt.clock.now());
    if (retryAfter > 0) throw rateLimited(retryAfter, "Too many failed sign-in attempts");
    const row = await usersStore.byEmail(this.rt.db, email);
    const ok = await verifyPassword(password, row?.password_hash);
    if (!ok || !row) {
      await this.signinFailures.hit(key, this.rt.clock.now());
      throw unauthenticated(INVALID_CREDENTIALS);
    }
    if (row.is_activated !== 1) throw forbidden("NOT_ACTIVATED", "This account is not activated");
    await this.signinFailures.reset(key);
    return { user: this.toUser(row), sessionToken: await this.createSession(row.id) };
  }

  async signout(sessionId: string | undefined): Promise<void> {
    if (sessionId) await usersStore.deleteSession(this.rt.db, sessionId);
  }

  /** Changes the password; every other session of the user is revoked (the calling one is kept). */
  async changePassword(userId: string, currentSessionId: string | undefined, rawCurrentPassword: unknown, newPassword: unknown): Promise<void> {
    const currentPassword = requiredString(rawCurrentPassword, "currentPassword");
    const password = checkPassword(required(newPassword, "newPassword"), "newPassword");
    const row = await usersStore.byId(this.rt.db, userId);
    if (!(await verifyPassword(currentPassword, row?.password_hash)) || !row)
      throw new ApiError(400, "BAD_PASSWORD", "currentPassword: does not match the current password");
    const hash = await hashPassword(password);
    const now = this.now();
    await this.rt.db.tx(async (tx) => {
      await usersStore.setPassword(tx, userId, hash, false, now);
      await usersStore.deleteOtherSessions(tx, userId, currentSessionId ?? null);
    });
  }
}
