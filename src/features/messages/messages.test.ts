// POST /api/send_message: mail configuration checks, validation, per-IP throttle, delivery to catch_all.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSmtpSink, type SmtpSink } from "../../tests/smtp-sink";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";

let smtp: SmtpSink;
let srv: TestServer;

beforeAll(async () => {
  smtp = await startSmtpSink();
  srv = await startTestServer({
    env: {
      SECBOX_SMTP_HOST: "127.0.0.1",
      SECBOX_SMTP_PORT: String(smtp.port),
      SECBOX_SMTP_CATCH_ALL: "operator@secbox.test",
      SECBOX_SECURITY_OPERATORS: "op@messages.test",
    },
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
        // Even a body that is not an object, not JSON, or not of a JSON type (supplement §21: 403 before 400).
        for (const [raw, type] of [
          ["null", "application/json"],
          ["{bad", "application/json"],
          ["hi", "text/plain"],
          ["[1]", "application/json"],
        ]) {
          const r = await s.anon.request("POST", "/api/send_message", { raw, headers: { "content-type": type! } });
          expect([raw, r.status, r.json?.code]).toEqual([raw, 403, "MAIL_NOT_CONFIGURED"]);
        }
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

describe("POST /api/users/email", () => {
  let op: TestUser;
  beforeAll(async () => {
    op = await srv.createUser("op@messages.test");
  });

  test("html null means not set: 204 and the default HTML body is sent", async () => {
    const res = await op.client.post("/api/users/email", { recipient: "To@Example.com", subject: "Hello", text: "plain <text>", html: null });
    expect(res.status).toBe(204);
    const [mail] = await smtp.waitForTo("to@example.com", 1);
    expect(mail!.subject).toBe("Hello");
    expect(mail!.html).toContain("plain &lt;text&gt;");
    const bad = await op.client.post("/api/users/email", { recipient: "to@example.com", subject: "Hello", text: "t", html: 42 });
    expect([bad.status, bad.json.code]).toEqual([400, "INVALID_INPUT"]);
    // looseBody: the service names a missing or mistyped member.
    for (const [body, message] of [
      [{ subject: "Hello", text: "t" }, "recipient: is required"],
      [{ recipient: "to@example.com", text: "t" }, "subject: is required"],
      [{ recipient: "to@example.com", subject: ["Hello"], text: "t" }, "subject: must be a string"],
      [{ recipient: "to@example.com", subject: "Hello", text: null }, "text: is required"],
      [{ recipient: "to@example.com", subject: "Hello", text: "t", html: 42 }, "html: must be a string or null"],
    ] as const) {
      const res = await op.client.post("/api/users/email", body);
      expect([JSON.stringify(body), res.status, res.json]).toEqual([JSON.stringify(body), 400, { message, code: "INVALID_INPUT" }]);
    }
  });

  test("subject length counts characters, not UTF-16 units", async () => {
    const post = (subject: string) => op.client.post("/api/users/email", { recipient: "other@example.com", subject, text: "t" });
    expect((await post("😀".repeat(200))).status).toBe(204); // 200 characters, 400 UTF-16 units
    const long = await post("😀".repeat(201));
    expect([long.status, long.json.code]).toEqual([400, "INVALID_INPUT"]);
    expect(long.json.message).toStartWith("subject:");
  });
});
