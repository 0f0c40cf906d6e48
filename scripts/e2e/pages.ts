// Every page of the UI with sample data (tags, secrets, scripts, a certificate template and keys, a CSP policy with
// share links, trackers against the local fixtures, responders with captured requests), for the screenshots
// (screenshots.ts) and the accessibility sweep (a11y.e2e.test.ts): a name, a URL, a text that shows once the page
// is ready, and what to do on it before looking.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "puppeteer-core";
import type { TestUser } from "../../src/tests/harness";
import { typeInEditor, waitForText, type UiHarness } from "./harness";
import { seedResponders } from "./responders-seed";
import { seedTrackers, type TrackerFixtures } from "./tracker-fixtures";

export type UiPageSpec = [name: string, url: string, text?: string, then?: (page: Page) => Promise<void>];

/** Pages that need no signed-in user. */
export const PUBLIC_PAGES = ["signin", "signup", "forgot", "recover", "template-shared", "csp-shared"];

export async function seedPages(
  h: UiHarness,
  fixtures: TrackerFixtures,
  email = "ana@example.com",
): Promise<{ user: TestUser; pages: UiPageSpec[] }> {
  const user = await h.srv.createUser(email);
  const c = user.client;
  const tags = [];
  for (const [name, color] of [
    ["prod", "danger"],
    ["staging", "warning"],
    ["ci", "primary"],
    ["team-blue", "#1864ab"],
  ] as const)
    tags.push((await c.post("/api/user/tags", { name, color })).json);
  await c.post("/api/user/secrets", { name: "GITHUB_TOKEN", value: "ghp_example", tagIds: [tags[0].id, tags[2].id] });
  await c.post("/api/user/secrets", { name: "SLACK_WEBHOOK", value: "https://hooks.example/x", tagIds: [tags[1].id] });
  await c.post("/api/user/scripts", { name: "hmac-sign", scriptType: "api_configurator", content: "return null;\n", tagIds: [tags[0].id] });
  await c.post("/api/user/scripts", { name: "echo", scriptType: "responder", content: "return { body: context.query };\n", tagIds: [] });
  await c.post("/api/user/api_keys", { name: "ci" });
  const now = Math.floor(Date.now() / 1000);
  const template = (
    await c.post("/api/certificates/templates", {
      templateName: "local-https",
      tagIds: [tags[1].id],
      attributes: {
        commonName: "localhost",
        organization: "Secbox Dev",
        keyAlgorithm: { keyType: "ecdsa", curve: "secp256r1" },
        signatureAlgorithm: "sha256",
        notValidBefore: now,
        notValidAfter: now + 365 * 86_400,
        version: 3,
        isCa: false,
        keyUsage: ["digitalSignature"],
        extendedKeyUsage: ["tlsWebServerAuthentication"],
        subjectAltNames: ["localhost", "*.dev.localhost", "127.0.0.1", "ops@example.com", "spiffe://example.org/web"],
      },
    })
  ).json;
  const templateShare = (await c.post(`/api/certificates/templates/${template.id}/_share`)).json;
  const key = (
    await c.post("/api/certificates/private_keys", {
      keyName: "api signing",
      alg: { keyType: "ecdsa", curve: "secp384r1" },
      passphrase: "example-pass",
    })
  ).json;
  await c.post("/api/certificates/private_keys", { keyName: "deploy", alg: { keyType: "ed25519" }, tagIds: [tags[0].id] });
  const policy = (
    await c.post("/api/web_security/csp", {
      name: "marketing site",
      tagIds: [tags[0].id],
      content: {
        type: "serialized",
        value:
          "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.example.com https://www.google.com; img-src 'self' data: https:; object-src 'none'; upgrade-insecure-requests",
      },
    })
  ).json;
  const policyShare = (await c.post(`/api/web_security/csp/${policy.id}/_share`)).json;
  const t = await seedTrackers(c, fixtures, tags);
  const { responderIds, recordId } = await seedResponders(h.srv.url, user, [tags[0].id, tags[1].id]);

  const exportFile = (await c.post("/api/user/data/_export", {})).json;
  const pages: UiPageSpec[] = [
    ["signin", "/signin", "Sign in"],
    ["signup", "/signup", "Create an account"],
    ["forgot", "/forgot", "Reset your password"],
    ["recover", "/recover?token=x", "Set a new password"],
    ["home", "/", "Pick a tool"],
    ["tags", "/tags", "prod"],
    ["tag-edit", "/tags?create=1", "New tag"],
    ["secrets", "/secrets", "GITHUB_TOKEN"],
    ["secret-edit", "/secrets?create=1", "New secret"],
    ["scripts", "/scripts", "hmac-sign"],
    ["script-new", "/scripts/new", "New script"],
    ["settings", "/settings", "Your data"],
    ["templates", "/certificates/templates", "local-https"],
    ["template-edit", `/certificates/templates/${template.id}`, "Sharing"],
    ["template-new", "/certificates/templates/new", "No subject alternative name"],
    [
      "template-new-sans",
      "/certificates/templates/new",
      "No subject alternative name",
      async (page) => {
        await (await page.waitForSelector(`aria/Add subject alternative name[role="textbox"]`))!.type("lab.test, bad_name!");
        await page.keyboard.press("Enter");
        await waitForText(page, "Not added");
      },
    ],
    ["template-generate", `/certificates/templates/${template.id}?generate=1`, "Generate and download"],
    ["template-fetch", "/certificates/templates?fetch=1", "HTTPS URL"],
    ["template-shared", `/shared/certificate-templates/${template.id}?share=${templateShare.id}`, "Shared with you"],
    ["keys", "/certificates/private-keys", "api signing"],
    ["key-export", `/certificates/private-keys?export=${key.id}`, "Export private key"],
    ["csp", "/csp", "marketing site"],
    ["csp-edit", `/csp/${policy.id}`, "Evaluation"],
    ["csp-import", "/csp?import=1", "Import a policy"],
    ["csp-new", "/csp/new", "Add a directive"],
    ["csp-shared", `/shared/csp/${policy.id}?share=${policyShare.id}`, "Shared with you"],
    ["data-import", "/settings?import=1", "Import data"],
    [
      "data-import-file",
      "/settings?import=1",
      "Import data",
      async (page) => {
        // A chosen file (its preview and the field's clear button).
        const file = join(mkdtempSync(join(tmpdir(), "secbox-pages-")), "secbox-export.json");
        writeFileSync(file, JSON.stringify(exportFile));
        const input = await page.waitForSelector("input[type=file]");
        await (input as unknown as { uploadFile(path: string): Promise<void> }).uploadFile(file);
        await waitForText(page, "secbox-export.json");
      },
    ],
    [
      "tag-delete",
      "/tags",
      "prod",
      async (page) => {
        await (await page.waitForSelector(`aria/Actions for prod[role="button"]`))!.click();
        await (await page.waitForSelector(`aria/Delete tag[role="menuitem"]`, { visible: true }))!.click();
        await waitForText(page, "Delete tag “prod”?");
      },
    ],
    ["responders", "/responders", "orders-mock"],
    ["responder-new", "/responders/new", "New responder"],
    ["responder-edit", `/responders/${responderIds.scripted}/edit`, "Edit “github-webhook”"],
    ["responder-edit-static", `/responders/${responderIds.orders}/edit`, "Edit “orders-mock”"],
    ["responder-history", `/responders/${responderIds.orders}?request=${recordId}`, "Copy as curl"],
    ["responder-empty", `/responders/${responderIds.legacy}`, "Waiting for requests"],
    [
      "responder-try",
      `/responders/${responderIds.scripted}?tab=try`,
      "Send request",
      async (page) => {
        await (await page.waitForSelector(`aria/Send request[role="button"]`))!.click();
        await waitForText(page, "Captured record");
      },
    ],
    ["api-trackers", "/trackers/apis", "price-feed"],
    ["api-tracker", `/trackers/apis/${t.api}`, "Revisions"],
    ["api-tracker-inline", `/trackers/apis/${t.api}?view=unified`, "Revisions"],
    ["api-tracker-logs", `/trackers/apis/${t.api}?tab=logs`, "runs logged"],
    ["api-tracker-edit", `/trackers/apis/${t.api}/edit`, "Requests"],
    ["api-tracker-new", "/trackers/apis/new", "New API tracker"],
    ["page-trackers", "/trackers/pages", "shop-assets"],
    ["page-tracker", `/trackers/pages/${t.page}`, "Scripts and stylesheets"],
    ["page-tracker-edit", `/trackers/pages/${t.page}/edit`, "In-page extractor"],
    ["not-found", "/nope", "Page not found"],
    // the manual inside the app: the index, a long topic (tables, code), a topic opened at a section
    ["help", "/help", "Webhook responders"],
    ["help-responders", "/help/responders", "Responders need a domain of their own"],
    ["help-csp", "/help/csp", "The evaluator, compared with Google's"],
    ["help-api-section", "/help/api#first-user-and-api-key", "Sign up"],
    // issue 30: the search palette (Ctrl+K), its names-only state, a list's "search everywhere", script lint and the
    // save confirmation of a script that does not compile
    ["search-palette", "/", "Pick a tool", (page) => palette(page, "orders")],
    ["search-palette-short", "/", "Pick a tool", (page) => palette(page, "or")],
    ["search-everywhere", "/scripts?q=decode", "Search everywhere for"],
    ["script-lint", "/scripts/new", "New script", (page) => brokenScript(page, false)],
    ["script-confirm", "/scripts/new", "New script", (page) => brokenScript(page, true)],
    [
      "script-saved-warning",
      "/scripts/new",
      "New script",
      async (page) => {
        await brokenScript(page, true);
        await (await page.waitForSelector('aria/Save anyway[role="button"]'))!.click();
        await waitForText(page, "Saved, but a script does not compile");
      },
    ],
    // issue 30: out-of-range numbers said under their fields (never clamped), a wait-for selector refused at save
    [
      "responder-out-of-range",
      "/responders/new",
      "New responder",
      async (page) => {
        for (const [label, value] of [
          ["Status code", "999"],
          ["Requests to track", "5000"],
        ] as const) {
          const el = (await page.waitForSelector(`aria/${label}[role="textbox"]`))!;
          await el.click({ count: 3 });
          await el.type(value);
          await page.keyboard.press("Tab");
        }
        await waitForText(page, "A status from 200 to 599");
      },
    ],
    [
      "page-tracker-bad-selector",
      `/trackers/pages/${t.page}/edit`,
      "In-page extractor",
      async (page) => {
        const el = (await page.waitForSelector('aria/Wait for selector[role="textbox"]'))!;
        await el.click({ count: 3 });
        await el.type("div[");
        await (await page.waitForSelector('aria/Save[role="button"]'))!.click();
        await waitForText(page, "is not a valid CSS selector");
        await el.evaluate((e: any) => e.scrollIntoView({ block: "center" }));
      },
    ],
  ];
  return { user, pages };
}

/** Opens the search palette (Ctrl+K), types `text` and moves to the first result. */
async function palette(page: Page, text: string) {
  await page.keyboard.down("Control");
  await page.keyboard.press("k");
  await page.keyboard.up("Control");
  await page.waitForSelector('input[aria-label="Search everything"]', { visible: true });
  await page.keyboard.type(text);
  await page.waitForFunction(`/result|Nothing|No name/.test(document.querySelector("[data-testid=search-status]")?.textContent ?? "")`);
  await page.keyboard.press("ArrowDown");
}
async function brokenScript(page: Page, save: boolean) {
  await typeInEditor(page, "return {statusCode: 200, body: ");
  await page.waitForSelector(".cm-lint-marker-error", { visible: true });
  if (!save) {
    await page.hover(".cm-lint-marker-error");
    await page.waitForSelector(".cm-tooltip-lint", { visible: true });
    return;
  }
  await (await page.waitForSelector('aria/Name[role="textbox"]'))!.type(`broken-${Math.random().toString(36).slice(2, 6)}`);
  await (await page.waitForSelector('aria/Create script[role="button"]'))!.click();
  await waitForText(page, "does not compile");
}
