// Preview and import requests off the event loop (issue 29). The route hands over the body's bytes as received
// (RawImport; moved to the thread, not copied); a work thread (tasks.ts) decodes them, reads the file (file.ts), checks every entity with its feature's create rules
// (importer.ts analyze), and answers a preview, or for an import the plan of what to write: selections, deletions and
// the file's secret values opened with the passphrase (argon2id there too). What the main thread then needs of a
// plan that may hold 100,000 entities travels as batches of JSON text in ArrayBuffers (moved, not copied: structured
// clone of a big object graph costs the receiving thread about what parsing it would), and is parsed batch by batch
// in time slices (unpackPlan) before the transaction (importer.ts apply) writes it, slicing too. Only the entities
// the import may write travel (prefilter): those it skips are counted, and an import that would exceed a tier count
// limit fails here, before the main thread sees any of it (a file of 160,000 tags costs the loop nothing).
// Stored entities the analysis compares with are read by the work thread on its own read-only SQLite connection; on
// PostgreSQL the main thread reads them (asynchronously) and sends them along.
// Owns: the request members of preview and import (mode, selections, importSettings, applyDeletions,
// secretsPassphrase) and the wire form of a plan. Must never: write, or open secrets on the main thread.
import type { Tier, TierLimits } from "../../config/schema";
import type { Db } from "../../platform/db/db";
import { decodeBody, PendingBody, RawBody } from "../../platform/http/body";

/** The path the body check knows as the import's: its `data` member is left to the file reader (file.ts, §28.1). */
const IMPORT_PATH = "/api/user/data/_import";
import { ApiError, invalid, limitReached } from "../../platform/core/errors";
import { charLength } from "../../platform/core/validate";
import { TimeSlice } from "../../platform/work/slice";
import { checkSecretValue } from "../secrets/service";
import type { SettingKey } from "../settings/service";
import { deriveKeySync, openValue } from "./crypto";

import type { Draft, Existing, TypeHandler, UserDataDeps } from "./entities";
import { isObject, readFile } from "./file";
import { ENTITY_TYPES, MAX_PASSPHRASE_CHARS, MIN_PASSPHRASE_CHARS } from "./shared-rules";
import type { EntityType, Mode, Preview, Resolution } from "./contract";
import {
  analyze,
  deletable,
  entityError,
  existingOf,
  parseApplyDeletions,
  parseMode,
  parseSelections,
  previewOf,
  typesOf,
  type Analysis,
  type Checked,
  type Selection,
} from "./importer";

/** The body of `_import_preview` / `_import` as received: the route keeps its bytes so they are decoded off the loop;
 *  a declared-length body is not even read until the service has taken the user's one import slot. */
export class RawImport {
  constructor(
    private readonly source: Uint8Array | PendingBody,
    readonly contentType: string,
  ) {}

  async bytes(): Promise<Uint8Array> {
    return this.source instanceof PendingBody ? (await this.source.read()).bytes : this.source;
  }
}

export const asBody = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null) return {};
  if (!isObject(body)) throw invalid("body: must be a JSON object");
  return body;
};

export function passphrase(raw: unknown, field: string, min = MIN_PASSPHRASE_CHARS): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const n = charLength(raw);
  if (n < min || n > MAX_PASSPHRASE_CHARS) throw invalid(`${field}: must be ${min} to ${MAX_PASSPHRASE_CHARS} characters`);
  return raw;
}

export const badPassphrase = (message: string) => new ApiError(400, "BAD_PASSPHRASE", message);

/** The user's stored entities (per type) and whether they have settings: what a preview compares with. */
export interface Stored {
  existing: Partial<Record<EntityType, Existing[]>>;
  hasSettings: boolean;
}

