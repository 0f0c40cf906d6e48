// Reading certificates in the browser: the chain `_fetch` returns (PEM strings) and the files `_generate` returns
// (for the one-line summary of what a download holds). Loaded on demand (`import("./cert-info")`): it brings
// @peculiar/x509 (~58 KiB gz), which needs the Reflect metadata polyfill before it loads (tsyringe), so both are
// imported dynamically, in that order. Fingerprints use WebCrypto, which browsers offer only in a secure context
// (HTTPS or localhost); elsewhere the fingerprint is left out.
import { unzipSync } from "fflate";
import { certificates as certRules } from "../../api/rules.gen";
import type { ExtendedKeyUsage, KeyAlgorithm, KeyUsage, TemplateAttributes } from "../../api/types";
import { describeKeyAlgorithm, fittingSignature, RSA_SIZES } from "./algorithms";
import { classifySan, MAX_SANS, subjectLine } from "./template-model";

type X509 = typeof import("@peculiar/x509");
let loading: Promise<X509> | undefined;
function x509(): Promise<X509> {
  loading ??= import("reflect-metadata").then(() => import("@peculiar/x509"));
  return loading;
}

export interface CertInfo {
  subject: string;
  issuer: string;
  selfIssued: boolean;
  notBefore: Date;
  notAfter: Date;
  sans: { type: string; value: string }[];
  /** SHA-256 of the DER, "AB:CD:…"; null outside a secure context. */
  sha256: string | null;
  serialNumber: string;
  keyAlgorithm: string;
  signatureAlgorithm: string;
  isCa: boolean;
}

const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, "0").toUpperCase()).join(":");

async function sha256(der: ArrayBuffer): Promise<string | null> {
  if (!globalThis.crypto?.subtle) return null;
  try {
    return hex(await crypto.subtle.digest("SHA-256", der));
  } catch {
    return null;
  }
}

const HASHES: Record<string, string> = { "SHA-1": "sha1", "SHA-256": "sha256", "SHA-384": "sha384", "SHA-512": "sha512", MD5: "md5" };
const CURVES: Record<string, "secp256r1" | "secp384r1" | "secp521r1"> = { "P-256": "secp256r1", "P-384": "secp384r1", "P-521": "secp521r1" };

type Cert = InstanceType<X509["X509Certificate"]>;

function describeKey(cert: Cert): string {
  const alg = cert.publicKey.algorithm as { name: string; namedCurve?: string; modulusLength?: number };
  if (alg.namedCurve) return `${alg.name === "ECDSA" || alg.name === "ECDH" ? "ECDSA" : alg.name} ${alg.namedCurve}`;
  if (alg.modulusLength) return `RSA ${alg.modulusLength}`;
  return alg.name;
}

function describeSignature(cert: Cert): string {
  const s = cert.signatureAlgorithm as { name: string; hash?: { name: string } };
  const family = s.name.startsWith("RSA") ? "RSA" : s.name;
  return s.hash ? `${s.hash.name} with ${family}` : family;
}

async function info(lib: X509, cert: Cert): Promise<CertInfo> {
  const san = cert.getExtension(lib.SubjectAlternativeNameExtension);
  const basic = cert.getExtension(lib.BasicConstraintsExtension);
  return {
    subject: cert.subject,
    issuer: cert.issuer,
    selfIssued: cert.subject === cert.issuer,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    sans: san ? san.names.items.map((n) => ({ type: n.type, value: n.value })) : [],
    sha256: await sha256(cert.rawData),
    serialNumber: cert.serialNumber,
    keyAlgorithm: describeKey(cert),
    signatureAlgorithm: describeSignature(cert),
    isCa: basic?.ca ?? false,
  };
}

/** A certificate (PEM text or DER bytes) as the UI shows it. */
export async function parseCertificate(input: string | Uint8Array<ArrayBuffer>): Promise<CertInfo> {
  const lib = await x509();
  return info(lib, new lib.X509Certificate(input));
}

