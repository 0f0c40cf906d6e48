// Request bodies: size limits (413 before anything else), content-type rules and JSON decoding
// (supplement §1). Elysia's parse stage only reads the bytes into a RawBody; decoding happens after the
// credentials check so the documented check order (413 → 401/403 → 400) holds.
import { ApiError, invalid, tooLarge } from "./errors";

export class RawBody {
  constructor(
    readonly text: string,
    readonly contentType: string,
  ) {}
}

export interface BodyLimits {
  maxBodyBytes: number;
  maxImportBytes: number;
}

/** The request's path. Bun gives a bare `/path` as `request.url` when the Host header is invalid, so no `new URL`. */
export function requestPath(request: Request): string {
  const url = request.url;
  const start = url.startsWith("/") ? 0 : url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const end = url.slice(start).search(/[?#]/);
  return end < 0 ? url.slice(start) : url.slice(start, start + end);
}

export const bodyLimitFor = (path: string, limits: BodyLimits) =>
  path.startsWith("/api/user/data/") || path === "/api/user/data" ? limits.maxImportBytes : limits.maxBodyBytes;

/** 413 from the Content-Length header alone, before routing work. */
export function checkContentLength(request: Request, limit: number) {
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw tooLarge(limit);
}

/**
 * Reads the body's bytes, counting them as they arrive so a lying or absent Content-Length cannot exceed the limit:
 * past `limit` the stream is cancelled and `onTooLarge()` is thrown (default: 413 PAYLOAD_TOO_LARGE).
 */
export async function readBodyBytes(request: Request, limit: number, onTooLarge: () => Error = () => tooLarge(limit)): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw onTooLarge();
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.byteLength;
  }
  return out;
}

/** Reads the body as UTF-8 text (lenient), within `limit` bytes (readBodyBytes). */
export async function readBodyText(request: Request, limit: number): Promise<string> {
  return new TextDecoder("utf-8", { fatal: false }).decode(await readBodyBytes(request, limit));
}

/** Deepest nesting of arrays and objects a JSON body may have (supplement §2: bad input is never a 500). */
export const MAX_JSON_DEPTH = 64;

/**
 * True when the JSON text nests arrays/objects deeper than `limit`. A linear scan without recursion: brackets
 * inside strings do not count (strings are skipped with indexOf). Runs before JSON.parse, so a hostile body
 * never reaches code that recurses over the value (Elysia's validation overflows the stack on thousands of levels).
 */
export function jsonTooDeep(text: string, limit = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Skip to the closing quote: one preceded by an even number of backslashes.
      for (;;) {
        const q = text.indexOf('"', i + 1);
        if (q < 0) return false; // unterminated string: JSON.parse reports it
        let back = 0;
        while (text.charCodeAt(q - 1 - back) === 0x5c /* \ */) back++;
        i = q;
        if (back % 2 === 0) break;
      }
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > limit) return true;
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) {
      depth--;
    }
  }
  return false;
}

const mediaType = (raw: RawBody) => raw.contentType.split(";")[0]!.trim().toLowerCase();

/** A multipart/form-data body (RFC 8058 allows it for one-click unsubscribe POSTs), for routes that accept forms. */
export const isMultipart = (raw: RawBody) => mediaType(raw) === "multipart/form-data" && raw.text.trim() !== "";

/** The text fields of a multipart/form-data body (file parts are ignored); a malformed one → 400. */
export async function decodeMultipart(raw: RawBody): Promise<Record<string, string>> {
  let form: Awaited<ReturnType<Response["formData"]>>;
  try {
    form = await new Response(raw.text, { headers: { "content-type": raw.contentType } }).formData();
  } catch {
    throw invalid("body: malformed multipart/form-data");
  }
  const out: Record<string, string> = {};
  form.forEach((value, name) => {
    if (typeof value === "string") out[name] = value;
  });
  return out;
}

const isJsonType = (ct: string) => ct === "" || ct === "application/json" || /^application\/[a-z0-9.+-]*\+json$/.test(ct);

/**
 * Decodes a RawBody: empty → `{}` (routes whose fields are all optional accept no body); JSON (or no
 * content type) → parsed value (at most MAX_JSON_DEPTH levels deep); a form body only where the route accepts it;
 * anything else → 400.
 */
export function decodeBody(raw: RawBody, acceptForm = false): unknown {
  const ct = mediaType(raw);
  if (raw.text.trim() === "") return {};
  if (acceptForm && ct === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(raw.text));
  if (!isJsonType(ct)) throw invalid(`Content-Type must be application/json, got ${ct}`, "BAD_CONTENT_TYPE");
  if (jsonTooDeep(raw.text)) throw invalid(`body: arrays and objects may be nested at most ${MAX_JSON_DEPTH} levels deep`);
  try {
    return JSON.parse(raw.text);
  } catch (err) {
    throw new ApiError(400, "INVALID_JSON", `Request body is not valid JSON: ${(err as Error).message}`);
  }
}
