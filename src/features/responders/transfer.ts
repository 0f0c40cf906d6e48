// Tracked records in export files (supplement §19.2: responders' `history` = §11.10 records, newest first): reading
// a record from an untrusted file back into row form, and picking the records an import restores. Pure; the
// service's import methods write them (features/user-data drives export, import and clone).
import { invalid } from "../../platform/http/errors";
import { MAX_TIMESTAMP } from "../../platform/http/validate";
import { strictBase64 } from "../../platform/crypto/base64";
import type { TrackedRow } from "./store";

/** A record to restore: a row without its ids (new ids are given when it is written). */
export type TrackedInput = Omit<TrackedRow, "id" | "responder_id">;

const MAX_TEXT = 65_536;
const MAX_HEADER_PAIRS = 500;
const TOKEN_RE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,32}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isInt = (v: unknown, min: number, max: number): v is number => typeof v === "number" && Number.isInteger(v) && v >= min && v <= max;

function text(raw: unknown, field: string, optional: boolean): string | null {
  if (raw === undefined || raw === null) {
    if (optional) return null;
    throw invalid(`${field}: is required`);
  }
  if (typeof raw !== "string" || raw.length > MAX_TEXT) throw invalid(`${field}: must be a string of at most ${MAX_TEXT} characters`);
  return raw;
}

function headerPairs(raw: unknown, field: string): string {
  if (!Array.isArray(raw) || raw.length > MAX_HEADER_PAIRS) throw invalid(`${field}: must be an array of at most ${MAX_HEADER_PAIRS} [name, value] pairs`);
  raw.forEach((pair, i) => {
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== "string" || typeof pair[1] !== "string" || pair[0].length > MAX_TEXT || pair[1].length > MAX_TEXT)
      throw invalid(`${field}[${i}]: must be a [name, value] pair of strings`);
  });
  return JSON.stringify(raw);
}

/** `body` (base64, ≤ maxBodyBytes once decoded) and `bodySize` (≥ the stored bytes: a cut body keeps its original size). */
function body(rawBody: unknown, rawSize: unknown, field: string, maxBodyBytes: number): { bytes: Uint8Array | null; size: number } {
  let bytes: Uint8Array | null = null;
  if (rawBody !== undefined && rawBody !== null) {
    const decoded = strictBase64(rawBody);
    if (!decoded) throw invalid(`${field}.body: must be standard base64`);
    if (decoded.byteLength > maxBodyBytes) throw invalid(`${field}.body: must be at most ${maxBodyBytes} bytes`);
    bytes = decoded.byteLength > 0 ? decoded : null;
  }
  const stored = bytes?.byteLength ?? 0;
  if (!isInt(rawSize, stored, Number.MAX_SAFE_INTEGER)) throw invalid(`${field}.bodySize: must be an integer of at least the body's ${stored} bytes`);
  return { bytes, size: rawSize };
}

/** A §11.10 record from a file; 400 naming the field when it is not one. Its `id` is ignored. */
export function parseTrackedRecord(raw: unknown, field: string, maxBodyBytes: number): TrackedInput {
  if (!isObject(raw)) throw invalid(`${field}: must be an object`);
  if (!isInt(raw.createdAt, 0, MAX_TIMESTAMP)) throw invalid(`${field}.createdAt: must be a unix timestamp`);
  if (!isInt(raw.durationMs, 0, 2_147_483_647)) throw invalid(`${field}.durationMs: must be a non-negative integer`);
  if (typeof raw.method !== "string" || !TOKEN_RE.test(raw.method)) throw invalid(`${field}.method: must be an HTTP method`);
  const req = body(raw.body, raw.bodySize, field, maxBodyBytes);
  const row: TrackedInput = {
    created_at: raw.createdAt,
    duration_ms: raw.durationMs,
    client_address: text(raw.clientAddress, `${field}.clientAddress`, true) || null,
    method: raw.method,
    path: text(raw.path, `${field}.path`, false)!,
    raw_query: text(raw.rawQuery, `${field}.rawQuery`, true) || null,
    headers: headerPairs(raw.headers, `${field}.headers`),
    body: req.bytes,
    body_size: req.size,
    response_status: null,
    response_headers: null,
    response_body: null,
    response_body_size: null,
    response_truncated: null,
  };
  if (raw.response !== undefined && raw.response !== null) {
    const r = raw.response;
    const f = `${field}.response`;
    if (!isObject(r)) throw invalid(`${f}: must be an object`);
    if (!isInt(r.statusCode, 100, 599)) throw invalid(`${f}.statusCode: must be an integer from 100 to 599`);
    if (typeof r.truncated !== "boolean") throw invalid(`${f}.truncated: must be a boolean`);
    const res = body(r.body, r.bodySize, f, maxBodyBytes);
    row.response_status = r.statusCode;
    row.response_headers = headerPairs(r.headers, `${f}.headers`);
    row.response_body = res.bytes;
    row.response_body_size = res.size;
    row.response_truncated = r.truncated ? 1 : 0;
  }
  return row;
}

/** The `keep` newest records (by createdAt; file order breaks ties, newest first), oldest first: the order to
 *  write them in, so their UUID v7 ids sort like their arrival. */
export function recordsToRestore(records: TrackedInput[], keep: number): TrackedInput[] {
  if (keep <= 0) return [];
  const indexed = records.map((r, i) => ({ r, i }));
  indexed.sort((a, b) => b.r.created_at - a.r.created_at || a.i - b.i);
  return indexed
    .slice(0, keep)
    .reverse()
    .map((x) => x.r);
}
