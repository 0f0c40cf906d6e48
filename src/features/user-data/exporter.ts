// Export (supplement §19.1, §19.2). `collect()` reads the user's entities through their services (bounded by the
// tier's count limits) and checks the request; `fileChunks()` then writes the file as a stream of text chunks:
// responder history and tracker revisions — the part that grows with use (1,000 responders × 100 records is a few
// hundred MB) — are read page by page while the stream is consumed, so the whole file is never held in memory, and
// the writer gives the event loop back every few ms (platform/work/slice.ts): a record holds up to two bodies of
// max_tracked_body_bytes, so pages are small, and with a work pool each page's records are serialized there
// (tasks.ts recordsTask, under the user's share) and only their bytes pass through the loop.
import type { TaggableType } from "../tags/service";
import { toBase64 } from "../../platform/crypto/base64";
import { invalid } from "../../platform/http/errors";
import { isUuid } from "../../platform/http/ids";
import type { UserDataDeps } from "./entities";
import { ENTITY_TYPES, FILE_FORMAT, FILE_VERSION, isObject, type EntityType } from "./file";
import { sealValue, type SecretsEncryption } from "./crypto";
import { TimeSlice } from "../../platform/work/slice";
import type { Work } from "../../platform/work/pool";
import { taskRef } from "../../platform/work/task";

/** Types whose entities can carry history (responders) or revisions (trackers). */
const WITH_HISTORY: readonly EntityType[] = ["responders", "pageTrackers", "apiTrackers"];
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

/** The export file as chunks of text, or of UTF-8 bytes where `pool` serialized records (see the file comment). */
export async function* fileChunks(
  deps: UserDataDeps,
  c: Collected,
  exportedAt: number,
  encryption?: Encryption,
  pool?: { work: Work; owner: string },
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
        let first = true;
        const kind = type === "responders" ? "history" : "revisions";
        for await (const page of kind === "history" ? historyPages(deps, item.id as string) : revisionPages(deps, item.id as string)) {
          if (pool) {
            if (!first) put(",");
            if (size > 0) yield drain();
            // revision bytes that own their buffer move to the thread (the page is done with here)
            const transfer = kind === "revisions" ? ownBuffers((page as { data: Uint8Array }[]).map((r) => r.data)) : [];
            yield new Uint8Array(await pool.work.run(pool.owner, recordsTask, { kind, items: page }, { transfer }));
            first = false;
            continue;
          }
          for (const rec of page) {
            put(`${first ? "" : ","}${JSON.stringify(renderRecord(kind, rec))}`);
            first = false;
            if (size >= CHUNK_CHARS) yield drain();
            await slice.tick();
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
export const recordsTask = taskRef<{ kind: "history" | "revisions"; items: unknown[] }, ArrayBuffer>("user-data.records");

/** A history record as the file holds it (already), or a revision {createdAt, data} as {createdAt, body: base64}. */
export function renderRecord(kind: "history" | "revisions", rec: unknown): unknown {
  if (kind === "history") return rec;
  const r = rec as { createdAt: number; data: Uint8Array };
  return { createdAt: r.createdAt, body: toBase64(r.data) };
}
