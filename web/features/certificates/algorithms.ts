// Key and signature algorithms as the API accepts them (supplement §12.1, §12.3): the choices the forms offer, and
// the signature/key compatibility so a form can offer only the combinations the API accepts.
import type { KeyAlgorithm, KeyType, SignatureAlgorithm } from "../../api/types";

type Of<T extends KeyType> = Extract<KeyAlgorithm, { keyType: T }>;
type RsaSize = Of<"rsa">["keySize"];
type DsaSize = Of<"dsa">["keySize"];
type Curve = Of<"ecdsa">["curve"];

export const KEY_TYPES: { value: KeyType; label: string }[] = [
  { value: "rsa", label: "RSA" },
  { value: "ecdsa", label: "ECDSA" },
  { value: "ed25519", label: "Ed25519" },
  { value: "dsa", label: "DSA" },
];

export const RSA_SIZES: RsaSize[] = ["1024", "2048", "4096", "8192"];
export const DSA_SIZES: DsaSize[] = ["1024", "2048"];
export const CURVES: { value: Curve; label: string }[] = [
  { value: "secp256r1", label: "P-256 (secp256r1)" },
  { value: "secp384r1", label: "P-384 (secp384r1)" },
  { value: "secp521r1", label: "P-521 (secp521r1)" },
];

/** The size or curve a key type offers, with its default. */
export function keyParams(keyType: string): { field: "keySize" | "curve"; label: string; options: { value: string; label: string }[]; fallback: string } | null {
  if (keyType === "rsa") return { field: "keySize", label: "Key size", options: RSA_SIZES.map((s) => ({ value: s, label: `${s} bits${s === "1024" ? " (weak)" : s === "8192" ? " (slow)" : ""}` })), fallback: "2048" };
  if (keyType === "dsa") return { field: "keySize", label: "Key size", options: DSA_SIZES.map((s) => ({ value: s, label: `${s} bits` })), fallback: "2048" };
  if (keyType === "ecdsa") return { field: "curve", label: "Curve", options: CURVES, fallback: "secp256r1" };
  return null;
}

const pick = <T extends string>(options: readonly T[], value: string, fallback: T): T => (options.includes(value as T) ? (value as T) : fallback);

/** `{keyType, keySize|curve}` in the API's canonical shape (an unknown size or curve becomes the default). */
export function keyAlgorithm(keyType: string, param: string): KeyAlgorithm {
  switch (keyType) {
    case "rsa":
      return { keyType, keySize: pick(RSA_SIZES, param, "2048") };
    case "dsa":
      return { keyType, keySize: pick(DSA_SIZES, param, "2048") };
    case "ecdsa":
      return { keyType, curve: pick(CURVES.map((c) => c.value), param, "secp256r1") };
    default:
      return { keyType: "ed25519" };
  }
}

export const keyParam = (alg: KeyAlgorithm) => (alg.keyType === "ecdsa" ? alg.curve : alg.keyType === "ed25519" ? "" : alg.keySize);

export function describeKeyAlgorithm(alg: KeyAlgorithm): string {
  if (alg.keyType === "ecdsa") return `ECDSA ${CURVES.find((c) => c.value === alg.curve)?.label.split(" ")[0] ?? alg.curve}`;
  if (alg.keyType === "ed25519") return "Ed25519";
  return `${alg.keyType.toUpperCase()} ${alg.keySize}`;
}

const SIGNATURES: { value: SignatureAlgorithm; label: string; keys: KeyType[] }[] = [
  { value: "sha256", label: "SHA-256", keys: ["rsa", "dsa", "ecdsa"] },
  { value: "sha384", label: "SHA-384", keys: ["rsa", "ecdsa"] },
  { value: "sha512", label: "SHA-512", keys: ["rsa", "ecdsa"] },
  { value: "sha1", label: "SHA-1 (weak, legacy only)", keys: ["rsa", "dsa", "ecdsa"] },
  { value: "md5", label: "MD5 (broken, legacy only)", keys: ["rsa"] },
  { value: "ed25519", label: "Ed25519", keys: ["ed25519"] },
];

/** The signature algorithms the API accepts with `keyType` (§12.3), strongest first. */
export const signaturesFor = (keyType: string) => SIGNATURES.filter((s) => s.keys.includes(keyType as KeyType)).map(({ value, label }) => ({ value, label }));

/** `current` when it fits `keyType`, else that key type's default (sha256, or ed25519 for Ed25519 keys). */
export const fittingSignature = (keyType: string, current: string): SignatureAlgorithm =>
  signaturesFor(keyType).find((s) => s.value === current)?.value ?? (keyType === "ed25519" ? "ed25519" : "sha256");

export const signatureLabel = (sig: string) => SIGNATURES.find((s) => s.value === sig)?.label.split(" (")[0] ?? sig;
