// Users and identity: accounts, passwords, sessions, recovery, operator administration, subscriptions
// (supplement §3, §4).
//
// Operator rights need proof of the email (supplement §3.5): a listed email makes a user an operator only once
// `users.email_proven_at` is set. Proof is recorded when the account is created by the CLI, an operator or a
// clone (`create({emailProof})`: the one way for a service to create a proven user), when a recovery token is
// consumed (the link went to the address, or was handed out by the CLI or an operator), and when the
// notification-email flow verifies a code sent to the login email (`recordEmailProof`). Public sign-up proves
// nothing: with a listed email it creates an ordinary account and emails a verification link (a recovery token,
// `{public_url}/recover?token=…`), or answers 403 SIGNUP_RESERVED when mail is not configured.
import { TIERS, type Tier } from "../../config/schema";
import { clearedSessionCookie, sessionCookie, sessionCookieName } from "../../platform/auth/cookies";
import type { AuthUser, IdentityLookup } from "../../platform/auth/principal";
import { isOperatorIdentity } from "../../platform/auth/principal";
import { hashPassword, verifyPassword } from "../../platform/crypto/passwords";
import { randomBase64Url, randomHex, sha256Hex } from "../../platform/crypto/tokens";
import type { Db } from "../../platform/db/db";
import { ApiError, forbidden, invalid, isUniqueViolation, notFound, rateLimited, unauthenticated } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import { rateLimiter } from "../../platform/db/rate-events";
import type { RateLimiter } from "../../platform/http/rate-limit";
import type { LooseInput } from "../../platform/http/contract";
import { charLength, futureTimestamp, normalizeEmail, pathId, required, requiredString } from "../../platform/core/validate";
import type { Outbox } from "../../platform/mail/outbox";
import { renderEmail } from "../../platform/mail/render";
import { nowSec, type Runtime } from "../../platform/runtime";
import type { RecoveryLink, SignupParams, User } from "./contract";
import { HANDLE_RE, PASSWORD_MAX, PASSWORD_MIN, RESERVED_HANDLES } from "./shared-rules";
import { toUser, usersStore, type EmailProof, type UserRow } from "./store";

export type { EmailProof } from "./store";

export interface CreateUserInput {
  email: unknown;
  password?: unknown;
  handle?: unknown;
  activated?: boolean;
  tier?: Tier;
  /**
   * Pass only when the way this account is created proves the email (supplement §3.5): `cli` (`users add`),
   * `operator` (operator sign-up), `clone` (operator clone). Absent = not proven: the account gets no operator
   * rights from a listed email until a recovery link or verification code proves it.
   */
  emailProof?: Extract<EmailProof, "cli" | "operator" | "clone">;
}

/** A signed-in user and the new session token (the route turns it into the cookie). */
export interface SignedIn {
  user: User;
  sessionToken: string;
}

/** Extra cleanup run inside the removal transaction (e.g. a feature cancelling scheduled runs). */
export type UserRemovalHook = (tx: Db, userId: string) => Promise<void>;

const SESSION_REFRESH_AFTER_SEC = 3600;
const SIGNIN_MAX_FAILURES = 10;
const SIGNIN_WINDOW_MS = 15 * 60 * 1000;
const FORGOT_PER_HOUR = 3;
const FORGOT_TTL_SEC = 3600;
/** Lifetime of the link public sign-up emails to a listed operator address. */
export const SIGNUP_VERIFY_TTL_SEC = 86_400;
const INVALID_CREDENTIALS = "Invalid email or password";

export function checkPassword(raw: unknown, field = "password"): string {
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const len = charLength(raw);
  if (len < PASSWORD_MIN || len > PASSWORD_MAX) throw new ApiError(400, "WEAK_PASSWORD", `${field}: must be ${PASSWORD_MIN} to ${PASSWORD_MAX} characters`);
  return raw;
}

