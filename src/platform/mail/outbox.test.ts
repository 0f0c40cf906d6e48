// The mail path end to end: operator email → outbox → real SMTP sink; held mail without SMTP; retries;
// permanent failures; and an outbox that survives a restart during an SMTP outage.
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSmtpSink, type SmtpSink } from "../../tests/smtp-sink";
import { startTestServer, type TestServer } from "../../tests/harness";
import { retryDelaySec } from "./outbox";

const OPS = "ops@example.com";
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serverWithSmtp(
  sink: { port: number } | null,
  extra: Record<string, string> = {},
  opts: { dataDir?: string; clock?: { now(): number } } = {},
) {
  const env: Record<string, string> = { SECBOX_SECURITY_OPERATORS: OPS, ...extra };
  if (sink)
    Object.assign(env, { SECBOX_SMTP_HOST: "127.0.0.1", SECBOX_SMTP_PORT: String(sink.port), SECBOX_SMTP_FROM: "Secbox <noreply@secbox.test>" });
  const srv = await startTestServer({ env, ...opts });
  return srv;
}

async function sink(): Promise<SmtpSink> {
  const s = await startSmtpSink();
  cleanups.push(() => s.close());
  return s;
}

describe("outbox", () => {
  test("an operator email goes out over SMTP with text and HTML parts, encoded subject and Message-ID", async () => {
    const smtp = await sink();
    const srv = await serverWithSmtp(smtp);
    cleanups.push(() => srv.stop());
    const op = await srv.createUser(OPS);
    const res = await op.client.post("/api/users/email", { recipient: "Someone@Example.com", subject: "Prüfung ✓ résumé", text: "Hello <there>" });
    expect(res.status).toBe(204);
    const [mail] = await smtp.waitFor(1);
    expect(mail!.to).toEqual(["someone@example.com"]);
    expect(mail!.from).toBe("noreply@secbox.test");
    expect(mail!.subject).toBe("Prüfung ✓ résumé");
    expect(mail!.raw).toMatch(/^Subject: =\?UTF-8\?/m); // RFC 2047 encoded on the wire
    expect(mail!.text.trim()).toBe("Hello <there>");
    expect(mail!.html).toContain("Hello &lt;there&gt;");
    expect(mail!.messageId).toMatch(/^<[0-9a-f-]{36}@secbox\.test>$/);
    await srv.services.outbox.idle();
    const [entry] = await srv.services.outbox.list();
    expect(entry!.status).toBe("sent");
    expect(entry!.attempts).toBe(1);
  });

  test("operator email validation and access", async () => {
    const srv = await serverWithSmtp(null);
    cleanups.push(() => srv.stop());
    const op = await srv.createUser(OPS);
    const user = await srv.createUser();
    const body = { recipient: "a@example.com", subject: "s", text: "t" };
    expect((await srv.anon.post("/api/users/email", body)).status).toBe(401);
    expect((await user.client.post("/api/users/email", body)).status).toBe(403);
    expect((await op.client.post("/api/users/email", { ...body, recipient: "nope" })).status).toBe(400);
    expect((await op.client.post("/api/users/email", { ...body, subject: "" })).status).toBe(400);
    expect((await op.client.post("/api/users/email", { ...body, subject: "x".repeat(201) })).status).toBe(400);
    expect((await op.client.post("/api/users/email", { ...body, text: "" })).status).toBe(400);
  });

  test("without SMTP, mail is held and visible, nothing crashes", async () => {
    const srv = await serverWithSmtp(null);
    cleanups.push(() => srv.stop());
    const op = await srv.createUser(OPS);
    expect((await op.client.post("/api/users/email", { recipient: "a@example.com", subject: "held", text: "t" })).status).toBe(204);
    const list = await srv.services.outbox.list();
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ to: "a@example.com", subject: "held", status: "held", attempts: 0 });
  });

  test("a 5xx reply fails the message at once with the SMTP error recorded", async () => {
    const smtp = await sink();
    smtp.failWith(550);
    const srv = await serverWithSmtp(smtp);
    cleanups.push(() => srv.stop());
    const op = await srv.createUser(OPS);
    await op.client.post("/api/users/email", { recipient: "a@example.com", subject: "bounce", text: "t" });
    let entry;
    for (let i = 0; i < 50; i++) {
      await srv.services.outbox.idle();
      [entry] = await srv.services.outbox.list();
      if (entry?.status === "failed") break;
      await Bun.sleep(20);
    }
    expect(entry!.status).toBe("failed");
    expect(entry!.lastError).toContain("550");
    expect(smtp.messages).toHaveLength(0);
  });

  test("backoff doubles from 30 s up to 1 h", () => {
    expect([0, 1, 2, 3, 6, 7, 20].map(retryDelaySec)).toEqual([30, 60, 120, 240, 1920, 3600, 3600]);
  });

  test("mail held without SMTP is sent once a server starts with SMTP configured; mail held over 7 days fails", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "secbox-held-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const clock = {
      t: Date.now(),
      now() {
        return this.t;
      },
    };
    const first = await serverWithSmtp(null, {}, { dataDir, clock });
    const op = await first.createUser(OPS);
    await op.client.post("/api/users/email", { recipient: "old@example.com", subject: "too old", text: "t" });
    clock.t += 6 * 24 * 3600 * 1000; // six days later
    await op.client.post("/api/users/email", { recipient: "new@example.com", subject: "recent", text: "t" });
    expect((await first.services.outbox.list()).map((e) => e.status)).toEqual(["held", "held"]);
    await first.stop();

    clock.t += 2 * 24 * 3600 * 1000; // the first one is now 8 days old, the second 2 days
    const smtp = await sink();
    const second = await serverWithSmtp(smtp, {}, { dataDir, clock });
    cleanups.push(() => second.stop());
    const [mail] = await smtp.waitFor(1);
    expect(mail!.subject).toBe("recent");
    await second.services.outbox.idle();
    const bySubject = Object.fromEntries((await second.services.outbox.list()).map((e) => [e.subject, e.status]));
    expect(bySubject).toEqual({ "too old": "failed", recent: "sent" });
    expect(smtp.messages).toHaveLength(1);
  });

  test("queued during an SMTP outage, the message survives a restart and arrives exactly once", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "secbox-outbox-"));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    // Reserve a port, then close the sink so SMTP is down.
    const probe = await startSmtpSink();
    const port = probe.port;
    await probe.close();

    const clock = {
      t: Date.now(),
      now() {
        return this.t;
      },
    };
    const first = await serverWithSmtp({ port }, {}, { dataDir, clock });
    const op = await first.createUser(OPS);
    expect((await op.client.post("/api/users/email", { recipient: "a@example.com", subject: "survivor", text: "still here" })).status).toBe(204);
    let entry;
    for (let i = 0; i < 100; i++) {
      await first.services.outbox.idle();
      [entry] = await first.services.outbox.list();
      if (entry?.attempts === 1) break;
      await Bun.sleep(20);
    }
    expect(entry).toMatchObject({ status: "queued", attempts: 1 });
    expect(entry!.lastError).toBeDefined();
    await first.stop();

    const smtp = await startSmtpSink(port);
    cleanups.push(() => smtp.close());
    clock.t += 31_000; // past the first retry delay
    const second = await serverWithSmtp({ port }, {}, { dataDir, clock });
    cleanups.push(() => second.stop());
    const [mail] = await smtp.waitFor(1);
    expect(mail!.subject).toBe("survivor");
    await second.services.outbox.idle();
    second.services.outbox.kick();
    await second.services.outbox.idle();
    await Bun.sleep(100);
    expect(smtp.messages).toHaveLength(1);
    expect((await second.services.outbox.list())[0]).toMatchObject({ status: "sent", attempts: 2 });
  });
});