export interface AnalyzeInput {
  /** The raw body's bytes (a route), or a decoded body (the CLI). */
  request: { bytes: Uint8Array; contentType: string } | { body: unknown };
  kind: "preview" | "import" | "importAll";
  userId: string;
  tier: Tier;
  limits: TierLimits;
  /** Read by the main thread (PostgreSQL); absent: the work thread reads them itself (SQLite). */
  stored?: Stored;
  /** importAll (CLI `data import`): one rule for every conflict; with `deleteMissing` (apply mode) every deletion the
   *  preview lists, without it none (§27). */
  all?: { mode: Mode; resolution?: Resolution; secretsPassphrase?: string; deleteMissing?: boolean };
}

export type AnalyzeOutput = { preview: Preview } | { plan: PlanWire };
/** A preview's toDelete: per type, the stored entities the file does not name. */
export type ToDelete = NonNullable<Preview["toDelete"]>;

/** What a work thread needs to analyse: the features' rules (through the services) and, on SQLite, its reader. */
export interface AnalyzeEnv {
  deps: UserDataDeps;
  handlers: Record<EntityType, TypeHandler>;
  /** The thread's read-only connection; undefined on PostgreSQL (the input carries `stored`). */
  db: Db | undefined;
}

async function storedOf(env: AnalyzeEnv, input: AnalyzeInput, analysis: Analysis): Promise<Stored> {
  if (input.stored) return input.stored;
  if (!env.db) throw new Error("stored entities were not sent and this thread cannot read them");
  return {
    existing: await existingOf(env.db, env.handlers, typesOf(analysis), input.userId),
    hasSettings: Object.keys(await env.deps.settings.get(input.userId)).length > 0,
  };
}

