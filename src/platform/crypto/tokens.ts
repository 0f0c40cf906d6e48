// Random tokens and their at-rest hashes. Tokens are never stored; only SHA-256 hex of the whole token.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const randomBase64Url = (bytes: number) => randomBytes(bytes).toString("base64url");
export const randomHex = (bytes: number) => randomBytes(bytes).toString("hex");
export const sha256Hex = (value: string | Uint8Array) => createHash("sha256").update(value).digest("hex");
export const hmacHex = (key: Uint8Array, value: string) => createHmac("sha256", key).update(value).digest("hex");

export function constantTimeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}
