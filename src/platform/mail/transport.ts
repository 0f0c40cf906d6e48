// SMTP delivery through nodemailer with the [smtp] configuration. `secure = true` is implicit TLS; otherwise
// STARTTLS is used when the server offers it.
import nodemailer from "nodemailer";
import type { Config } from "../../config/schema";

export interface MailEnvelope {
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
  headers: Record<string, string>;
}

export interface MailTransport {
  send(message: MailEnvelope): Promise<void>;
  close(): void;
}

export function smtpTransport(smtp: Config["smtp"]): MailTransport {
  const transporter = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    auth: smtp.username !== "" ? { user: smtp.username, pass: smtp.password } : undefined,
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 30_000,
  });
  return {
    async send(m) {
      const { "Reply-To": replyTo, ...headers } = m.headers;
      await transporter.sendMail({
        from: smtp.from,
        to: m.to,
        subject: m.subject,
        text: m.text,
        html: m.html,
        messageId: m.messageId,
        replyTo,
        headers,
      });
    },
    close: () => transporter.close(),
  };
}

/** A 5xx SMTP reply is permanent; connection problems and 4xx replies are worth retrying. */
export function isPermanentFailure(err: unknown): boolean {
  const code = (err as { responseCode?: number })?.responseCode;
  return typeof code === "number" && code >= 500 && code < 600;
}

export function describeFailure(err: unknown): string {
  const e = err as { response?: string; message?: string; code?: string };
  return (e?.response ?? e?.message ?? String(err)).slice(0, 1000);
}
