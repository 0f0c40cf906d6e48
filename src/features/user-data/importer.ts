// The import engine (supplement §19.3, §19.4), the same for every entity type (entities.ts has what is
// type-specific):
// - analyze(): the file's structure (file.ts), every entity through its feature's create rules, duplicate names,
//   clashes inside the file, settings values; unresolvable tag and secret references become warnings.
// - previewOf(): totals, conflicts with stored entities, and in apply mode what would be deleted.
// - apply(): runs inside ONE transaction (the caller's `db.tx`): deletions the caller listed (only ones preview would
//   list), then each type in file order — tags and secrets first, so references to them are remapped to the ids they
//   end up with — then settings. Any failure throws and the transaction rolls back: all or nothing. Every await in
//   here is a database call; slow work (parsing, checks, argon2id, decryption) is done before the transaction on a
//   work thread (plan.ts), and the loop gives the event loop back every few ms (platform/work/slice.ts): other
//   requests' reads go to the reader connection meanwhile, their writes wait for the transaction.
import type { TierLimits } from "../../config/schema";
import type { Db } from "../../platform/db/db";
import { TimeSlice } from "../../platform/work/slice";
import { ApiError, invalid, limitReached, type ErrorCode } from "../../platform/core/errors";
import { isUuid, newId } from "../../platform/core/ids";
import type { SecretsSelector } from "../secrets/contract";
import type { ParsedSelector } from "../secrets/service";
import { SETTING_KEYS, validateSetter, type SettingKey } from "../settings/service";
import { updateExisting, type CheckContext, type Draft, type Existing, type TypeHandler, type UserDataDeps, type WriteContext } from "./entities";
import type { ConflictInfo, EntityType, ImportResult, Mode, Preview, Resolution, TypeResult } from "./contract";
import { isObject, MAX_PROBLEMS, type FileReading, type ParsedFile } from "./file";
import { CONFLICT_RESOLUTIONS, ENTITY_TYPES, IMPORT_MODES } from "./shared-rules";

const MAX_WARNINGS = 200;

export interface Selection {
  action: "import" | "skip";
  conflictResolution?: Resolution;
}

/** What apply() writes: drafts per type (file order), the settings, the file's secrets as selectors name them. */
export interface Checked {
  drafts: Partial<Record<EntityType, Draft[]>>;
  /** Validated settings changes (unknown keys dropped); undefined when the file has no settings. */
  settings?: [SettingKey, unknown][];
  warnings: string[];
  /** The source id of the file's secret a selector entry names (its id, else its name), or undefined. */
  secretOf(entry: string): string | undefined;
  /** Entities of the file left out of `drafts` because the import skips them (plan.ts), per type. */
  skipped?: Partial<Record<EntityType, number>>;
}

/** A checked file. */
export interface Analysis extends Checked {
  file: ParsedFile;
}

export interface ApplyOptions {
  userId: string;
  mode: Mode;
  selections?: Partial<Record<EntityType, Map<string, Selection>>>;
  importSettings: boolean;
  applyDeletions?: Partial<Record<EntityType, string[]>>;
  limits: TierLimits;
  /** Tier count limits (§22) apply; false for a clone. */
  countLimits: boolean;
  tierName: string;
  now: number;
  secretValues: Map<string, string>;
  loadRecords?: WriteContext["loadRecords"];
}

/** Ids the caller acts on after the commit. */
export interface Touched {
  writtenIds: Partial<Record<EntityType, string[]>>;
  deletedIds: Partial<Record<EntityType, string[]>>;
}

/** Warnings collected once each, capped. */
class Warnings {
  readonly list: string[] = [];
  private readonly seen = new Set<string>();
  private dropped = 0;
  add(w: string) {
    if (this.seen.has(w)) return;
    this.seen.add(w);
    if (this.list.length < MAX_WARNINGS) this.list.push(w);
    else this.dropped++;
  }
  done(): string[] {
    return this.dropped > 0 ? [...this.list, `… and ${this.dropped} more warnings`] : this.list;
  }
}

