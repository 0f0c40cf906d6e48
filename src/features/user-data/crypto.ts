// Secret values in export files, exactly as supplement §19.2 defines them so another implementation can read them:
// key = argon2id (version 0x13) of the UTF-8 passphrase with the file's 16-byte salt, m = 19,456 KiB, t = 2, p = 1,
// 32 bytes; each value = base64(nonce 12 ‖ AES-256-GCM ciphertext ‖ tag 16), no additional data. node:crypto's
// argon2 (RFC 9106; checked against the RFC's test vector in user-data.crypto.test.ts) runs on the work pool
// (tasks.ts: `deriveKeySync` on a work thread, under the user's share), never on the event loop nor on the native
// thread pool that sign-ins hash passwords on.
// A file's parameters are accepted up to twice the documented ones (m ≤ 38,912 KiB, t ≤ 4) with p = 1 (§28): more
// would let a file ask for gigabytes of memory or seconds of CPU before its passphrase is even checked.
import { argon2, argon2Sync, createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { strictBase64, toBase64 } from "../../platform/crypto/base64";

export interface KdfParams {
  /** Memory in KiB. */
  m: number;
  /** Passes. */
  t: number;
  /** Parallelism. */
  p: number;
}

/** The `secretsEncryption` member of an export file. */
export interface SecretsEncryption {
  alg: "aes-256-gcm";
  kdf: "argon2id";
  kdfParams: KdfParams;
  salt: string;
}

export const KDF_PARAMS: KdfParams = { m: 19_456, t: 2, p: 1 };
const SALT_BYTES = 16;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** §28: a file's parameters up to twice the documented ones, one lane. */
export const MAX_KDF_PARAMS: KdfParams = { m: 2 * KDF_PARAMS.m, t: 2 * KDF_PARAMS.t, p: 1 };

export function newSecretsEncryption(): { header: SecretsEncryption; salt: Uint8Array } {
  const salt = new Uint8Array(randomBytes(SALT_BYTES));
  return { header: { alg: "aes-256-gcm", kdf: "argon2id", kdfParams: { ...KDF_PARAMS }, salt: toBase64(salt) }, salt };
}

const isInt = (v: unknown, min: number, max: number): v is number => typeof v === "number" && Number.isInteger(v) && v >= min && v <= max;

/** The salt and parameters of a file's `secretsEncryption`, or the reason it cannot be used. */
export function readSecretsEncryption(raw: unknown): { salt: Uint8Array; params: KdfParams } | string {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return "secretsEncryption: must be an object";
  const r = raw as Record<string, unknown>;
  if (r.alg !== "aes-256-gcm") return 'secretsEncryption.alg: must be "aes-256-gcm"';
  if (r.kdf !== "argon2id") return 'secretsEncryption.kdf: must be "argon2id"';
  const k = r.kdfParams as Record<string, unknown> | undefined;
  if (typeof k !== "object" || k === null || Array.isArray(k)) return "secretsEncryption.kdfParams: must be an object {m, t, p}";
  const max = MAX_KDF_PARAMS;
  if (!isInt(k.p, 1, max.p)) return `secretsEncryption.kdfParams.p: must be ${max.p} (at most twice the documented m and t, one lane)`;
  if (!isInt(k.m, 8 * k.p, max.m))
    return `secretsEncryption.kdfParams.m: must be an integer from ${8 * k.p} to ${max.m} (KiB; at most twice the documented ${KDF_PARAMS.m})`;
  if (!isInt(k.t, 1, max.t))
    return `secretsEncryption.kdfParams.t: must be an integer from 1 to ${max.t} (at most twice the documented ${KDF_PARAMS.t})`;
  const salt = strictBase64(r.salt);
  if (!salt || salt.byteLength !== SALT_BYTES) return `secretsEncryption.salt: must be the base64 of ${SALT_BYTES} bytes`;
  return { salt, params: { m: k.m, t: k.t, p: k.p } };
}

/** The 32-byte AES key for a passphrase, computed on the calling thread (a work thread: tasks.ts). */
export function deriveKeySync(passphrase: string, salt: Uint8Array, params: KdfParams): Uint8Array {
  return new Uint8Array(
    argon2Sync("argon2id", {
      message: Buffer.from(passphrase, "utf8"),
      nonce: salt,
      parallelism: params.p,
      tagLength: 32,
      memory: params.m,
      passes: params.t,
    }),
  );
}

/** The 32-byte AES key for a passphrase (argon2id on the native thread pool; for callers without a work pool). */
export function deriveKey(passphrase: string, salt: Uint8Array, params: KdfParams): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    argon2(
      "argon2id",
      { message: Buffer.from(passphrase, "utf8"), nonce: salt, parallelism: params.p, tagLength: 32, memory: params.m, passes: params.t },
      (err, key) => (err ? reject(err) : resolve(new Uint8Array(key))),
    );
  });
}

/** base64(nonce ‖ ciphertext ‖ tag) of a value. */
export function sealValue(key: Uint8Array, value: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
  return Buffer.concat([nonce, body, cipher.getAuthTag()]).toString("base64");
}

/** Whether an `encryptedValue` is well-formed base64 of at least a nonce and a tag (checked without a key). */
export function sealedBytes(text: unknown): Uint8Array | undefined {
  const bytes = strictBase64(text);
  return bytes && bytes.byteLength >= NONCE_BYTES + TAG_BYTES ? bytes : undefined;
}

/** The value sealed in `bytes`, or undefined when the key does not open it (wrong passphrase or altered value). */
export function openValue(key: Uint8Array, bytes: Uint8Array): string | undefined {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, NONCE_BYTES));
    decipher.setAuthTag(bytes.subarray(bytes.byteLength - TAG_BYTES));
    const plain = Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.byteLength - TAG_BYTES)), decipher.final()]);
    return new TextDecoder("utf-8", { fatal: true }).decode(plain);
  } catch {
    return undefined;
  }
}
