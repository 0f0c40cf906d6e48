// Self-signed certificate from a template (supplement §12.4): the to-be-signed structure is assembled with
// @peculiar/asn1-x509 (the ASN.1 layer of @peculiar/x509) and @peculiar/x509's name and extension classes, then
// signed with node:crypto or openssl (DSA), because WebCrypto cannot sign MD5 or DSA and @peculiar/x509's own
// generator only writes v3 certificates.
import { AsnConvert } from "@peculiar/asn1-schema";
import * as asn1X509 from "@peculiar/asn1-x509";
import { createHash, randomBytes } from "node:crypto";
import { signatureOid } from "./algorithms";
import type { KeyPair } from "./keygen";
import { signData } from "./keygen";
import type { OpenSsl } from "./openssl";
import type { TemplateAttributes } from "./contract";
import type * as X509 from "@peculiar/x509";
import { x509 } from "./x509";

const KEY_USAGE_FLAGS: Record<string, number> = {
  digitalSignature: x509.KeyUsageFlags.digitalSignature,
  nonRepudiation: x509.KeyUsageFlags.nonRepudiation,
  keyEncipherment: x509.KeyUsageFlags.keyEncipherment,
  dataEncipherment: x509.KeyUsageFlags.dataEncipherment,
  keyAgreement: x509.KeyUsageFlags.keyAgreement,
  keyCertificateSigning: x509.KeyUsageFlags.keyCertSign,
  crlSigning: x509.KeyUsageFlags.cRLSign,
  encipherOnly: x509.KeyUsageFlags.encipherOnly,
  decipherOnly: x509.KeyUsageFlags.decipherOnly,
};

const EKU_OIDS: Record<string, string> = {
  tlsWebServerAuthentication: "1.3.6.1.5.5.7.3.1",
  tlsWebClientAuthentication: "1.3.6.1.5.5.7.3.2",
  codeSigning: "1.3.6.1.5.5.7.3.3",
  emailProtection: "1.3.6.1.5.5.7.3.4",
  timeStamping: "1.3.6.1.5.5.7.3.8",
};

/** Subject fields in DN order C, ST, L, O, OU, CN; country as PrintableString, the rest UTF8String. */
function subjectName(a: TemplateAttributes): X509.Name {
  const rdns: Record<string, { printableString?: string; utf8String?: string }[]>[] = [];
  if (a.country) rdns.push({ C: [{ printableString: a.country }] });
  if (a.stateOrProvince) rdns.push({ ST: [{ utf8String: a.stateOrProvince }] });
  if (a.locality) rdns.push({ L: [{ utf8String: a.locality }] });
  if (a.organization) rdns.push({ O: [{ utf8String: a.organization }] });
  if (a.organizationalUnit) rdns.push({ OU: [{ utf8String: a.organizationalUnit }] });
  if (a.commonName) rdns.push({ CN: [{ utf8String: a.commonName }] });
  return new x509.Name(rdns as any);
}

export type SanKind = "ip" | "url" | "email" | "dns";

/** IP literal in the full 8-group form asn1-x509's converter reads (IPv4 kept dotted). */
function ipForAsn(ip: string): string {
  if (!ip.includes(":")) return ip;
  const host = new URL(`http://[${ip}]/`).hostname.slice(1, -1); // canonical, embedded IPv4 rewritten as hex
  const [head = "", tail = ""] = host.split("::");
  const left = head ? head.split(":") : [];
  const right = host.includes("::") ? (tail ? tail.split(":") : []) : [];
  const groups = host.includes("::") ? [...left, ...Array(8 - left.length - right.length).fill("0"), ...right] : left;
  return groups.join(":");
}

function extensions(a: TemplateAttributes, spki: Uint8Array, subjectEmpty: boolean, sans: { kind: SanKind; value: string }[]): X509.Extension[] {
  const info = AsnConvert.parse(spki, asn1X509.SubjectPublicKeyInfo);
  const keyId = createHash("sha1").update(new Uint8Array(info.subjectPublicKey)).digest("hex"); // RFC 5280 §4.2.1.2 (1)
  const out: X509.Extension[] = [new x509.BasicConstraintsExtension(a.isCa, undefined, true), new x509.SubjectKeyIdentifierExtension(keyId)];
  if (a.keyUsage && a.keyUsage.length > 0) {
    out.push(
      new x509.KeyUsagesExtension(
        a.keyUsage.reduce((flags, u) => flags | KEY_USAGE_FLAGS[u]!, 0),
        true,
      ),
    );
  }
  if (a.extendedKeyUsage && a.extendedKeyUsage.length > 0) {
    out.push(
      new x509.ExtendedKeyUsageExtension(
        a.extendedKeyUsage.map((u) => EKU_OIDS[u]!),
        false,
      ),
    );
  }
  if (sans.length > 0) {
    const names = sans.map(({ kind, value }) => ({ type: kind, value: kind === "ip" ? ipForAsn(value) : value }));
    out.push(new x509.SubjectAlternativeNameExtension(names as X509.JsonGeneralNames, subjectEmpty));
  }
  return out;
}

/** 20 random bytes, top bit cleared; a zero first byte would shorten the DER INTEGER, so it is made non-zero. */
function serialNumber(): Uint8Array {
  const serial = new Uint8Array(randomBytes(20));
  serial[0] = serial[0]! & 0x7f || 0x01;
  return serial;
}

export interface CertificateRequest {
  attributes: TemplateAttributes;
  sans: { kind: SanKind; value: string }[];
  keys: KeyPair;
  openssl: OpenSsl;
}

/** The DER of a self-signed certificate for `keys`. */
export async function createCertificate({ attributes: a, sans, keys, openssl }: CertificateRequest): Promise<Uint8Array> {
  const name = subjectName(a);
  const nameAsn = AsnConvert.parse(name.toArrayBuffer(), asn1X509.Name);
  const sig = signatureOid(a.signatureAlgorithm, a.keyAlgorithm.keyType);
  const algorithm = new asn1X509.AlgorithmIdentifier({ algorithm: sig.oid, ...(sig.nullParams ? { parameters: null } : {}) });
  const tbs = new asn1X509.TBSCertificate({
    version: a.version - 1,
    serialNumber: serialNumber().buffer as ArrayBuffer,
    signature: algorithm,
    issuer: nameAsn,
    validity: new asn1X509.Validity({ notBefore: new Date(a.notValidBefore * 1000), notAfter: new Date(a.notValidAfter * 1000) }),
    subject: nameAsn,
    subjectPublicKeyInfo: AsnConvert.parse(keys.spki, asn1X509.SubjectPublicKeyInfo),
  });
  if (a.version === 3) {
    tbs.extensions = new asn1X509.Extensions(
      extensions(a, keys.spki, nameAsn.length === 0, sans).map((e) => AsnConvert.parse(e.rawData, asn1X509.Extension)),
    );
  }
  const tbsDer = new Uint8Array(AsnConvert.serialize(tbs));
  const signature = await signData(a.keyAlgorithm, a.signatureAlgorithm, keys.pkcs8, tbsDer, openssl);
  const cert = new asn1X509.Certificate({
    tbsCertificate: tbs,
    signatureAlgorithm: algorithm,
    signatureValue: signature.slice().buffer as ArrayBuffer,
  });
  const der = new Uint8Array(AsnConvert.serialize(cert));
  new x509.X509Certificate(der); // parses back, or throws
  return der;
}
