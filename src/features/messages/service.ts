// Contact messages to the operator mailbox and operator-queued emails (supplement §21, §4.2 EmailParams).
import { ApiError, forbidden, invalid, rateLimited } from "../../platform/core/errors";
import { rateLimiter } from "../../platform/db/rate-events";
import type { RateLimiter } from "../../platform/http/rate-limit";
import type { LooseInput } from "../../platform/http/contract";
import { charLength, normalizeEmail, required, requiredString } from "../../platform/core/validate";
import type { Outbox } from "../../platform/mail/outbox";
import { escapeHtml, renderEmail } from "../../platform/mail/render";
import type { Runtime } from "../../platform/runtime";
import type { EmailParams, SendMessageParams } from "./contract";
import { HTML_MAX_CHARS, MESSAGE_MAX_CHARS, MESSAGES_PER_HOUR, SUBJECT_MAX_CHARS, TEXT_MAX_CHARS } from "./shared-rules";

export class MessagesService {
  constructor(
    private readonly rt: Runtime,
    private readonly outbox: Outbox,
    /** Shared by the instances on one PostgreSQL database; in memory on SQLite. */
    private readonly limiter: RateLimiter = rateLimiter(rt.db, "contact", MESSAGES_PER_HOUR, 3600_000),
  ) {}

  /** 403 MAIL_NOT_CONFIGURED without `smtp.host` or `smtp.catch_all`; the route runs it before decoding the body (§21). */
  assertMailConfigured(): void {
    const { host, catch_all } = this.rt.config.smtp;
    if (host === "" || catch_all === "") throw forbidden("MAIL_NOT_CONFIGURED", "Mail delivery is not configured on this server");
  }

  /** Checks in order: 403 mail not configured, 400 input, 429 per-IP hourly cap (only accepted messages count). */
  async sendContactMessage(input: LooseInput<typeof SendMessageParams>, clientIp: string, senderEmail?: string): Promise<void> {
    this.assertMailConfigured();
    const { catch_all } = this.rt.config.smtp;
    if (typeof input.message !== "string" || input.message.trim().length === 0 || charLength(input.message) > MESSAGE_MAX_CHARS)
      throw invalid(`message: must be 1 to ${MESSAGE_MAX_CHARS} characters`);
    const replyTo = input.email === undefined || input.email === null ? undefined : normalizeEmail(input.email, "email");
    const now = this.rt.clock.now();
    const wait = await this.limiter.retryAfter(clientIp, now);
    if (wait > 0) throw rateLimited(wait, "Too many messages from this address");
    await this.limiter.hit(clientIp, now);
    const { text, html } = renderEmail({
      heading: "Contact message",
      paragraphs: [`From: ${replyTo ?? "(no address given)"}`, `Signed-in user: ${senderEmail ?? "(anonymous)"}`],
      preformatted: input.message,
    });
    await this.outbox.enqueue({
      kind: "contact",
      to: catch_all,
      subject: "[Secbox] Contact message",
      text,
      html,
      headers: replyTo ? { "Reply-To": replyTo } : {},
    });
  }

  /** POST /api/users/email: always queued, held when SMTP is not configured. */
  async queueOperatorEmail(input: LooseInput<typeof EmailParams>): Promise<void> {
    const to = normalizeEmail(required(input.recipient, "recipient"), "recipient");
    const subject = requiredString(input.subject, "subject");
    const text = requiredString(input.text, "text");
    const html = input.html ?? undefined; // null means not set (supplement §1)
    if (html !== undefined && typeof html !== "string") throw invalid("html: must be a string or null");
    if (subject.trim().length === 0 || charLength(subject) > SUBJECT_MAX_CHARS)
      throw invalid(`subject: must be 1 to ${SUBJECT_MAX_CHARS} characters`);
    if (text.length === 0 || charLength(text) > TEXT_MAX_CHARS) throw invalid(`text: must be 1 to ${TEXT_MAX_CHARS} characters`);
    if (html !== undefined && charLength(html) > HTML_MAX_CHARS) throw invalid(`html: must be at most ${HTML_MAX_CHARS} characters`);
    if (/[\r\n]/.test(subject)) throw new ApiError(400, "INVALID_INPUT", "subject: must be a single line");
    await this.outbox.enqueue({
      kind: "operator",
      to,
      subject,
      text,
      html: html ?? `<pre style="white-space:pre-wrap;font-family:inherit">${escapeHtml(text)}</pre>`,
    });
  }
}