/** On a work thread: a preview, or the plan of an import (400 naming the first problem). */
export async function analyzeRequest(input: AnalyzeInput, env: AnalyzeEnv): Promise<{ output: AnalyzeOutput; transfer: ArrayBuffer[] }> {
  const body = asBody(
    "body" in input.request ? input.request.body : decodeBody(new RawBody(input.request.bytes, input.request.contentType, IMPORT_PATH)),
  );
  const mode = input.all ? input.all.mode : parseMode(body.mode);
  const reading = readFile(body.data);
  const { analysis, problems, warnings, code } = analyze(reading, env.handlers, { tier: input.tier, limits: input.limits });
  if (input.kind === "preview") {
    if (!analysis)
      return {
        output: {
          preview: {
            valid: false,
            ...(reading.version !== undefined ? { version: reading.version } : {}),
            summary: {},
            warnings: [...problems, ...warnings],
          },
        },
        transfer: [],
      };
    const stored = await storedOf(env, input, analysis);
    return { output: { preview: previewOf(env.handlers, analysis, stored.existing, stored.hasSettings, mode) }, transfer: [] };
  }
  if (!analysis) {
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more; _import_preview lists them)` : "";
    throw new ApiError(400, code ?? "INVALID_INPUT", `${problems[0] ?? "data: invalid export file"}${more}`);
  }
  let selections: Partial<Record<EntityType, Map<string, Selection>>> | undefined;
  let importSettings = true;
  let applyDeletions: Partial<Record<EntityType, string[]>> | undefined;
  let notDeleted: ToDelete | undefined;
  let secretsPassphrase: string | undefined;
  if (input.all) {
    ({ selections, applyDeletions, notDeleted } = importAllChoices(env, analysis, await storedOf(env, input, analysis), input.all));
    secretsPassphrase = input.all.secretsPassphrase;
  } else {
    selections = parseSelections(body.selections, analysis.file);
    if (body.importSettings !== undefined && body.importSettings !== null && typeof body.importSettings !== "boolean")
      throw invalid("importSettings: must be a boolean");
    importSettings = body.importSettings !== false;
    applyDeletions = parseApplyDeletions(body.applyDeletions, mode, analysis.file);
    secretsPassphrase = passphrase(body.secretsPassphrase, "secretsPassphrase", 1);
  }
  const secretValues = openSecrets(analysis, selections, secretsPassphrase);
  const stored = await storedOf(env, input, analysis);
  const kept = prefilter(env.handlers, analysis, stored.existing, {
    mode,
    selections,
    applyDeletions,
    secretValues,
    limits: input.limits,
    tierName: input.tier,
  });
  return pack({ analysis, kept, mode, importSettings, selections, applyDeletions, notDeleted, secretValues });
}

interface Kept {
  drafts: Partial<Record<EntityType, Draft[]>>;
  skipped: Partial<Record<EntityType, number>>;
  warnings: string[];
}

/**
 * The entities an import may write, decided as apply() will decide them against the stored entities read before the
 * transaction (apply decides again inside it): skipped ones are only counted — except tags and secrets that match
 * a stored one (references to them follow it) — a rename's name is chosen here against every name of the file, and
 * the first entity beyond a tier count limit fails the import as apply would (400 LIMIT_REACHED naming it).
 */
function prefilter(
  handlers: Record<EntityType, TypeHandler>,
  analysis: Analysis,
  existing: Partial<Record<EntityType, Existing[]>>,
  o: {
    mode: Mode;
    selections?: Partial<Record<EntityType, Map<string, Selection>>>;
    applyDeletions?: Partial<Record<EntityType, string[]>>;
    secretValues: Map<string, string>;
    limits: TierLimits;
    tierName: string;
  },
): Kept {
  const out: Kept = { drafts: {}, skipped: {}, warnings: [] };
  const remaining = { ...existing };
  const del = deletable(analysis, existing);
  for (const [type, ids] of Object.entries(o.applyDeletions ?? {}) as [EntityType, string[]][]) {
    const allowed = new Set((del[type] ?? []).map((e) => e.id));
    ids.forEach((id, i) => {
      if (!allowed.has(id)) throw invalid(`applyDeletions.${type}[${i}]: ${id} is not in the preview's toDelete list`);
    });
    const gone = new Set(ids);
    remaining[type] = (remaining[type] ?? []).filter((e) => !gone.has(e.id));
  }
  for (const type of ENTITY_TYPES) {
    const drafts = analysis.drafts[type];
    if (!drafts) continue;
    const handler = handlers[type];
    const stored = remaining[type] ?? [];
    const used = new Set([...stored.map((e) => e.name), ...drafts.map((d) => d.name)]);
    const max = handler.maxCount(o.limits);
    let count = stored.length;
    const mapped = type === "tags" || type === "secrets";
    const selections = o.selections?.[type];
    const overwritten = new Set<string>();
    const kept: Draft[] = [];
    let skipped = 0;
    for (const d of drafts) {
      const selection = selections ? (selections.get(d.sourceId) ?? { action: "skip" as const }) : { action: "import" as const };
      const conflict = handler.conflict(d, stored);
      const unwritable = type === "secrets" && !o.secretValues.has(d.sourceId);
      if (selection.action === "skip" || unwritable) {
        if (conflict && mapped) kept.push(d);
        else {
          if (selection.action === "import")
            out.warnings.push(`${type}[${d.sourceId}]: the file has no value for secret ${JSON.stringify(d.name)}; it is skipped`);
          skipped++;
        }
        continue;
      }
      const resolution = conflict
        ? (selection.conflictResolution ?? (o.mode === "apply" ? "overwrite" : conflict.renameAllowed ? "rename" : "skip"))
        : "insert";
      if (resolution === "skip") {
        if (mapped) kept.push(d);
        else skipped++;
        continue;
      }
      kept.push(d);
      if (resolution === "overwrite") {
        if (overwritten.has(conflict!.existingId))
          throw entityError(type, d.sourceId, invalid(`two entities of the file would overwrite the same stored one (${conflict!.existingId})`));
        overwritten.add(conflict!.existingId);
        continue;
      }
      // apply refuses a rename that is not allowed, with its message
      if (resolution === "rename" && !conflict!.renameAllowed) continue;
      if (resolution === "rename") {
        let name = d.name;
        for (let n = 2; used.has(name); n++) name = handler.renamed(d.name, n);
        used.add(name);
        d.renameTo = name;
      }
      if (max !== undefined && count >= max)
        throw entityError(type, d.sourceId, limitReached(`at most ${max} ${type} allowed on the ${o.tierName} tier`));
      count++;
    }
    out.drafts[type] = kept;
    if (skipped > 0) out.skipped[type] = skipped;
  }
  return out;
}

