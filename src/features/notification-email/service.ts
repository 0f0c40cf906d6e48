// Notification email destination (interface "Notification email destination" state machine, supplement §10)
// and notification routing: the one place that answers "where do this user's notifications go".
import { randomInt } from "node:crypto";
import { constantTimeEqual, hmacHex } from "../../platform/crypto/tokens";
import type { Db } from "../../platform/db/db";
import { ApiError, invalid, notFound } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import { normalizeEmail, required, requiredString } from "../../platform/core/validate";
import type { Outbox, EmailKind } from "../../platform/mail/outbox";
import { renderEmail, type EmailContent } from "../../platform/mail/render";
import { nowSec, type Runtime } from "../../platform/runtime";
import type { SettingsService } from "../settings/service";
import type { UsersService } from "../users/service";
import type { UserNotificationDestination as NotificationDestination } from "./contract";
import { CODE_TTL_SEC, MAX_FAILED_ATTEMPTS, SEND_COOLDOWN_SEC, SENDS_PER_HOUR, VERIFICATION_CODE_DIGITS } from "./shared-rules";
import { destinationsStore, toDestination } from "./store";

const CODE_RE = new RegExp(`^\\d{${VERIFICATION_CODE_DIGITS}}$`);

/** A notification email: suppressed while unsubscribed, sent to the routed address with RFC 8058 headers. */
export interface Notification {
  kind: Extract<EmailKind, "responder_summary" | "tracker_change" | "tracker_failing" | "tracker_recovered">;
  subject: string;
  content: EmailContent;
}

const verificationFailed = (message: string) => new ApiError(400, "VERIFICATION_FAILED", message);

export class NotificationEmailService {
  private readonly codeKey: Uint8Array;

  constructor(
    private readonly rt: Runtime,
    private readonly users: UsersService,
    private readonly settings: SettingsService,
    private readonly outbox: Outbox,
  ) {
    this.codeKey = rt.secretBox.derive("notification-verification-code");
  }

  private now() {
    return nowSec(this.rt.clock);
  }

  private hashCode(destinationId: string, code: string) {
    return hmacHex(this.codeKey, `${destinationId}:${code}`);
  }

  private newCode(): string {
    return String(randomInt(0, 10 ** VERIFICATION_CODE_DIGITS)).padStart(VERIFICATION_CODE_DIGITS, "0");
  }

  /** 400 COOLDOWN unless 60 s passed since the last code email and fewer than 5 went out in the last hour. */
  private async checkSendLimits(userId: string, now: number) {
    const sends = await destinationsStore.sendsSince(this.rt.db, userId, now - 3600);
    const last = sends.at(-1);
    if (last !== undefined && now - last < SEND_COOLDOWN_SEC)
      throw new ApiError(400, "COOLDOWN", `A code was sent recently; wait ${SEND_COOLDOWN_SEC - (now - last)} s before requesting another`);
    if (sends.length >= SENDS_PER_HOUR)
      throw new ApiError(400, "COOLDOWN", `At most ${SENDS_PER_HOUR} codes per hour; wait ${sends[0]! + 3600 - now} s`);
  }

  private async sendCode(userId: string, address: string, code: string, expiresAt: number) {
    const { text, html } = renderEmail({
      heading: "Your verification code",
      paragraphs: [
        `Enter this code in Secbox to receive notifications at ${address}:`,
        code,
        `The code expires at ${new Date(expiresAt * 1000).toISOString().replace(".000Z", "Z")} (in ${CODE_TTL_SEC / 60} minutes).`,
        "If you did not ask for this, ignore this email.",
      ],
    });
    await this.outbox.enqueue({ kind: "verification_code", userId, to: address, subject: "[Secbox] Your verification code", text, html });
  }

  async get(userId: string): Promise<NotificationDestination | null> {
    const row = await destinationsStore.byUser(this.rt.db, userId);
    return row ? toDestination(row) : null;
  }

  async set(userId: string, rawEmail: unknown): Promise<NotificationDestination> {
    const address = normalizeEmail(required(rawEmail, "email"), "email");
    const user = await this.users.getRow(userId);
    if (!user) throw notFound("User");
    if (address === user.email.toLowerCase()) throw invalid("email: must differ from the login email");
    const now = this.now();
    await this.checkSendLimits(userId, now);
    const existing = await destinationsStore.byUser(this.rt.db, userId);
    const id = existing?.id ?? newId();
    const code = this.newCode();
    const expiresAt = now + CODE_TTL_SEC;
    await this.rt.db.tx(async (tx) => {
      await destinationsStore.upsertPending(tx, { id, userId, address, codeHash: this.hashCode(id, code), expiresAt, now });
      await destinationsStore.recordSend(tx, userId, now);
    });
    await this.sendCode(userId, address, code, expiresAt);
    return toDestination((await destinationsStore.byUser(this.rt.db, userId))!);
  }

  async remove(userId: string): Promise<void> {
    await destinationsStore.remove(this.rt.db, userId);
  }