/** The message of an entity's error, prefixed with its type and source id; always a 400 (§19.4). */
export function entityError(type: EntityType, sourceId: string, err: unknown): Error {
  const prefix = `${type}[${sourceId}]: `;
  if (err instanceof ApiError) {
    const code = err.status === 400 ? err.code : "INVALID_INPUT";
    return new ApiError(400, code, err.message.startsWith(prefix) ? err.message : prefix + err.message);
  }
  if (/UNIQUE constraint failed|duplicate key value|FOREIGN KEY constraint/i.test(String((err as Error)?.message)))
    return new ApiError(400, "INVALID_INPUT", `${prefix}conflicts with stored data`);
  return err as Error;
}

/** The file's secrets as [source id, trimmed name or null] (what secretIndex() reads). */
export const fileSecrets = (file: ParsedFile): [string, string | null][] =>
  (file.entities.secrets ?? []).map((e) => [e.sourceId, typeof e.raw.name === "string" ? e.raw.name.trim() : null]);

/** The source id a selector entry names: a secret id of the file, else a secret name of the file. */
export function secretIndex(secrets: Iterable<[string, string | null]>): (entry: string) => string | undefined {
  const ids = new Set<string>();
  const byName = new Map<string, string>();
  for (const [id, name] of secrets) {
    ids.add(id);
    if (name !== null) byName.set(name, id);
  }
  return (entry: string): string | undefined => (isUuid(entry) && ids.has(entry.toLowerCase()) ? entry.toLowerCase() : byName.get(entry));
}

const selectorEntries = (d: Draft): { parsed: ParsedSelector; where: string } | undefined => {
  const any = d as Draft & { responder?: { settings: { secrets: ParsedSelector } }; tracker?: { secrets: ParsedSelector } };
  if (any.responder) return { parsed: any.responder.settings.secrets, where: "settings.secrets" };
  if (any.tracker) return { parsed: any.tracker.secrets, where: "secrets" };
  return undefined;
};

