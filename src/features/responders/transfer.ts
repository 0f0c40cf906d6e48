// Responders in user data export, import and clone (supplement §19; features/user-data drives them): the export
// shape, history paged out newest first (§11.10 records), reading records of an untrusted file back into row form,
// and the writes of an import inside its transaction. The responder rules (validation, settings, conflicts) and
// caches stay RespondersService's: it hands them in (RespondersService.transfer).
import type { Tier, TierLimits } from "../../config/schema";
import type { Db } from "../../platform/db/db";
import { invalid, notFound } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import { MAX_TIMESTAMP, normalizeName } from "../../platform/core/validate";
import { strictBase64 } from "../../platform/crypto/base64";
import { nowSec, type Runtime } from "../../platform/runtime";
import type { StorageQuota } from "../../platform/storage/quota";
import type { SecretsSelector } from "../secrets/contract";
import type { TagsService } from "../tags/service";
import type { Responder, ResponderMethod, TrackedRequest } from "./contract";
import type { CheckedSettings, NormalizedLocation, NormalizedSettings } from "./rules";
import { NAME_MAX } from "./shared-rules";
import { TOKEN_RE } from "../../platform/net/shared-rules";
import { recordSize, respondersStore, toTrackedRequest, type ResponderRow, type TrackedRow } from "./store";

/** A record to restore: a row without its ids (new ids are given when it is written) and size (computed then). */
export type TrackedInput = Omit<TrackedRow, "id" | "responder_id" | "size">;

