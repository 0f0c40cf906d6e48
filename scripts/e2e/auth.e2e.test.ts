// Browser: sign-up, sign-out, sign-in (wrong password, deep link kept), forgot password → email → recover, and the
// sign-up page when sign-up is closed. Mail goes to the in-test SMTP sink.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSmtpSink, type SmtpSink } from "../../src/tests/smtp-sink";
import { axeViolations, click, expectClean, fill, goto, path, startUiHarness, TEST_TIMEOUT, waitForText, type UiHarness } from "./harness";

let smtp: SmtpSink;
let h: UiHarness;
beforeAll(async () => {
  smtp = await startSmtpSink();
  h = await startUiHarness({ env: { SECBOX_SMTP_HOST: "127.0.0.1", SECBOX_SMTP_PORT: String(smtp.port) } });
}, TEST_TIMEOUT);
afterAll(async () => {
  await h?.stop();
  await smtp?.close();
});

const PASSWORD = "correct horse battery";

describe("auth pages", () => {
  test(
    "sign up, sign out, wrong password, sign in back to the deep link",
    async () => {
      const ui = await h.open();
      const { page } = ui;
      // A deep link while signed out goes to the sign-in page and remembers where it was going.
      await goto(ui, `${h.url}/secrets?q=abc`);
      await waitForText(page, "Forgot your password?");
      expect(path(page)).toBe(`/signin?next=${encodeURIComponent("/secrets?q=abc")}`);
      expect(await axeViolations(page)).toEqual([]);

      await click(page, "link", "Create an account");
      await waitForText(page, "Repeat the password");
      await fill(page, "Email", "new@example.com");
      await fill(page, "Password", PASSWORD);
      await fill(page, "Repeat the password", "something else");
      await click(page, "button", "Create account");
      await waitForText(page, "The passwords do not match");
      await fill(page, "Repeat the password", PASSWORD);
      await click(page, "button", "Create account");
      await waitForText(page, "Pick a tool");
      expect(path(page)).toBe("/");
      const user = await h.srv.services.users.byEmail("new@example.com");
      expect(user?.email).toBe("new@example.com");

      // Sign out from the account menu.
      await click(page, "button", "Account menu: new@example.com");
      await click(page, "menuitem", "Sign out");
      await waitForText(page, "Forgot your password?");
      expect(path(page)).toBe("/signin");

      // A taken email on sign-up is said so under the field.
      await goto(ui, `${h.url}/signup`);
      await fill(page, "Email", "new@example.com");
      await fill(page, "Password", PASSWORD);
      await fill(page, "Repeat the password", PASSWORD);
      await click(page, "button", "Create account");
      await waitForText(page, "An account with this email exists already");

      // Wrong password, then the right one; back to the page that was asked for.
      await goto(ui, `${h.url}/tags?page=1`);
      await waitForText(page, "Forgot your password?");
      await fill(page, "Email", "new@example.com");
      await fill(page, "Password", "wrong password!");
      await click(page, "button", "Sign in");
      await waitForText(page, "Wrong email or password.");
      await fill(page, "Password", PASSWORD);
      await click(page, "button", "Sign in");
      await waitForText(page, "Coloured labels");
      expect(path(page)).toBe("/tags?page=1");
      expectClean(ui, ["400 POST /api/auth/signup", "401 POST /api/auth/signin"]);
    },
    TEST_TIMEOUT,
  );

  test(
    "forgot password: the emailed link opens the recover page, which sets the password and signs in",
    async () => {
      const u = await h.srv.createUser("forgetful@example.com");
      const ui = await h.open();
      const { page } = ui;
      await goto(ui, `${h.url}/signin`);
      await click(page, "link", "Forgot your password?");
      await waitForText(page, "Reset your password");
      await fill(page, "Email", u.email);
      await click(page, "button", "Send link");
      await waitForText(page, "Check your inbox");
      const [mail] = await smtp.waitForTo(u.email, 1, 20_000);
      const token = /\/recover\?token=([A-Za-z0-9_-]+)/.exec(mail!.text)?.[1];
      expect(token).toBeTruthy();

      await goto(ui, `${h.url}/recover?token=${token}`);
      await fill(page, "New password", "a brand new password");
      await fill(page, "Repeat the new password", "a brand new password");
      await click(page, "button", "Set password and sign in");
      await waitForText(page, "Pick a tool");
      expect(path(page)).toBe("/");
      // The old session of this user is gone; the new password works.
      expect((await u.client.get("/api/users/self")).status).toBe(401);
      expect((await h.srv.anon.post("/api/auth/signin", { email: u.email, password: "a brand new password" })).status).toBe(200);

      // A used link says so.
      await click(page, "button", `Account menu: ${u.email}`);
      await click(page, "menuitem", "Sign out");
      await waitForText(page, "Forgot your password?");
      await goto(ui, `${h.url}/recover?token=${token}`);
      await fill(page, "New password", "yet another password");
      await fill(page, "Repeat the new password", "yet another password");
      await click(page, "button", "Set password and sign in");
      await waitForText(page, "This link is invalid, used or expired");
      expectClean(ui, ["400 POST /api/auth/recover"]);
    },
    TEST_TIMEOUT,
  );

  test(
    "sign-up closed: no sign-up link, and the page says so",
    async () => {
      const closed = await startUiHarness({ env: { SECBOX_SECURITY_SIGNUP: "closed" } });
      try {
        const ui = await closed.open({ colorScheme: "dark" });
        await goto(ui, `${closed.url}/signin`);
        await waitForText(ui.page, "Forgot your password?");
        expect(await ui.page.$("a[href='/signup']")).toBeNull();
        await goto(ui, `${closed.url}/signup`);
        await waitForText(ui.page, "Sign-up is closed on this server");
        expect(await axeViolations(ui.page)).toEqual([]);
        expectClean(ui);
      } finally {
        await closed.stop();
      }
    },
    TEST_TIMEOUT,
  );
});
