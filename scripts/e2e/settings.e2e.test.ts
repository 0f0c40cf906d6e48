// Browser: settings — API keys (expiry, the token shown once with a copy button, regenerate, delete, last used),
// notification email with the verification code from the in-test SMTP sink (wrong code, resend cooldown,
// verified, remove), change password; axe in light and dark.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "puppeteer-core";
import { startSmtpSink, type SmtpSink } from "../../src/tests/smtp-sink";
import { ApiClient } from "../../src/tests/harness";
import {
  axeViolations,
  click,
  clickInDialog,
  expectClean,
  fill,
  goto,
  startUiHarness,
  TEST_TIMEOUT,
  waitForDialogsClosed,
  waitForNoText,
  waitForText,
  type UiHarness,
} from "./harness";

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

const bodyHas = (page: Page, text: string) =>
  page.evaluate(`document.documentElement.outerHTML.includes(${JSON.stringify(text)})`) as Promise<boolean>;

describe("settings page", () => {
  test(
    "API keys: created with an expiry, the token shown once and copied, it works, regenerate voids it, delete",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await ui.context.overridePermissions(h.url, ["clipboard-read", "clipboard-write", "clipboard-sanitized-write"]);
      await goto(ui, `${h.url}/settings`);
      await waitForText(page, "No API keys yet");
      expect(await axeViolations(page)).toEqual([]);

      await click(page, "button", "New API key");
      await fill(page, "Name", "ci");
      await click(page, "combobox", "Expiry");
      await click(page, "option", "In 30 days");
      await clickInDialog(page, "Create key");
      await waitForText(page, "This is the only time the key is shown");
      const token = await page.$eval("[data-testid=api-key-token]", (e: any) => String(e.textContent));
      expect(token).toMatch(/^sbx_ak_[0-9a-f]{64}$/);
      expect(await axeViolations(page)).toEqual([]);
      await click(page, "button", "Copy key");
      await waitForText(page, "API key copied");
      expect(await page.evaluate("navigator.clipboard.readText()")).toBe(token);
      await click(page, "button", "Done");
      await waitForDialogsClosed(page);
      expect(await bodyHas(page, token)).toBe(false);

      // The key works for the API, and its expiry is about 30 days out.
      const keys = (await user.client.get("/api/user/api_keys")).json;
      expect(keys.length).toBe(1);
      const days = (keys[0].expiresAt - Date.now() / 1000) / 86_400;
      expect(days).toBeGreaterThan(29.9);
      expect(days).toBeLessThan(30.1);
      expect((await new ApiClient(h.url, { token }).get("/api/user/tags")).status).toBe(200);
      await page.reload({ waitUntil: "networkidle0" });
      await waitForText(page, "Last used");
      expect(await bodyHas(page, "Never used")).toBe(false);

      // Regenerate: a new token once; the old one is void at once.
      await click(page, "button", "Actions for ci");
      await click(page, "menuitem", "Regenerate");
      await clickInDialog(page, "Regenerate");
      await waitForText(page, "This is the only time the key is shown");
      const token2 = await page.$eval("[data-testid=api-key-token]", (e: any) => String(e.textContent));
      expect(token2).toMatch(/^sbx_ak_[0-9a-f]{64}$/);
      expect(token2).not.toBe(token);
      await click(page, "button", "Done");
      await waitForDialogsClosed(page);
      expect((await new ApiClient(h.url, { token }).get("/api/user/tags")).status).toBe(401);
      expect((await new ApiClient(h.url, { token: token2 }).get("/api/user/tags")).status).toBe(200);

      await click(page, "button", "Actions for ci");
      await click(page, "menuitem", "Delete API key");
      await clickInDialog(page, "Delete");
      await waitForText(page, "No API keys yet");
      expect((await new ApiClient(h.url, { token: token2 }).get("/api/user/tags")).status).toBe(401);
      expectClean(ui);
    },
    TEST_TIMEOUT,
  );

  test(
    "notification email: code by email, wrong code, resend cooldown, verified, remove; dark theme passes axe",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user, colorScheme: "dark" });
      const { page } = ui;
      await goto(ui, `${h.url}/settings`);
      await waitForText(page, "Notifications currently go to your login email");
      await fill(page, "Notification email", "alerts@example.com");
      await click(page, "button", "Send code");
      await waitForText(page, "Pending verification");
      // The resend cooldown is shown and counts down.
      await waitForText(page, "Resend code (");
      expect(await page.$eval("xpath/.//button[contains(., 'Resend code')]", (b: any) => b.disabled)).toBe(true);
      expect(await axeViolations(page)).toEqual([]);
      const [mail] = await smtp.waitForTo("alerts@example.com", 1, 20_000);
      const code = /\b(\d{6})\b/.exec(mail!.text)?.[1]!;
      expect(code).toMatch(/^\d{6}$/);

      const wrong = code === "000000" ? "111111" : "000000";
      await page.click("input[aria-label='Digit 1 of 6']");
      await page.keyboard.type(wrong);
      await click(page, "button", "Verify");
      await waitForText(page, "code");
      await page.waitForSelector("[role=alert]");
      await page.click("input[aria-label='Digit 1 of 6']");
      await page.keyboard.type(code);
      await click(page, "button", "Verify");
      await waitForText(page, "Verified");
      const dest = (await user.client.get("/api/user/notification_email")).json;
      expect([dest.address, dest.status]).toEqual(["alerts@example.com", "verified"]);

      await click(page, "button", "Remove");
      await waitForText(page, "Notifications currently go to your login email");
      expect((await user.client.get("/api/user/notification_email")).json).toBeNull();
      expectClean(ui, ["400 POST /api/user/notification_email/_verify"]);
    },
    TEST_TIMEOUT,
  );

  test(
    "change password: wrong current password under its field; success keeps this session and ends the others",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/settings`);
      await waitForText(page, "Change password");
      await fill(page, "Current password", "not the password");
      await fill(page, "New password", "a new long password");
      await fill(page, "Repeat the new password", "a new long password");
      await click(page, "button", "Change password");
      await waitForText(page, "The current password is not correct");
      await fill(page, "Current password", "correct horse battery");
      await click(page, "button", "Change password");
      await waitForText(page, "Password changed");
      // This browser is still signed in; the harness's other session of the user is not.
      await page.reload({ waitUntil: "networkidle0" });
      await waitForText(page, "Change password");
      expect((await h.srv.anon.post("/api/auth/signin", { email: user.email, password: "a new long password" })).status).toBe(200);
      await waitForNoText(page, "The current password is not correct");
      expectClean(ui, ["400 POST /api/auth/password"]);
    },
    TEST_TIMEOUT,
  );
});
