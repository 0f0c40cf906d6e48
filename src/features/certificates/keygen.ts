// Key pairs and signatures. Generation never blocks the event loop: RSA, ECDSA and Ed25519 use node:crypto's
// asynchronous generateKeyPair (runs in the threadpool), DSA runs in the spawned openssl program (§12.1).
import { createPrivateKey, generateKeyPair as nodeGenerateKeyPair, sign as nodeSign } from "node:crypto";
import type { KeyAlgorithm, SignatureAlgorithm } from "./contract";
import type { OpenSsl } from "./openssl";

export interface KeyPair {
  /** PrivateKeyInfo (PKCS#8) DER. */
  pkcs8: Uint8Array;
  /** SubjectPublicKeyInfo DER. */
  spki: Uint8Array;
}

const NODE_CURVES = { secp256r1: "P-256", secp384r1: "P-384", secp521r1: "P-521" } as const;
const DER = { publicKeyEncoding: { type: "spki", format: "der" }, privateKeyEncoding: { type: "pkcs8", format: "der" } } as const;

function nodeKeyPair(type: "rsa" | "ec" | "ed25519", options: Record<string, unknown>): Promise<KeyPair> {
  return new Promise((resolve, reject) => {
    (nodeGenerateKeyPair as any)(type, { ...options, ...DER }, (err: Error | null, publicKey: Buffer, privateKey: Buffer) => {
      if (err) reject(err);
      else resolve({ pkcs8: new Uint8Array(privateKey), spki: new Uint8Array(publicKey) });
    });
  });
}

/** At most this many slow generations (RSA ≥ 4096, DSA-2048) at once, so they cannot fill the threadpool. */
const HEAVY_LIMIT = 2;
let heavyRunning = 0;
const heavyWaiting: (() => void)[] = [];

async function heavy<T>(fn: () => Promise<T>): Promise<T> {
  if (heavyRunning >= HEAVY_LIMIT) await new Promise<void>((resolve) => heavyWaiting.push(resolve));
  else heavyRunning++;
  try {
    return await fn();
  } finally {
    const next = heavyWaiting.shift();
    if (next)
      next(); // the slot passes to the next waiter
    else heavyRunning--;
  }
}

const isHeavy = (alg: KeyAlgorithm) => (alg.keyType === "rsa" && Number(alg.keySize) >= 4096) || (alg.keyType === "dsa" && alg.keySize === "2048");

export function generateKeyPair(alg: KeyAlgorithm, openssl: OpenSsl): Promise<KeyPair> {
  return isHeavy(alg) ? heavy(() => generate(alg, openssl)) : generate(alg, openssl);
}

function generate(alg: KeyAlgorithm, openssl: OpenSsl): Promise<KeyPair> {
  switch (alg.keyType) {
    case "rsa":
      return nodeKeyPair("rsa", { modulusLength: Number(alg.keySize), publicExponent: 0x10001 });
    case "ecdsa":
      return nodeKeyPair("ec", { namedCurve: NODE_CURVES[alg.curve] });
    case "ed25519":
      return nodeKeyPair("ed25519", {});
    case "dsa":
      return openssl.generateDsa(Number(alg.keySize));
  }
}

/**
 * Signs `data` with the private key: RSA PKCS#1 v1.5 (md5 … sha512), ECDSA (DER signature) and Ed25519 through
 * node:crypto (asynchronous form), DSA through openssl.
 */
export function signData(alg: KeyAlgorithm, sig: SignatureAlgorithm, pkcs8: Uint8Array, data: Uint8Array, openssl: OpenSsl): Promise<Uint8Array> {
  if (alg.keyType === "dsa") return openssl.signDsa(sig as "sha1" | "sha256", pkcs8, data);
  const key = createPrivateKey({ key: Buffer.from(pkcs8), format: "der", type: "pkcs8" });
  const hash = alg.keyType === "ed25519" ? null : sig;
  return new Promise((resolve, reject) => {
    nodeSign(hash, data, key, (err: Error | null, signature: Buffer) => {
      if (err) reject(err);
      else resolve(new Uint8Array(signature));
    });
  });
}
