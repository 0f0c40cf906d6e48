// The export file (supplement §19.2): its members, and reading an untrusted one. This file checks the structure
// every entity type shares (objects with a unique UUID `id`, `tagIds`, timestamps); each type's own fields are
// checked by its handler (entities.ts) with the owning feature's create rules. Problems are collected, not thrown:
// a preview answers `{valid: false, warnings}` with all of them (up to MAX_PROBLEMS), an import a 400 naming the first.
import { jsonTooDeep, MAX_JSON_DEPTH, nulProblem } from "../../platform/http/body";
import { isUuid } from "../../platform/core/ids";
import { MAX_TIMESTAMP } from "../../platform/core/validate";
import { MAX_TAGS_PER_ENTITY } from "../tags/shared-rules";
import type { EntityType } from "./contract";
import { readSecretsEncryption, type KdfParams } from "./crypto";
import { ENTITY_TYPES } from "./shared-rules";

export const FILE_FORMAT = "secbox-export";
export const FILE_VERSION = 1;

export const MAX_PROBLEMS = 50;

/** One entity of a file: its source id (lower-cased), its tag references and its raw members. */
export interface FileEntity {
  sourceId: string;
  /** Source ids of tags (lower-cased, repeats collapsed). */
  tagIds: string[];
  createdAt?: number;
  updatedAt?: number;
  raw: Record<string, unknown>;
}

export interface ParsedFile {
  version: number;
  encryption?: { salt: Uint8Array; params: KdfParams };
  entities: Partial<Record<EntityType, FileEntity[]>>;
  settings?: Record<string, unknown>;
}

export interface FileReading {
  file?: ParsedFile;
  /** Set when the file's version could be read. */
  version?: number;
  problems: string[];
  warnings: string[];
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isTimestamp = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= MAX_TIMESTAMP;

/** `data` of a preview or import body: the file as a JSON object, or its text. */
export function readFile(raw: unknown): FileReading {
  const problems: string[] = [];
  const warnings: string[] = [];
  const fail = (message: string, version?: number): FileReading => ({ problems: [message], warnings, ...(version !== undefined ? { version } : {}) });
  let doc = raw;
  if (typeof raw === "string") {
    if (jsonTooDeep(raw)) return fail(`data: arrays and objects may be nested at most ${MAX_JSON_DEPTH} levels deep`);
    try {
      doc = JSON.parse(raw);
    } catch (err) {
      return fail(`data: not valid JSON (${(err as Error).message})`);
    }
  }
  if (raw === undefined || raw === null) return fail("data: is required (the export file)");
  if (!isObject(doc)) return fail("data: must be an export file (a JSON object)");
  if (doc.format !== FILE_FORMAT) return fail(`format: must be "${FILE_FORMAT}"`);
  if (typeof doc.version !== "number" || !Number.isInteger(doc.version)) return fail("version: must be an integer");
  const version = doc.version;
  if (version !== FILE_VERSION) return fail(`version: ${version} is not supported (this server reads version ${FILE_VERSION})`, version);
  // No stored text may hold U+0000 (supplement §28.1): the API body check leaves the file to this reader.
  const nul = nulProblem(doc);
  if (nul) return fail(nul, version);
  if (!isObject(doc.data)) return fail("data: must be an object of entity lists", version);

  const file: ParsedFile = { version, entities: {} };
  if (doc.secretsEncryption !== undefined && doc.secretsEncryption !== null) {
    const enc = readSecretsEncryption(doc.secretsEncryption);
    if (typeof enc === "string") problems.push(enc);
    else file.encryption = enc;
  }
  const data = doc.data;
  for (const key of Object.keys(data)) {
    if (key !== "settings" && !(ENTITY_TYPES as readonly string[]).includes(key)) warnings.push(`data.${key.slice(0, 100)}: unknown member ignored`);
  }
  for (const type of ENTITY_TYPES) {
    if (data[type] === undefined || data[type] === null) continue;
    const list = data[type];
    if (!Array.isArray(list)) {
      problems.push(`data.${type}: must be an array`);
      continue;
    }
    const seen = new Set<string>();
    const entities: FileEntity[] = [];
    list.forEach((item, i) => {
      const entity = readEntity(item, `${type}[${i}]`, type, problems);
      if (!entity) return;
      if (seen.has(entity.sourceId)) {
        problems.push(`${type}[${entity.sourceId}]: the id appears more than once`);
        return;
      }
      seen.add(entity.sourceId);
      entities.push(entity);
    });
    file.entities[type] = entities;
  }
  if (data.settings !== undefined && data.settings !== null) {
    if (isObject(data.settings)) file.settings = data.settings;
    else problems.push("data.settings: must be an object");
  }
  return problems.length > 0 ? { version, problems: problems.slice(0, MAX_PROBLEMS), warnings } : { file, version, problems, warnings };
}

function readEntity(item: unknown, at: string, type: EntityType, problems: string[]): FileEntity | undefined {
  if (!isObject(item)) {
    problems.push(`${at}: must be an object`);
    return undefined;
  }
  if (!isUuid(item.id)) {
    problems.push(`${at}.id: must be a UUID`);
    return undefined;
  }
  const sourceId = item.id.toLowerCase();
  const where = `${type}[${sourceId}]`;
  const entity: FileEntity = { sourceId, tagIds: [], raw: item };
  if (type !== "tags" && item.tagIds !== undefined && item.tagIds !== null) {
    if (!Array.isArray(item.tagIds) || !item.tagIds.every(isUuid)) {
      problems.push(`${where}.tagIds: must be an array of tag ids`);
      return undefined;
    }
    entity.tagIds = [...new Set((item.tagIds as string[]).map((id) => id.toLowerCase()))];
    if (entity.tagIds.length > MAX_TAGS_PER_ENTITY) {
      problems.push(`${where}.tagIds: at most ${MAX_TAGS_PER_ENTITY} tags per entity`);
      return undefined;
    }
  }
  for (const member of ["createdAt", "updatedAt"] as const) {
    const v = item[member];
    if (v === undefined || v === null) continue;
    if (!isTimestamp(v)) {
      problems.push(`${where}.${member}: must be a unix timestamp`);
      return undefined;
    }
    entity[member] = v;
  }
  return entity;
}
