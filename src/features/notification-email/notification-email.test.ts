// Notification email destination, routing and RFC 8058 unsubscribe, observed through a real SMTP sink.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSmtpSink, type SmtpSink } from "../../tests/smtp-sink";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";

let smtp: SmtpSink;
let srv: TestServer;
const clock = {
  t: Date.now(),
  now() {
    return this.t;
  },
};
const advance = (sec: number) => (clock.t += sec * 1000);

beforeAll(async () => {
  smtp = await startSmtpSink();
  srv = await startTestServer({
    clock,
    env: { SECBOX_SMTP_HOST: "127.0.0.1", SECBOX_SMTP_PORT: String(smtp.port), SECBOX_SMTP_UNSUBSCRIBE_MAILTO: "unsubscribe@secbox.test" },
  });
});
afterAll(async () => {
  await srv.stop();
  await smtp.close();
});

/** The 6-digit code of the `nth` verification email sent to `address`. */
async function codeSentTo(address: string, nth: number): Promise<string> {
  const mail = (await smtp.waitForTo(address, nth))[nth - 1]!;
  expect(mail.subject).toBe("[Secbox] Your verification code");
  return /\b(\d{6})\b/.exec(mail.text)![1]!;
}

const route = (u: TestUser) => srv.services.notificationEmail.routeFor(u.id);
const wrongCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