const KEY_USAGE_FLAGS: [number, KeyUsage][] = [
  [1, "digitalSignature"],
  [2, "nonRepudiation"],
  [4, "keyEncipherment"],
  [8, "dataEncipherment"],
  [16, "keyAgreement"],
  [32, "keyCertificateSigning"],
  [64, "crlSigning"],
  [128, "encipherOnly"],
  [256, "decipherOnly"],
];
const EKU_OIDS: Record<string, ExtendedKeyUsage> = {
  "1.3.6.1.5.5.7.3.1": "tlsWebServerAuthentication",
  "1.3.6.1.5.5.7.3.2": "tlsWebClientAuthentication",
  "1.3.6.1.5.5.7.3.3": "codeSigning",
  "1.3.6.1.5.5.7.3.4": "emailProtection",
  "1.3.6.1.5.5.7.3.8": "timeStamping",
};
/** Subject fields by their DN short names, with the API's maximum lengths. */
const LIMITS: [keyof typeof certRules.SUBJECT_MAX_CHARS, string][] = [
  ["commonName", "CN"],
  ["organization", "O"],
  ["organizationalUnit", "OU"],
  ["locality", "L"],
  ["stateOrProvince", "ST"],
];

/**
 * Template attributes that reproduce a certificate (a fetched leaf): subject, key and signature algorithm (mapped to
 * what the API offers), validity, CA flag, usages and the SANs the API accepts. `notes` says what had to change.
 */
export async function certificateToAttributes(pem: string): Promise<{ attributes: TemplateAttributes; notes: string[] }> {
  const lib = await x509();
  const cert = new lib.X509Certificate(pem);
  const notes: string[] = [];
  const a: Partial<TemplateAttributes> = {};
  for (const [key, field] of LIMITS) {
    const max = certRules.SUBJECT_MAX_CHARS[key];
    const v = cert.subjectName.getField(field)[0];
    if (!v) continue;
    if ([...v].length > max) notes.push(`${field} shortened to ${max} characters`);
    (a as Record<string, string>)[key] = [...v].slice(0, max).join("");
  }
  const country = cert.subjectName.getField("C")[0];
  if (country && certRules.COUNTRY_RE.test(country)) a.country = country.toUpperCase();

  const pk = cert.publicKey.algorithm as { name: string; namedCurve?: string; modulusLength?: number };
  let keyAlgorithm: KeyAlgorithm;
  if (pk.name === "Ed25519") keyAlgorithm = { keyType: "ed25519" };
  else if (pk.namedCurve && CURVES[pk.namedCurve]) keyAlgorithm = { keyType: "ecdsa", curve: CURVES[pk.namedCurve]! };
  else if (pk.modulusLength) {
    const size = RSA_SIZES.find((s) => Number(s) >= pk.modulusLength!) ?? "8192";
    if (Number(size) !== pk.modulusLength) notes.push(`RSA ${pk.modulusLength} is not offered: RSA ${size} instead`);
    keyAlgorithm = { keyType: "rsa", keySize: size };
  } else {
    keyAlgorithm = { keyType: "ecdsa", curve: "secp256r1" };
    notes.push(`${pk.name} keys are not offered: ECDSA P-256 instead`);
  }
  const sig = cert.signatureAlgorithm as { name: string; hash?: { name: string } };
  const wanted = sig.name === "Ed25519" ? "ed25519" : (HASHES[sig.hash?.name ?? ""] ?? "sha256");
  const signatureAlgorithm = fittingSignature(keyAlgorithm.keyType, wanted);
  if (signatureAlgorithm !== wanted)
    notes.push(`signature ${wanted} does not fit ${describeKeyAlgorithm(keyAlgorithm)}: ${signatureAlgorithm} instead`);

  const sanExt = cert.getExtension(lib.SubjectAlternativeNameExtension);
  const sans: string[] = [];
  for (const n of sanExt?.names.items ?? []) {
    if (!["dns", "ip", "email", "url"].includes(n.type) || "error" in classifySan(n.value)) {
      notes.push(`SAN ${n.type}:${n.value} left out (not a kind the API accepts)`);
      continue;
    }
    if (sans.length === MAX_SANS) {
      notes.push(`only the first ${MAX_SANS} SANs kept`);
      break;
    }
    if (!sans.includes(n.value)) sans.push(n.value);
  }
  const usage = cert.getExtension(lib.KeyUsagesExtension);
  const keyUsage = usage ? KEY_USAGE_FLAGS.filter(([flag]) => (usage.usages & flag) !== 0).map(([, name]) => name) : [];
  const eku = cert.getExtension(lib.ExtendedKeyUsageExtension);
  const extendedKeyUsage: ExtendedKeyUsage[] = [];
  for (const oid of eku?.usages ?? []) {
    const name = EKU_OIDS[String(oid)];
    if (name) extendedKeyUsage.push(name);
    else notes.push(`extended key usage ${String(oid)} left out`);
  }
  const attributes: TemplateAttributes = {
    ...a,
    keyAlgorithm,
    signatureAlgorithm,
    notValidBefore: Math.floor(cert.notBefore.getTime() / 1000),
    notValidAfter: Math.floor(cert.notAfter.getTime() / 1000),
    version: 3,
    isCa: cert.getExtension(lib.BasicConstraintsExtension)?.ca ?? false,
    ...(keyUsage.length ? { keyUsage } : {}),
    ...(extendedKeyUsage.length ? { extendedKeyUsage } : {}),
    ...(sans.length ? { subjectAltNames: sans } : {}),
  };
  if (!subjectLine(attributes) && sans.length === 0) attributes.commonName = "unnamed";
  return { attributes, notes };
}