/** Implements the session and email parts of platform/auth's IdentityLookup (API keys: ApiKeysService). */
export class UsersService implements Omit<IdentityLookup, "byApiKeyHash"> {
  /** Failed sign-ins per (email, client IP), sliding 15 minutes (supplement §3.3). */
  private readonly signinFailures: RateLimiter;
  /** Recovery emails per address, sliding hour. */
  private readonly forgotSends: RateLimiter;
  private readonly removalHooks: UserRemovalHook[] = [];
  private readonly secureCookie: boolean;
  /** `__Host-<security.session_cookie>` on https (supplement §28.1). */
  private readonly cookieName: string;

  constructor(
    private readonly rt: Runtime,
    private readonly outbox: Outbox,
  ) {
    this.secureCookie = rt.config.server.public_url.startsWith("https:");
    this.cookieName = sessionCookieName(rt.config);
    // Shared by the instances on one PostgreSQL database; in memory on SQLite.
    this.signinFailures = rateLimiter(rt.db, "signin", SIGNIN_MAX_FAILURES, SIGNIN_WINDOW_MS);
    this.forgotSends = rateLimiter(rt.db, "forgot", FORGOT_PER_HOUR, 3600 * 1000);
  }

  private now() {
    return nowSec(this.rt.clock);
  }

  effectiveTier(row: UserRow): Tier {
    if (row.tier_ends_at !== null && row.tier_ends_at <= this.now()) return this.rt.config.subscriptions.default_tier;
    return row.tier;
  }

  /** The wire `User` of a row (store.ts maps it; `isOperator` needs this server's operator list). */
  toUser(row: UserRow): User {
    return toUser(row, this.rt.config.security.operators);
  }

  toAuthUser(row: UserRow): AuthUser {
    return {
      id: row.id,
      email: row.email,
      handle: row.handle,
      isActivated: row.is_activated === 1,
      tier: this.effectiveTier(row),
      emailProven: row.email_proven_at !== null,
    };
  }

  async create(input: CreateUserInput): Promise<UserRow> {
    const email = normalizeEmail(input.email);
    const password = input.password === undefined || input.password === null ? undefined : checkPassword(input.password);
    let handle: string | undefined;
    if (input.handle !== undefined && input.handle !== null) {
      if (typeof input.handle !== "string" || !HANDLE_RE.test(input.handle) || (RESERVED_HANDLES as readonly string[]).includes(input.handle))
        throw invalid(`handle: must match ${HANDLE_RE.source} and not be ${RESERVED_HANDLES.slice(0, -1).join(", ")} or ${RESERVED_HANDLES.at(-1)}`);
      handle = input.handle;
    }
    const tier = input.tier ?? this.rt.config.subscriptions.default_tier;
    if (!TIERS.includes(tier)) throw invalid("tier: unknown tier");
    const db = this.rt.db;
    if (await usersStore.byEmail(db, email)) throw new ApiError(400, "EMAIL_TAKEN", "email: already registered");
    if (handle && (await usersStore.byHandle(db, handle))) throw new ApiError(400, "HANDLE_TAKEN", "handle: already in use");
    const passwordHash = password === undefined ? null : await hashPassword(password);
    const id = newId();
    for (let attempt = 0; ; attempt++) {
      try {
        await usersStore.insert(db, {
          id,
          email,
          handle: handle ?? randomHex(8),
          passwordHash,
          isActivated: input.activated ?? true,
          tier,
          unsubscribeToken: randomBase64Url(24),
          emailProof: input.emailProof ?? null,
          now: this.now(),
        });
        break;
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        if (String((err as Error).message).includes("email")) throw new ApiError(400, "EMAIL_TAKEN", "email: already registered");
        if (handle || attempt > 5) throw new ApiError(400, "HANDLE_TAKEN", "handle: already in use");
      }
    }
    return (await usersStore.byId(db, id))!;
  }

