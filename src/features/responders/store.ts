// SQL for responders (supplement §11) and their tracked requests (§11.10), and the mapping of their rows to wire
// objects (contract.ts: Responder, TrackedRequest, ResponderStats). Only this file touches the `responders` and
// `responder_requests` tables. SQL is the subset SQLite and PostgreSQL share.
// Stored bytes (§28): a record's `size` (recordSize) counts against its user's max_storage_bytes; every statement
// here that deletes records gives their bytes back to the user's counter (storage_usage) in the same transaction.
// Callers take the user's storage lock first (StorageQuota.lock) and add bytes through StorageQuota.
import { placeholders, type Db } from "../../platform/db/db";
import { storageUsage } from "../../platform/storage/quota";
import { listPage } from "../../platform/db/list";
import type { ListQuery } from "../../platform/http/list-query";
import { selectorFromText } from "../secrets/service";
import type { TagRef } from "../tags/contract";
import type { PathType, Responder, ResponderMethod, ResponderStats, TrackedRequest } from "./contract";
import type { HeaderList } from "./script-result";
import { DEFAULT_THROTTLE } from "./shared-rules";

export interface ResponderRow {
  id: string;
  user_id: string;
  name: string;
  path_type: string;
  path: string;
  path_lower: string;
  subdomain_prefix: string;
  method: string;
  enabled: number;
  requests_to_track: number;
  status_code: number;
  headers: string | null;
  body: string | null;
  script: string | null;
  secrets: string;
  notify_enabled: number | null;
  notify_throttle: number | null;
  notify_count: number;
  notify_from: number | null;
  notified_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface TrackedRow {
  id: string;
  responder_id: string;
  created_at: number;
  /** Arrival time in unix ms; null for rows written without it (read as created_at * 1000). */
  created_at_ms: number | null;
  duration_ms: number;
  client_address: string | null;
  method: string;
  path: string;
  raw_query: string | null;
  headers: string;
  body: Uint8Array | null;
  body_size: number;
  /** Status of the response sent (supplement §27); null only on records stored before it was recorded
   *  (migrations/0017_response_status.sql) without a stored response. */
  status_code: number | null;
  /** The stored response (§11.5): NULL = not stored. */
  response_status: number | null;
  response_headers: string | null;
  response_body: Uint8Array | null;
  response_body_size: number | null;
  response_truncated: number | null;
  /** Stored bytes (recordSize), counted against the user's max_storage_bytes. */
  size: number;
}

/** A record waiting in the capture batch (already in row shape). */
export type TrackedInsert = TrackedRow;

const utf8Bytes = (s: string | null) => (s === null ? 0 : Buffer.byteLength(s, "utf8"));

/** The bytes a record stores: method, path, query, client address, both header lists and both bodies (the same
 *  sum migrations/0015_storage.sql computed for older records). */
export const recordSize = (r: Omit<TrackedRow, "id" | "responder_id" | "size">): number =>
  utf8Bytes(r.method) +
  utf8Bytes(r.path) +
  utf8Bytes(r.raw_query) +
  utf8Bytes(r.client_address) +
  utf8Bytes(r.headers) +
  (r.body?.byteLength ?? 0) +
  utf8Bytes(r.response_headers) +
  (r.response_body?.byteLength ?? 0);

// ---- rows → wire objects ----

/** A stored `[name, value]` list (JSON text); anything unreadable is an empty list. */
export function headerListOf(text: string | null): HeaderList {
  if (!text) return [];
  try {
    const v = JSON.parse(text);
    return Array.isArray(v) ? v : [];
  } catch {
    return [];
  }
}

/** The API's responder (§11.1): `baseUrl` is its URL without the path (RespondersService knows the handle and the
 *  URL style), `tags` its tag links. */
export function toResponder(row: ResponderRow, baseUrl: string, tags: TagRef[]): Responder {
  const headers = headerListOf(row.headers);
  return {
    id: row.id,
    name: row.name,
    url: baseUrl + row.path,
    location: { pathType: row.path_type as PathType, path: row.path, ...(row.subdomain_prefix ? { subdomainPrefix: row.subdomain_prefix } : {}) },
    method: row.method as ResponderMethod,
    enabled: row.enabled === 1,
    settings: {
      requestsToTrack: row.requests_to_track,
      statusCode: row.status_code,
      ...(headers.length > 0 ? { headers } : {}),
      ...(row.body ? { body: row.body } : {}),
      ...(row.script !== null ? { script: row.script } : {}),
      secrets: selectorFromText(row.secrets),
      ...(row.notify_enabled !== null
        ? { notifications: { enabled: row.notify_enabled === 1, throttleSeconds: row.notify_throttle ?? DEFAULT_THROTTLE } }
        : {}),
    },
    tags,
    tagIds: tags.map((t) => t.id),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

const b64 = (bytes: Uint8Array | null | undefined) => (bytes && bytes.byteLength > 0 ? Buffer.from(bytes).toString("base64") : undefined);

/** The API's tracked request record (§11.10): bodies base64, empty members omitted. */
export function toTrackedRequest(r: TrackedRow): TrackedRequest {
  const body = b64(r.body);
  const record: TrackedRequest = {
    id: r.id,
    createdAt: r.created_at,
    durationMs: r.duration_ms,
    ...(r.client_address ? { clientAddress: r.client_address } : {}),
    method: r.method,
    path: r.path,
    ...(r.raw_query ? { rawQuery: r.raw_query } : {}),
    headers: headerListOf(r.headers),
    ...(body !== undefined ? { body } : {}),
    bodySize: r.body_size,
  };
  // Status of the response sent (§27); absent only on records stored before it was recorded without a stored
  // response (migrations/0017_response_status.sql).
  const status = r.status_code ?? r.response_status;
  if (status !== null) record.statusCode = status;
  if (r.response_status !== null) {
    const rb = b64(r.response_body);
    record.response = {
      statusCode: r.response_status,
      headers: headerListOf(r.response_headers),
      ...(rb !== undefined ? { body: rb } : {}),
      bodySize: r.response_body_size ?? 0,
      truncated: r.response_truncated === 1,
    };
  }
  return record;
}

/** A row of the stats query as the API's ResponderStats (§11.11). */
const toResponderStats = (s: { id: string; n: number; last: number | null }): ResponderStats => ({
  responderId: s.id,
  requestCount: Number(s.n),
  ...(s.last !== null && s.last !== undefined ? { lastRequestedAt: Number(s.last) } : {}),
});

const freed = (rows: { size: number }[]) => rows.reduce((n, r) => n + Number(r.size), 0);

/** Newest record's createdAt; a responder without records sorts as 0 (supplement §1). */
const LAST_REQUESTED = "COALESCE((SELECT MAX(q.created_at) FROM responder_requests q WHERE q.responder_id = e.id), 0)";

export const RESPONDER_SORT_KEYS = ["name", "createdAt", "updatedAt", "lastRequestedAt"] as const;

export const respondersStore = {
  list: (db: Db, userId: string, query: ListQuery) =>
    listPage<ResponderRow>(db, userId, query, { table: "responders", entityType: "responder", extraSorts: { lastRequestedAt: LAST_REQUESTED } }),

  get: (db: Db, userId: string, id: string) => db.get<ResponderRow>("SELECT * FROM responders WHERE id = ? AND user_id = ?", [id, userId]),

  byUser: (db: Db, userId: string) => db.all<ResponderRow>("SELECT * FROM responders WHERE user_id = ?", [userId]),
  idsOfUser: (db: Db, userId: string) => db.all<{ id: string }>("SELECT id FROM responders WHERE user_id = ?", [userId]),

  /** The user's count, under a lock held until the transaction ends (creations racing on several instances cannot
   *  both pass a limit check). */
  async count(db: Db, userId: string): Promise<number> {
    await db.lock(`count:responders:${userId}`);
    return (await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM responders WHERE user_id = ?", [userId]))?.n ?? 0;
  },

  async nameTaken(db: Db, userId: string, name: string, exceptId: string | null): Promise<boolean> {
    return (await db.get("SELECT 1 AS x FROM responders WHERE user_id = ? AND name = ? AND id <> ?", [userId, name, exceptId ?? ""])) !== undefined;
  },

  /** Responders at the same location (prefix, pathType, path ignoring case), for the method-overlap check. */
  sameLocation: (db: Db, userId: string, prefix: string, pathType: string, pathLower: string, exceptId: string | null) =>
    db.all<{ id: string; name: string; method: string }>(
      "SELECT id, name, method FROM responders WHERE user_id = ? AND subdomain_prefix = ? AND path_type = ? AND path_lower = ? AND id <> ?",
      [userId, prefix, pathType, pathLower, exceptId ?? ""],
    ),

  insert: (db: Db, r: ResponderRow) =>
    db.run(
      `INSERT INTO responders (id, user_id, name, path_type, path, path_lower, subdomain_prefix, method, enabled, requests_to_track,
         status_code, headers, body, script, secrets, notify_enabled, notify_throttle, notify_count, notify_from, notified_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        r.id,
        r.user_id,
        r.name,
        r.path_type,
        r.path,
        r.path_lower,
        r.subdomain_prefix,
        r.method,
        r.enabled,
        r.requests_to_track,
        r.status_code,
        r.headers,
        r.body,
        r.script,
        r.secrets,
        r.notify_enabled,
        r.notify_throttle,
        r.notify_count,
        r.notify_from,
        r.notified_at,
        r.created_at,
        r.updated_at,
      ],
    ),

  /** The hit-summary state (count, window start, last sent) is the capture's and the summary job's: an update
   *  leaves it alone unless `resetNotify` (notifications turned on or off) starts the count over. */
  update: (db: Db, r: ResponderRow, resetNotify: boolean) =>
    db.run(
      `UPDATE responders SET name = ?, path_type = ?, path = ?, path_lower = ?, subdomain_prefix = ?, method = ?, enabled = ?,
         requests_to_track = ?, status_code = ?, headers = ?, body = ?, script = ?, secrets = ?, notify_enabled = ?, notify_throttle = ?,
         notify_count = CASE WHEN ? = 1 THEN 0 ELSE notify_count END, notify_from = CASE WHEN ? = 1 THEN ? ELSE notify_from END,
         updated_at = ?
       WHERE id = ? AND user_id = ?`,
      [
        r.name,
        r.path_type,
        r.path,
        r.path_lower,
        r.subdomain_prefix,
        r.method,
        r.enabled,
        r.requests_to_track,
        r.status_code,
        r.headers,
        r.body,
        r.script,
        r.secrets,
        r.notify_enabled,
        r.notify_throttle,
        resetNotify ? 1 : 0,
        resetNotify ? 1 : 0,
        r.notify_from,
        r.updated_at,
        r.id,
        r.user_id,
      ],
    ),

  /** Deletes the responder; its records go with it (cascade) and their bytes back to the user's counter. */
  async delete(db: Db, userId: string, id: string): Promise<{ changes: number }> {
    const held = await db.get<{ n: number | null }>(
      "SELECT SUM(q.size) AS n FROM responder_requests q JOIN responders e ON e.id = q.responder_id WHERE e.id = ? AND e.user_id = ?",
      [id, userId],
    );
    const res = await db.run("DELETE FROM responders WHERE id = ? AND user_id = ?", [id, userId]);
    if (res.changes > 0) await storageUsage.adjust(db, userId, "history", -Number(held?.n ?? 0));
    return res;
  },

  /** The user a responder belongs to (KV accounting); undefined once it is deleted. */
  ownerOf: async (db: Db, id: string) => (await db.get<{ user_id: string }>("SELECT user_id FROM responders WHERE id = ?", [id]))?.user_id,

  /** Bytes of the user's stored records (the storage recount). */
  historyBytesOfUser: async (db: Db, userId: string) =>
    Number(
      (
        await db.get<{ n: number | null }>(
          "SELECT SUM(q.size) AS n FROM responder_requests q JOIN responders e ON e.id = q.responder_id WHERE e.user_id = ?",
          [userId],
        )
      )?.n ?? 0,
    ),

  /** Responders of the user whose stored selector mentions the secret id (candidates for `withoutSecret`). */
  selectorsMentioning: (db: Db, userId: string, secretId: string) =>
    db.all<{ id: string; secrets: string }>("SELECT id, secrets FROM responders WHERE user_id = ? AND secrets LIKE ?", [userId, `%${secretId}%`]),

  setSelector: (db: Db, id: string, selectorText: string) => db.run("UPDATE responders SET secrets = ? WHERE id = ?", [selectorText, id]),

  // ---- tracked requests ----

  history: (db: Db, responderId: string) =>
    db.all<TrackedRow>("SELECT * FROM responder_requests WHERE responder_id = ? ORDER BY id DESC", [responderId]),

  /** A window of the history, newest first (the UI's live view): ids above `after` and below `before` when given,
   *  at most `limit` records. Ids are UUID v7 given at write time, so "newer" is "greater id". */
  historyWindow(db: Db, responderId: string, w: { after?: string; before?: string; limit?: number }) {
    const where = ["responder_id = ?"];
    const args: (string | number)[] = [responderId];
    if (w.after !== undefined) (where.push("id > ?"), args.push(w.after));
    if (w.before !== undefined) (where.push("id < ?"), args.push(w.before));
    if (w.limit !== undefined) args.push(w.limit);
    return db.all<TrackedRow>(
      `SELECT * FROM responder_requests WHERE ${where.join(" AND ")} ORDER BY id DESC${w.limit !== undefined ? " LIMIT ?" : ""}`,
      args,
    );
  },

  record: (db: Db, responderId: string, id: string) =>
    db.get<TrackedRow>("SELECT * FROM responder_requests WHERE responder_id = ? AND id = ?", [responderId, id]),

  /** The next records after `after` (oldest first, the HAR's pages): as many as fit in `maxBytes` of stored size (at least one, at
   *  most `maxRows`); [] when none is left. The sizes come from the (responder_id, id, size) index first, so only the
   *  page's own rows are read whole. */
  async historyPageForward(db: Db, responderId: string, after: string | null, maxBytes: number, maxRows = 200): Promise<TrackedRow[]> {
    const sizes = await db.all<{ id: string; size: number }>(
      "SELECT id, size FROM responder_requests WHERE responder_id = ? AND id > ? ORDER BY id ASC LIMIT ?",
      [responderId, after ?? "", maxRows],
    );
    if (sizes.length === 0) return [];
    let n = 0;
    let bytes = 0;
    while (n < sizes.length && (n === 0 || bytes + Number(sizes[n]!.size) <= maxBytes)) bytes += Number(sizes[n++]!.size);
    return db.all<TrackedRow>("SELECT * FROM responder_requests WHERE responder_id = ? AND id > ? AND id <= ? ORDER BY id ASC", [
      responderId,
      after ?? "",
      sizes[n - 1]!.id,
    ]);
  },

  /** Deletes every record of the responder (of `userId`); returns the bytes freed (given back to the user). */
  async clear(db: Db, userId: string, responderId: string): Promise<number> {
    const bytes = freed(await db.all<{ size: number }>("DELETE FROM responder_requests WHERE responder_id = ? RETURNING size", [responderId]));
    await storageUsage.adjust(db, userId, "history", -bytes);
    return bytes;
  },

  /** Keeps the newest `keep` records of the responder (0 deletes them all); returns the bytes freed (given back to
   *  the user's counter). */
  async trim(db: Db, userId: string, responderId: string, keep: number): Promise<number> {
    if (keep <= 0) return respondersStore.clear(db, userId, responderId);
    const boundary = await db.get<{ id: string }>("SELECT id FROM responder_requests WHERE responder_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?", [
      responderId,
      keep - 1,
    ]);
    if (!boundary) return 0;
    const bytes = freed(
      await db.all<{ size: number }>("DELETE FROM responder_requests WHERE responder_id = ? AND id < ? RETURNING size", [responderId, boundary.id]),
    );
    await storageUsage.adjust(db, userId, "history", -bytes);
    return bytes;
  },

  /** Sizes of the records after the newest `skip`, newest first: those that `skip` kept records would push out. */
  sizesAfter: async (db: Db, responderId: string, skip: number) =>
    (
      await db.all<{ size: number }>("SELECT size FROM responder_requests WHERE responder_id = ? ORDER BY id DESC LIMIT 1000000000 OFFSET ?", [
        responderId,
        Math.max(0, skip),
      ])
    ).map((r) => Number(r.size)),

  /** Current tracking depth, notification state and owner of the given responders (those still existing). */
  trackingState: (db: Db, ids: string[]) =>
    ids.length === 0
      ? Promise.resolve([])
      : db.all<{ id: string; user_id: string; requests_to_track: number; notify_enabled: number | null }>(
          `SELECT id, user_id, requests_to_track, notify_enabled FROM responders WHERE id IN (${placeholders(ids.length)})`,
          ids,
        ),

  /** Inserts a record; its bytes are the caller's to count (StorageQuota, before). */
  insertTracked: (db: Db, r: TrackedInsert) =>
    db.run(
      `INSERT INTO responder_requests (id, responder_id, created_at, created_at_ms, duration_ms, client_address, method, path, raw_query, headers, body,
         body_size, status_code, response_status, response_headers, response_body, response_body_size, response_truncated, size)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        r.id,
        r.responder_id,
        r.created_at,
        r.created_at_ms,
        r.duration_ms,
        r.client_address,
        r.method,
        r.path,
        r.raw_query,
        r.headers,
        r.body,
        r.body_size,
        r.status_code,
        r.response_status,
        r.response_headers,
        r.response_body,
        r.response_body_size,
        r.response_truncated,
        r.size,
      ],
    ),

  addNotifyCount: (db: Db, id: string, n: number) =>
    db.run("UPDATE responders SET notify_count = notify_count + ? WHERE id = ? AND notify_enabled = 1", [n, id]),

  /** Per responder of the user: stored record count and newest createdAt, name ascending (supplement §11.11). */
  stats: async (db: Db, userId: string): Promise<ResponderStats[]> =>
    (
      await db.all<{ id: string; n: number; last: number | null }>(
        `SELECT e.id, COUNT(q.id) AS n, MAX(q.created_at) AS last
         FROM responders e LEFT JOIN responder_requests q ON q.responder_id = e.id
         WHERE e.user_id = ? GROUP BY e.id, e.name ORDER BY lower(e.name) ASC, e.id ASC`,
        [userId],
      )
    ).map(toResponderStats),

  // ---- hit summaries (supplement §18.2) ----

  /** Responders due for a summary at `now`. */
  dueSummaries: (db: Db, now: number) =>
    db.all<ResponderRow>(
      `SELECT * FROM responders
       WHERE notify_enabled = 1 AND requests_to_track > 0 AND notify_count > 0
         AND (notified_at IS NULL OR notified_at + notify_throttle <= ?)
       ORDER BY id`,
      [now],
    ),

  /** Starts the next summary window, if the current one is still due at `now` (false: another instance sent it). */
  async markNotified(db: Db, id: string, sent: number, now: number): Promise<boolean> {
    const { changes } = await db.run(
      `UPDATE responders SET notify_count = notify_count - ?, notify_from = ?, notified_at = ?
       WHERE id = ? AND (notified_at IS NULL OR notified_at + notify_throttle <= ?)`,
      [sent, now, now, id, now],
    );
    return changes === 1;
  },

  // ---- user data (export, import, clone) ----

  allOfUser: (db: Db, userId: string) => db.all<ResponderRow>("SELECT * FROM responders WHERE user_id = ? ORDER BY name, id", [userId]),

  /** Names and locations of the user's responders (import conflicts, §19.3). */
  refs: (db: Db, userId: string) =>
    db.all<{ id: string; name: string; subdomain_prefix: string; path_type: string; path_lower: string; method: string }>(
      "SELECT id, name, subdomain_prefix, path_type, path_lower, method FROM responders WHERE user_id = ?",
      [userId],
    ),

  /** Up to `limit` records, newest first, older than `beforeId` when given (keyset paging of an export). */
  historyPage: (db: Db, responderId: string, beforeId: string | undefined, limit: number) =>
    beforeId === undefined
      ? db.all<TrackedRow>("SELECT * FROM responder_requests WHERE responder_id = ? ORDER BY id DESC LIMIT ?", [responderId, limit])
      : db.all<TrackedRow>("SELECT * FROM responder_requests WHERE responder_id = ? AND id < ? ORDER BY id DESC LIMIT ?", [
          responderId,
          beforeId,
          limit,
        ]),
};
