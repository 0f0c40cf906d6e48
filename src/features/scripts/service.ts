// User scripts (supplement §8): a per-user library of script sources. Responders and trackers keep their own
// copy, so nothing else changes when a script is edited or deleted. A save compiles `content` as it will run and
// answers a syntax error as `warnings` without refusing the save (§27).
import type { AuthUser } from "../../platform/auth/principal";
import type { Db } from "../../platform/db/db";
import { duplicateName, invalid, isUniqueViolation, limitReached, notFound } from "../../platform/core/errors";
import { newId } from "../../platform/core/ids";
import { parseListQuery } from "../../platform/http/list-query";
import { normalizeName, pathId, required, utf8Length } from "../../platform/core/validate";
import { nowSec, tierLimits, type Runtime } from "../../platform/runtime";
import type { LooseInput } from "../../platform/http/contract";
import type { Untagged } from "../tags/contract";
import type { TagsService } from "../tags/service";
import type { ScriptChecker } from "../../sandbox/syntax";
import {
  SCRIPT_SORT_KEYS,
  type ScriptContextName,
  type ScriptCreateParams,
  type ScriptType,
  type ScriptUpdateParams,
  type UserScript,
  type UserScriptSaved,
  type UserScriptSummary,
} from "./contract";
import { MAX_SCRIPT_BYTES, MAX_SCRIPT_NAME, SCRIPT_CONTEXTS, SCRIPT_TYPES } from "./shared-rules";
import { scriptsStore, toScript, toSummary, type ScriptRow } from "./store";

function scriptType(raw: unknown): ScriptType {
  if (typeof raw !== "string" || !(SCRIPT_TYPES as readonly string[]).includes(raw))
    throw invalid(`scriptType: must be one of ${SCRIPT_TYPES.join(", ")}`);
  return raw as ScriptType;
}

function scriptContent(raw: unknown): string {
  if (typeof raw !== "string") throw invalid("content: must be a string");
  const bytes = utf8Length(raw);
  if (bytes < 1 || bytes > MAX_SCRIPT_BYTES) throw invalid(`content: must be 1 to ${MAX_SCRIPT_BYTES} UTF-8 bytes (got ${bytes})`);
  return raw;
}

/** The script, plus `warnings` when there are some (omitted when none, §27). */
const withWarnings = <T extends object>(x: T, warnings: string[]): T & { warnings?: string[] } => (warnings.length > 0 ? { ...x, warnings } : x);

const firstString = (v: unknown): string | undefined => (Array.isArray(v) ? firstString(v[0]) : typeof v === "string" ? v : undefined);

export class ScriptsService {
  constructor(
    private readonly rt: Runtime,
    private readonly tags: TagsService,
    /** Syntax warnings on save (§27); absent: none. */
    private readonly checkScripts?: ScriptChecker,
  ) {}

  /** §27: `content` compiled as it will run (page extractors in Chromium's forms, the rest in QuickJS's). */
  private async warnings(owner: string, type: ScriptType, content: string): Promise<string[]> {
    if (!this.checkScripts) return [];
    return this.checkScripts([{ field: "content", source: content, runtime: type === "page_extractor" ? "chromium" : "quickjs" }], owner);
  }

  async list(userId: string, rawQuery: Record<string, unknown>): Promise<{ items: UserScriptSummary[]; total: number }> {
    const query = parseListQuery(rawQuery, SCRIPT_SORT_KEYS);
    const context = (firstString(rawQuery.context) ?? "").trim();
    let types: readonly ScriptType[] | undefined;
    if (context !== "") {
      if (!Object.hasOwn(SCRIPT_CONTEXTS, context)) throw invalid(`context: must be one of ${Object.keys(SCRIPT_CONTEXTS).join(", ")}`);
      types = SCRIPT_CONTEXTS[context as ScriptContextName];
    }
    const { rows, total } = await scriptsStore.list(this.rt.db, userId, query, types);
    const tagMap = await this.tags.tagsFor(
      "script",
      rows.map((r) => r.id),
    );
    return { items: rows.map((r) => toSummary(r, tagMap.get(r.id) ?? [])), total };
  }

  async get(userId: string, rawId: string | undefined): Promise<UserScript> {
    const row = await scriptsStore.get(this.rt.db, userId, pathId(rawId, "Script"));
    if (!row) throw notFound("Script");
    return this.wire(row);
  }

