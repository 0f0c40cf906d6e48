// Body conversion of a script result (supplement §11.5 step 3, §15.3 extractor `{body}`), pure. Values are what
// ScriptPool.run returns: JSON values and Uint8Array.

const utf8 = new TextEncoder();

/** Result bodies above this fail the script (§11.5, §22). */
export const MAX_RESULT_BODY_BYTES = 10 * 1024 * 1024;

export class ResultBodyError extends Error {}

/**
 * `null`/`undefined` → `undefined` (the caller's default); Uint8Array/ArrayBuffer/typed array → its bytes; an array
 * whose first element is a number → bytes (each `& 255`); an empty array → empty; a string → UTF-8; other arrays,
 * objects, numbers, booleans → `JSON.stringify` as UTF-8. Throws ResultBodyError past `maxBytes` or when the value
 * cannot be serialized.
 */
export function resultBodyBytes(value: unknown, maxBytes = MAX_RESULT_BODY_BYTES): Uint8Array | undefined {
  if (value === null || value === undefined) return undefined;
  let out: Uint8Array;
  if (value instanceof Uint8Array) out = value;
  else if (value instanceof ArrayBuffer) out = new Uint8Array(value);
  else if (ArrayBuffer.isView(value)) out = new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  else if (typeof value === "string") out = utf8.encode(value);
  else if (Array.isArray(value) && value.length === 0) out = new Uint8Array(0);
  else if (Array.isArray(value) && typeof value[0] === "number") {
    out = new Uint8Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = Number(value[i]) & 255;
  } else {
    let json: string | undefined;
    try {
      json = JSON.stringify(value);
    } catch (err) {
      throw new ResultBodyError(`body cannot be serialized: ${err instanceof Error ? err.message : String(err)}`);
    }
    out = utf8.encode(json ?? "");
  }
  if (out.byteLength > maxBytes) throw new ResultBodyError(`body exceeds ${maxBytes} bytes`);
  return out;
}