  /** The user's row; pass the caller's transaction to read inside it (a pooled connection is not taken twice). */
  getRow = (id: string, db: Db = this.rt.db) => usersStore.byId(db, id);
  getRowByHandle = (handle: string) => usersStore.byHandle(this.rt.db, handle);
  getRowByEmail = (email: string) => usersStore.byEmail(this.rt.db, email.trim().toLowerCase());
  getRowByUnsubscribeToken = (token: string) => usersStore.byUnsubscribeToken(this.rt.db, token);

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
    await usersStore.insertSession(this.rt.db, { id: newId(), userId, tokenHash: sha256Hex(token), now, expiresAt: now + this.rt.config.security.session_ttl });
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

  /** 403 SIGNUP_CLOSED; checked before the body (supplement §1 check order). */
  assertSignupOpen(): void {
    if (this.rt.config.security.signup === "closed") throw forbidden("SIGNUP_CLOSED", "Sign-up is closed on this server");
  }

  private mailConfigured() {
    return this.rt.config.smtp.host !== "";
  }

  /**
   * Public sign-up never proves the email. An email listed in `security.operators` → 403 SIGNUP_RESERVED when
   * mail is not configured; otherwise an ordinary account whose address is emailed a verification link (a
   * recovery token: using it proves the address and grants the operator rights).
   */
  async signup(rawEmail: unknown, password: unknown): Promise<SignedIn> {
    this.assertSignupOpen();
    const email = normalizeEmail(required(rawEmail, "email"));
    requiredString(password, "password");
    const listed = isOperatorIdentity(this.rt.config.security.operators, email, undefined);
    if (listed && !this.mailConfigured())
      throw forbidden("SIGNUP_RESERVED", "This email is reserved for an operator; create the account with `secbox users add`");
    const row = await this.create({ email, password, activated: true });
    if (listed) await this.sendOperatorVerification(row);
    return { user: this.toUser(row), sessionToken: await this.createSession(row.id) };
  }

  /** Emails the verification link for a listed address signed up publicly (it works like a recovery link). */
  private async sendOperatorVerification(row: UserRow): Promise<void> {
    const link = await this.issueRecoveryToken(row.id, SIGNUP_VERIFY_TTL_SEC);
    const { text, html } = renderEmail({
      heading: "Confirm your email address",
      paragraphs: [
        `A Secbox account was created for ${row.email} by public sign-up. This address is listed as an operator of the server; operator rights apply once you open the link below and set the account's password.`,
        `The link works once and expires at ${new Date(link.expiresAt * 1000).toISOString().replace(".000Z", "Z")} (in 24 hours).`,
        "Opening the link starts the account afresh: whatever was set up in it before (API keys, sessions, responders, trackers, secrets and everything else) is deleted, because whoever signed up could not prove they own this address. Until the link is used, the account has no operator rights.",
      ],
      link: { label: "Confirm and set the password", url: link.url },
    });
    await this.outbox.enqueue({ kind: "password_recovery", userId: row.id, to: row.email, subject: "[Secbox] Confirm your email address", text, html });
  }

  /**
   * Records that the user proved control of `address` (a verification code sent to it, supplement §10.2), when
   * it is the login email; a user already proven keeps the earlier proof. Returns whether the email is now proven.
   */
  async recordEmailProof(userId: string, address: string, proof: Extract<EmailProof, "code">): Promise<boolean> {
    const row = await usersStore.byId(this.rt.db, userId);
    if (!row || row.email !== address.trim().toLowerCase()) return row?.email_proven_at != null;
    await usersStore.recordEmailProof(this.rt.db, userId, proof, this.now());
    return true;
  }

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