  async resend(userId: string): Promise<void> {
    const row = await destinationsStore.byUser(this.rt.db, userId);
    if (!row) throw notFound("Notification email");
    const now = this.now();
    if (row.status === "verified") throw verificationFailed("The notification email is already verified");
    if (row.failed_attempts >= MAX_FAILED_ATTEMPTS)
      throw verificationFailed("The code was invalidated after too many wrong attempts; set the email again");
    if (row.code_expires_at === null || row.code_expires_at <= now) throw verificationFailed("The code has expired; set the email again");
    await this.checkSendLimits(userId, now);
    const code = this.newCode();
    const expiresAt = now + CODE_TTL_SEC;
    await this.rt.db.tx(async (tx) => {
      await destinationsStore.newCode(tx, row.id, this.hashCode(row.id, code), expiresAt, now);
      await destinationsStore.recordSend(tx, userId, now);
    });
    await this.sendCode(userId, row.address, code, expiresAt);
  }

  async verify(userId: string, rawCode: unknown): Promise<NotificationDestination> {
    const code = requiredString(rawCode, "code").trim();
    const row = await destinationsStore.byUser(this.rt.db, userId);
    if (!row) throw notFound("Notification email");
    const now = this.now();
    if (row.status === "verified") throw verificationFailed("The notification email is already verified");
    if (row.code_hash === null || row.failed_attempts >= MAX_FAILED_ATTEMPTS)
      throw verificationFailed("No verification in progress; set the email again");
    if (row.code_expires_at === null || row.code_expires_at <= now) throw verificationFailed("The code has expired");
    if (!CODE_RE.test(code) || !constantTimeEqual(this.hashCode(row.id, code), row.code_hash)) {
      await destinationsStore.failedAttempt(this.rt.db, row.id, now);
      const left = MAX_FAILED_ATTEMPTS - row.failed_attempts - 1;
      throw verificationFailed(left > 0 ? `Invalid code; ${left} attempt(s) left` : "Invalid code; the code is now invalidated");
    }
    await destinationsStore.markVerified(this.rt.db, row.id, now);
    // A code sent to the login email proves it (supplement §3.5); UsersService ignores any other address. Note
    // that `set` refuses the login email (§10.2), so through today's API a verified destination is never the
    // login email and this grants nothing; it keeps the proof rule whole if §10.2 changes.
    await this.users.recordEmailProof(userId, row.address, "code");
    return toDestination((await destinationsStore.byUser(this.rt.db, userId))!);
  }

  /** Where this user's notification emails go: the verified destination, else the login email; null when unsubscribed. */
  async routeFor(userId: string): Promise<string | null> {
    const user = await this.users.getRow(userId);
    if (!user) return null;
    if (await this.settings.isUnsubscribed(userId)) return null;
    const dest = await destinationsStore.byUser(this.rt.db, userId);
    return dest?.status === "verified" ? dest.address : user.email;
  }

  unsubscribeUrl(token: string) {
    return `${this.rt.config.server.public_url}/api/notifications/unsubscribe?token=${encodeURIComponent(token)}`;
  }

  /** Queues a notification email; returns false when the user receives none (unsubscribed or unknown). `db`: the
   *  transaction the email is part of (written with it, or not at all). */
  async notify(userId: string, n: Notification, db?: Db): Promise<boolean> {
    const to = await this.routeFor(userId);
    if (to === null) return false;
    const user = (await this.users.getRow(userId))!;
    const url = this.unsubscribeUrl(user.unsubscribe_token);
    const mailto = this.rt.config.smtp.unsubscribe_mailto;
    const { text, html } = renderEmail({
      ...n.content,
      footer: {
        text: "You receive this because notifications are on for your Secbox account. Unsubscribe:",
        link: { label: "turn off notification emails", url },
      },
    });
    await this.outbox.enqueue(
      {
        kind: n.kind,
        userId,
        to,
        subject: n.subject,
        text,
        html,
        headers: {
          "List-Unsubscribe": mailto ? `<${url}>, <mailto:${mailto}?subject=unsubscribe>` : `<${url}>`,
          "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
        },
      },
      db,
    );
    return true;
  }

  /** The unsubscribe routes' token: the body's (POST), else the query's; 400 only when none came at all. */
  async unsubscribeRequest(bodyToken: unknown, queryToken: unknown): Promise<void> {
    // As documented (NotificationsUnsubscribeParams): absent, or a string.
    if (bodyToken !== undefined && typeof bodyToken !== "string") throw invalid("token: must be a string");
    const token = bodyToken ?? queryToken;
    if (typeof token !== "string" || token === "") throw invalid("token: is required");
    await this.unsubscribe(token);
  }

  /** RFC 8058 unsubscribe: unknown tokens do nothing, and the caller cannot tell the difference. */
  async unsubscribe(token: string): Promise<void> {
    if (token.length === 0 || token.length > 128) return;
    const user = await this.users.getRowByUnsubscribeToken(token);
    if (user) await this.settings.setUnsubscribed(user.id, true);
  }
}
