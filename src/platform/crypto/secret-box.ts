// AES-256-GCM with a random 12-byte nonce per value. Layout: nonce(12) || ciphertext || tag(16).
// Additional data binds a ciphertext to its row (e.g. the secret id) so values cannot be swapped.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from "node:crypto";

export class SecretBox {
  constructor(private readonly key: Uint8Array) {
    if (key.length !== 32) throw new Error("secret box key must be 32 bytes");
  }

  seal(plaintext: string | Uint8Array, additionalData?: string): Uint8Array {
    const nonce = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce);
    if (additionalData !== undefined) cipher.setAAD(Buffer.from(additionalData));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([nonce, body, cipher.getAuthTag()]);
  }

  open(sealed: Uint8Array, additionalData?: string): Buffer {
    const buf = Buffer.from(sealed);
    if (buf.length < 28) throw new Error("sealed value too short");
    const decipher = createDecipheriv("aes-256-gcm", this.key, buf.subarray(0, 12));
    if (additionalData !== undefined) decipher.setAAD(Buffer.from(additionalData));
    decipher.setAuthTag(buf.subarray(buf.length - 16));
    return Buffer.concat([decipher.update(buf.subarray(12, buf.length - 16)), decipher.final()]);
  }

  openString(sealed: Uint8Array, additionalData?: string): string {
    return this.open(sealed, additionalData).toString("utf8");
  }

  /** A key for another purpose (e.g. verification-code HMACs), derived so it never equals the master key. */
  derive(label: string): Uint8Array {
    return createHmac("sha256", this.key).update(`secbox:${label}`).digest();
  }
}