/** CLI `data import`: `resolution` for each conflicting entity (skip where a rename is not allowed), default §19.4
 *  without it; in apply mode the deletions the preview lists only with `deleteMissing` (§27), else they are
 *  returned as `notDeleted` for the CLI to print. */
function importAllChoices(env: AnalyzeEnv, analysis: Analysis, stored: Stored, all: NonNullable<AnalyzeInput["all"]>) {
  const p = previewOf(env.handlers, analysis, stored.existing, stored.hasSettings, all.mode);
  let selections: Partial<Record<EntityType, Map<string, Selection>>> | undefined;
  if (all.resolution) {
    selections = {};
    for (const [type, drafts] of Object.entries(analysis.drafts) as [EntityType, Draft[]][]) {
      const conflicts = new Map((p.summary[type]?.conflicts ?? []).map((c) => [c.sourceId, c]));
      selections[type] = new Map(
        drafts.map((d): [string, Selection] => {
          const c = conflicts.get(d.sourceId);
          if (!c) return [d.sourceId, { action: "import" }];
          return [d.sourceId, { action: "import", conflictResolution: all.resolution === "rename" && !c.renameAllowed ? "skip" : all.resolution! }];
        }),
      );
    }
  }
  const toDelete = p.toDelete && Object.values(p.toDelete).some((list) => list.length > 0) ? p.toDelete : undefined;
  if (!all.deleteMissing) return { selections, applyDeletions: undefined, notDeleted: toDelete };
  const applyDeletions = toDelete
    ? (Object.fromEntries(Object.entries(toDelete).map(([type, list]) => [type, list.map((e) => e.id)])) as Partial<Record<EntityType, string[]>>)
    : undefined;
  return { selections, applyDeletions, notDeleted: undefined };
}

/** The plain values of the secrets the import writes: missing or wrong passphrase → 400 BAD_PASSPHRASE. */
export function openSecrets(
  analysis: Analysis,
  selections: Partial<Record<EntityType, Map<string, Selection>>> | undefined,
  secretsPassphrase: string | undefined,
): Map<string, string> {
  const values = new Map<string, string>();
  const chosen = selections?.secrets;
  const sealed = ((analysis.drafts.secrets ?? []) as (Draft & { sealed?: Uint8Array })[]).filter(
    (d) => d.sealed && (!chosen || chosen.get(d.sourceId)?.action === "import"),
  );
  if (sealed.length === 0) return values;
  if (secretsPassphrase === undefined)
    throw badPassphrase(
      "secretsPassphrase: the file's secret values need the passphrase they were exported with (or leave secrets out through selections)",
    );
  const enc = analysis.file.encryption!;
  const key = deriveKeySync(secretsPassphrase, enc.salt, enc.params);
  for (const d of sealed) {
    const value = openValue(key, d.sealed!);
    if (value === undefined) throw badPassphrase(`secretsPassphrase: wrong passphrase (secrets[${d.sourceId}] does not open with it)`);
    try {
      values.set(d.sourceId, checkSecretValue(value, "value"));
    } catch (err) {
      throw invalid(`secrets[${d.sourceId}]: ${(err as Error).message}`);
    }
  }
  return values;
}

// ---- the plan on the wire ----

/** JSON text of this many characters or more ends a batch (~1 ms to parse). */
const BATCH_CHARS = 64 * 1024;

