// Script result bodies → bytes (supplement §11.5 step 3, used by the API extractor and configurator results):
// Uint8Array / ArrayBuffer / typed array → bytes; an array whose first element is a number → bytes (each & 255);
// empty array → empty; string → UTF-8; other arrays, objects, numbers, booleans → JSON.stringify as UTF-8.

/** Script result body limit (supplement §22). */
export const MAX_RESULT_BODY_BYTES = 10 * 1024 * 1024;

const encoder = new TextEncoder();

export class BodyConversionError extends Error {}

export function toBodyBytes(v: unknown, max = MAX_RESULT_BODY_BYTES): Uint8Array {
  let out: Uint8Array;
  if (v instanceof Uint8Array) out = v;
  else if (v instanceof ArrayBuffer) out = new Uint8Array(v);
  else if (ArrayBuffer.isView(v)) out = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  else if (Array.isArray(v)) {
    if (v.length === 0) out = new Uint8Array(0);
    else if (typeof v[0] === "number") out = Uint8Array.from(v, (x) => Number(x) & 255);
    else out = json(v);
  } else if (typeof v === "string") out = encoder.encode(v);
  else if (typeof v === "number" || typeof v === "boolean" || (typeof v === "object" && v !== null)) out = json(v);
  else throw new BodyConversionError(`body: cannot convert a value of type ${v === null ? "null" : typeof v}`);
  if (out.byteLength > max) throw new BodyConversionError(`body: exceeds ${max} bytes`);
  return out;
}

function json(v: unknown): Uint8Array {
  let text: string | undefined;
  try {
    text = JSON.stringify(v);
  } catch (err) {
    throw new BodyConversionError(`body: cannot be serialized to JSON (${(err as Error).message})`);
  }
  if (text === undefined) throw new BodyConversionError("body: cannot be serialized to JSON");
  return encoder.encode(text);
}
