// Browser: certificate templates and private keys. A template made through the form (only compatible signature
// algorithms, SAN type detection, validity presets) generates each format, and every downloaded file is checked with
// openssl; the share link works in a fresh signed-out context and stops working when unshared; a live HTTPS fixture's
// chain (leaf + intermediate, on loopback) becomes a template in one click; a passphrase-protected key is created,
// exported (wrong passphrase refused), re-protected and unprotected, its material never on screen. axe in both themes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unzipSync } from "fflate";
import type { Page } from "puppeteer-core";
import { opensslOk, scratch } from "../../src/tests/fixtures/certificates";
import {
  axeViolations,
  byRole,
  click,
  clickInDialog,
  expectClean,
  fill,
  goto,
  path,
  startUiHarness,
  TEST_TIMEOUT,
  waitForDialogsClosed,
  waitForDownload,
  waitForText,
  type UiHarness,
} from "./harness";

let h: UiHarness;
let https: Server;
let httpsPort: number;
const tmp = scratch();
const downloads: string[] = [];
const downloadDir = () => {
  const d = mkdtempSync(join(tmpdir(), "secbox-e2e-dl-"));
  downloads.push(d);
  return d;
};

/** Root → intermediate → leaf (CN/SAN localhost, 127.0.0.1), EC P-256, as in fetch.test.ts. */
function makeChain() {
  const p = (name: string) => join(tmp.dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
  tmp.file("ca.ext", "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n");
  tmp.file(
    "leaf.ext",
    "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n",
  );
  opensslOk(["req", "-x509", ...ec, "-keyout", p("root.key"), "-out", p("root.pem"), "-subj", "/CN=Secbox Test Root", "-days", "2"]);
  opensslOk(["req", ...ec, "-keyout", p("int.key"), "-out", p("int.csr"), "-subj", "/CN=Secbox Test Intermediate"]);
  opensslOk([
    "x509",
    "-req",
    "-in",
    p("int.csr"),
    "-CA",
    p("root.pem"),
    "-CAkey",
    p("root.key"),
    "-set_serial",
    "2",
    "-days",
    "2",
    "-extfile",
    p("ca.ext"),
    "-out",
    p("int.pem"),
  ]);
  opensslOk(["req", ...ec, "-keyout", p("leaf.key"), "-out", p("leaf.csr"), "-subj", "/O=Secbox Tests/CN=localhost"]);
  opensslOk([
    "x509",
    "-req",
    "-in",
    p("leaf.csr"),
    "-CA",
    p("int.pem"),
    "-CAkey",
    p("int.key"),
    "-set_serial",
    "3",
    "-days",
    "2",
    "-extfile",
    p("leaf.ext"),
    "-out",
    p("leaf.pem"),
  ]);
  return { leaf: readFileSync(p("leaf.pem"), "utf8"), intermediate: readFileSync(p("int.pem"), "utf8"), key: readFileSync(p("leaf.key"), "utf8") };
}

beforeAll(async () => {
  const chain = makeChain();
  https = createServer({ key: chain.key, cert: chain.leaf + chain.intermediate }, (_req, res) => res.end("ok"));
  httpsPort = await new Promise<number>((resolve) => https.listen(0, "127.0.0.1", () => resolve((https.address() as AddressInfo).port)));
  // The fixture is on loopback, a private target: allowed for this server only.
  h = await startUiHarness({ env: { SECBOX_NETWORK_ALLOW_PRIVATE_TARGETS: "true" } });
}, TEST_TIMEOUT);
afterAll(async () => {
  await h?.stop();
  https?.close();
  tmp.cleanup();
  for (const d of downloads) rmSync(d, { recursive: true, force: true });
});

const pageHolds = (page: Page, text: string) =>
  page.evaluate(`document.documentElement.outerHTML.includes(${JSON.stringify(text)})`) as Promise<boolean>;
/** The options of the open dropdown (a closing one stays in the DOM for its transition). */
const visibleOptions = (page: Page) =>
  page.$$eval("[role=option]", (os: any[]) => os.filter((o) => o.offsetParent !== null).map((o) => String(o.textContent)));
const sanBox = (page: Page) => page.$eval("input[aria-label='Add subject alternative name']", (e: any) => String(e.value)) as Promise<string>;
const sanList = (page: Page) =>
  page.$$eval("ul[aria-label='Subject alternative names'] li", (lis: any[]) =>
    lis.map((li) => String(li.innerText).replace(/\s+/g, " ").trim()),
  ) as Promise<string[]>;
const summary = (page: Page) => page.$eval("[data-testid=generate-summary]", (e: any) => String(e.textContent)) as Promise<string>;
const fileOf = (dir: string, name: string, data: Uint8Array) => {
  const path = join(dir, `check-${name}`);
  writeFileSync(path, data);
  return path;
};

async function generate(page: Page, dir: string, format: string, fileName: string, passphrase?: string) {
  await click(page, "radio", format);
  if (passphrase !== undefined) await fill(page, "Passphrase (optional)", passphrase);
  await clickInDialog(page, "Generate and download");
  await waitForText(page, `Downloaded ${fileName}`);
  const bytes = await waitForDownload(dir, fileName);
  rmSync(join(dir, fileName));
  return { bytes, line: await summary(page) };
}

describe("certificate templates", () => {
  test(
    "create through the form, generate every format (checked with openssl), share and unshare",
    async () => {
      const user = await h.srv.createUser();
      const dir = downloadDir();
      const ui = await h.open({ user, downloads: dir });
      const { page } = ui;
      await goto(ui, `${h.url}/certificates/templates`);
      await waitForText(page, "No certificate templates yet");
      await click(page, "button", "New template");
      await waitForText(page, "New certificate template");
      await fill(page, "Template name", "web server");
      await fill(page, "Common name (CN)", "localhost");
      await fill(page, "Organization (O)", "Secbox Tests");
      // Ed25519 keys offer only the Ed25519 signature; RSA offers the SHA family (not Ed25519).
      await click(page, "combobox", "Key algorithm");
      await click(page, "option", "Ed25519");
      await click(page, "combobox", "Signature algorithm");
      expect(await visibleOptions(page)).toEqual(["Ed25519"]);
      await page.keyboard.press("Escape");
      await click(page, "combobox", "Key algorithm");
      await click(page, "option", "RSA");
      await click(page, "combobox", "Signature algorithm");
      const rsaSignatures = await visibleOptions(page);
      expect(rsaSignatures).toContain("SHA-384");
      expect(rsaSignatures).not.toContain("Ed25519");
      await click(page, "option", "SHA-384");
      // SANs: several at once, each classified; an invalid one is refused with the reason and stays in the box,
      // while the valid ones of the same list are added.
      await fill(page, "Add subject alternative name", "localhost bad_name!");
      await page.keyboard.press("Enter");
      await waitForText(page, "bad_name!: Not an IP address");
      expect(await sanBox(page)).toBe("bad_name!");
      expect(await sanList(page)).toEqual(["DNS localhost ×"]);
      await fill(page, "Add subject alternative name", "localhost, 127.0.0.1, *.dev.localhost, ops@example.com");
      await page.keyboard.press("Enter");
      await waitForText(page, "ops@example.com");
      const kinds = await page.$$eval("ul[aria-label='Subject alternative names'] li", (lis: any[]) =>
        lis.map((li) => String(li.innerText).replace(/\s+/g, " ").trim()),
      );
      expect(kinds).toEqual(["DNS localhost ×", "IP 127.0.0.1 ×", "Wildcard *.dev.localhost ×", "Email ops@example.com ×"]);
      await click(page, "checkbox", "TLS client");
      await click(page, "button", "30 days");
      expect(await axeViolations(page)).toEqual([]);
      await click(page, "button", "Create template");
      await waitForText(page, "Template “web server” created");
      await page.waitForFunction(`/^\\/certificates\\/templates\\/[0-9a-f-]{36}$/.test(location.pathname)`);
      const id = page.url().split("/").pop()!;
      const stored = (await user.client.get(`/api/certificates/templates/${id}`)).json.template.attributes;
      expect(stored.keyAlgorithm).toEqual({ keyType: "rsa", keySize: "2048" });
      expect(stored.signatureAlgorithm).toBe("sha384");
      expect(stored.subjectAltNames).toEqual(["localhost", "127.0.0.1", "*.dev.localhost", "ops@example.com"]);
      expect(stored.extendedKeyUsage.sort()).toEqual(["tlsWebClientAuthentication", "tlsWebServerAuthentication"]);
      expect(Math.round((stored.notValidAfter - stored.notValidBefore) / 86_400)).toBe(30);

      // Every format, downloaded under the API's file name, read back with openssl.
      await click(page, "button", "Generate…");
      await waitForText(page, "Generate a certificate from");
      const pem = await generate(page, dir, "PEM bundle (.zip)", "web_server.zip", "pem-pass-1");
      const zip = unzipSync(pem.bytes);
      expect(Object.keys(zip).sort()).toEqual(["certificate.crt", "private_key.key"]);
      const cert = new TextDecoder().decode(zip["certificate.crt"]);
      const x509 = opensslOk(["x509", "-noout", "-subject", "-ext", "subjectAltName,extendedKeyUsage", "-fingerprint", "-sha256"], cert);
      expect(x509).toContain("CN = localhost");
      expect(x509).toContain("DNS:localhost, IP Address:127.0.0.1, DNS:*.dev.localhost, email:ops@example.com");
      expect(x509).toContain("TLS Web Client Authentication");
      expect(new TextDecoder().decode(zip["private_key.key"])).toContain("BEGIN ENCRYPTED PRIVATE KEY");
      expect(opensslOk(["pkey", "-passin", "pass:pem-pass-1", "-noout", "-text"], zip["private_key.key"])).toContain("2048 bit");
      // The summary line reads the downloaded certificate: subject, SANs, validity, fingerprint.
      const fingerprint = /Fingerprint=([0-9A-F:]+)/.exec(x509)![1]!;
      expect(pem.line).toContain("O=Secbox Tests, CN=localhost");
      expect(pem.line).toContain("SANs localhost, 127.0.0.1, *.dev.localhost, ops@example.com");
      expect(pem.line).toContain(`SHA-256 ${fingerprint}`);
      expect(pem.line).toContain("private_key.key (RSA 2048, encrypted)");

      const p12 = await generate(page, dir, "PKCS#12 (.pfx)", "web_server.pfx", "p12-pass");
      const p12Path = fileOf(dir, "p.pfx", p12.bytes);
      expect(opensslOk(["pkcs12", "-in", p12Path, "-passin", "pass:p12-pass", "-nokeys", "-clcerts"])).toContain(
        "subject=O = Secbox Tests, CN = localhost",
      );
      expect(p12.line).toContain("PKCS#12: certificate + private key (RSA 2048), protected by your passphrase");

      const der = await generate(page, dir, "DER certificate (.der)", "web_server.der");
      const derOut = opensslOk(["x509", "-inform", "DER", "-noout", "-subject", "-fingerprint", "-sha256"], der.bytes);
      expect(derOut).toContain("CN = localhost");
      expect(der.line).toContain(`SHA-256 ${/Fingerprint=([0-9A-F:]+)/.exec(derOut)![1]}`);

      const p8 = await generate(page, dir, "PKCS#8 private key (.p8)", "web_server.p8", "");
      expect(opensslOk(["pkey", "-inform", "DER", "-noout", "-text"], p8.bytes)).toContain("2048 bit");
      expect(p8.line).toContain("PKCS#8 private key only (RSA 2048, not encrypted)");
      expect(await pageHolds(page, "-----BEGIN")).toBe(false);
      await click(page, "button", "Done");
      await waitForDialogsClosed(page);

      // Share: the link works signed out, in a fresh context, generate included.
      await click(page, "button", "Share");
      await waitForText(page, "Share link created");
      const link = (await (await byRole(page, "textbox", "Share link")).evaluate((e: any) => String(e.value))) as string;
      expect(link).toMatch(new RegExp(`^${h.url}/shared/certificate-templates/${id}\\?share=[0-9a-f-]{36}$`));
      const anonDir = downloadDir();
      const anon = await h.open({ colorScheme: "dark", downloads: anonDir });
      await goto(anon, link);
      await waitForText(anon.page, "Certificate template “web server”");
      await waitForText(anon.page, "*.dev.localhost");
      expect(await pageHolds(anon.page, "Sign in")).toBe(true);
      expect(await axeViolations(anon.page)).toEqual([]);
      await click(anon.page, "button", "Generate…");
      const shared = await generate(anon.page, anonDir, "DER certificate (.der)", "web_server.der");
      expect(opensslOk(["x509", "-inform", "DER", "-noout", "-subject"], shared.bytes)).toContain("CN = localhost");
      expectClean(anon);

      // Edit and save: the attributes are replaced as a whole.
      await fill(page, "Organization (O)", "Secbox QA");
      await click(page, "button", "Save");
      await waitForText(page, "Template “web server” saved");
      expect((await user.client.get(`/api/certificates/templates/${id}`)).json.template.attributes).toMatchObject({
        organization: "Secbox QA",
        commonName: "localhost",
        subjectAltNames: stored.subjectAltNames,
      });

      await click(page, "button", "Stop sharing");
      await waitForText(page, "no longer shared");
      const gone = await h.open();
      await goto(gone, link);
      await waitForText(gone.page, "This shared template is not available");
      expectClean(gone, [`404 GET /api/certificates/templates/${id}`]);
      expectClean(ui);
    },
    TEST_TIMEOUT * 2,
  );

  test(
    "SANs typed without Add are taken on save; a bad entry blocks the save, named; a TLS server without SANs warns",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user });
      const { page } = ui;
      await goto(ui, `${h.url}/certificates/templates/new`);
      await waitForText(page, "New certificate template");
      await fill(page, "Template name", "lab");
      await fill(page, "Common name (CN)", "lab.test");
      // The new template is for a TLS server (the default extended key usage) and has no SAN yet: a warning.
      await page.waitForSelector("[data-testid=no-san-warning]", { visible: true });
      expect(await page.$eval("[data-testid=no-san-warning]", (e: any) => String(e.innerText))).toContain(
        "browsers accept a server certificate only for the names listed",
      );
      expect(await axeViolations(page)).toEqual([]);
      // Typed, not added (no Enter, no Add), then Create: every name is saved.
      await fill(page, "Add subject alternative name", "localhost, 127.0.0.1, ::1, *.lab.test");
      await page.waitForSelector("[data-testid=no-san-warning]", { hidden: true });
      await click(page, "button", "Create template");
      await waitForText(page, "Template “lab” created");
      await page.waitForFunction(`/^\\/certificates\\/templates\\/[0-9a-f-]{36}$/.test(location.pathname)`);
      const id = page.url().split("/").pop()!;
      expect((await user.client.get(`/api/certificates/templates/${id}`)).json.template.attributes.subjectAltNames).toEqual([
        "localhost",
        "127.0.0.1",
        "::1",
        "*.lab.test",
      ]);
      expect(await sanList(page)).toEqual(["DNS localhost ×", "IP 127.0.0.1 ×", "IP ::1 ×", "Wildcard *.lab.test ×"]);
      expect(await sanBox(page)).toBe("");

      // A pasted list with one bad entry, left in the box: the save takes the good one and stops on the bad one.
      await goto(ui, `${h.url}/certificates/templates/new`);
      await waitForText(page, "New certificate template");
      await fill(page, "Template name", "typo");
      await fill(page, "Add subject alternative name", "api.lab.test, bad_name!");
      await click(page, "button", "Create template");
      await waitForText(page, "Not added: bad_name!: Not an IP address");
      expect(await sanList(page)).toEqual(["DNS api.lab.test ×"]);
      expect(await sanBox(page)).toBe("bad_name!");
      expect(await page.$eval("input[aria-label='Add subject alternative name']", (e: any) => e.getAttribute("aria-invalid"))).toBe("true");
      expect(path(page)).toBe("/certificates/templates/new");
      expect((await user.client.get("/api/certificates/templates")).json.total).toBe(1);
      // Removing the bad entry lets the save through.
      await fill(page, "Add subject alternative name", "");
      await click(page, "button", "Create template");
      await waitForText(page, "Template “typo” created");

      // The warning offers the common name as the first SAN.
      await goto(ui, `${h.url}/certificates/templates/new`);
      await waitForText(page, "New certificate template");
      await fill(page, "Common name (CN)", "app.lab.test");
      await click(page, "button", "Add “app.lab.test” from the common name");
      await page.waitForSelector("[data-testid=no-san-warning]", { hidden: true });
      expect(await sanList(page)).toEqual(["DNS app.lab.test ×"]);
      // Not a TLS server: no warning.
      await click(page, "button", "Remove app.lab.test");
      await page.waitForSelector("[data-testid=no-san-warning]", { visible: true });
      await click(page, "checkbox", "TLS server");
      await page.waitForSelector("[data-testid=no-san-warning]", { hidden: true });
      const dark = await h.open({ user, colorScheme: "dark" });
      await goto(dark, `${h.url}/certificates/templates/new`);
      await dark.page.waitForSelector("[data-testid=no-san-warning]", { visible: true });
      expect(await axeViolations(dark.page)).toEqual([]);
      expectClean(dark);
      expectClean(ui);
    },
    TEST_TIMEOUT * 2,
  );

  test(
    "fetch a live site's chain and turn the leaf into a template",
    async () => {
      const user = await h.srv.createUser();
      const ui = await h.open({ user, colorScheme: "dark" });
      const { page } = ui;
      await goto(ui, `${h.url}/certificates/templates`);
      await click(page, "button", "Fetch from a site…");
      await fill(page, "HTTPS URL", `https://127.0.0.1:${httpsPort}/`);
      await clickInDialog(page, "Fetch");
      await waitForText(page, "presented 2 certificates");
      const cards = await page.$$eval("ul[aria-label='Certificate chain'] > li", (lis: any[]) => lis.map((li) => String(li.innerText)));
      expect(cards[0]).toContain("Leaf");
      expect(cards[0]).toContain("Subject: O=Secbox Tests, CN=localhost");
      expect(cards[0]).toContain("Issuer: CN=Secbox Test Intermediate");
      expect(cards[0]).toContain("SANs: localhost, 127.0.0.1");
      expect(cards[1]).toContain("Intermediate");
      expect(cards[1]).toContain("CA");
      expect(cards[1]).toContain("Issuer: CN=Secbox Test Root");
      expect(await axeViolations(page)).toEqual([]);
      await clickInDialog(page, "Create template from the leaf");
      await waitForText(page, "Template “localhost” created");
      await page.waitForFunction(`/^\\/certificates\\/templates\\/[0-9a-f-]{36}$/.test(location.pathname)`);
      const t = (await user.client.get(`/api/certificates/templates/${page.url().split("/").pop()}`)).json.template;
      expect(t.name).toBe("localhost");
      expect(t.attributes).toMatchObject({
        commonName: "localhost",
        organization: "Secbox Tests",
        keyAlgorithm: { keyType: "ecdsa", curve: "secp256r1" },
        signatureAlgorithm: "sha256",
        isCa: false,
        keyUsage: ["digitalSignature"],
        extendedKeyUsage: ["tlsWebServerAuthentication"],
        subjectAltNames: ["localhost", "127.0.0.1"],
      });
      expect(t.attributes.notValidAfter - t.attributes.notValidBefore).toBe(2 * 86_400);
      // A refused target names the problem in the dialog.
      await goto(ui, `${h.url}/certificates/templates?fetch=1`);
      await fill(page, "HTTPS URL", "http://127.0.0.1/");
      await clickInDialog(page, "Fetch");
      await waitForText(page, "Could not fetch");
      expectClean(ui, ["400 POST /api/certificates/_fetch"]);
    },
    TEST_TIMEOUT,
  );
});

