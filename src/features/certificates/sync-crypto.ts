// A WebCrypto object for pkijs inside a work thread (tasks.ts): the subset pkijs uses for PBES2 (PBKDF2, AES-CBC,
// AES-GCM), PKCS#12 MACs (HMAC) and digests, computed synchronously with node:crypto on the calling thread. Bun's
// WebCrypto runs these operations on a shared native thread pool instead — the one argon2 sign-ins also use — so a
// work task would neither hold its thread for the cost (the user's share) nor stay out of others' way.
// Keys are raw secret bytes only (pkijs imports passwords and derives AES/HMAC keys; no public-key operation here).
import { createCipheriv, createDecipheriv, createHash, createHmac, getRandomValues, pbkdf2Sync, timingSafeEqual } from "node:crypto";

type BufferSource = ArrayBuffer | ArrayBufferView;
type Alg = {
  name: string;
  hash?: string | { name: string };
  length?: number;
  iv?: BufferSource;
  salt?: BufferSource;
  iterations?: number;
  tagLength?: number;
};

class RawKey {
  readonly type = "secret";
  constructor(
    readonly algorithm: Alg,
    readonly raw: Buffer,
    readonly extractable: boolean,
    readonly usages: string[],
  ) {}
}

const alg = (a: string | Alg): Alg => (typeof a === "string" ? { name: a } : a);
/** "SHA-256" / {name: "SHA-256"} → "sha256". */
const hashName = (h: string | { name: string } | undefined): string => {
  const name = (typeof h === "string" ? h : (h?.name ?? "SHA-1")).toLowerCase().replace("-", "");
  if (!["sha1", "sha256", "sha384", "sha512"].includes(name)) throw new Error(`unsupported hash ${name}`);
  return name;
};
const bytes = (b: BufferSource): Buffer =>
  ArrayBuffer.isView(b) ? Buffer.from(b.buffer, b.byteOffset, b.byteLength) : Buffer.from(b as ArrayBuffer);
const out = (b: Buffer): ArrayBuffer => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
const aesName = (a: Alg, key: RawKey) => {
  const mode = a.name.toUpperCase();
  if (mode !== "AES-CBC" && mode !== "AES-GCM") throw new Error(`unsupported cipher ${a.name}`);
  return `aes-${key.raw.byteLength * 8}-${mode === "AES-CBC" ? "cbc" : "gcm"}`;
};

function deriveBits(params: Alg, key: RawKey, lengthBits: number): Buffer {
  if (alg(params).name.toUpperCase() !== "PBKDF2") throw new Error(`unsupported derivation ${params.name}`);
  return pbkdf2Sync(key.raw, bytes(params.salt!), params.iterations!, lengthBits / 8, hashName(params.hash));
}

const subtle = {
  async importKey(format: string, keyData: BufferSource, algorithm: string | Alg, extractable: boolean, usages: string[]) {
    if (format !== "raw") throw new Error(`unsupported key format ${format}`);
    return new RawKey(alg(algorithm), Buffer.from(bytes(keyData)), extractable, usages);
  },
  async deriveBits(params: Alg, key: RawKey, length: number) {
    return out(deriveBits(params, key, length));
  },
  async deriveKey(params: Alg, key: RawKey, derived: string | Alg, extractable: boolean, usages: string[]) {
    const d = alg(derived);
    const length = d.length ?? (d.name.toUpperCase() === "HMAC" ? { sha1: 512, sha256: 512, sha384: 1024, sha512: 1024 }[hashName(d.hash)]! : 0);
    if (!length) throw new Error(`unsupported derived key ${d.name}`);
    return new RawKey(d, deriveBits(params, key, length), extractable, usages);
  },
  async encrypt(params: Alg, key: RawKey, data: BufferSource) {
    const a = alg(params);
    const cipher = createCipheriv(aesName(a, key), key.raw, bytes(a.iv!)) as ReturnType<typeof createCipheriv> & { getAuthTag?: () => Buffer };
    const body = Buffer.concat([cipher.update(bytes(data)), cipher.final()]);
    return out(a.name.toUpperCase() === "AES-GCM" ? Buffer.concat([body, cipher.getAuthTag!()]) : body);
  },
  async decrypt(params: Alg, key: RawKey, data: BufferSource) {
    const a = alg(params);
    let input = bytes(data);
    const decipher = createDecipheriv(aesName(a, key), key.raw, bytes(a.iv!)) as ReturnType<typeof createDecipheriv> & {
      setAuthTag?: (t: Buffer) => void;
    };
    if (a.name.toUpperCase() === "AES-GCM") {
      const tag = (a.tagLength ?? 128) / 8;
      decipher.setAuthTag!(input.subarray(input.byteLength - tag));
      input = input.subarray(0, input.byteLength - tag);
    }
    return out(Buffer.concat([decipher.update(input), decipher.final()]));
  },
  async sign(params: string | Alg, key: RawKey, data: BufferSource) {
    if (alg(params).name.toUpperCase() !== "HMAC") throw new Error(`unsupported signature ${alg(params).name}`);
    return out(createHmac(hashName(key.algorithm.hash), key.raw).update(bytes(data)).digest());
  },
  async verify(params: string | Alg, key: RawKey, signature: BufferSource, data: BufferSource) {
    const expected = Buffer.from(await subtle.sign(params, key, data));
    const given = bytes(signature);
    return given.byteLength === expected.byteLength && timingSafeEqual(given, expected);
  },
  async digest(algorithm: string | Alg, data: BufferSource) {
    return out(
      createHash(hashName(alg(algorithm).name))
        .update(bytes(data))
        .digest(),
    );
  },
};

/** What pkijs.CryptoEngine takes as `crypto`. */
export const syncCrypto = {
  subtle,
  getRandomValues: <T extends ArrayBufferView>(array: T): T => getRandomValues(array as any) as T,
};