describe("notification email destination", () => {
  test("set → pending with a code email, verify → verified and routing follows; delete falls back", async () => {
    const u = await srv.createUser();
    expect((await srv.anon.get("/api/user/notification_email")).status).toBe(401);
    const none = await u.client.get("/api/user/notification_email");
    expect(none.status).toBe(200);
    expect(none.text).toBe("null");

    expect((await u.client.put("/api/user/notification_email", { email: "not-an-email" })).json.code).toBe("INVALID_INPUT");
    // looseBody: the service names the member, missing or mistyped; 401 comes first.
    expect((await u.client.put("/api/user/notification_email", {})).json).toEqual({ message: "email: is required", code: "INVALID_INPUT" });
    expect((await u.client.put("/api/user/notification_email", { email: 1 })).json).toEqual({
      message: "email: must be a string",
      code: "INVALID_INPUT",
    });
    expect((await u.client.post("/api/user/notification_email/_verify", {})).json).toEqual({ message: "code: is required", code: "INVALID_INPUT" });
    expect((await u.client.post("/api/user/notification_email/_verify", { code: 42917 })).json).toEqual({
      message: "code: must be a string",
      code: "INVALID_INPUT",
    });
    expect((await srv.anon.put("/api/user/notification_email", { email: 1 })).status).toBe(401);
    const same = await u.client.put("/api/user/notification_email", { email: u.email.toUpperCase() });
    expect(same.status).toBe(400);
    expect(same.json.message).toContain("login email");

    const set = await u.client.put("/api/user/notification_email", { email: "Alerts@Example.com" });
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ kind: "email", address: "alerts@example.com", status: "pending" });
    expect(set.json.verificationExpiresAt - set.json.verificationSentAt).toBe(900);
    const code = await codeSentTo("alerts@example.com", 1);
    expect(await route(u)).toBe(u.email); // pending: still the login email

    const wrong = await u.client.post("/api/user/notification_email/_verify", { code: wrongCode(code) });
    expect(wrong.status).toBe(400);
    expect(wrong.json.code).toBe("VERIFICATION_FAILED");
    const ok = await u.client.post("/api/user/notification_email/_verify", { code: ` ${code} ` });
    expect(ok.status).toBe(200);
    expect(ok.json.status).toBe("verified");
    expect(ok.json.verifiedAt).toBeNumber();
    expect(ok.json.verificationExpiresAt).toBeUndefined();
    expect(await route(u)).toBe("alerts@example.com");

    expect((await u.client.post("/api/user/notification_email/_verify", { code })).json.code).toBe("VERIFICATION_FAILED");
    expect((await u.client.post("/api/user/notification_email/_resend")).json.code).toBe("VERIFICATION_FAILED");

    expect((await u.client.delete("/api/user/notification_email")).status).toBe(204);
    expect((await u.client.get("/api/user/notification_email")).text).toBe("null");
    expect(await route(u)).toBe(u.email);
    expect((await u.client.post("/api/user/notification_email/_resend")).status).toBe(404);
    expect((await u.client.post("/api/user/notification_email/_verify", { code })).status).toBe(404);
    expect((await u.client.delete("/api/user/notification_email")).status).toBe(204);
  });

  test("cooldown of 60 s and at most 5 code emails per hour (PUT and _resend together)", async () => {
    const u = await srv.createUser();
    expect((await u.client.put("/api/user/notification_email", { email: "c1@example.com" })).status).toBe(200);
    const early = await u.client.post("/api/user/notification_email/_resend");
    expect(early.status).toBe(400);
    expect(early.json.code).toBe("COOLDOWN");
    expect((await u.client.put("/api/user/notification_email", { email: "c2@example.com" })).json.code).toBe("COOLDOWN");
    for (let i = 0; i < 4; i++) {
      advance(61);
      expect((await u.client.post("/api/user/notification_email/_resend")).status).toBe(204);
    }
    advance(61);
    const capped = await u.client.post("/api/user/notification_email/_resend");
    expect(capped.json.code).toBe("COOLDOWN");
    expect(capped.json.message).toContain("per hour");
    advance(3600); // the hour has passed (and the code expired): a new PUT may send again
    expect((await u.client.put("/api/user/notification_email", { email: "c3@example.com" })).status).toBe(200);
  });

  test("resend replaces the code; expiry and 5 wrong attempts invalidate it", async () => {
    const u = await srv.createUser();
    await u.client.put("/api/user/notification_email", { email: "r@example.com" });
    const first = await codeSentTo("r@example.com", 1);
    advance(61);
    expect((await u.client.post("/api/user/notification_email/_resend")).status).toBe(204);
    const second = await codeSentTo("r@example.com", 2);
    if (first !== second) expect((await u.client.post("/api/user/notification_email/_verify", { code: first })).status).toBe(400);

    for (let i = 0; i < 5; i++) expect((await u.client.post("/api/user/notification_email/_verify", { code: wrongCode(second) })).status).toBe(400);
    const afterLockout = await u.client.post("/api/user/notification_email/_verify", { code: second });
    expect(afterLockout.json.code).toBe("VERIFICATION_FAILED");
    advance(61);
    expect((await u.client.post("/api/user/notification_email/_resend")).json.code).toBe("VERIFICATION_FAILED");

    // A new PUT starts over; then let the code expire.
    advance(61);
    await u.client.put("/api/user/notification_email", { email: "r@example.com" });
    const third = await codeSentTo("r@example.com", 3);
    advance(901);
    expect((await u.client.post("/api/user/notification_email/_verify", { code: third })).json.code).toBe("VERIFICATION_FAILED");
    expect((await u.client.post("/api/user/notification_email/_resend")).json.code).toBe("VERIFICATION_FAILED");
  });
});