export interface PlanWire {
  mode: Mode;
  importSettings: boolean;
  settings?: [SettingKey, unknown][];
  warnings: string[];
  /** Marks byte arrays inside batches ({[tag]: base64}); random per plan, so file content cannot forge one. */
  tag: string;
  /** Per type, batches of JSON arrays. */
  drafts: Partial<Record<EntityType, ArrayBuffer[]>>;
  selections?: Partial<Record<EntityType, ArrayBuffer[]>>;
  applyDeletions?: Partial<Record<EntityType, ArrayBuffer[]>>;
  /** importAll without deleteMissing: what the preview lists in toDelete, left in place. */
  notDeleted?: ToDelete;
  /** Per type, how many entities of the file the import skips (not in `drafts`). */
  skipped: Partial<Record<EntityType, number>>;
  /** [selector entry, source id] for the secret selectors of `drafts` (an entry names a secret's id or name). */
  secrets: ArrayBuffer[];
  /** [source id, plain value]. */
  secretValues: ArrayBuffer[];
}

/** A plan as the main thread applies it. */
export interface Plan {
  checked: Checked;
  mode: Mode;
  importSettings: boolean;
  selections?: Partial<Record<EntityType, Map<string, Selection>>>;
  applyDeletions?: Partial<Record<EntityType, string[]>>;
  notDeleted?: ToDelete;
  secretValues: Map<string, string>;
}

/** Items as batches of JSON arrays (UTF-8), byte arrays as {[tag]: base64}. */
function packArray(items: readonly unknown[], tag: string, out: ArrayBuffer[]): ArrayBuffer[] {
  const batches: ArrayBuffer[] = [];
  const replacer = (_key: string, value: unknown) => (value instanceof Uint8Array ? { [tag]: Buffer.from(value).toString("base64") } : value);
  const encoder = new TextEncoder();
  let parts: string[] = [];
  let size = 0;
  const flush = () => {
    const bytes = encoder.encode(`[${parts.join(",")}]`);
    const buf = bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : (bytes.slice().buffer as ArrayBuffer);
    batches.push(buf);
    out.push(buf);
    parts = [];
    size = 0;
  };
  for (const item of items) {
    const text = JSON.stringify(item, replacer);
    parts.push(text);
    size += text.length;
    if (size >= BATCH_CHARS) flush();
  }
  if (parts.length > 0 || batches.length === 0) flush();
  return batches;
}

function pack(p: {
  analysis: Analysis;
  kept: Kept;
  mode: Mode;
  importSettings: boolean;
  selections?: Partial<Record<EntityType, Map<string, Selection>>>;
  applyDeletions?: Partial<Record<EntityType, string[]>>;
  notDeleted?: ToDelete;
  secretValues: Map<string, string>;
}): { output: AnalyzeOutput; transfer: ArrayBuffer[] } {
  const tag = `$bytes:${crypto.randomUUID()}`;
  const transfer: ArrayBuffer[] = [];
  const keptIds = new Set(Object.values(p.kept.drafts).flatMap((ds) => ds.map((d) => d.sourceId)));
  const perType = <T>(record: Partial<Record<EntityType, T>> | undefined, items: (v: T, type: EntityType) => unknown[]) =>
    record === undefined
      ? undefined
      : (Object.fromEntries(
          Object.entries(record).map(([type, v]) => [type, packArray(items(v as T, type as EntityType), tag, transfer)]),
        ) as Partial<Record<EntityType, ArrayBuffer[]>>);
  const plan: PlanWire = {
    mode: p.mode,
    importSettings: p.importSettings,
    ...(p.analysis.settings ? { settings: p.analysis.settings } : {}),
    warnings: [...p.analysis.warnings, ...p.kept.warnings],
    tag,
    skipped: p.kept.skipped,
    // a secret's sealed value stays here: its plain value travels in secretValues
    drafts: perType(p.kept.drafts, (drafts, type) =>
      type === "secrets" ? drafts.map(({ sealed: _s, ...d }: Draft & { sealed?: unknown }) => d) : drafts,
    )!,
    ...(p.selections ? { selections: perType(p.selections, (m) => [...m.entries()].filter(([id]) => keptIds.has(id))) } : {}),
    ...(p.applyDeletions ? { applyDeletions: perType(p.applyDeletions, (ids) => ids) } : {}),
    ...(p.notDeleted ? { notDeleted: p.notDeleted } : {}),
    secrets: packArray(selectorEntries(p.kept.drafts, p.analysis.secretOf), tag, transfer),
    secretValues: packArray([...p.secretValues.entries()], tag, transfer),
  };
  return { output: { plan }, transfer };
}

