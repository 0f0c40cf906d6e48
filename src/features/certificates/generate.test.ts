// `_generate` (supplement §12.4): every key algorithm × format, every signature algorithm, versions and validity,
// each file checked by openssl. RSA-8192 is generated once (with a status probe while it runs), RSA-4096 once.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { unzipSync } from "fflate";
import { startTestServer, type TestServer, type TestUser } from "../../tests/harness";
import { attrs, b64, openssl, opensslOk, scratch } from "../../tests/fixtures/certificates";

let srv: TestServer;
let alice: TestUser;
const tmp = scratch();

beforeAll(async () => {
  srv = await startTestServer();
  alice = await srv.createUser();
});
afterAll(async () => {
  await srv.stop();
  tmp.cleanup();
});

const TPL = "/api/certificates/templates";

async function createTemplate(name: string, attributes: Record<string, unknown>): Promise<string> {
  const res = await alice.client.post(TPL, { templateName: name, attributes });
  if (res.status !== 201) throw new Error(`create template: ${res.status} ${res.text}`);
  return res.json.id;
}

async function generate(id: string, body: Record<string, unknown>) {
  const res = await alice.client.post(`${TPL}/${id}/_generate`, body);
  if (res.status !== 200) throw new Error(`generate: ${res.status} ${res.text}`);
  return res.json as { format: string; fileName: string; mimeType: string; data: string };
}

let n = 0;
const file = (data: Uint8Array | string, ext: string) => tmp.file(`f${++n}.${ext}`, data);

/** `x509 -text` of a DER or PEM certificate, after checking its self-signature with openssl verify. */
function certText(cert: Uint8Array | string): string {
  const der = typeof cert !== "string";
  const pem = der ? opensslOk(["x509", "-inform", "DER", "-outform", "PEM"], cert).trim() : cert;
  const path = file(pem, "pem");
  const verify = openssl(["verify", "-auth_level", "0", "-no_check_time", "-check_ss_sig", "-partial_chain", "-trusted", path, path]);
  if (verify.code !== 0) throw new Error(`signature check failed: ${verify.out} ${verify.err}`);
  return opensslOk(["x509", "-in", path, "-noout", "-text"]);
}

const publicKeyOfCert = (certPem: string) => opensslOk(["x509", "-in", file(certPem, "pem"), "-noout", "-pubkey"]).trim();
const publicKeyOfKey = (keyPath: string, pass: string, der = false) =>
  opensslOk(["pkey", "-in", keyPath, ...(der ? ["-inform", "DER"] : []), "-passin", `pass:${pass}`, "-pubout"]).trim();

const RICH = {
  commonName: "svc.example",
  organization: "Acme",
  organizationalUnit: "Ops",
  locality: "Munich",
  stateOrProvince: "Bavaria",
  country: "de",
  notValidBefore: Date.UTC(2024, 0, 2, 3, 4, 5) / 1000,
  notValidAfter: Date.UTC(2034, 5, 6, 7, 8, 9) / 1000,
  keyUsage: ["digitalSignature", "keyEncipherment", "keyCertificateSigning"],
  extendedKeyUsage: ["tlsWebServerAuthentication", "tlsWebClientAuthentication"],
  subjectAltNames: ["svc.example", "*.svc.example", "127.0.0.1", "::1", "ops@example.com", "https://svc.example/"],
};

/** Everything §12.4 promises for a v3 certificate made from RICH. */
function expectRichCertificate(text: string, sigName: string, isCa: boolean, publicKey: RegExp) {
  expect(text).toContain("Version: 3 (0x2)");
  expect(text).toContain(`Signature Algorithm: ${sigName}`);
  expect(text).toContain("Issuer: C = DE, ST = Bavaria, L = Munich, O = Acme, OU = Ops, CN = svc.example");
  expect(text).toContain("Subject: C = DE, ST = Bavaria, L = Munich, O = Acme, OU = Ops, CN = svc.example");
  expect(text).toContain("Not Before: Jan  2 03:04:05 2024 GMT");
  expect(text).toContain("Not After : Jun  6 07:08:09 2034 GMT");
  expect(text).toMatch(publicKey);
  expect(text).toMatch(new RegExp(`X509v3 Basic Constraints: critical\\s+CA:${isCa ? "TRUE" : "FALSE"}`));
  expect(text).toMatch(/X509v3 Subject Key Identifier:\s+([0-9A-F]{2}:){19}[0-9A-F]{2}/);
  expect(text).toMatch(/X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment, Certificate Sign/);
  expect(text).toMatch(/X509v3 Extended Key Usage:\s+TLS Web Server Authentication, TLS Web Client Authentication/);
  expect(text).toMatch(
    /X509v3 Subject Alternative Name:\s+DNS:svc.example, DNS:\*.svc.example, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, email:ops@example.com, URI:https:\/\/svc.example\//,
  );
  expect(text).not.toMatch(/Subject Alternative Name: critical/);
  const serial = /Serial Number:\s*\n\s*([0-9a-f:]+)/.exec(text)![1]!.split(":");
  expect(serial).toHaveLength(20);
  expect(parseInt(serial[0]!, 16)).toBeLessThan(0x80);
}