  /**
   * Consumes a recovery token: password set, user activated, all sessions revoked, a new one started. The token
   * went to the user's address (forgot, the sign-up verification) or was handed out by the CLI or an operator,
   * so using it also proves the email (supplement §3.5).
   */
  async recover(rawToken: unknown, newPassword: unknown): Promise<SignedIn> {
    const token = requiredString(rawToken, "token");
    const password = checkPassword(required(newPassword, "newPassword"), "newPassword");
    const now = this.now();
    // Check the token before the costly argon2id hash, so garbage tokens cost the server nothing.
    if (!(await usersStore.recoveryTokenIsLive(this.rt.db, sha256Hex(token), now))) throw invalid("token: unknown, already used or expired", "INVALID_TOKEN");
    const hash = await hashPassword(password);
    const userId = await this.rt.db.tx(async (tx) => {
      const id = await usersStore.consumeRecoveryToken(tx, sha256Hex(token), now);
      if (id === undefined) return undefined;
      const row = (await usersStore.byId(tx, id))!;
      if (row.email_proven_at === null && isOperatorIdentity(this.rt.config.security.operators, row.email, undefined))
        return this.adoptReservedAccount(tx, row, hash, now);
      await usersStore.setPassword(tx, id, hash, true, now);
      await usersStore.recordEmailProof(tx, id, "recovery", now);
      await usersStore.deleteOtherSessions(tx, id, null);
      return id;
    });
    if (userId === undefined) throw invalid("token: unknown, already used or expired", "INVALID_TOKEN");
    const row = (await usersStore.byId(this.rt.db, userId))!;
    return { user: this.toUser(row), sessionToken: await this.createSession(userId) };
  }

  /**
   * The owner of a listed operator address proves it on an account that public sign-up created (supplement
   * §3.5). Whoever signed up could not read this mailbox, so nothing they set up survives the proof: API keys
   * and sessions that would keep their access, responders that would expose secrets the operator stores later.
   * The account is removed as `users remove` does, and a fresh one (new id and handle, proven, with the new
   * password) takes its place, in the same transaction. Returns the new user's id.
   */
  private async adoptReservedAccount(tx: Db, row: UserRow, passwordHash: string, now: number): Promise<string> {
    for (const hook of this.removalHooks) await hook(tx, row.id);
    await usersStore.remove(tx, row.id);
    const id = newId();
    await usersStore.insert(tx, {
      id,
      email: row.email,
      handle: randomHex(8),
      passwordHash,
      isActivated: true,
      tier: this.rt.config.subscriptions.default_tier,
      unsubscribeToken: randomBase64Url(24),
      emailProof: "recovery",
      now,
    });
    this.rt.log.info("reserved operator address proven: the account public sign-up made was replaced", { userId: id });
    return id;
  }

  /** A single-use recovery link; issuing it voids the user's older unused tokens. */
  async issueRecoveryToken(userId: string, ttlSec: number): Promise<RecoveryLink> {
    const token = randomBase64Url(32);
    const now = this.now();
    const expiresAt = now + ttlSec;
    await this.rt.db.tx((tx) => usersStore.insertRecoveryToken(tx, { id: newId(), userId, tokenHash: sha256Hex(token), now, expiresAt }));
    return { url: `${this.rt.config.server.public_url}/recover?token=${token}`, expiresAt };
  }

  /** Always succeeds for a well-formed email; sends at most 3 recovery links per address per hour. */
  async forgot(rawEmail: unknown): Promise<void> {
    const email = normalizeEmail(required(rawEmail, "email"));
    if (this.rt.config.smtp.host === "") return;
    const row = await usersStore.byEmail(this.rt.db, email);
    if (!row) return;
    const nowMs = this.rt.clock.now();
    if ((await this.forgotSends.retryAfter(email, nowMs)) > 0) return;
    await this.forgotSends.hit(email, nowMs);
    const link = await this.issueRecoveryToken(row.id, FORGOT_TTL_SEC);
    const { text, html } = renderEmail({
      heading: "Reset your password",
      paragraphs: [
        "Someone (hopefully you) asked to reset the password of your Secbox account.",
        `The link works once and expires at ${new Date(link.expiresAt * 1000).toISOString().replace(".000Z", "Z")} (in 1 hour).`,
        "If you did not ask for this, ignore this email: your password stays as it is.",
      ],
      link: { label: "Set a new password", url: link.url },
    });
    await this.outbox.enqueue({ kind: "password_recovery", userId: row.id, to: row.email, subject: "[Secbox] Reset your password", text, html });
  }

  // Operator administration (supplement §4.2)

