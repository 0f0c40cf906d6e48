// PKCS#8 encryption (PBES2: PBKDF2-HMAC-SHA256, 100,000 iterations, AES-256-CBC) and PKCS#12 files, with pkijs
// (supplement §12.2, §12.4). Plain PKCS#8 bytes are never re-encoded: what goes in comes back out.
// The server runs these on the work pool (tasks.ts): there pkijs uses sync-crypto.ts, so key derivation and the
// PKCS#12 MAC key (100,000 SHA-256 rounds in JavaScript) cost the caller's work thread, never the event loop.
// An encrypted key from elsewhere (an import file, a key stored before the bound) is refused above
// MAX_PBKDF2_ITERATIONS before any derivation (§28).
import { createPrivateKey } from "node:crypto";
import * as asn1js from "asn1js";
import * as pkijs from "pkijs";

export const PBKDF2_ITERATIONS = 100_000;
/** §28: more PBKDF2 iterations than this in a key handed to us → refused (400) before deriving anything. */
export const MAX_PBKDF2_ITERATIONS = 1_000_000;
const OID_PBES2 = "1.2.840.113549.1.5.13";
const OID_PBKDF2 = "1.2.840.113549.1.5.12";
const AES_256_CBC = { name: "AES-CBC", length: 256 };
const OID_DATA = "1.2.840.113549.1.7.1";
const OID_PKCS8_SHROUDED_KEY_BAG = "1.2.840.113549.1.12.10.1.2";
const OID_CERT_BAG = "1.2.840.113549.1.12.10.1.3";
const OID_X509_CERTIFICATE = "1.2.840.113549.1.9.22.1";
const OID_FRIENDLY_NAME = "1.2.840.113549.1.9.20";
const OID_LOCAL_KEY_ID = "1.2.840.113549.1.9.21";

const engine = () => pkijs.getCrypto(true);
const buf = (u: Uint8Array): ArrayBuffer => u.slice().buffer as ArrayBuffer;
const password = (s: string): ArrayBuffer => buf(new TextEncoder().encode(s));

/** A constructed (BER, chunked) OCTET STRING as one primitive DER one. */
function flatOctets(os: asn1js.OctetString): asn1js.OctetString {
  return new asn1js.OctetString({ valueHex: buf(new Uint8Array(os.getValue())) });
}

/** Wrong passphrase (or not an encrypted key). */
export class BadPassphraseError extends Error {}

/** An encrypted key whose PBKDF2 iteration count is above MAX_PBKDF2_ITERATIONS (or unreadable). */
export class KdfCostError extends Error {}

/**
 * The PBKDF2 iteration count of an EncryptedPrivateKeyInfo using PBES2 (undefined for another scheme, which
 * decryptPkcs8 does not support and so never derives a key for); KdfCostError when its parameters cannot be read.
 */
export function pbkdf2Iterations(der: Uint8Array): number | undefined {
  const value = wholeDer(der);
  const items = value instanceof asn1js.Sequence ? value.valueBlock.value : [];
  if (!(items[0] instanceof asn1js.Sequence)) return undefined;
  let alg: pkijs.AlgorithmIdentifier;
  try {
    alg = new pkijs.AlgorithmIdentifier({ schema: items[0] });
  } catch {
    return undefined;
  }
  if (alg.algorithmId !== OID_PBES2) return undefined;
  try {
    const pbes2 = new pkijs.PBES2Params({ schema: alg.algorithmParams });
    if (pbes2.keyDerivationFunc.algorithmId !== OID_PBKDF2) return undefined;
    const n = new pkijs.PBKDF2Params({ schema: pbes2.keyDerivationFunc.algorithmParams }).iterationCount;
    if (typeof n !== "number" || !Number.isFinite(n)) throw new Error("not a number");
    return n;
  } catch {
    throw new KdfCostError("has unreadable PBES2 parameters");
  }
}

/** Why an encrypted key's derivation is refused (above MAX_PBKDF2_ITERATIONS), or null. */
export function kdfCostProblem(encrypted: Uint8Array): string | null {
  let n: number | undefined;
  try {
    n = pbkdf2Iterations(encrypted);
  } catch (err) {
    return (err as Error).message;
  }
  if (n !== undefined && (n < 1 || n > MAX_PBKDF2_ITERATIONS))
    return `uses ${n.toLocaleString("en")} PBKDF2 iterations; at most ${MAX_PBKDF2_ITERATIONS.toLocaleString("en")} are accepted`;
  return null;
}

