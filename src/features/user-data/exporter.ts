// Export (supplement §19.1, §19.2). `collect()` reads the user's entities through their services (bounded by the
// tier's count limits) and checks the request; `fileChunks()` then writes the file as a stream of text chunks:
// responder history and tracker revisions — the part that grows with use (1,000 responders × 100 records is a few
// hundred MB) — are read page by page while the stream is consumed, so the whole file is never held in memory, and
// the event loop never encodes them: a record holds up to two bodies of max_tracked_body_bytes, so with a work pool
// each page of records is read (SQLite: on the thread's own read-only connection; PostgreSQL: here) and serialized
// on a work thread under the user's share (tasks.ts), and only its bytes pass through the loop; without one, one
// record per turn of the loop (platform/work/slice.ts).
import type { TaggableType } from "../tags/service";
import { toBase64 } from "../../platform/crypto/base64";
import { invalid } from "../../platform/core/errors";
import { isUuid } from "../../platform/core/ids";
import type { UserDataDeps } from "./entities";
import { FILE_FORMAT, FILE_VERSION, isObject } from "./file";
import { ENTITY_TYPES, TYPES_WITH_HISTORY } from "./shared-rules";
import type { EntityType } from "./contract";
import { sealValue, type SecretsEncryption } from "./crypto";
import { TimeSlice } from "../../platform/work/slice";
import type { Work } from "../../platform/work/pool";
import { taskRef } from "../../platform/work/task";

/** Types whose entities can carry history (responders) or revisions (trackers). */
const WITH_HISTORY: readonly EntityType[] = TYPES_WITH_HISTORY;
const TAG_TYPES: Partial<Record<EntityType, TaggableType>> = {
  scripts: "script",
  secrets: "secret",
  responders: "responder",
  certificateTemplates: "certificateTemplate",
  privateKeys: "privateKey",
  contentSecurityPolicies: "contentSecurityPolicy",
  pageTrackers: "pageTracker",
  apiTrackers: "apiTracker",
};
/** Records or revisions read per database query while streaming (a record holds up to 2 × max_tracked_body_bytes:
 *  one synchronous SQLite read of a page must stay within a few ms). */
const PAGE = 5;
/** Text buffered before a chunk is handed to the stream. */
const CHUNK_CHARS = 64 * 1024;

export interface TypeInclude {
  /** undefined = all. */
  ids?: string[];
  history: boolean;
}

export interface Include {
  types: Partial<Record<EntityType, TypeInclude>>;
  settings: boolean;
}

/** `include` of `_export` (§19.1); absent = everything without history, settings included. */
export function parseInclude(raw: unknown): Include {
  if (raw === undefined || raw === null) {
    return { types: Object.fromEntries(ENTITY_TYPES.map((t) => [t, { history: false }])), settings: true };
  }
  if (!isObject(raw)) throw invalid("include: must be an object of type → {type: all | selected, ids?, includeHistory?}");
  const out: Include = { types: {}, settings: false };
  if (raw.settings !== undefined && raw.settings !== null) {
    if (typeof raw.settings !== "boolean") throw invalid("include.settings: must be a boolean");
    out.settings = raw.settings;
  }
  for (const type of ENTITY_TYPES) {
    const v = raw[type];
    if (v === undefined || v === null) continue;
    const at = `include.${type}`;
    if (!isObject(v)) throw invalid(`${at}: must be an object {type: all | selected, ids?}`);
    let history = false;
    if (v.includeHistory !== undefined && v.includeHistory !== null) {
      if (!WITH_HISTORY.includes(type)) throw invalid(`${at}.includeHistory: only responders and trackers have history`);
      if (typeof v.includeHistory !== "boolean") throw invalid(`${at}.includeHistory: must be a boolean`);
      history = v.includeHistory;
    }
    if (v.type === "all") out.types[type] = { history };
    else if (v.type === "selected") {
      if (!Array.isArray(v.ids) || !v.ids.every(isUuid)) throw invalid(`${at}.ids: must be an array of ids`);
      out.types[type] = { ids: [...new Set((v.ids as string[]).map((id) => id.toLowerCase()))], history };
    } else throw invalid(`${at}.type: must be all or selected`);
  }
  return out;
}