/** Checks every entity and the settings of a file that passed the structure checks. */
export function analyze(
  reading: FileReading,
  handlers: Record<EntityType, TypeHandler>,
  ctx: CheckContext,
): { analysis?: Analysis; problems: string[]; warnings: string[]; code?: ErrorCode } {
  const warnings = new Warnings();
  reading.warnings.forEach((w) => warnings.add(w));
  if (!reading.file) return { problems: reading.problems, warnings: warnings.done() };
  const file = reading.file;
  const problems: string[] = [];
  /** The code of the first problem an entity check raised (e.g. TARGET_NOT_ALLOWED), for the import's 400. */
  let code: ErrorCode | undefined;
  const drafts: Analysis["drafts"] = {};
  for (const type of ENTITY_TYPES) {
    const entities = file.entities[type];
    if (!entities) continue;
    const handler = handlers[type];
    const list: Draft[] = [];
    const names = new Map<string, string>();
    for (const e of entities) {
      let d: Draft;
      try {
        d = handler.check(e, ctx);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        if (problems.length === 0 && err.status === 400) code = err.code;
        problems.push(`${type}[${e.sourceId}]: ${err.message}`);
        continue;
      }
      const twin = names.get(d.name);
      if (twin !== undefined) problems.push(`${type}[${d.sourceId}]: name ${JSON.stringify(d.name)} is also used by ${type}[${twin}] of the file`);
      names.set(d.name, d.sourceId);
      list.push(d);
    }
    problems.push(...(handler.clashes?.(list) ?? []));
    drafts[type] = list;
  }
  const secrets = file.entities.secrets ?? [];
  const withValues = secrets.filter((e) => e.raw.encryptedValue !== undefined && e.raw.encryptedValue !== null).length;
  if (withValues > 0 && !file.encryption) problems.push("secretsEncryption: is required when secrets carry encryptedValue");
  if (secrets.length > 0 && withValues === 0) warnings.add("secrets: file has no secret values");

  // References that cannot be resolved inside the file are dropped on import.
  const tagIds = new Set((file.entities.tags ?? []).map((e) => e.sourceId));
  const secretOf = secretIndex(fileSecrets(file));
  for (const type of ENTITY_TYPES) {
    for (const d of drafts[type] ?? []) {
      for (const t of d.tagIds) if (!tagIds.has(t)) warnings.add(`${type}[${d.sourceId}]: tag ${t} is not in the file; it is dropped`);
      const sel = selectorEntries(d);
      if (sel && typeof sel.parsed === "object")
        for (const entry of sel.parsed.entries)
          if (!secretOf(entry))
            warnings.add(`${type}[${d.sourceId}]: ${sel.where}: secret ${JSON.stringify(entry.slice(0, 100))} is not in the file; it is dropped`);
    }
  }

  let settings: [SettingKey, unknown][] | undefined;
  if (file.settings) {
    settings = [];
    for (const [key, value] of Object.entries(file.settings)) {
      if (!(SETTING_KEYS as readonly string[]).includes(key)) {
        warnings.add(`settings.${key.slice(0, 100)}: unknown setting ignored`);
        continue;
      }
      if (value === null || value === undefined) continue;
      try {
        settings.push(...validateSetter({ [key]: value }));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        problems.push(`settings.${err.message}`);
      }
    }
    const scope = settings.find(([k]) => k === "common.globalScopeTagIds");
    for (const t of (scope?.[1] as string[] | undefined) ?? [])
      if (!tagIds.has(t.toLowerCase()))
        warnings.add(`settings.common.globalScopeTagIds: tag ${JSON.stringify(t.slice(0, 100))} is not in the file; it is dropped`);
  }
  if (problems.length > 0) return { problems: problems.slice(0, MAX_PROBLEMS), warnings: warnings.done(), ...(code ? { code } : {}) };
  return { analysis: { file, drafts, ...(settings ? { settings } : {}), warnings: warnings.done(), secretOf }, problems, warnings: warnings.done() };
}

/** Existing entities of the user, per type in `types`. */
export async function existingOf(db: Db, handlers: Record<EntityType, TypeHandler>, types: Iterable<EntityType>, userId: string) {
  const out: Partial<Record<EntityType, Existing[]>> = {};
  for (const type of types) out[type] = await handlers[type].existing(db, userId);
  return out;
}

/** Types with entities in the file, in file order. */
export const typesOf = (c: Pick<Checked, "drafts">): EntityType[] => ENTITY_TYPES.filter((t) => c.drafts[t] !== undefined);