const MAX_TEXT = 65_536;
const MAX_HEADER_PAIRS = 500;
/** A stored record's method: an RFC 9110 token of at most this many characters. */
const MAX_METHOD_CHARS = 32;

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
  if (!Array.isArray(raw) || raw.length > MAX_HEADER_PAIRS)
    throw invalid(`${field}: must be an array of at most ${MAX_HEADER_PAIRS} [name, value] pairs`);
  raw.forEach((pair, i) => {
    if (
      !Array.isArray(pair) ||
      pair.length !== 2 ||
      typeof pair[0] !== "string" ||
      typeof pair[1] !== "string" ||
      pair[0].length > MAX_TEXT ||
      pair[1].length > MAX_TEXT
    )
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
  if (typeof raw.method !== "string" || raw.method.length > MAX_METHOD_CHARS || !TOKEN_RE.test(raw.method))
    throw invalid(`${field}.method: must be an HTTP method`);
  const req = body(raw.body, raw.bodySize, field, maxBodyBytes);
  if (raw.statusCode !== undefined && raw.statusCode !== null && !isInt(raw.statusCode, 100, 599))
    throw invalid(`${field}.statusCode: must be an integer from 100 to 599`);
  const row: TrackedInput = {
    created_at: raw.createdAt,
    // The file carries seconds (§11.10); HAR falls back to them for imported records.
    created_at_ms: null,
    duration_ms: raw.durationMs,
    client_address: text(raw.clientAddress, `${field}.clientAddress`, true) || null,
    method: raw.method,
    path: text(raw.path, `${field}.path`, false)!,
    raw_query: text(raw.rawQuery, `${field}.rawQuery`, true) || null,
    headers: headerPairs(raw.headers, `${field}.headers`),
    body: req.bytes,
    body_size: req.size,
    // A file written before statuses were recorded (§27) has none: the stored response's, when there is one (below).
    status_code: isInt(raw.statusCode, 100, 599) ? raw.statusCode : null,
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
    row.status_code ??= r.statusCode;
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

/** A responder in an export file (§19.2): the API shape without url and tags. */
export type ResponderExport = Omit<Responder, "url" | "tags" | "tagIds">;

/** An imported responder after the create rules; `settings.secrets` still names the file's secrets. */
export interface ResponderDraft {
  name: string;
  location: NormalizedLocation;
  method: ResponderMethod;
  enabled: boolean;
  settings: CheckedSettings;
}

/** The rules and caches of RespondersService that an import uses. */
export interface ResponderRules {
  tags: TagsService;
  deleteKv?: (tx: Db, ownerId: string, userId: string) => Promise<void>;
  storage: StorageQuota;
  location(raw: unknown): NormalizedLocation;
  method(raw: unknown): ResponderMethod;
  enabled(raw: unknown): boolean;
  settings(tier: Tier, raw: unknown, limits: TierLimits): CheckedSettings;
  applySettings(row: ResponderRow, settings: NormalizedSettings, now: number, previous: ResponderRow | undefined): boolean;
  checkConflicts(tx: Db, row: ResponderRow, exceptId: string | null): Promise<void>;
  toWire(row: ResponderRow): Responder;
  /** After an import committed or failed: pending records of deleted responders dropped, the user's cache too. */
  done(userId: string, deletedIds: string[]): void;
}

export class ResponderTransfer {
  constructor(
    private readonly rt: Runtime,
    private readonly rules: ResponderRules,
  ) {}

  /** Every responder of the user in the export shape, name ascending. */
  async exportAll(userId: string): Promise<ResponderExport[]> {
    return (await respondersStore.allOfUser(this.rt.db, userId)).map((row) => {
      const { url: _url, tags: _tags, tagIds: _tagIds, ...rest } = this.rules.toWire(row);
      return rest;
    });
  }

  /** Up to `limit` tracked records of a responder, newest first, older than `beforeId` (keyset paging). Pending
   *  captures are not included: RespondersService.flushCaptures() first. */
  async historyPage(responderId: string, beforeId: string | undefined, limit: number): Promise<TrackedRequest[]> {
    return (await respondersStore.historyPage(this.rt.db, responderId, beforeId, limit)).map(toTrackedRequest);
  }

  /** Every record of a responder as rows to restore elsewhere (clone), newest first. */
  async historyRows(db: Db, responderId: string): Promise<TrackedInput[]> {
    return (await respondersStore.history(db, responderId)).map(({ id: _id, responder_id: _r, size: _s, ...rest }) => rest);
  }

  /** The create rules for an imported responder under `limits` (the importing user's tier, or wider for a clone);
   *  the secrets selector's entries are left unresolved (they name secrets of the file). */
  checkImport(raw: Record<string, unknown>, tier: Tier, limits: TierLimits): ResponderDraft {
    if (raw.name === undefined || raw.name === null) throw invalid("name: is required");
    if (raw.location === undefined || raw.location === null) throw invalid("location: is required");
    return {
      name: normalizeName(raw.name, NAME_MAX),
      location: this.rules.location(raw.location),
      method: this.rules.method(raw.method),
      enabled: this.rules.enabled(raw.enabled),
      settings: this.rules.settings(tier, raw.settings, limits),
    };
  }

  /** Names and locations of the user's responders. */
  refs(db: Db, userId: string) {
    return respondersStore.refs(db, userId);
  }

  count = (db: Db, userId: string) => respondersStore.count(db, userId);

  /** Inserts a checked responder with `selector` (already in stored form). 409 on a name or location clash. */
  async insert(
    tx: Db,
    userId: string,
    id: string,
    d: ResponderDraft,
    selector: SecretsSelector,
    createdAt: number,
    updatedAt: number,
  ): Promise<void> {
    const row: ResponderRow = {
      id,
      user_id: userId,
      name: d.name,
      path_type: d.location.pathType,
      path: d.location.path,
      path_lower: d.location.path.toLowerCase(),
      subdomain_prefix: d.location.prefix,
      method: d.method,
      enabled: d.enabled ? 1 : 0,
      requests_to_track: 0,
      status_code: 200,
      headers: null,
      body: null,
      script: null,
      secrets: '"none"',
      notify_enabled: null,
      notify_throttle: null,
      notify_count: 0,
      notify_from: null,
      notified_at: null,
      created_at: createdAt,
      updated_at: updatedAt,
    };
    this.rules.applySettings(row, { ...d.settings, secrets: selector }, nowSec(this.rt.clock), undefined);
    await this.rules.checkConflicts(tx, row, null);
    await respondersStore.insert(tx, row);
  }

  /** Replaces the responder `id` in place (its id, creation time, KV data and, unless the caller restores other
   *  records, its history are kept; history beyond `keep` is trimmed). 409 on a name or location clash. */
  async replace(tx: Db, userId: string, id: string, d: ResponderDraft, selector: SecretsSelector, keep: number): Promise<void> {
    await this.rules.storage.lock(tx, userId);
    const current = await respondersStore.get(tx, userId, id);
    if (!current) throw notFound("Responder");
    const now = nowSec(this.rt.clock);
    const next: ResponderRow = {
      ...current,
      name: d.name,
      path_type: d.location.pathType,
      path: d.location.path,
      path_lower: d.location.path.toLowerCase(),
      subdomain_prefix: d.location.prefix,
      method: d.method,
      enabled: d.enabled ? 1 : 0,
      updated_at: now,
    };
    const resetNotify = this.rules.applySettings(next, { ...d.settings, secrets: selector }, now, current);
    await this.rules.checkConflicts(tx, next, id);
    await respondersStore.update(tx, next, resetNotify);
    await respondersStore.trim(tx, userId, id, keep);
  }

  /** Replaces the responder's history with `records` (oldest first; new ids in that order). Their bytes count against
   *  the user's max_storage_bytes (`capped`: beyond it 400 LIMIT_REACHED, and the import rolls back), or are only
   *  counted (an operator's clone). */
  async restoreHistory(tx: Db, userId: string, responderId: string, records: TrackedInput[], capped: boolean): Promise<void> {
    await this.rules.storage.lock(tx, userId);
    await respondersStore.clear(tx, userId, responderId);
    const rows = records.map((r) => ({ ...r, id: "", responder_id: responderId, size: recordSize(r) }));
    const bytes = rows.reduce((n, r) => n + r.size, 0);
    if (capped) await this.rules.storage.add(tx, userId, "history", bytes);
    else await this.rules.storage.force(tx, userId, "history", bytes);
    for (const r of rows) await respondersStore.insertTracked(tx, { ...r, id: newId() });
  }

  /** Deletes the responder with its history, tag links and KV data (their bytes given back to the user). */
  async delete(tx: Db, userId: string, id: string): Promise<void> {
    await this.rules.storage.lock(tx, userId);
    if ((await respondersStore.delete(tx, userId, id)).changes === 0) return;
    await this.rules.tags.removeEntity(tx, "responder", id);
    if (this.rules.deleteKv) await this.rules.deleteKv(tx, id, userId);
  }

  /** After an import committed (or failed): cached responders of the user dropped, pending records of deleted
   *  responders discarded. */
  done(userId: string, deletedIds: string[]): void {
    this.rules.done(userId, deletedIds);
  }
}