  async create(user: AuthUser, input: LooseInput<typeof ScriptCreateParams>): Promise<UserScriptSaved> {
    const name = normalizeName(required(input.name, "name"), MAX_SCRIPT_NAME);
    const type = scriptType(required(input.scriptType, "scriptType"));
    const content = scriptContent(required(input.content, "content"));
    const tagIds = input.tagIds == null ? [] : await this.tags.resolveTagIds(user.id, input.tagIds);
    const limit = tierLimits(this.rt.config, user.tier).max_scripts;
    const now = nowSec(this.rt.clock);
    const row: ScriptRow = { id: newId(), user_id: user.id, name, script_type: type, content, created_at: now, updated_at: now };
    const warnings = await this.warnings(user.id, type, content);
    try {
      await this.rt.db.tx(async (tx) => {
        if ((await scriptsStore.count(tx, user.id)) >= limit)
          throw limitReached(`scripts: at most ${limit} scripts allowed on the ${user.tier} tier`);
        await scriptsStore.insert(tx, row);
        await this.tags.setEntityTags(tx, "script", row.id, user.id, tagIds);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Script", name);
      throw err;
    }
    return withWarnings(await this.wire(row), warnings);
  }

  async update(userId: string, rawId: string | undefined, input: LooseInput<typeof ScriptUpdateParams>): Promise<UserScriptSaved> {
    // Body checks first (supplement §1 check order), then the resource, then rules needing stored data.
    const name = input.name == null ? undefined : normalizeName(input.name, MAX_SCRIPT_NAME);
    const content = input.content == null ? undefined : scriptContent(input.content);
    const type = input.scriptType == null ? undefined : scriptType(input.scriptType);
    const hasTags = input.tagIds != null;
    if (name === undefined && content === undefined && !hasTags) throw invalid("body: at least one of name, content or tagIds is required");

    const id = pathId(rawId, "Script");
    const current = await scriptsStore.get(this.rt.db, userId, id);
    if (!current) throw notFound("Script");
    if (type !== undefined && type !== current.script_type) throw invalid(`scriptType: is immutable (this script is ${current.script_type})`);
    const tagIds = hasTags ? await this.tags.resolveTagIds(userId, input.tagIds) : undefined;

    const next: ScriptRow = { ...current, name: name ?? current.name, content: content ?? current.content, updated_at: nowSec(this.rt.clock) };
    const warnings = content === undefined ? [] : await this.warnings(userId, current.script_type as ScriptType, content);
    try {
      await this.rt.db.tx(async (tx) => {
        if ((await scriptsStore.update(tx, next)).changes === 0) throw notFound("Script");
        if (tagIds) await this.tags.setEntityTags(tx, "script", id, userId, tagIds);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Script", next.name);
      throw err;
    }
    return withWarnings(await this.wire(next), warnings);
  }

  async delete(userId: string, rawId: string | undefined): Promise<void> {
    const id = pathId(rawId, "Script");
    await this.rt.db.tx(async (tx) => {
      if ((await scriptsStore.delete(tx, userId, id)).changes === 0) throw notFound("Script");
      await this.tags.removeEntity(tx, "script", id);
    });
  }

  private async wire(row: ScriptRow): Promise<UserScript> {
    return toScript(row, (await this.tags.tagsFor("script", [row.id])).get(row.id) ?? []);
  }

  // ---- user data: export, import, clone (features/user-data). Writes take the import transaction's handle. ----

  /** Every script of the user with its content, name ascending (tags not included). */
  async exportAll(userId: string): Promise<Untagged<UserScript>[]> {
    return scriptsStore.allOfUser(this.rt.db, userId);
  }

  /** The create rules for an imported script: name, scriptType, content (400 naming the field). */
  checkImport(raw: { name?: unknown; scriptType?: unknown; content?: unknown }): { name: string; scriptType: ScriptType; content: string } {
    return { name: normalizeName(raw.name, MAX_SCRIPT_NAME), scriptType: scriptType(raw.scriptType), content: scriptContent(raw.content) };
  }

  importRefs = (db: Db, userId: string) => scriptsStore.refs(db, userId);
  importCount = (db: Db, userId: string) => scriptsStore.count(db, userId);

  async importInsert(tx: Db, row: ScriptRow): Promise<void> {
    await scriptsStore.insert(tx, row);
  }

  async importReplace(tx: Db, row: ScriptRow): Promise<void> {
    await scriptsStore.replace(tx, row);
  }

  async importDelete(tx: Db, userId: string, id: string): Promise<void> {
    if ((await scriptsStore.delete(tx, userId, id)).changes > 0) await this.tags.removeEntity(tx, "script", id);
  }
}