/** Stored entities of each type in the file whose name no file entity has (what apply mode may delete). */
export function deletable(
  analysis: Pick<Checked, "drafts">,
  existing: Partial<Record<EntityType, Existing[]>>,
): Partial<Record<EntityType, Existing[]>> {
  const out: Partial<Record<EntityType, Existing[]>> = {};
  for (const type of ENTITY_TYPES) {
    const drafts = analysis.drafts[type];
    if (!drafts) continue;
    const names = new Set(drafts.map((d) => d.name));
    out[type] = (existing[type] ?? []).filter((e) => !names.has(e.name)).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  return out;
}

/** What an import of the analysed file would do, given the user's stored entities and whether they have settings. */
export function previewOf(
  handlers: Record<EntityType, TypeHandler>,
  analysis: Analysis,
  existing: Partial<Record<EntityType, Existing[]>>,
  hasExistingSettings: boolean,
  mode: Mode,
): Preview {
  const summary: Preview["summary"] = {};
  for (const type of ENTITY_TYPES) {
    const drafts = analysis.drafts[type];
    if (!drafts) continue;
    const conflicts: ConflictInfo[] = [];
    for (const d of drafts) {
      const c = handlers[type].conflict(d, existing[type] ?? []);
      if (c) conflicts.push({ sourceId: d.sourceId, name: d.name, existingId: c.existingId, renameAllowed: c.renameAllowed });
    }
    summary[type] = { total: drafts.length, conflicts };
  }
  summary.settings = { included: analysis.settings !== undefined, hasExisting: hasExistingSettings };
  const out: Preview = { valid: true, version: analysis.file.version, summary, warnings: analysis.warnings };
  if (mode === "apply") {
    const del = deletable(analysis, existing);
    out.toDelete = Object.fromEntries(
      Object.entries(del).map(([type, list]) => [type, list!.map((e) => ({ id: e.id, name: e.name }))]),
    ) as NonNullable<Preview["toDelete"]>;
  }
  return out;
}

/** Runs the import inside `tx` (see the file comment). */
export async function apply(
  tx: Db,
  deps: UserDataDeps,
  handlers: Record<EntityType, TypeHandler>,
  analysis: Checked,
  o: ApplyOptions,
): Promise<{ result: ImportResult; touched: Touched }> {
  const slice = new TimeSlice();
  const warnings = new Warnings();
  analysis.warnings.forEach((w) => warnings.add(w));
  const results: ImportResult["results"] = { settings: { imported: false } };
  const touched: Touched = { writtenIds: {}, deletedIds: {} };
  const existing = await existingOf(tx, handlers, typesOf(analysis), o.userId);

  // 1. Deletions: only what preview lists in toDelete, and only in apply mode.
  const del = deletable(analysis, existing);
  for (const [type, ids] of Object.entries(o.applyDeletions ?? {}) as [EntityType, string[]][]) {
    const allowed = new Set((del[type] ?? []).map((e) => e.id));
    ids.forEach((id, i) => {
      if (!allowed.has(id)) throw invalid(`applyDeletions.${type}[${i}]: ${id} is not in the preview's toDelete list`);
    });
    for (const id of ids) {
      await handlers[type].remove(tx, o.userId, id);
      await slice.tick();
    }
    touched.deletedIds[type] = ids;
    existing[type] = (existing[type] ?? []).filter((e) => !ids.includes(e.id));
  }

  // 2. Entities, type by type. Source id → id on this server, for references.
  const idMap: Partial<Record<"tags" | "secrets", Map<string, string>>> = { tags: new Map(), secrets: new Map() };
  const secretOf = (entry: string) => analysis.secretOf(entry);
  for (const type of ENTITY_TYPES) {
    const drafts = analysis.drafts[type];
    if (!drafts) continue;
    const handler = handlers[type];
    const result: TypeResult = { imported: 0, updated: 0, skipped: analysis.skipped?.[type] ?? 0, deleted: touched.deletedIds[type]?.length ?? 0 };
    results[type] = result;
    const stored = existing[type] ?? [];
    const storedById = new Map(stored.map((e) => [e.id, e]));
    const used = new Set([...stored.map((e) => e.name), ...drafts.map((d) => d.name)]);
    const max = o.countLimits ? handler.maxCount(o.limits) : undefined;
    let count = max === undefined ? 0 : await handler.count(tx, o.userId);
    const overwritten = new Set<string>();
    const written: string[] = [];
    const selections = o.selections?.[type];
    const map = type === "tags" || type === "secrets" ? idMap[type]! : undefined;

    for (const d of drafts) {
      await slice.tick();
      const where = `${type}[${d.sourceId}]`;
      const w: WriteContext = {
        now: o.now,
        limits: o.limits,
        storageCap: o.countLimits,
        secretValue: (id) => o.secretValues.get(id),
        ...(o.loadRecords ? { loadRecords: o.loadRecords } : {}),
        selector: (parsed, field): SecretsSelector => {
          if (parsed === "none" || parsed === "all") return parsed;
          const ids = new Set<string>();
          for (const entry of parsed.entries) {
            const source = secretOf(entry);
            const dest = source === undefined ? undefined : idMap.secrets!.get(source);
            if (dest) ids.add(dest);
            else warnings.add(`${where}: ${field}: secret ${JSON.stringify(entry.slice(0, 100))} was not imported; it is dropped`);
          }
          return ids.size === 0 ? "none" : { selected: [...ids] };
        },
      };
      try {
        const selection = selections ? (selections.get(d.sourceId) ?? { action: "skip" as const }) : { action: "import" as const };
        const conflict = handler.conflict(d, stored);
        if (selection.action === "skip" || (handler.writable && !handler.writable(d, w))) {
          if (selection.action === "import") warnings.add(`${where}: the file has no value for secret ${JSON.stringify(d.name)}; it is skipped`);
          if (conflict) map?.set(d.sourceId, conflict.existingId);
          result.skipped++;
          continue;
        }
        let resolution: Resolution | "insert" = "insert";
        if (conflict) resolution = selection.conflictResolution ?? (o.mode === "apply" ? "overwrite" : conflict.renameAllowed ? "rename" : "skip");
        if (resolution === "skip") {
          map?.set(d.sourceId, conflict!.existingId);
          result.skipped++;
          continue;
        }
        let id: string;
        if (resolution === "overwrite") {
          id = conflict!.existingId;
          if (overwritten.has(id)) throw invalid(`two entities of the file would overwrite the same stored one (${id})`);
          overwritten.add(id);
          await handler.replace(tx, o.userId, id, d, w);
          const entry = storedById.get(id);
          if (entry) updateExisting(stored, entry, asExisting(d, id));
          result.updated++;
        } else {
          if (resolution === "rename" && !conflict!.renameAllowed)
            throw invalid("rename is not allowed: its location and method overlap a stored responder (choose overwrite or skip)");
          let name = d.name;
          if (resolution === "rename") {
            // the work thread chose the name against every name of the file (plan.ts); taken since: choose again
            if (d.renameTo !== undefined && !used.has(d.renameTo)) name = d.renameTo;
            else for (let n = 2; used.has(name); n++) name = handler.renamed(d.name, n);
            used.add(name);
          }
          if (max !== undefined && count >= max) throw limitReached(`at most ${max} ${type} allowed on the ${o.tierName} tier`);
          id = newId();
          await handler.insert(tx, o.userId, id, { ...d, name }, w);
          count++;
          result.imported++;
        }
        map?.set(d.sourceId, id);
        written.push(id);
        if (handler.tagType) {
          const tagIds: string[] = [];
          for (const t of d.tagIds) {
            const dest = idMap.tags!.get(t);
            if (dest) tagIds.push(dest);
            else warnings.add(`${where}: tag ${t} was not imported; it is dropped`);
          }
          await deps.tags.setEntityTags(tx, handler.tagType, id, o.userId, [...new Set(tagIds)]);
        }
      } catch (err) {
        throw entityError(type, d.sourceId, err);
      }
    }
    touched.writtenIds[type] = written;
  }

  // 3. Settings: merge merges keys, apply replaces them (§19.4).
  if (analysis.settings && o.importSettings) {
    const changes = analysis.settings.map(([key, value]): [SettingKey, unknown] => {
      if (key !== "common.globalScopeTagIds") return [key, value];
      const ids: string[] = [];
      for (const t of value as string[]) {
        const dest = idMap.tags!.get(t.toLowerCase());
        if (dest) ids.push(dest);
        else warnings.add(`settings.common.globalScopeTagIds: tag ${JSON.stringify(t.slice(0, 100))} was not imported; it is dropped`);
      }
      return [key, ids];
    });
    try {
      await deps.settings.importApply(tx, o.userId, changes, o.mode === "apply");
    } catch (err) {
      if (err instanceof ApiError) throw new ApiError(400, err.code, err.message);
      throw err;
    }
    results.settings = { imported: true };
  } else {
    results.settings = { imported: false };
  }
  const { settings, ...perType } = results;
  return { result: { results: { ...perType, settings }, warnings: warnings.done() }, touched };
}

/** What later conflict checks see of an entity that overwrote a stored one (its new name and location). */
function asExisting(d: Draft, id: string): Existing {
  const r = (d as Draft & { responder?: { location: { prefix: string; pathType: string; path: string }; method: string } }).responder;
  return {
    id,
    name: d.name,
    ...(r
      ? { location: { prefix: r.location.prefix, pathType: r.location.pathType, pathLower: r.location.path.toLowerCase(), method: r.method } }
      : {}),
  };
}

// ---- request members (shape checks, 400) ----

export function parseMode(raw: unknown): Mode {
  if (raw === undefined || raw === null) return "merge";
  if (typeof raw !== "string" || !(IMPORT_MODES as readonly string[]).includes(raw)) throw invalid(`mode: must be ${IMPORT_MODES.join(" or ")}`);
  return raw as Mode;
}

/** `selections`: per type, `[{sourceId, action, conflictResolution?}]`; every sourceId must be an entity of the file. */
export function parseSelections(raw: unknown, file: ParsedFile): Partial<Record<EntityType, Map<string, Selection>>> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) throw invalid("selections: must be an object of type → [{sourceId, action, conflictResolution?}]");
  const out: Partial<Record<EntityType, Map<string, Selection>>> = {};
  for (const [type, list] of Object.entries(raw)) {
    if (!(ENTITY_TYPES as readonly string[]).includes(type)) throw invalid(`selections.${type.slice(0, 100)}: unknown entity type`);
    if (list === null || list === undefined) continue;
    if (!Array.isArray(list)) throw invalid(`selections.${type}: must be an array`);
    const inFile = new Set((file.entities[type as EntityType] ?? []).map((e) => e.sourceId));
    const map = new Map<string, Selection>();
    list.forEach((item, i) => {
      const at = `selections.${type}[${i}]`;
      if (!isObject(item)) throw invalid(`${at}: must be an object {sourceId, action, conflictResolution?}`);
      if (!isUuid(item.sourceId)) throw invalid(`${at}.sourceId: must be a UUID`);
      const sourceId = item.sourceId.toLowerCase();
      if (!inFile.has(sourceId)) throw invalid(`${at}.sourceId: ${sourceId} is not a ${type} entity of the file`);
      if (map.has(sourceId)) throw invalid(`${at}.sourceId: ${sourceId} is listed twice`);
      if (item.action !== "import" && item.action !== "skip") throw invalid(`${at}.action: must be import or skip`);
      const sel: Selection = { action: item.action };
      if (item.conflictResolution !== undefined && item.conflictResolution !== null) {
        if (typeof item.conflictResolution !== "string" || !(CONFLICT_RESOLUTIONS as readonly string[]).includes(item.conflictResolution))
          throw invalid(`${at}.conflictResolution: must be rename, overwrite or skip`);
        sel.conflictResolution = item.conflictResolution as Resolution;
      }
      map.set(sourceId, sel);
    });
    out[type as EntityType] = map;
  }
  return out;
}

/** `applyDeletions`: per type, ids of stored entities (apply mode only). */
export function parseApplyDeletions(raw: unknown, mode: Mode, file: ParsedFile): Partial<Record<EntityType, string[]>> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) throw invalid("applyDeletions: must be an object of type → [existing ids]");
  const out: Partial<Record<EntityType, string[]>> = {};
  for (const [type, list] of Object.entries(raw)) {
    if (!(ENTITY_TYPES as readonly string[]).includes(type)) throw invalid(`applyDeletions.${type.slice(0, 100)}: unknown entity type`);
    if (list === null || list === undefined) continue;
    if (!Array.isArray(list) || !list.every(isUuid)) throw invalid(`applyDeletions.${type}: must be an array of ids`);
    if (list.length === 0) continue;
    if (mode !== "apply") throw invalid("applyDeletions: deletions happen only in apply mode");
    if (!file.entities[type as EntityType]) throw invalid(`applyDeletions.${type}: the file has no ${type}, so nothing of that type can be deleted`);
    out[type as EntityType] = [...new Set(list.map((id) => id.toLowerCase()))];
  }
  return out;
}
