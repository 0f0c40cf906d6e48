// Standard base64 (RFC 4648 §4) read strictly: Buffer.from(text, "base64") skips characters it does not know and
// accepts missing padding, so hostile files (features/user-data) are checked with this instead.
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The bytes of canonical padded base64 text, or undefined when `text` is anything else. */
export function strictBase64(text: unknown): Uint8Array | undefined {
  if (typeof text !== "string" || !BASE64_RE.test(text)) return undefined;
  return new Uint8Array(Buffer.from(text, "base64"));
}

export const toBase64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
