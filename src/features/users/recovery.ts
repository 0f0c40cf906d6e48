// Users slice, public sign-up and recovery (supplement §3.3, §3.5): sign-up (never proves the email; a listed
// operator address gets a verification link, which is a recovery token), recovery links (issued, emailed by
// `forgot` at most 3 per address per hour, consumed by `recover`, which proves the email), and the adoption of a
// reserved operator address on an account public sign-up made. Extends sessions.ts; UsersService (service.ts) is
// the whole.
import { isOperatorIdentity } from "../../platform/auth/principal";
import { forbidden, invalid } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import { normalizeEmail, required, requiredString } from "../../platform/core/validate";
import { hashPassword } from "../../platform/crypto/passwords";
import { randomBase64Url, randomHex, sha256Hex } from "../../platform/crypto/tokens";
import type { Db } from "../../platform/db/db";
import { rateLimiter } from "../../platform/db/rate-events";
import type { RateLimiter } from "../../platform/http/rate-limit";
import { renderEmail } from "../../platform/mail/render";
import { checkPassword } from "./accounts";
import type { RecoveryLink } from "./contract";
import { UserSessions, type SignedIn } from "./sessions";
import { usersStore, type UserRow } from "./store";

const FORGOT_PER_HOUR = 3;
const FORGOT_TTL_SEC = 3600;
/** Lifetime of the link public sign-up emails to a listed operator address. */
export const SIGNUP_VERIFY_TTL_SEC = 86_400;

/** Public sign-up, its verification link, recovery links. */
export class UserRecovery extends UserSessions {
  /** Recovery emails per address, sliding hour (shared by instances on PostgreSQL, in memory on SQLite). */
  private readonly forgotSends: RateLimiter = rateLimiter(this.rt.db, "forgot", FORGOT_PER_HOUR, 3600 * 1000);

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
    await this.outbox.enqueue({
      kind: "password_recovery",
      userId: row.id,
      to: row.email,
      subject: "[Secbox] Confirm your email address",
      text,
      html,
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
    if (!(await usersStore.recoveryTokenIsLive(this.rt.db, sha256Hex(token), now)))
      throw invalid("token: unknown, already used or expired", "INVALID_TOKEN");
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
}
