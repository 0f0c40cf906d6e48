// Key and signature algorithms (supplement §12.1, §12.3): request parsing, compatibility rules and OIDs. The lists
// and the signature ↔ key table are shared-rules.ts's (the web offers the same), the types contract.ts's.
import { invalid } from "../../platform/core/errors";
import type { KeyAlgorithm, KeyType, SignatureAlgorithm } from "./contract";
import { CURVES, DSA_SIZES, KEY_TYPES, RSA_SIZES, SIGNATURE_ALGORITHMS, SIGNATURE_KEY_TYPES } from "./shared-rules";

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function oneOf<T extends string>(raw: unknown, values: readonly T[], field: string): T {
  if (typeof raw !== "string") throw invalid(`${field}: must be a string, one of ${values.join(", ")}`);
  if (!(values as readonly string[]).includes(raw)) throw invalid(`${field}: must be one of ${values.join(", ")}`);
  return raw as T;
}

/** Parses `alg` / `attributes.keyAlgorithm` into its canonical form (unknown members dropped). */
export function parseKeyAlg(raw: unknown, field: string): KeyAlgorithm {
  if (!isObject(raw)) throw invalid(`${field}: must be an object with keyType`);
  const keyType = oneOf(raw.keyType, KEY_TYPES, `${field}.keyType`);
  switch (keyType) {
    case "rsa":
      return { keyType, keySize: oneOf(raw.keySize, RSA_SIZES, `${field}.keySize`) };
    case "dsa":
      return { keyType, keySize: oneOf(raw.keySize, DSA_SIZES, `${field}.keySize`) };
    case "ecdsa":
      return { keyType, curve: oneOf(raw.curve, CURVES, `${field}.curve`) };
    case "ed25519":
      return { keyType };
  }
}

export function parseSignatureAlgorithm(raw: unknown, field: string): SignatureAlgorithm {
  return oneOf(raw, SIGNATURE_ALGORITHMS, field);
}

/** A signature algorithm only signs with the key types SIGNATURE_KEY_TYPES lists for it (§12.3). */
export function checkCompatible(sig: SignatureAlgorithm, keyType: KeyType, field: string) {
  const allowed: readonly KeyType[] = SIGNATURE_KEY_TYPES[sig];
  if (!allowed.includes(keyType)) {
    throw invalid(`${field}: ${sig} cannot be used with ${keyType} keys (allowed: ${allowed.join(", ")})`);
  }
}

export const describeAlg = (alg: KeyAlgorithm) =>
  alg.keyType === "ecdsa" ? `ECDSA ${alg.curve}` : alg.keyType === "ed25519" ? "Ed25519" : `${alg.keyType.toUpperCase()} ${alg.keySize}`;

/** Signature AlgorithmIdentifier OIDs; RSA ones carry NULL parameters, the others none (RFC 3279, 5758, 8410). */
export function signatureOid(sig: SignatureAlgorithm, keyType: KeyType): { oid: string; nullParams: boolean } {
  if (keyType === "rsa") {
    const oid = {
      md5: "1.2.840.113549.1.1.4",
      sha1: "1.2.840.113549.1.1.5",
      sha256: "1.2.840.113549.1.1.11",
      sha384: "1.2.840.113549.1.1.12",
      sha512: "1.2.840.113549.1.1.13",
    }[sig as "md5"];
    return { oid, nullParams: true };
  }
  if (keyType === "ecdsa") {
    const oid = { sha1: "1.2.840.10045.4.1", sha256: "1.2.840.10045.4.3.2", sha384: "1.2.840.10045.4.3.3", sha512: "1.2.840.10045.4.3.4" }[
      sig as "sha1"
    ];
    return { oid, nullParams: false };
  }
  if (keyType === "dsa") {
    const oid = { sha1: "1.2.840.10040.4.3", sha256: "2.16.840.1.101.3.4.3.2" }[sig as "sha1"];
    return { oid, nullParams: false };
  }
  return { oid: "1.3.101.112", nullParams: false };
}
