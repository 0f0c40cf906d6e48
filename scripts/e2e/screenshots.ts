#!/usr/bin/env bun
// Dev helper (not a test): screenshots of every page in light and dark, at 1366×768 and 390×844, into
// /tmp/ui-shots (or the folder given), with each page's problems and axe findings printed. Look at them before
// changing how the UI looks. `bun scripts/e2e/screenshots.ts [outdir] [--only prefix[,prefix…]]` (the pages whose
// name starts with one of them)
import { mkdirSync } from "node:fs";
import { axeViolations, goto, startUiHarness, waitForText } from "./harness";
import { seedTrackers, startTrackerFixtures, TRACKER_SERVER_ENV } from "./tracker-fixtures";
import { seedResponders } from "./responders-seed";

const out = Bun.argv[2] && !Bun.argv[2].startsWith("--") ? Bun.argv[2] : "/tmp/ui-shots";
const only = Bun.argv.includes("--only") ? Bun.argv[Bun.argv.indexOf("--only") + 1] : undefined;
mkdirSync(out, { recursive: true });

const h = await startUiHarness({ env: TRACKER_SERVER_ENV });
const fixtures = startTrackerFixtures();
try {
  const user = await h.srv.createUser("ana@example.com");
  const c = user.client;
  const tags = [];
  for (const [name, color] of [["prod", "danger"], ["staging", "warning"], ["ci", "primary"], ["team-blue", "#1864ab"]] as const)
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
  const key = (await c.post("/api/certificates/private_keys", { keyName: "api signing", alg: { keyType: "ecdsa", curve: "secp384r1" }, passphrase: "example-pass" })).json;
  await c.post("/api/certificates/private_keys", { keyName: "deploy", alg: { keyType: "ed25519" }, tagIds: [tags[0].id] });
  const policy = (
    await c.post("/api/web_security/csp", {
      name: "marketing site",
      tagIds: [tags[0].id],
      content: { type: "serialized", value: "default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.example.com https://www.google.com; img-src 'self' data: https:; object-src 'none'; upgrade-insecure-requests" },
    })
  ).json;
  const policyShare = (await c.post(`/api/web_security/csp/${policy.id}/_share`)).json;
  const t = await seedTrackers(c, fixtures, tags);
  const { responderIds, recordId } = await seedResponders(h.srv.url, user, [tags[0].id, tags[1].id]);

  const pages: [string, string, string?, ((page: import("puppeteer-core").Page) => Promise<void>)?][] = [
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
    ["csp-shared", `/shared/csp/${policy.id}?share=${policyShare.id}`, "Shared with you"],
    ["data-import", "/settings?import=1", "Import data"],
    ["responders", "/responders", "orders-mock"],
    ["responder-new", "/responders/new", "New responder"],
    ["responder-edit", `/responders/${responderIds.scripted}/edit`, "Edit “github-webhook”"],
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
  ];
  for (const [name, url, text, then] of pages) {
    if (only && !only.split(",").some((prefix) => name.startsWith(prefix))) continue;
    for (const scheme of ["light", "dark"] as const) {
      for (const [w, hgt, label] of [[1366, 768, "desktop"], [390, 844, "phone"]] as const) {
        const publicPage = ["signin", "signup", "forgot", "recover", "template-shared", "csp-shared"].includes(name);
        const ui = await h.open({ user: publicPage ? undefined : user, width: w, height: hgt, colorScheme: scheme });
        await goto(ui, h.url + url);
        if (text) await waitForText(ui.page, text);
        if (then) await then(ui.page);
        await Bun.sleep(400);
        await ui.page.screenshot({ path: `${out}/${name}-${scheme}-${label}.png`, fullPage: label === "desktop" });
        const axe = label === "desktop" ? await axeViolations(ui.page) : [];
        if (ui.problems.length || axe.length) console.log(`${name} ${scheme} ${label}:`, [...ui.problems, ...axe].join("\n  "));
        await ui.context.close();
      }
    }
  }
  console.log(`screenshots in ${out}`);
} finally {
  await h.stop();
  fixtures.stop();
}
