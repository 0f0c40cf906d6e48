// Secbox.crypto (supplement §11.9), computed in the sandbox worker: libsodium-compatible sealed boxes
// (X25519 + XSalsa20-Poly1305, nonce = blake2b(ephemeral_pk ‖ recipient_pk, 24)) through libsodium-wrappers, whose
// WASM is inlined in its JS (it embeds in the compiled binary), and SHA-256 through node:crypto.
import { createHash } from "node:crypto";
import sodium from "libsodium-wrappers";

const utf8 = new TextEncoder();
const B64URL = /^[A-Za-z0-9_-]+={0,2}$/;

let ready: Promise<void> | null = null;

/** Loads libsodium once per thread (~10 ms). */
export function sodiumReady(): Promise<void> {
  ready ??= sodium.ready;
  return ready;
}

export class CryptoInputError extends Error {}

/** base64url (padding optional) of 32 bytes, else CryptoInputError("Invalid recipient public key"). */
export function decodeRecipientKey(text: unknown): Uint8Array {
  if (typeof text !== "string" || !B64URL.test(text)) throw new CryptoInputError("Invalid recipient public key");
  const unpadded = text.replace(/=+$/, "");
  if (unpadded.length !== 43) throw new CryptoInputError("Invalid recipient public key");
  const key = new Uint8Array(Buffer.from(unpadded, "base64url"));
  if (key.length !== 32) throw new CryptoInputError("Invalid recipient public key");
  return key;
}

const toBytes = (data: string | Uint8Array) => (typeof data === "string" ? utf8.encode(data) : data);

/** Unpadded base64url of crypto_box_seal(plaintext, recipient). Requires sodiumReady() to have resolved. */
export function sealSync(recipientKey: string | null, plaintext: string | Uint8Array): string {
  const pk = decodeRecipientKey(recipientKey);
  let sealed: Uint8Array;
  try {
    sealed = sodium.crypto_box_seal(toBytes(plaintext), pk);
  } catch {
    // libsodium refuses low-order points (e.g. 32 zero bytes) as X25519 public keys.
    throw new CryptoInputError("Invalid recipient public key");
  }
  return Buffer.from(sealed).toString("base64url");
}

export async function seal(recipientKey: string | null, plaintext: string | Uint8Array): Promise<string> {
  await sodiumReady();
  return sealSync(recipientKey, plaintext);
}

/** Lower-case hex SHA-256; a string is hashed as its UTF-8 bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(toBytes(data)).digest("hex");
}