/** Everything a file (or a clone) needs, read up front; history is streamed later. */
export interface Collected {
  userId: string;
  /** File-shaped entities per included type (secrets without values, keys with `pkcs8` bytes). */
  entities: Partial<Record<EntityType, Record<string, unknown>[]>>;
  /** Plain values of the exported secrets, by secret id. */
  secretValues: Map<string, string>;
  settings?: Record<string, unknown>;
  /** Types whose history or revisions go into the file. */
  history: Set<EntityType>;
}

/** `{...fields, tagIds, createdAt, updatedAt}`: the API field order with tagIds before the timestamps. */
function withTagIds(e: Record<string, unknown>, tagIds: string[]): Record<string, unknown> {
  const { createdAt, updatedAt, ...rest } = e;
  return { ...rest, tagIds, createdAt, updatedAt };
}

async function allOf(deps: UserDataDeps, type: EntityType, userId: string): Promise<Record<string, unknown>[]> {
  switch (type) {
    case "tags":
      return deps.tags.exportAll(userId) as unknown as Promise<Record<string, unknown>[]>;
    case "scripts":
      return deps.scripts.exportAll(userId);
    case "secrets":
      return deps.secrets.exportAll(userId) as unknown as Promise<Record<string, unknown>[]>;
    case "responders":
      return deps.responders.transfer.exportAll(userId) as unknown as Promise<Record<string, unknown>[]>;
    case "certificateTemplates":
      return deps.certificates.templates.exportAll(userId) as unknown as Promise<Record<string, unknown>[]>;
    case "privateKeys":
      return deps.certificates.keys.exportAll(userId) as unknown as Promise<Record<string, unknown>[]>;
    case "contentSecurityPolicies":
      return deps.csp.exportAll(userId) as unknown as Promise<Record<string, unknown>[]>;
    case "pageTrackers":
      return deps.trackers.transfer.exportAll(userId, "page") as unknown as Promise<Record<string, unknown>[]>;
    case "apiTrackers":
      return deps.trackers.transfer.exportAll(userId, "api") as unknown as Promise<Record<string, unknown>[]>;
  }
}

/** Reads what `include` selects; unknown (or another user's) ids → 400. Tags the selection references come along. */
export async function collect(deps: UserDataDeps, userId: string, include: Include): Promise<Collected> {
  const out: Collected = { userId, entities: {}, secretValues: new Map(), history: new Set() };
  const referencedTags = new Set<string>();
  for (const type of ENTITY_TYPES) {
    const spec = include.types[type];
    if (!spec) continue;
    let items = await allOf(deps, type, userId);
    if (spec.ids) {
      const byId = new Map(items.map((e) => [e.id as string, e]));
      spec.ids.forEach((id, i) => {
        if (!byId.has(id)) throw invalid(`include.${type}.ids[${i}]: unknown id ${id}`);
      });
      const wanted = new Set(spec.ids);
      items = items.filter((e) => wanted.has(e.id as string));
    }
    const tagType = TAG_TYPES[type];
    if (tagType) {
      const links = await deps.tags.tagIdsOfUser(userId, tagType);
      items = items.map((e) => {
        const tagIds = links.get(e.id as string) ?? [];
        tagIds.forEach((t) => referencedTags.add(t));
        return withTagIds(e, tagIds);
      });
    }
    if (type === "secrets") {
      items = items.map(({ value, ...meta }) => {
        if (typeof value === "string") out.secretValues.set(meta.id as string, value);
        return meta;
      });
    }
    if (spec.history) out.history.add(type);
    out.entities[type] = items;
  }
  if (include.settings) {
    out.settings = { ...(await deps.settings.get(userId)) };
    for (const t of (out.settings["common.globalScopeTagIds"] as string[] | undefined) ?? []) referencedTags.add(t);
  }
  // Tags referenced by exported entities always come along (§19.1).
  const tags = out.entities.tags;
  const have = new Set((tags ?? []).map((t) => t.id as string));
  const missing = [...referencedTags].filter((id) => !have.has(id));
  if (missing.length > 0 || (tags === undefined && referencedTags.size > 0)) {
    const all = (await deps.tags.exportAll(userId)) as unknown as Record<string, unknown>[];
    out.entities.tags = all.filter((t) => have.has(t.id as string) || referencedTags.has(t.id as string));
  }
  return out;
}