describe("notifications and unsubscribe (RFC 8058)", () => {
  test("a notification email carries List-Unsubscribe headers and a footer link that unsubscribes", async () => {
    const u = await srv.createUser();
    const sent = await srv.services.notificationEmail.notify(u.id, {
      kind: "tracker_change",
      subject: '[Secbox] Change detected: "prices"',
      content: { heading: "Change detected", paragraphs: ["Something changed."] },
    });
    expect(sent).toBe(true);
    const [mail] = await smtp.waitForTo(u.email, 1);
    expect(mail!.to).toEqual([u.email]);
    const listUnsub = mail!.headers.get("list-unsubscribe")!;
    const url = /<(http[^>]+)>/.exec(listUnsub)![1]!;
    expect(listUnsub).toContain("<mailto:unsubscribe@secbox.test");
    expect(mail!.headers.get("list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    expect(mail!.text).toContain(url);
    expect(mail!.html).toContain(url.replace(/&/g, "&amp;"));

    // One-click POST as a mail client does it: form body, token in the URL.
    const token = new URL(url).searchParams.get("token")!;
    const post = await srv.anon.request("POST", `/api/notifications/unsubscribe?token=${encodeURIComponent(token)}`, {
      raw: "List-Unsubscribe=One-Click",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(post.status).toBe(204);
    expect(await route(u)).toBeNull();
    expect(
      await srv.services.notificationEmail.notify(u.id, { kind: "tracker_change", subject: "x", content: { heading: "x", paragraphs: [] } }),
    ).toBe(false);

    // Verification codes still go out while unsubscribed.
    await u.client.put("/api/user/notification_email", { email: "still@example.com" });
    await codeSentTo("still@example.com", 1);

    // Turning notifications back on through settings.
    const on = await u.client.post("/api/user/settings", { "notifications.unsubscribed": false });
    expect(on.status).toBe(200);
    expect(await route(u)).toBe(u.email);

    // RFC 8058 §3.1: the one-click POST "SHOULD be sent as multipart/form-data" (a real FormData body here).
    const form = new FormData();
    form.append("List-Unsubscribe", "One-Click");
    const multipart = await fetch(`${srv.url}/api/notifications/unsubscribe?token=${encodeURIComponent(token)}`, { method: "POST", body: form });
    expect(multipart.status).toBe(204);
    expect(await route(u)).toBeNull();
    // a multipart form may carry the token itself; a malformed one is a 400, never a 500
    await u.client.post("/api/user/settings", { "notifications.unsubscribed": false });
    const withToken = new FormData();
    withToken.append("token", token);
    expect((await fetch(`${srv.url}/api/notifications/unsubscribe`, { method: "POST", body: withToken })).status).toBe(204);
    expect(await route(u)).toBeNull();
    const broken = await srv.anon.request("POST", "/api/notifications/unsubscribe", {
      raw: "--x\r\nno headers",
      headers: { "content-type": "multipart/form-data; boundary=zzz" },
    });
    expect(broken.status).toBe(400);
    expect(broken.json.code).toBe("INVALID_INPUT");
  });

  test("POST answers 204 for any token and 400 only without one; GET page is identical for unknown tokens", async () => {
    const u = await srv.createUser();
    expect((await srv.anon.post("/api/notifications/unsubscribe", { token: "does-not-exist" })).status).toBe(204);
    expect((await srv.anon.post("/api/notifications/unsubscribe", { token: "x".repeat(500) })).status).toBe(204);
    const missing = await srv.anon.post("/api/notifications/unsubscribe", {});
    expect(missing.status).toBe(400);
    expect(missing.json.code).toBe("INVALID_INPUT");
    expect((await srv.anon.get("/api/notifications/unsubscribe")).status).toBe(400);
    // A body token that is not a string is refused as such (the query's token does not stand in for it).
    const mistyped = await srv.anon.post("/api/notifications/unsubscribe?token=nope", { token: 5 });
    expect([mistyped.status, mistyped.json]).toEqual([400, { message: "token: must be a string", code: "INVALID_INPUT" }]);
    expect((await srv.anon.post("/api/notifications/unsubscribe?token=nope", { token: null })).status).toBe(400);
    expect((await srv.anon.post("/api/notifications/unsubscribe?token=nope", { other: 1 })).status).toBe(204);

    const unknown = await srv.anon.get("/api/notifications/unsubscribe?token=nope");
    expect(unknown.status).toBe(200);
    expect(unknown.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(unknown.headers.get("content-security-policy")).toBe("default-src 'none'; style-src 'unsafe-inline'");
    expect(unknown.text).not.toMatch(/<script/i);

    const row = await srv.services.users.getRow(u.id);
    const known = await srv.anon.get(`/api/notifications/unsubscribe?token=${row!.unsubscribe_token}`);
    expect(known.text).toBe(unknown.text);
    expect(await route(u)).toBeNull();
    // Used again: still 204.
    expect((await srv.anon.post("/api/notifications/unsubscribe", { token: row!.unsubscribe_token })).status).toBe(204);
  });
});
