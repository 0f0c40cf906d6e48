// Key and signature algorithms as the API accepts them (supplement §12.1, §12.3): the choices the forms offer (the
// API's lists and signature/key table, generated into rules.gen), with labels, so a form can offer only the
// combinations the API accepts.
import { certificates as certRules } from "../../api/rules.gen";
import type { KeyAlgorithm, KeyType, SignatureAlgorithm } from "../../api/types";

type Of<T extends KeyType> = Extract<KeyAlgorithm, { keyType: T }>;
type RsaSize = Of<"rsa">["keySize"];
type DsaSize = Of<"dsa">["keySize"];
type Curve = Of<"ecdsa">["curve"];

const KEY_TYPE_LABELS: Record<KeyType, string> = { rsa: "RSA", ecdsa: "ECDSA", ed25519: "Ed25519", dsa: "DSA" };
/** The API's key types, in the order a form offers them (DSA last: it needs openssl on the server). */
const KEY_TYPE_ORDER: KeyType[] = ["rsa", "ecdsa", "ed25519", "dsa"];
export const KEY_TYPES: { value: KeyType; label: string }[] = KEY_TYPE_ORDER.filter((k) =>
  (certRules.KEY_TYPES as readonly string[]).includes(k),
).map((value) => ({
  value,
  label: KEY_TYPE_LABELS[value],
}));

export const RSA_SIZES: readonly RsaSize[] = certRules.RSA_SIZES;
export const DSA_SIZES: readonly DsaSize[] = certRules.DSA_SIZES;
const CURVE_LABELS: Record<Curve, string> = { secp256r1: "P-256 (secp256r1)", secp384r1: "P-384 (secp384r1)", secp521r1: "P-521 (secp521r1)" };
export const CURVES: { value: Curve; label: string }[] = certRules.CURVES.map((value) => ({ value, label: CURVE_LABELS[value] }));

/** The size or curve a key type offers, with its default. */
export function keyParams(
  keyType: string,
): { field: "keySize" | "curve"; label: string; options: { value: string; label: string }[]; fallback: string } | null {
  if (keyType === "rsa")
    return {
      field: "keySize",
      label: "Key size",
      options: RSA_SIZES.map((s) => ({ value: s, label: `${s} bits${s === "1024" ? " (weak)" : s === "8192" ? " (slow)" : ""}` })),
      fallback: "2048",
    };
  if (keyType === "dsa")
    return { field: "keySize", label: "Key size", options: DSA_SIZES.map((s) => ({ value: s, label: `${s} bits` })), fallback: "2048" };
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
      return {
        keyType,
        curve: pick(
          CURVES.map((c) => c.value),
          param,
          "secp256r1",
        ),
      };
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

/** Labels, strongest first; which keys each signs with is the API's table (SIGNATURE_KEY_TYPES). */
const SIGNATURE_LABELS: [SignatureAlgorithm, string][] = [
  ["sha256", "SHA-256"],
  ["sha384", "SHA-384"],
  ["sha512", "SHA-512"],
  ["sha1", "SHA-1 (weak, legacy only)"],
  ["md5", "MD5 (broken, legacy only)"],
  ["ed25519", "Ed25519"],
];
const SIGNATURES: { value: SignatureAlgorithm; label: string; keys: readonly KeyType[] }[] = SIGNATURE_LABELS.map(([value, label]) => ({
  value,
  label,
  keys: certRules.SIGNATURE_KEY_TYPES[value],
}));

/** The signature algorithms the API accepts with `keyType` (§12.3), strongest first. */
export const signaturesFor = (keyType: string) =>
  SIGNATURES.filter((s) => s.keys.includes(keyType as KeyType)).map(({ value, label }) => ({ value, label }));

/** `current` when it fits `keyType`, else that key type's default (sha256, or ed25519 for Ed25519 keys). */
export const fittingSignature = (keyType: string, current: string): SignatureAlgorithm =>
  signaturesFor(keyType).find((s) => s.value === current)?.value ?? (keyType === "ed25519" ? "ed25519" : "sha256");

export const signatureLabel = (sig: string) => SIGNATURES.find((s) => s.value === sig)?.label.split(" (")[0] ?? sig;