/** `secbox-export-<YYYYMMDD-HHMMSS>.json` (UTC) for an export made at `nowSec`. */
export function exportFileName(nowSec: number): string {
  const iso = new Date(nowSec * 1000).toISOString();
  return `secbox-export-${iso.slice(0, 10).replace(/-/g, "")}-${iso.slice(11, 19).replace(/:/g, "")}.json`;
}

export interface Encryption {
  header: SecretsEncryption;
  key: Uint8Array;
}

/** Work pool use of an export: its owner (whose share pays), and whether the threads read the records themselves
 *  (SQLite: each thread's own read-only connection) or the main thread reads them and the threads serialize. */
export interface ExportPool {
  work: Work;
  owner: string;
  reads: boolean;
}

/** The export file as chunks of text, or of UTF-8 bytes where `pool` serialized records (see the file comment). */
export async function* fileChunks(
  deps: UserDataDeps,
  c: Collected,
  exportedAt: number,
  encryption?: Encryption,
  pool?: ExportPool,
): AsyncGenerator<string | Uint8Array> {
  const slice = new TimeSlice();
  let buffer: string[] = [];
  let size = 0;
  const put = (s: string) => {
    buffer.push(s);
    size += s.length;
  };
  const drain = () => {
    const text = buffer.join("");
    buffer = [];
    size = 0;
    return text;
  };

  put(`{"format":${JSON.stringify(FILE_FORMAT)},"version":${FILE_VERSION},"exportedAt":${exportedAt}`);
  if (encryption) put(`,"secretsEncryption":${JSON.stringify(encryption.header)}`);
  put(`,"data":{`);
  let firstMember = true;
  const member = (name: string) => {
    put(`${firstMember ? "" : ","}${JSON.stringify(name)}:`);
    firstMember = false;
  };
  for (const type of ENTITY_TYPES) {
    const items = c.entities[type];
    if (!items) continue;
    member(type);
    put("[");
    for (const [i, item] of items.entries()) {
      if (i > 0) put(",");
      const withHistory = c.history.has(type);
      const json = JSON.stringify(fileEntity(type, item, c, encryption));
      if (!withHistory) put(json);
      else {
        put(`${json.slice(0, -1)},${JSON.stringify(type === "responders" ? "history" : "revisions")}:[`);
        for await (const piece of recordsOf(deps, type === "responders" ? "history" : "revisions", item.id as string, slice, pool)) {
          if (typeof piece === "string") {
            put(piece);
            if (size >= CHUNK_CHARS) yield drain();
          } else {
            if (size > 0) yield drain();
            yield piece;
          }
        }
        put("]}");
      }
      if (size >= CHUNK_CHARS) yield drain();
      await slice.tick();
    }
    put("]");
  }
  if (c.settings) {
    member("settings");
    put(JSON.stringify(c.settings));
  }
  put("}}\n");
  yield drain();
}

/** An entity as the file holds it: secret values sealed under the export key, key material base64. */
function fileEntity(type: EntityType, item: Record<string, unknown>, c: Collected, encryption: Encryption | undefined): Record<string, unknown> {
  if (type === "secrets") {
    const value = c.secretValues.get(item.id as string);
    return encryption && value !== undefined ? { ...item, encryptedValue: sealValue(encryption.key, value) } : item;
  }
  if (type === "privateKeys") return { ...item, pkcs8: toBase64(item.pkcs8 as Uint8Array) };
  return item;
}

type RecordKind = "history" | "revisions";
type Before = string | { createdAt: number; id: string } | undefined;

/** An entity's history records or revisions as the file's comma-separated JSON, in pieces: text written here (one
 *  record per turn of the loop), or bytes written by a work thread from records read here or (`pool.reads`) there. */