/** [selector entry, source id of the file's secret it names] for the secret selectors of `drafts`. */
function selectorEntries(drafts: Partial<Record<EntityType, Draft[]>>, secretOf: (entry: string) => string | undefined): [string, string][] {
  const out = new Map<string, string>();
  for (const list of Object.values(drafts)) {
    for (const d of list) {
      const any = d as Draft & { responder?: { settings: { secrets: unknown } }; tracker?: { secrets: unknown } };
      const parsed = any.responder?.settings.secrets ?? any.tracker?.secrets;
      if (typeof parsed !== "object" || parsed === null) continue;
      for (const entry of (parsed as { entries: string[] }).entries) {
        const source = secretOf(entry);
        if (source !== undefined) out.set(entry, source);
      }
    }
  }
  return [...out];
}

/** On the main thread: the plan back in the form apply() takes, parsed batch by batch in time slices. */
export async function unpackPlan(wire: PlanWire): Promise<Plan> {
  const slice = new TimeSlice();
  const decoder = new TextDecoder();
  const tag = wire.tag;
  const reviver = (_key: string, value: unknown) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const b64 = (value as Record<string, unknown>)[tag];
      if (typeof b64 === "string") return new Uint8Array(Buffer.from(b64, "base64"));
    }
    return value;
  };
  const unpack = async <T>(batches: ArrayBuffer[], withBytes = false): Promise<T[]> => {
    const out: T[] = [];
    for (const b of batches) {
      const items = JSON.parse(decoder.decode(b), withBytes ? reviver : undefined) as T[];
      for (const item of items) out.push(item);
      await slice.tick();
    }
    return out;
  };
  const perType = async <T, R>(record: Partial<Record<EntityType, ArrayBuffer[]>> | undefined, make: (items: T[]) => R, withBytes = false) => {
    if (record === undefined) return undefined;
    const out: Partial<Record<EntityType, R>> = {};
    for (const type of ENTITY_TYPES) {
      const batches = record[type];
      if (batches) out[type] = make(await unpack<T>(batches, withBytes));
    }
    return out;
  };
  const drafts = (await perType<Draft, Draft[]>(wire.drafts, (d) => d, true))!;
  const selections = await perType<[string, Selection], Map<string, Selection>>(wire.selections, (pairs) => new Map(pairs));
  const applyDeletions = await perType<string, string[]>(wire.applyDeletions, (ids) => ids);
  const entries = new Map(await unpack<[string, string]>(wire.secrets));
  const secretValues = new Map(await unpack<[string, string]>(wire.secretValues));
  return {
    checked: {
      drafts,
      ...(wire.settings ? { settings: wire.settings } : {}),
      warnings: wire.warnings,
      secretOf: (entry) => entries.get(entry),
      skipped: wire.skipped,
    },
    mode: wire.mode,
    importSettings: wire.importSettings,
    ...(selections ? { selections } : {}),
    ...(applyDeletions ? { applyDeletions } : {}),
    ...(wire.notDeleted ? { notDeleted: wire.notDeleted } : {}),
    secretValues,
  };
}
