// Password recovery by email, end to end through a real SMTP sink.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSmtpSink, type SmtpSink } from "../../tests/smtp-sink";
import { startTestServer, type TestServer } from "../../tests/harness";

let smtp: SmtpSink;
let srv: TestServer;

beforeAll(async () => {
  smtp = await startSmtpSink();
  srv = await startTestServer({
    env: { SECBOX_SMTP_HOST: "127.0.0.1", SECBOX_SMTP_PORT: String(smtp.port), SECBOX_SERVER_PUBLIC_URL: "https://secbox.lan" },
  });
});
afterAll(async () => {
  await srv.stop();
  await smtp.close();
});

test("forgot emails a single-use recovery link that sets a new password; at most 3 per hour", async () => {
  const u = await srv.createUser();
  expect((await srv.anon.post("/api/auth/forgot", { email: u.email.toUpperCase() })).status).toBe(204);
  expect((await srv.anon.post("/api/auth/forgot", { email: "nobody@example.com" })).status).toBe(204);
  const [mail] = await smtp.waitForTo(u.email, 1);
  expect(mail!.subject).toBe("[Secbox] Reset your password");
  const url = /https:\/\/secbox\.lan\/recover\?token=([A-Za-z0-9_-]+)/.exec(mail!.text);
  expect(url).not.toBeNull();
  expect(mail!.headers.get("list-unsubscribe")).toBeUndefined(); // not a notification email

  const recovered = await srv.anon.post("/api/auth/recover", { token: url![1], newPassword: "brand new password" });
  expect(recovered.status).toBe(200);
  expect(recovered.headers.get("set-cookie")).toContain("Secure");
  expect((await srv.anon.post("/api/auth/recover", { token: url![1], newPassword: "another password" })).json.code).toBe("INVALID_TOKEN");
  expect((await srv.anon.post("/api/auth/signin", { email: u.email, password: "brand new password" })).status).toBe(200);

  // Two more requests are sent (3 in the hour), the 4th silently does nothing.
  for (let i = 0; i < 3; i++) expect((await srv.anon.post("/api/auth/forgot", { email: u.email })).status).toBe(204);
  await smtp.waitForTo(u.email, 3);
  await srv.services.outbox.idle();
  await Bun.sleep(200);
  expect(smtp.messages.filter((m) => m.to.includes(u.email))).toHaveLength(3);
});