describe("private keys", () => {
  test(
    "create with a passphrase, export (wrong passphrase refused), change and remove the passphrase",
    async () => {
      const user = await h.srv.createUser();
      const dir = downloadDir();
      const ui = await h.open({ user, downloads: dir });
      const { page } = ui;
      await goto(ui, `${h.url}/certificates/private-keys`);
      await waitForText(page, "No private keys yet");
      await click(page, "button", "New key");
      await fill(page, "Name", "api signing");
      await click(page, "combobox", "Curve");
      await click(page, "option", "P-384 (secp384r1)");
      await fill(page, "Passphrase (optional)", "k3y-pass");
      await fill(page, "Repeat the passphrase", "k3y-pass");
      expect(await axeViolations(page)).toEqual([]);
      await click(page, "button", "Create key");
      await waitForText(page, "Private key api signing created, protected by your passphrase");
      await waitForDialogsClosed(page);
      await waitForText(page, "Protected");
      const [key] = (await user.client.get("/api/certificates/private_keys")).json.items;
      expect(key).toMatchObject({ name: "api signing", alg: { keyType: "ecdsa", curve: "secp384r1" }, encrypted: true });

      await click(page, "button", "Actions for api signing");
      await click(page, "menuitem", "Export…");
      await waitForText(page, "Export private key api signing");
      await fill(page, "Key passphrase", "wrong");
      await clickInDialog(page, "Export and download");
      await waitForText(page, "The passphrase is not correct");
      await fill(page, "Key passphrase", "k3y-pass");
      await fill(page, "File passphrase (optional)", "file-pass");
      await clickInDialog(page, "Export and download");
      await waitForText(page, "Downloaded api_signing.pem");
      const pem = new TextDecoder().decode(await waitForDownload(dir, "api_signing.pem"));
      expect(pem).toStartWith("-----BEGIN ENCRYPTED PRIVATE KEY-----");
      expect(opensslOk(["pkey", "-passin", "pass:file-pass", "-noout", "-text"], pem)).toContain("NIST CURVE: P-384");
      await click(page, "radio", "PKCS#12 (.pfx)");
      await fill(page, "File passphrase (optional)", "");
      await clickInDialog(page, "Export and download");
      await waitForText(page, "Downloaded api_signing.pfx");
      const pfx = fileOf(dir, "k.pfx", await waitForDownload(dir, "api_signing.pfx"));
      expect(opensslOk(["pkcs12", "-in", pfx, "-passin", "pass:", "-nocerts", "-nodes"])).toContain("friendlyName: api signing");
      expect(await pageHolds(page, "-----BEGIN")).toBe(false);
      await clickInDialog(page, "Done");
      await waitForDialogsClosed(page);

      // Change the passphrase (the current one is checked), then remove it.
      await click(page, "button", "api signing");
      await waitForText(page, "Edit private key api signing");
      await click(page, "radio", "Change it");
      await fill(page, "Current passphrase", "nope");
      await fill(page, "New passphrase", "n3w-pass");
      await fill(page, "Repeat the new passphrase", "n3w-pass");
      await clickInDialog(page, "Save");
      await waitForText(page, "The current passphrase is not correct");
      await fill(page, "Current passphrase", "k3y-pass");
      await clickInDialog(page, "Save");
      await waitForText(page, "saved with its new passphrase");
      await waitForDialogsClosed(page);
      expect((await user.client.post(`/api/certificates/private_keys/${key.id}/_export`, { format: "pem", passphrase: "n3w-pass" })).status).toBe(
        200,
      );
      await click(page, "button", "api signing");
      await click(page, "radio", "Remove it");
      await fill(page, "Current passphrase", "n3w-pass");
      await clickInDialog(page, "Save");
      await waitForText(page, "saved without a passphrase");
      await waitForDialogsClosed(page);
      await waitForText(page, "None");
      expect((await user.client.get(`/api/certificates/private_keys/${key.id}`)).json.encrypted).toBe(false);
      expectClean(ui, ["400 POST /api/certificates/private_keys/" + key.id + "/_export", "400 PUT /api/certificates/private_keys/" + key.id]);
    },
    TEST_TIMEOUT,
  );
});