  async self(userId: string): Promise<User> {
    const row = await usersStore.byId(this.rt.db, userId);
    if (!row) throw notFound("User");
    return this.toUser(row);
  }

  async getById(rawId: string | undefined): Promise<User> {
    const row = await usersStore.byId(this.rt.db, pathId(rawId, "User"));
    if (!row) throw notFound("User");
    return this.toUser(row);
  }

  async getByEmail(rawEmail: unknown): Promise<User> {
    if (rawEmail === undefined || rawEmail === "") throw invalid("email: is required");
    const row = await usersStore.byEmail(this.rt.db, normalizeEmail(rawEmail));
    if (!row) throw notFound("User");
    return this.toUser(row);
  }

  /** Operator sign-up: `activated` defaults to true; without a password only a recovery token lets the user in. */
  async adminSignup(input: LooseInput<typeof SignupParams>): Promise<User> {
    const email = required(input.email, "email");
    if (input.activated !== undefined && input.activated !== null && typeof input.activated !== "boolean") throw invalid("activated: must be a boolean");
    const row = await this.create({
      email,
      password: input.password,
      handle: input.handle,
      activated: input.activated ?? true,
      emailProof: "operator",
    });
    return this.toUser(row);
  }

  /** Registers extra cleanup for user removal (runs inside the removal transaction). */
  onUserRemoved(hook: UserRemovalHook): void {
    this.removalHooks.push(hook);
  }

  /** Every user, oldest first (CLI `users list`). */
  async listUsers(): Promise<User[]> {
    return (await usersStore.list(this.rt.db)).map((row) => this.toUser(row));
  }

  /** Deletes the user and everything they own in one transaction; false when there was no such user. */
  async removeUser(userId: string): Promise<boolean> {
    return this.rt.db.tx(async (tx) => {
      for (const hook of this.removalHooks) await hook(tx, userId);
      return usersStore.remove(tx, userId);
    });
  }

  async removeById(rawId: string | undefined): Promise<void> {
    const id = pathId(rawId, "User");
    if (!(await this.removeUser(id))) throw notFound("User");
  }

  /** Removal by email; an unknown email is not an error. */
  async removeByEmail(rawEmail: unknown): Promise<boolean> {
    const row = await usersStore.byEmail(this.rt.db, normalizeEmail(required(rawEmail, "email")));
    return row ? this.removeUser(row.id) : false;
  }

  /** `startedAt` becomes now when the tier changes (kept otherwise); an absent `endsAt` removes it. */
  async setSubscription(rawEmail: unknown, rawSubscription: unknown): Promise<void> {
    const email = normalizeEmail(required(rawEmail, "userEmail"), "userEmail");
    const subscription = required(rawSubscription, "subscription");
    if (typeof subscription !== "object" || Array.isArray(subscription)) throw invalid("subscription: must be an object {tier, endsAt?}");
    const { tier: rawTier, endsAt: rawEndsAt } = subscription as { tier?: unknown; endsAt?: unknown };
    const tier = required(rawTier, "subscription.tier");
    if (typeof tier !== "string" || !(TIERS as readonly string[]).includes(tier))
      throw invalid(`subscription.tier: must be one of ${TIERS.join(", ")}`);
    const now = this.now();
    const endsAt = rawEndsAt === undefined || rawEndsAt === null ? null : futureTimestamp(rawEndsAt, now, "subscription.endsAt");
    const row = await usersStore.byEmail(this.rt.db, email);
    if (!row) throw notFound("User");
    const startedAt = row.tier === tier ? row.tier_started_at : now;
    await usersStore.setSubscription(this.rt.db, row.id, tier as Tier, startedAt, endsAt, now);
  }

  /** Clone (features/user-data): the destination takes the source's stored subscription as it is. */
  async copySubscription(fromId: string, toId: string): Promise<void> {
    const from = await usersStore.byId(this.rt.db, fromId);
    if (!from) throw notFound("User");
    await usersStore.setSubscription(this.rt.db, toId, from.tier, from.tier_started_at, from.tier_ends_at, this.now());
  }
}
