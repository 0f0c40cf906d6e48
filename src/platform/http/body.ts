// Request bodies: size limits (413 before anything else), content-type rules, JSON decoding (supplement §1) and the
// one check that no text of an API body holds U+0000 (§28.1). Elysia's parse stage only reads the bytes into a
// RawBody; decoding happens after the credentials check so the documented check order (413 → 401/403 → 400) holds.
// A body is text only when a route decodes it: a route that hands its body to a work thread (the import's 10 MiB)
// moves the bytes there, and the event loop never decodes them.
import { ApiError, invalid, tooLarge } from "../core/errors";

export class RawBody {
  private decoded: string | undefined;

  constructor(
    /** The bytes as received (or a text, for callers that have one). */
    private readonly source: Uint8Array | string,
    readonly contentType: string,
    /** The request's path (requestPath): which members the NUL check leaves to the route (NUL_LEFT_TO_ROUTE). */
    readonly path = "",
  ) {}

  /** The body as UTF-8 text (lenient), decoded on first use. */
  get text(): string {
    if (this.decoded === undefined)
      this.decoded = typeof this.source === "string" ? this.source : new TextDecoder("utf-8", { fatal: false }).decode(this.source);
    return this.decoded;
  }

  /** The body's bytes as received. A route may move them to a work thread (`transfer`); `text` is then unusable. */
  get bytes(): Uint8Array {
    return typeof this.source === "string" ? new TextEncoder().encode(this.source) : this.source;
  }
}

/** A body with a declared Content-Length that is read only when its route asks (`read()`): after the credentials
 *  and the route's own early refusals (one import per user at a time), so a refused 10 MiB upload costs the event
 *  loop nothing (Bun drains an unread body itself, without handing it to JavaScript). */
export class PendingBody {
  private reading: Promise<RawBody> | undefined;

  constructor(
    private readonly request: Request,
    private readonly limit: number,
    readonly contentType: string,
    readonly path: string,
  ) {}

  read(): Promise<RawBody> {
    this.reading ??= readBodyBytes(this.request, this.limit).then((bytes) => new RawBody(bytes, this.contentType, this.path));
    return this.reading;
  }

  /** Reads and drops what is still unread (an answer given without the body: 400, 401, 429). Left unread, the client
   *  could get its connection reset while still sending instead of the answer (seen in the fuzz run: ECONNRESET). */
  async drain(): Promise<void> {
    if (this.reading) return;
    this.reading = Promise.resolve(new RawBody(new Uint8Array(0), this.contentType, this.path));
    try {
      const reader = this.request.body?.getReader();
      if (!reader) return;
      for (let r = await reader.read(); !r.done; r = await reader.read());
    } catch {
      // the client went away: nothing to answer
    }
  }
}

/** The PendingBody of a request whose body the http plugin deferred, for the error hook to drain. */
export const pendingBodies = new WeakMap<Request, PendingBody>();

export interface BodyLimits {
  maxBodyBytes: number;
  maxImportBytes: number;
  /** Paths whose body, when its length is declared, is a PendingBody (the 413 check on Content-Length keeps its
   *  place; a length-less body is read at once, so a too large one is still a 413 before the credentials). */
  deferred?: (path: string) => boolean;
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
 * Reads the body's bytes within `limit` (beyond: `onTooLarge()` is thrown, default 413 PAYLOAD_TOO_LARGE): a declared
 * Content-Length is checked up front; the bytes are counted as they arrive (an absent or lying length cannot exceed
 * the limit) and the stream is cancelled past it. Read chunk by chunk, each chunk a short turn of the event loop:
 * `request.arrayBuffer()` costs the loop 2–3 times the CPU for a large body, in one piece (measured with Bun 1.4.5,
 * 9.5 MiB: 160 ms against 62 ms, on a loaded machine).
 */
export async function readBodyBytes(request: Request, limit: number, onTooLarge: () => Error = () => tooLarge(limit)): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array(0);
  const declared = request.headers.get("content-length");
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > limit) throw onTooLarge();
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