const day = (d: Date) => d.toISOString().slice(0, 10);
const sansText = (sans: { value: string }[]) => (sans.length ? `SANs ${sans.map((s) => s.value).join(", ")}` : "no SANs");

/** One line on a certificate: subject, SANs, validity, fingerprint. */
export function certificateLine(c: CertInfo): string {
  return [
    c.subject || "(empty subject)",
    sansText(c.sans),
    `valid ${day(c.notBefore)} to ${day(c.notAfter)}`,
    c.sha256 ? `SHA-256 ${c.sha256}` : "fingerprint needs HTTPS or localhost",
  ].join(" · ");
}

/**
 * What a generated file holds (§12.4), in one line. The certificate is read from the file where it is in the clear
 * (PEM bundle, DER); a PKCS#12 file keeps it encrypted, so its line describes it from the template.
 */
export async function summarizeGenerated(
  format: string,
  bytes: Uint8Array<ArrayBuffer>,
  attributes: TemplateAttributes,
  passphrase: boolean,
): Promise<string> {
  const fromTemplate = () =>
    [
      subjectLine(attributes) || "(empty subject)",
      sansText((attributes.subjectAltNames ?? []).map((value) => ({ value }))),
      `valid ${day(new Date(Number(attributes.notValidBefore) * 1000))} to ${day(new Date(Number(attributes.notValidAfter) * 1000))}`,
    ].join(" · ");
  const key = describeKeyAlgorithm(attributes.keyAlgorithm);
  switch (format) {
    case "pem": {
      const files = unzipSync(bytes);
      const cert = files["certificate.crt"];
      const keyPem = new TextDecoder().decode(files["private_key.key"] ?? new Uint8Array());
      const encrypted = keyPem.includes("ENCRYPTED PRIVATE KEY");
      const head = `ZIP: certificate.crt + private_key.key (${key}, ${encrypted ? "encrypted" : "not encrypted"})`;
      return cert ? `${head} · ${certificateLine(await parseCertificate(new TextDecoder().decode(cert)))}` : head;
    }
    case "der":
      return `DER certificate · ${certificateLine(await parseCertificate(bytes))}`;
    case "pkcs12":
      return `PKCS#12: certificate + private key (${key}), ${passphrase ? "protected by your passphrase" : "empty password"} · ${fromTemplate()} · the fingerprint is inside the encrypted file`;
    default:
      return `PKCS#8 private key only (${key}, ${passphrase ? "encrypted" : "not encrypted"}); choose PEM, PKCS#12 or DER for a certificate`;
  }
}