interface Case {
  label: string;
  keyAlgorithm: Record<string, string>;
  sig: string;
  sigName: string;
  /** Matches `x509 -text` / `pkey -text` output for this key. */
  publicKey: RegExp;
  privateKey: RegExp;
  /** Also generate pem without, pkcs8 with, and pkcs12 with the empty passphrase. */
  allVariants?: boolean;
}

const CASES: Case[] = [
  {
    label: "rsa-1024",
    keyAlgorithm: { keyType: "rsa", keySize: "1024" },
    sig: "sha256",
    sigName: "sha256WithRSAEncryption",
    publicKey: /Public-Key: \(1024 bit\)/,
    privateKey: /Private-Key: \(1024 bit/,
    allVariants: true,
  },
  {
    label: "rsa-2048",
    keyAlgorithm: { keyType: "rsa", keySize: "2048" },
    sig: "sha512",
    sigName: "sha512WithRSAEncryption",
    publicKey: /Public-Key: \(2048 bit\)/,
    privateKey: /Private-Key: \(2048 bit/,
  },
  {
    label: "dsa-1024",
    keyAlgorithm: { keyType: "dsa", keySize: "1024" },
    sig: "sha1",
    sigName: "dsaWithSHA1",
    publicKey: /Public Key Algorithm: dsaEncryption[\s\S]*Public-Key: \(1024 bit\)/,
    privateKey: /Private-Key: \(1024 bit\)/,
  },
  {
    label: "dsa-2048",
    keyAlgorithm: { keyType: "dsa", keySize: "2048" },
    sig: "sha256",
    sigName: "dsa_with_SHA256",
    publicKey: /Public Key Algorithm: dsaEncryption[\s\S]*Public-Key: \(2048 bit\)/,
    privateKey: /Private-Key: \(2048 bit\)/,
  },
  {
    label: "ecdsa-p256",
    keyAlgorithm: { keyType: "ecdsa", curve: "secp256r1" },
    sig: "sha256",
    sigName: "ecdsa-with-SHA256",
    publicKey: /NIST CURVE: P-256/,
    privateKey: /NIST CURVE: P-256/,
    allVariants: true,
  },
  {
    label: "ecdsa-p384",
    keyAlgorithm: { keyType: "ecdsa", curve: "secp384r1" },
    sig: "sha384",
    sigName: "ecdsa-with-SHA384",
    publicKey: /NIST CURVE: P-384/,
    privateKey: /NIST CURVE: P-384/,
  },
  {
    label: "ecdsa-p521",
    keyAlgorithm: { keyType: "ecdsa", curve: "secp521r1" },
    sig: "sha512",
    sigName: "ecdsa-with-SHA512",
    publicKey: /NIST CURVE: P-521/,
    privateKey: /NIST CURVE: P-521/,
  },
  {
    label: "ed25519",
    keyAlgorithm: { keyType: "ed25519" },
    sig: "ed25519",
    sigName: "ED25519",
    publicKey: /Public Key Algorithm: ED25519/,
    privateKey: /ED25519 Private-Key/,
    allVariants: true,
  },
];

// ---- RSA-8192: generated once, while the API keeps answering ----
let big: Promise<{ format: string; data: string }> | undefined;

describe("key generation off the event loop", () => {
  test("GET /api/status answers while an RSA-8192 key is generated", async () => {
    const id = await createTemplate(
      "rsa 8192",
      attrs({ commonName: "big.example", keyAlgorithm: { keyType: "rsa", keySize: "8192" }, signatureAlgorithm: "sha256" }),
    );
    let done = false;
    big = generate(id, { format: "pkcs12", passphrase: "big pass" }).finally(() => (done = true));
    // Five answers while the key is still being generated (a generation on the event loop would hold them all until
    // it ended, and `done` would then be true)
    for (let i = 0; i < 5; i++) {
      const status = await srv.anon.get("/api/status");
      expect(status.status).toBe(200);
      expect(done).toBe(false);
    }
  });
});

describe("_generate: every key algorithm × format, checked by openssl", () => {
  for (const c of CASES) {
    test(
      c.label,
      async () => {
        const name = `gen ${c.label}`;
        const safe = `gen_${c.label}`;
        const isCa = c.label.length % 2 === 0;
        const id = await createTemplate(name, { ...RICH, keyAlgorithm: c.keyAlgorithm, signatureAlgorithm: c.sig, isCa });
        const [der, pem, p8, p12] = await Promise.all([
          generate(id, { format: "der", passphrase: "ignored" }),
          generate(id, { format: "pem", passphrase: "pem pass" }),
          generate(id, { format: "pkcs8" }),
          generate(id, { format: "pkcs12", passphrase: "p12 pass" }),
        ]);

        // der: the certificate
        expect(der).toMatchObject({ format: "der", fileName: `${safe}.der`, mimeType: "application/pkix-cert" });
        expectRichCertificate(certText(b64(der.data)), c.sigName, isCa, c.publicKey);

        // pem: ZIP with certificate.crt and private_key.key (encrypted), key matching the certificate
        expect(pem).toMatchObject({ format: "pem", fileName: `${safe}.zip`, mimeType: "application/zip" });
        const zip = unzipSync(b64(pem.data));
        expect(Object.keys(zip).sort()).toEqual(["certificate.crt", "private_key.key"]);
        const certPem = new TextDecoder().decode(zip["certificate.crt"]);
        const keyPem = new TextDecoder().decode(zip["private_key.key"]);
        expect(certPem).toStartWith("-----BEGIN CERTIFICATE-----");
        expect(keyPem).toStartWith("-----BEGIN ENCRYPTED PRIVATE KEY-----");
        expectRichCertificate(certText(certPem), c.sigName, isCa, c.publicKey);
        const keyPath = file(keyPem, "key");
        expect(opensslOk(["pkey", "-in", keyPath, "-passin", "pass:pem pass", "-noout", "-text"])).toMatch(c.privateKey);
        expect(openssl(["pkey", "-in", keyPath, "-passin", "pass:wrong", "-noout"]).code).not.toBe(0);
        expect(publicKeyOfKey(keyPath, "pem pass")).toBe(publicKeyOfCert(certPem));

        // pkcs8: the key as unencrypted PKCS#8 DER (a fresh pair: differs from the pem one)
        expect(p8).toMatchObject({ format: "pkcs8", fileName: `${safe}.p8`, mimeType: "application/pkcs8" });
        const p8Path = file(b64(p8.data), "p8");
        expect(opensslOk(["pkey", "-inform", "DER", "-in", p8Path, "-passin", "pass:", "-noout", "-text"])).toMatch(c.privateKey);
        expect(publicKeyOfKey(p8Path, "", true)).not.toBe(publicKeyOfCert(certPem));

        // pkcs12: key and certificate, friendly name, PBES2 AES-256-CBC, SHA-256 MAC; wrong passphrase fails
        expect(p12).toMatchObject({ format: "pkcs12", fileName: `${safe}.pfx`, mimeType: "application/x-pkcs12" });
        const pfx = file(b64(p12.data), "pfx");
        const info = opensslOk(["pkcs12", "-in", pfx, "-info", "-nodes", "-passin", "pass:p12 pass"]);
        expect(info).toContain("MAC: sha256");
        expect(info).toContain("Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC");
        expect(info).toContain("PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC");
        expect(info.match(/friendlyName: gen /g)).toHaveLength(2);
        const bundledCert = info.slice(info.indexOf("-----BEGIN CERTIFICATE-----"), info.indexOf("-----END CERTIFICATE-----") + 25);
        expectRichCertificate(certText(bundledCert), c.sigName, isCa, c.publicKey);
        const bundledKey = file(info.slice(info.indexOf("-----BEGIN PRIVATE KEY-----")), "key");
        expect(publicKeyOfKey(bundledKey, "")).toBe(publicKeyOfCert(bundledCert));
        const wrong = openssl(["pkcs12", "-in", pfx, "-info", "-nodes", "-passin", "pass:wrong"]);
        expect(wrong.code).not.toBe(0);
        expect(wrong.err).toContain("Mac verify error");

        if (c.allVariants) {
          const [pemPlain, p8Enc, p12Empty] = await Promise.all([
            generate(id, { format: "pem" }),
            generate(id, { format: "pkcs8", passphrase: "p8 pass" }),
            generate(id, { format: "pkcs12" }),
          ]);
          const plainKey = new TextDecoder().decode(unzipSync(b64(pemPlain.data))["private_key.key"]);
          expect(plainKey).toStartWith("-----BEGIN PRIVATE KEY-----");
          expect(opensslOk(["pkey", "-in", file(plainKey, "key"), "-noout", "-text"])).toMatch(c.privateKey);
          const encP8 = file(b64(p8Enc.data), "p8");
          expect(opensslOk(["pkey", "-inform", "DER", "-in", encP8, "-passin", "pass:p8 pass", "-noout", "-text"])).toMatch(c.privateKey);
          expect(openssl(["pkey", "-inform", "DER", "-in", encP8, "-passin", "pass:nope", "-noout"]).code).not.toBe(0);
          expect(opensslOk(["asn1parse", "-inform", "DER", "-in", encP8])).toContain(":PBES2");
          const empty = opensslOk(["pkcs12", "-in", file(b64(p12Empty.data), "pfx"), "-info", "-nodes", "-passin", "pass:"]);
          expect(empty).toContain("-----BEGIN CERTIFICATE-----");
          expect(empty).toContain("-----BEGIN PRIVATE KEY-----");
        }
      },
      30_000,
    );
  }
});

describe("_generate: signature algorithms, versions, validity encoding", () => {
  const SIGS: [Record<string, string>, string, string][] = [
    [{ keyType: "rsa", keySize: "1024" }, "md5", "md5WithRSAEncryption"],
    [{ keyType: "rsa", keySize: "1024" }, "sha1", "sha1WithRSAEncryption"],
    [{ keyType: "rsa", keySize: "1024" }, "sha256", "sha256WithRSAEncryption"],
    [{ keyType: "rsa", keySize: "1024" }, "sha384", "sha384WithRSAEncryption"],
    [{ keyType: "rsa", keySize: "1024" }, "sha512", "sha512WithRSAEncryption"],
    [{ keyType: "dsa", keySize: "1024" }, "sha1", "dsaWithSHA1"],
    [{ keyType: "dsa", keySize: "1024" }, "sha256", "dsa_with_SHA256"],
    [{ keyType: "ecdsa", curve: "secp256r1" }, "sha1", "ecdsa-with-SHA1"],
    [{ keyType: "ecdsa", curve: "secp256r1" }, "sha256", "ecdsa-with-SHA256"],
    [{ keyType: "ecdsa", curve: "secp384r1" }, "sha384", "ecdsa-with-SHA384"],
    [{ keyType: "ecdsa", curve: "secp256r1" }, "sha512", "ecdsa-with-SHA512"],
    [{ keyType: "ed25519" }, "ed25519", "ED25519"],
  ];

  test("every allowed key × signature algorithm pair signs a verifiable certificate", async () => {
    const results = await Promise.all(
      SIGS.map(async ([keyAlgorithm, sig, name], i) => {
        const id = await createTemplate(`sig ${i}`, attrs({ keyAlgorithm, signatureAlgorithm: sig }));
        return { name, der: b64((await generate(id, { format: "der" })).data) };
      }),
    );
    for (const { name, der } of results) {
      const text = certText(der);
      expect(text).toContain(`Signature Algorithm: ${name}`);
      expect(text).toContain("CN = test.example");
    }
  }, 30_000);

  test("v1 and v2 certificates carry no extensions", async () => {
    for (const version of [1, 2]) {
      const id = await createTemplate(`v${version}`, attrs({ version, commonName: `v${version}.example`, organization: "Old" }));
      const text = certText(b64((await generate(id, { format: "der" })).data));
      expect(text).toContain(`Version: ${version} (0x${version - 1})`);
      expect(text).toContain("Subject: O = Old, CN = v");
      expect(text).not.toContain("X509v3");
    }
  });

  test("validity: 1950 and 9999 bounds; UTCTime up to 2049, GeneralizedTime from 2050", async () => {
    const cases: [number, number, string[], string[]][] = [
      [
        Date.UTC(1950, 0, 1) / 1000,
        Date.UTC(9999, 11, 31, 23, 59, 59) / 1000,
        ["Not Before: Jan  1 00:00:00 1950 GMT", "Not After : Dec 31 23:59:59 9999 GMT"],
        ["UTCTIME", "GENERALIZEDTIME"],
      ],
      [
        Date.UTC(2049, 11, 31, 23, 59, 59) / 1000,
        Date.UTC(2050, 0, 1) / 1000,
        ["Not Before: Dec 31 23:59:59 2049 GMT", "Not After : Jan  1 00:00:00 2050 GMT"],
        ["UTCTIME", "GENERALIZEDTIME"],
      ],
    ];
    for (const [i, [before, after, lines, kinds]] of cases.entries()) {
      const id = await createTemplate(`validity ${i}`, attrs({ notValidBefore: before, notValidAfter: after }));
      const der = b64((await generate(id, { format: "der" })).data);
      const text = certText(der);
      for (const line of lines) expect(text).toContain(line);
      const asn = opensslOk(["asn1parse", "-inform", "DER"], der);
      const times = [...asn.matchAll(/prim: (UTCTIME|GENERALIZEDTIME)/g)].map((m) => m[1]);
      expect(times).toEqual(kinds);
    }
  });

  test("subject empty: SAN only, marked critical", async () => {
    const id = await createTemplate("san only", attrs({ commonName: "", subjectAltNames: ["localhost", "127.0.0.1"] }));
    const text = certText(b64((await generate(id, { format: "der" })).data));
    expect(text).toMatch(/Subject:\s*\n/);
    expect(text).toMatch(/X509v3 Subject Alternative Name: critical\s+DNS:localhost, IP Address:127.0.0.1/);
  });

  test("isCa false, no key usage or EKU given: basicConstraints CA:FALSE only", async () => {
    const id = await createTemplate("plain v3", attrs({ commonName: "plain.example" }));
    const text = certText(b64((await generate(id, { format: "der" })).data));
    expect(text).toMatch(/X509v3 Basic Constraints: critical\s+CA:FALSE/);
    expect(text).not.toContain("X509v3 Key Usage");
    expect(text).not.toContain("X509v3 Extended Key Usage");
    expect(text).not.toContain("Subject Alternative Name");
  });

  test("request validation", async () => {
    const id = await createTemplate("validation", attrs());
    for (const body of [{}, { format: "p7b" }, { format: "PEM" }, { format: "pem", passphrase: "" }, { format: "pem", passphrase: 12 }]) {
      const res = await alice.client.post(`${TPL}/${id}/_generate`, body);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("INVALID_INPUT");
    }
    expect((await alice.client.post(`${TPL}/${crypto.randomUUID()}/_generate`, { format: "der" })).status).toBe(404);
    expect((await alice.client.post(`${TPL}/nope/_generate`, { format: "der" })).status).toBe(404);
  });
});

describe("large RSA keys", () => {
  test("RSA-4096 (once): pem", async () => {
    const id = await createTemplate("rsa 4096", {
      ...RICH,
      keyAlgorithm: { keyType: "rsa", keySize: "4096" },
      signatureAlgorithm: "sha384",
      isCa: true,
    });
    const zip = unzipSync(b64((await generate(id, { format: "pem" })).data));
    const certPem = new TextDecoder().decode(zip["certificate.crt"]);
    expectRichCertificate(certText(certPem), "sha384WithRSAEncryption", true, /Public-Key: \(4096 bit\)/);
    const keyPath = file(zip["private_key.key"]!, "key");
    expect(opensslOk(["pkey", "-in", keyPath, "-noout", "-text"])).toMatch(/Private-Key: \(4096 bit/);
    expect(publicKeyOfKey(keyPath, "")).toBe(publicKeyOfCert(certPem));
  }, 30_000);

  test("RSA-8192 (the one generated above): pkcs12 with key and certificate", async () => {
    const out = await big!;
    expect(out.format).toBe("pkcs12");
    const info = opensslOk(["pkcs12", "-in", file(b64(out.data), "pfx"), "-info", "-nodes", "-passin", "pass:big pass"]);
    const certPem = info.slice(info.indexOf("-----BEGIN CERTIFICATE-----"), info.indexOf("-----END CERTIFICATE-----") + 25);
    const text = certText(certPem);
    expect(text).toContain("Public-Key: (8192 bit)");
    expect(text).toContain("Signature Algorithm: sha256WithRSAEncryption");
    const keyPath = file(info.slice(info.indexOf("-----BEGIN PRIVATE KEY-----")), "key");
    expect(opensslOk(["pkey", "-in", keyPath, "-noout", "-text"])).toMatch(/Private-Key: \(8192 bit/);
    expect(openssl(["pkcs12", "-in", file(b64(out.data), "pfx"), "-noout", "-passin", "pass:wrong"]).code).not.toBe(0);
  }, 60_000);
});