/** EncryptedPrivateKeyInfo DER of a PKCS#8 DER key. */
export async function encryptPkcs8(pkcs8: Uint8Array, passphrase: string): Promise<Uint8Array> {
  const info = await engine().encryptEncryptedContentInfo({
    password: password(passphrase),
    contentEncryptionAlgorithm: AES_256_CBC as any,
    hmacHashAlgorithm: "SHA-256",
    iterationCount: PBKDF2_ITERATIONS,
    contentToEncrypt: buf(pkcs8),
    contentType: OID_DATA,
  });
  const encrypted = info.encryptedContent;
  if (!encrypted) throw new Error("PKCS#8 encryption produced no content");
  const seq = new asn1js.Sequence({ value: [info.contentEncryptionAlgorithm.toSchema(), flatOctets(encrypted)] });
  return new Uint8Array(seq.toBER(false));
}

/** The PKCS#8 DER inside an EncryptedPrivateKeyInfo; BadPassphraseError when the passphrase does not open it,
 *  KdfCostError (before any derivation) when it asks for more than MAX_PBKDF2_ITERATIONS. */
export async function decryptPkcs8(encrypted: Uint8Array, passphrase: string): Promise<Uint8Array> {
  const cost = kdfCostProblem(encrypted);
  if (cost) throw new KdfCostError(cost);
  const parsed = asn1js.fromBER(buf(encrypted));
  if (parsed.offset === -1 || !(parsed.result instanceof asn1js.Sequence)) throw new Error("stored key is not an EncryptedPrivateKeyInfo");
  const [alg, data] = parsed.result.valueBlock.value as [asn1js.Sequence, asn1js.OctetString];
  let plain: ArrayBuffer;
  try {
    plain = await engine().decryptEncryptedContentInfo({
      password: password(passphrase),
      encryptedContentInfo: new pkijs.EncryptedContentInfo({
        contentType: OID_DATA,
        contentEncryptionAlgorithm: new pkijs.AlgorithmIdentifier({ schema: alg }),
        encryptedContent: data,
      }),
    });
  } catch {
    throw new BadPassphraseError("wrong passphrase");
  }
  const out = new Uint8Array(plain);
  // A wrong passphrase may still give valid padding (about 1 in 256): the result must then parse as PKCS#8.
  try {
    pkijs.PrivateKeyInfo.fromBER(buf(out));
  } catch {
    throw new BadPassphraseError("wrong passphrase");
  }
  return out;
}

export interface Pkcs12Input {
  pkcs8: Uint8Array;
  /** Certificate DER; absent = a file with the key only (§12.2 export). */
  certificate?: Uint8Array;
  friendlyName: string;
  /** Empty string = the empty password. */
  passphrase: string;
}

/**
 * PFX: the key in a PKCS8ShroudedKeyBag and the certificate in a password-encrypted SafeContents, both PBES2
 * (PBKDF2-HMAC-SHA256, AES-256-CBC), password-integrity MAC with SHA-256. Both bags carry the friendly name
 * and the same localKeyId so readers pair them.
 */