async function* recordsOf(
  deps: UserDataDeps,
  kind: RecordKind,
  id: string,
  slice: TimeSlice,
  pool?: ExportPool,
): AsyncGenerator<string | Uint8Array> {
  let first = true;
  if (pool?.reads) {
    let before: Before;
    for (;;) {
      const page = await pool.work.run(pool.owner, recordPageTask, { kind, id, before, limit: PAGE });
      if (page.count === 0) return;
      if (!first) yield ",";
      yield new Uint8Array(page.bytes);
      first = false;
      if (page.count < PAGE) return;
      before = page.next;
    }
  }
  for await (const page of kind === "history" ? historyPages(deps, id) : revisionPages(deps, id)) {
    if (pool) {
      if (!first) yield ",";
      // revision bytes that own their buffer move to the thread (the page is done with here)
      const transfer = kind === "revisions" ? ownBuffers((page as { data: Uint8Array }[]).map((r) => r.data)) : [];
      yield new Uint8Array(await pool.work.run(pool.owner, recordsTask, { kind, items: page }, { transfer }));
      first = false;
      continue;
    }
    for (const rec of page) {
      yield `${first ? "" : ","}${JSON.stringify(renderRecord(kind, rec))}`;
      first = false;
      await slice.tick();
    }
  }
}

/** A page of an entity's records read and written by a work thread (tasks.ts): their JSON bytes, how many, and the
 *  cursor of the next page. */
export async function recordPage(deps: UserDataDeps, p: { kind: RecordKind; id: string; before: Before; limit: number }) {
  if (p.kind === "history") {
    const page = await deps.responders.transfer.historyPage(p.id, p.before as string | undefined, p.limit);
    return { items: page as unknown[], next: page.at(-1)?.id as Before };
  }
  const rows = await deps.trackers.transfer.revisionsPage(p.id, p.before as { createdAt: number; id: string } | undefined, p.limit);
  const last = rows.at(-1);
  return {
    items: rows.map((r) => ({ createdAt: r.created_at, data: r.data })) as unknown[],
    next: (last ? { createdAt: last.created_at, id: last.id } : undefined) as Before,
  };
}

export const recordPageTask = taskRef<
  { kind: RecordKind; id: string; before: Before; limit: number },
  { bytes: ArrayBuffer; count: number; next: Before }
>("user-data.recordPage");

async function* historyPages(deps: UserDataDeps, responderId: string) {
  let before: string | undefined;
  for (;;) {
    const page = await deps.responders.transfer.historyPage(responderId, before, PAGE);
    if (page.length === 0) return;
    yield page;
    if (page.length < PAGE) return;
    before = page[page.length - 1]!.id;
  }
}

async function* revisionPages(deps: UserDataDeps, trackerId: string) {
  let before: { createdAt: number; id: string } | undefined;
  for (;;) {
    const rows = await deps.trackers.transfer.revisionsPage(trackerId, before, PAGE);
    if (rows.length === 0) return;
    yield rows.map((r) => ({ createdAt: r.created_at, data: r.data }));
    if (rows.length < PAGE) return;
    const last = rows[rows.length - 1]!;
    before = { createdAt: last.created_at, id: last.id };
  }
}

/** The buffers of views that cover their whole buffer (safe to move to another thread once done with). */
const ownBuffers = (views: Uint8Array[]): ArrayBuffer[] => [
  ...new Set(views.filter((b) => b.byteLength > 0 && b.byteOffset === 0 && b.byteLength === b.buffer.byteLength).map((b) => b.buffer as ArrayBuffer)),
];

/** An export's history records or revisions as the file's comma-separated JSON, in UTF-8 (a work task, tasks.ts). */
export const recordsTask = taskRef<{ kind: RecordKind; items: unknown[] }, ArrayBuffer>("user-data.records");

/** A history record as the file holds it (already), or a revision {createdAt, data} as {createdAt, body: base64}. */
export function renderRecord(kind: RecordKind, rec: unknown): unknown {
  if (kind === "history") return rec;
  const r = rec as { createdAt: number; data: Uint8Array };
  return { createdAt: r.createdAt, body: toBase64(r.data) };
}