/**
 * U+0000 in stored text (supplement §28.1): every text an API body carries may end up stored, and PostgreSQL can
 * hold it neither in a text column (22021) nor in a JSON document its JSON functions read (a `\u0000` escape makes
 * the whole document unreadable: search answered 500). So one check over every decoded body, before any route sees
 * it, refuses a NUL in any string, member names included, with 400 INVALID_INPUT naming the first one's path
 * (`target.requests[0].body: must not contain U+0000`); both backends answer alike. Responder hits are not API
 * routes and never get here: they accept any bytes.
 */
export function nulProblem(value: unknown, skipTop: readonly string[] = []): string | undefined {
  const walk = (v: unknown, path: string): string | undefined => {
    if (typeof v === "string") return v.includes("\u0000") ? `${path || "body"}: must not contain U+0000` : undefined;
    if (typeof v !== "object" || v === null) return undefined;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const found = walk(v[i], `${path}[${i}]`);
        if (found) return found;
      }
      return undefined;
    }
    for (const [key, item] of Object.entries(v)) {
      if (key.includes("\u0000")) return `${path || "body"}: member names must not contain U+0000`;
      if (path === "" && skipTop.includes(key)) continue;
      const found = walk(item, path === "" ? pathKey(key) : `${path}.${pathKey(key)}`);
      if (found) return found;
    }
    return undefined;
  };
  return walk(value, "");
}

/** A member name as a path segment, shortened: it is the caller's text. */
const pathKey = (key: string) => (key.length > 64 ? `${key.slice(0, 64)}…` : key);

/**
 * Top-level members whose text the NUL check leaves to the route, by path: the import file (its reader applies the
 * same rule and answers with the import's own 400, or the preview's `valid: false` warning, §19.3) and the body of
 * a responder test request (bytes handed to the responder, which accepts any, as a hit does).
 */
const NUL_LEFT_TO_ROUTE: [RegExp, string[]][] = [
  [/^\/api\/user\/data\/_import(?:_preview)?\/?$/, ["data"]],
  [/^\/api\/webhooks\/responders\/[^/]+\/_test\/?$/, ["body"]],
];

/** 400 INVALID_INPUT when a decoded body holds U+0000 outside the members its route checks itself. */
function refuseNul<T>(value: T, raw: RawBody): T {
  const skip = NUL_LEFT_TO_ROUTE.find(([re]) => re.test(raw.path))?.[1];
  const problem = nulProblem(value, skip);
  if (problem) throw invalid(problem);
  return value;
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
  return refuseNul(out, raw);
}

const isJsonType = (ct: string) => ct === "" || ct === "application/json" || /^application\/[a-z0-9.+-]*\+json$/.test(ct);

/**
 * Decodes a RawBody: empty → `{}` (routes whose fields are all optional accept no body); JSON (or no
 * content type) → parsed value (at most MAX_JSON_DEPTH levels deep); a form body only where the route accepts it;
 * anything else → 400. No text of the result holds U+0000 (refuseNul).
 */
export function decodeBody(raw: RawBody, acceptForm = false): unknown {
  const ct = mediaType(raw);
  if (raw.text.trim() === "") return {};
  if (acceptForm && ct === "application/x-www-form-urlencoded") return refuseNul(Object.fromEntries(new URLSearchParams(raw.text)), raw);
  if (!isJsonType(ct)) throw invalid(`Content-Type must be application/json, got ${ct}`, "BAD_CONTENT_TYPE");
  if (jsonTooDeep(raw.text)) throw invalid(`body: arrays and objects may be nested at most ${MAX_JSON_DEPTH} levels deep`);
  let value: unknown;
  try {
    value = JSON.parse(raw.text);
  } catch (err) {
    throw new ApiError(400, "INVALID_JSON", `Request body is not valid JSON: ${(err as Error).message}`);
  }
  // JSON text can only carry U+0000 as the escape `\u0000` (a raw one is invalid JSON): without it, nothing to walk.
  return raw.text.includes("\\u0000") ? refuseNul(value, raw) : value;
}