export async function buildPkcs12(input: Pkcs12Input): Promise<Uint8Array> {
  const pw = password(input.passphrase);
  const crypto = engine();
  const localKeyId = new Uint8Array(await crypto.digest({ name: "SHA-1" }, buf(input.certificate ?? input.pkcs8)));
  const attributes = () => [
    new pkijs.Attribute({ type: OID_FRIENDLY_NAME, values: [new asn1js.BmpString({ value: input.friendlyName })] }),
    new pkijs.Attribute({ type: OID_LOCAL_KEY_ID, values: [new asn1js.OctetString({ valueHex: buf(localKeyId) })] }),
  ];
  const encryption = { password: pw, contentEncryptionAlgorithm: AES_256_CBC, hmacHashAlgorithm: "SHA-256", iterationCount: PBKDF2_ITERATIONS };

  const keyBag = new pkijs.PKCS8ShroudedKeyBag({ parsedValue: pkijs.PrivateKeyInfo.fromBER(buf(input.pkcs8)) });
  await keyBag.makeInternalValues(encryption as any);
  keyBag.encryptedData = flatOctets(keyBag.encryptedData);

  const safeContents: { privacyMode: number; value: pkijs.SafeContents }[] = [
    {
      privacyMode: 0,
      value: new pkijs.SafeContents({
        safeBags: [new pkijs.SafeBag({ bagId: OID_PKCS8_SHROUDED_KEY_BAG, bagValue: keyBag, bagAttributes: attributes() })],
      }),
    },
  ];
  const params: object[] = [{}];
  if (input.certificate) {
    const certBag = new pkijs.CertBag({
      certId: OID_X509_CERTIFICATE,
      certValue: new asn1js.OctetString({ valueHex: buf(input.certificate) }),
    });
    safeContents.push({
      privacyMode: 1,
      value: new pkijs.SafeContents({ safeBags: [new pkijs.SafeBag({ bagId: OID_CERT_BAG, bagValue: certBag, bagAttributes: attributes() })] }),
    });
    params.push(encryption);
  }
  const pfx = new pkijs.PFX({
    parsedValue: { integrityMode: 0, authenticatedSafe: new pkijs.AuthenticatedSafe({ parsedValue: { safeContents } }) },
  });
  await pfx.parsedValue!.authenticatedSafe!.makeInternalValues({ safeContents: params });
  await pfx.makeInternalValues({ password: pw, iterations: PBKDF2_ITERATIONS, pbkdf2HashAlgorithm: "SHA-256" as any, hmacHashAlgorithm: "SHA-256" });
  return new Uint8Array(pfx.toSchema().toBER(false));
}

const KEY_OIDS = { rsa: "1.2.840.113549.1.1.1", dsa: "1.2.840.10040.4.1", ecdsa: "1.2.840.10045.2.1", ed25519: "1.3.101.112" } as const;
const CURVE_OIDS = { secp256r1: "1.2.840.10045.3.1.7", secp384r1: "1.3.132.0.34", secp521r1: "1.3.132.0.35" } as const;

/** One complete DER value, or undefined (bytes left over, or not BER at all). */
function wholeDer(der: Uint8Array): asn1js.AsnType | undefined {
  const parsed = asn1js.fromBER(buf(der));
  if (parsed.offset === -1 || parsed.offset !== der.byteLength) return undefined;
  return parsed.result;
}

/**
 * Why `der` is not a stored key of this kind (import, features/user-data), or null: a PrivateKeyInfo whose algorithm
 * (and curve, and RSA modulus size) is `alg`, or, when `encrypted`, an EncryptedPrivateKeyInfo (its content cannot
 * be checked without the passphrase).
 */
export function pkcs8Problem(der: Uint8Array, encrypted: boolean, alg: { keyType: string; keySize?: string; curve?: string }): string | null {
  const value = wholeDer(der);
  if (!value) return "is not DER";
  if (encrypted) {
    const items = value instanceof asn1js.Sequence ? value.valueBlock.value : [];
    const ok = items.length === 2 && items[0] instanceof asn1js.Sequence && items[1] instanceof asn1js.OctetString;
    return ok ? kdfCostProblem(der) : "is not an EncryptedPrivateKeyInfo";
  }
  let info: pkijs.PrivateKeyInfo;
  try {
    info = new pkijs.PrivateKeyInfo({ schema: value });
  } catch {
    return "is not a PKCS#8 PrivateKeyInfo";
  }
  const oid = info.privateKeyAlgorithm.algorithmId;
  if (oid !== KEY_OIDS[alg.keyType as keyof typeof KEY_OIDS]) return `holds a key of another algorithm (${oid}) than alg.keyType ${alg.keyType}`;
  if (alg.keyType === "ecdsa") {
    const params = info.privateKeyAlgorithm.algorithmParams;
    const curve = params instanceof asn1js.ObjectIdentifier ? params.valueBlock.toString() : undefined;
    if (curve !== CURVE_OIDS[alg.curve as keyof typeof CURVE_OIDS]) return `holds a key on another curve than alg.curve ${alg.curve}`;
  }
  if (alg.keyType === "rsa") {
    try {
      const bits = createPrivateKey({ key: Buffer.from(der), format: "der", type: "pkcs8" }).asymmetricKeyDetails?.modulusLength;
      if (String(bits) !== alg.keySize) return `holds an RSA key of ${bits} bits, not alg.keySize ${alg.keySize}`;
    } catch {
      return "holds an unreadable RSA key";
    }
  }
  return null;
}
