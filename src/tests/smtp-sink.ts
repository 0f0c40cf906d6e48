// A real SMTP server inside the test process (smtp-server), recording every message it accepts, parsed
// with postal-mime. Tests assert on recipients, headers and bodies of what actually went over SMTP.
import { SMTPServer } from "smtp-server";
import PostalMime from "postal-mime";

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  text: string;
  html: string;
  headers: Map<string, string>;
  messageId: string;
}

export interface SmtpSink {
  port: number;
  messages: ReceivedMail[];
  /** Resolves when at least `n` messages have arrived (rejects after `timeoutMs`). */
  waitFor(n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** Resolves with the messages to `address` once there are at least `n` of them. */
  waitForTo(address: string, n: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  /** Reply with this SMTP error to the next DATA commands (e.g. 550 for a permanent failure). */
  failWith(code: number | null): void;
  /** While on, a message is recorded when its data has arrived but the final reply is held back (a sender cut off
   *  at that point cannot know the message was delivered); turning it off releases the held replies. */
  holdReplies(on: boolean): void;
  close(): Promise<void>;
}

export async function startSmtpSink(port = 0): Promise<SmtpSink> {
  const messages: ReceivedMail[] = [];
  let failCode: number | null = null;
  let hold = false;
  const held: (() => void)[] = [];
  const waiters: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", async () => {
        if (failCode !== null) {
          const err = Object.assign(new Error(`Simulated failure ${failCode}`), { responseCode: failCode });
          return callback(err);
        }
        const raw = Buffer.concat(chunks).toString("utf8");
        const parsed = await PostalMime.parse(raw);
        const headers = new Map<string, string>();
        for (const h of parsed.headers) headers.set(h.key.toLowerCase(), h.value);
        messages.push({
          from: session.envelope.mailFrom ? (session.envelope.mailFrom as { address: string }).address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          subject: parsed.subject ?? "",
          text: parsed.text ?? "",
          html: parsed.html ?? "",
          headers,
          messageId: parsed.messageId ?? "",
        });
        waiters.splice(0).forEach((w) => w());
        if (hold) held.push(() => callback());
        else callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const address = server.server.address() as { port: number };
  return {
    port: address.port,
    messages,
    async waitFor(n, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < n) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${n} message(s), got ${messages.length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, Math.min(left, 100));
        });
      }
      return messages;
    },
    async waitForTo(address, n, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      const to = () => messages.filter((m) => m.to.includes(address));
      while (to().length < n) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${n} message(s) to ${address}, got ${to().length}`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, Math.min(left, 100));
        });
      }
      return to();
    },
    failWith(code) {
      failCode = code;
    },
    holdReplies(on) {
      hold = on;
      if (!on) for (const release of held.splice(0)) release();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
