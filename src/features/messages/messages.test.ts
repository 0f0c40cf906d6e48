// POST /api/send_message: mail configuration checks, validation, per-IP throttle, delivery to catch_all.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSmtpSink, type SmtpSink } from "../../tests/smtp-sink";
import { startTestServer, type TestServer } from "../../tests/harness";

let smtp: SmtpSink;
let srv: TestServer;

beforeAll(async () => {
  smtp = await startSmtpSink();
  srv = await startTestServer({
    env: { SECBOX_SMTP_HOST: "127.0.0.1", SECBOX_SMTP_PORT: String(smtp.port), SECBOX_SMTP_CATCH_ALL: "operator@secbox.test" },
  });
});
afterAll(async () => {
  await srv.stop();
  await smtp.close();
});

describe("send_message", () => {
  test("403 MAIL_NOT_CONFIGURED without SMTP or without catch_all, before validating the body", async () => {
    const noMail = await startTestServer();
    const noCatchAll = await startTestServer({ env: { SECBOX_SMTP_HOST: "127.0.0.1", SECBOX_SMTP_PORT: String(smtp.port) } });
    try {
      for (const s of [noMail, noCatchAll]) {
        const res = await s.anon.post("/api/send_message", {});
        expect(res.status).toBe(403);
        expect(res.json.code).toBe("MAIL_NOT_CONFIGURED");
      }
    } finally {
      await noMail.stop();
      await noCatchAll.stop();
    }
  });

  test("delivers to catch_all with Reply-To and the signed-in user's email", async () => {
    const u = await srv.createUser();
    const n = smtp.messages.length;
    const res = await u.client.post("/api/send_message", { message: "Your tool is great <3", email: "Reply@Example.com" });
    expect(res.status).toBe(204);
    const [mail] = (await smtp.waitFor(n + 1)).slice(n);
    expect(mail!.to).toEqual(["operator@secbox.test"]);
    expect(mail!.subject).toBe("[Secbox] Contact message");
    expect(mail!.headers.get("reply-to")).toContain("reply@example.com");
    expect(mail!.text).toContain("Your tool is great <3");
    expect(mail!.text).toContain(u.email);
    expect(mail!.html).toContain("Your tool is great &lt;3");
  });

  test("validation 400s do not count; the 6th accepted message in an hour from one IP is 429", async () => {
    const ip = { "x-forwarded-for": "203.0.113.9" }; // ignored: trust_proxy is off, the TCP peer counts
    expect((await srv.anon.post("/api/send_message", { message: "" }, { headers: ip })).status).toBe(400);
    expect((await srv.anon.post("/api/send_message", { message: "x".repeat(10_001) })).status).toBe(400);
    expect((await srv.anon.post("/api/send_message", { message: "hi", email: "bad" })).status).toBe(400);
    expect((await srv.anon.post("/api/send_message", { message: 42 })).status).toBe(400);
    // One message already went out from 127.0.0.1 in the previous test.
    for (let i = 0; i < 4; i++) expect((await srv.anon.post("/api/send_message", { message: `m${i}` }, { headers: ip })).status).toBe(204);
    const limited = await srv.anon.post("/api/send_message", { message: "one too many" });
    expect(limited.status).toBe(429);
    expect(limited.json.code).toBe("RATE_LIMITED");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
