// Secrets (supplement §7): metadata over HTTP, values sealed at rest with AES-256-GCM (additional data =
// secret id), the access selector (§7.1) responders and trackers store, and the decrypted values their
// scripts see.
import type { AuthUser } from "../../platform/auth/principal";
import type { Db } from "../../platform/db/db";
import { duplicateName, invalid, isUniqueViolation, limitReached, notFound } from "../../platform/core/errors";
import { isUuid, newId } from "../../platform/core/ids";
import { parseListQuery } from "../../platform/http/list-query";
import { pathId, utf8Length } from "../../platform/core/validate";
import { nowSec, tierLimits, type Runtime } from "../../platform/runtime";
import type { TagsService } from "../tags/service";
import type { LooseInput } from "../../platform/http/contract";
import type { SecretCreateParams, SecretMeta, SecretsSelector, SecretUpdateParams, UserSecret } from "./contract";
import { MAX_SECRET_VALUE_BYTES, SECRET_NAME_MAX, SECRET_NAME_RE } from "./shared-rules";
import { secretsStore, toSecretMeta } from "./store";

/** A selector whose shape is checked but whose entries are not yet looked up (SecretsService.parseSelector). */
export type ParsedSelector = "none" | "all" | { entries: string[]; listField: string };

/**
 * Called inside the delete transaction of a secret, with that transaction's handle. Features that store
 * selectors (responders, trackers) register one to drop the id from their `{selected}` selectors
 * (see `withoutSecret`); a throw rolls the deletion back.
 */
export type SecretDeleteListener = (tx: Db, event: { userId: string; secretId: string }) => Promise<void>;

const present = (v: unknown) => v !== undefined && v !== null;

/** Name: trimmed, then `^[A-Za-z][A-Za-z0-9_-]{0,127}$`, case-sensitive. */
export function normalizeSecretName(raw: unknown, field = "name"): string {
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const name = raw.trim();
  if (!SECRET_NAME_RE.test(name))
    throw invalid(`${field}: must start with a letter and contain only letters, digits, _ and - (1 to ${SECRET_NAME_MAX} characters)`);
  return name;
}

/** Value: a string of 1..10,240 UTF-8 bytes. */
export function checkSecretValue(raw: unknown, field = "value"): string {
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const bytes = utf8Length(raw);
  if (bytes < 1 || bytes > MAX_SECRET_VALUE_BYTES) throw invalid(`${field}: must be 1 to ${MAX_SECRET_VALUE_BYTES} UTF-8 bytes`);
  return raw;
}

/** The selector with `secretId` removed; an emptied `{selected}` becomes `"none"` (supplement §7). */
export function withoutSecret(selector: SecretsSelector, secretId: string): SecretsSelector {
  if (typeof selector === "string") return selector;
  const selected = selector.selected.filter((id) => id !== secretId);
  return selected.length === 0 ? "none" : { selected };
}

/** Stored text of a normalized selector (a JSON value: `"none"`, `"all"` or `{"selected":[ids]}`). */
export const selectorToText = (selector: SecretsSelector): string => JSON.stringify(selector);

/** Parses `selectorToText` output; anything unexpected reads as `"none"`. */
export function selectorFromText(text: string | null | undefined): SecretsSelector {
  if (!text) return "none";
  try {
    const v = JSON.parse(text);
    if (v === "all" || v === "none") return v;
    if (v && typeof v === "object" && Array.isArray(v.selected)) {
      const selected = v.selected.filter((id: unknown): id is string => typeof id === "string");
      return selected.length === 0 ? "none" : { selected };
    }
  } catch {
    // fall through
  }
  return "none";
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export class SecretsService {
  private readonly deleteListeners: SecretDeleteListener[] = [];

  constructor(
    private readonly rt: Runtime,
    private readonly tags: TagsService,
  ) {}

  private now() {
    return nowSec(this.rt.clock);
  }

  /** Registers a listener run inside every secret's delete transaction (see SecretDeleteListener). */
  onDelete(listener: SecretDeleteListener): void {
    this.deleteListeners.push(listener);
  }

  private async toWire(metas: SecretMeta[]): Promise<UserSecret[]> {
    return this.tags.decorate("secret", metas);
  }

  // ---- CRUD ----

  async list(userId: string, rawQuery: Record<string, unknown>): Promise<{ items: UserSecret[]; total: number }> {
    const { items, total } = await secretsStore.list(this.rt.db, userId, parseListQuery(rawQuery));
    return { items: await this.toWire(items), total };
  }

  async get(userId: string, rawId: string | undefined): Promise<UserSecret> {
    const row = await secretsStore.get(this.rt.db, userId, pathId(rawId, "Secret"));
    if (!row) throw notFound("Secret");
    return (await this.toWire([toSecretMeta(row)]))[0]!;
  }

  async create(user: AuthUser, body: LooseInput<typeof SecretCreateParams>): Promise<UserSecret> {
    if (!present(body.name)) throw invalid("name: is required");
    const name = normalizeSecretName(body.name);
    if (!present(body.value)) throw invalid("value: is required");
    const value = checkSecretValue(body.value);
    const tagIds = present(body.tagIds) ? await this.tags.resolveTagIds(user.id, body.tagIds) : [];
    const max = tierLimits(this.rt.config, user.tier).max_secrets;
    const now = this.now();
    const id = newId();
    const row = { id, user_id: user.id, name, created_at: now, updated_at: now };
    try {
      await this.rt.db.tx(async (tx) => {
        if (await secretsStore.existsByName(tx, user.id, name)) throw duplicateName("Secret", name);
        if ((await secretsStore.count(tx, user.id)) >= max) throw limitReached(`secrets: at most ${max} secrets allowed`);
        await secretsStore.insert(tx, { ...row, value_enc: this.rt.secretBox.seal(value, id) });
        await this.tags.setEntityTags(tx, "secret", id, user.id, tagIds);
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw duplicateName("Secret", name);
      throw err;
    }
    return (await this.toWire([toSecretMeta(row)]))[0]!;
  }

  async update(userId: string, rawId: string | undefined, body: LooseInput<typeof SecretUpdateParams>): Promise<UserSecret> {
    const hasValue = present(body.value);
    const hasTags = present(body.tagIds);
    if (!hasValue && !hasTags) throw invalid("value, tagIds: at least one is required");
    const value = hasValue ? checkSecretValue(body.value) : undefined;
    if (present(body.name) && typeof body.name !== "string") throw invalid("name: must be a string");
    const id = pathId(rawId, "Secret");
    const current = await secretsStore.get(this.rt.db, userId, id);
    if (!current) throw notFound("Secret");
    if (present(body.name) && (body.name as string).trim() !== current.name) throw invalid("name: cannot be changed");
    const tagIds = hasTags ? await this.tags.resolveTagIds(userId, body.tagIds) : undefined;
    const now = this.now();
    await this.rt.db.tx(async (tx) => {
      const { changes } =
        value !== undefined
          ? await secretsStore.setValue(tx, userId, id, this.rt.secretBox.seal(value, id), now)
          : await secretsStore.touch(tx, userId, id, now);
      if (changes === 0) throw notFound("Secret");
      if (tagIds !== undefined) await this.tags.setEntityTags(tx, "secret", id, userId, tagIds);
    });
    return (await this.toWire([toSecretMeta({ ...current, updated_at: now })]))[0]!;
  }

  /** Deletes the secret, its tag links, and (through the onDelete listeners) its id from every selector. */
  async delete(userId: string, rawId: string | undefined): Promise<void> {
    const id = pathId(rawId, "Secret");
    await this.rt.db.tx(async (tx) => {
      const { changes } = await secretsStore.delete(tx, userId, id);
      if (changes === 0) throw notFound("Secret");
      await this.tags.removeEntity(tx, "secret", id);
      for (const listener of this.deleteListeners) await listener(tx, { userId, secretId: id });
    });
  }

  // ---- access selector (supplement §7.1) ----

  /**
   * Normalizes any accepted selector input to its stored form: `"none"`, `"all"` or `{selected: [ids]}`.
   * Entries of a selected list: UUID text = id, anything else = name (case-sensitive); each must be an
   * existing secret of the user, else 400 naming the entry. Repeats collapse; an empty list is `"none"`.
   */
  async normalizeSelector(userId: string, raw: unknown, field = "secrets"): Promise<SecretsSelector> {
    return this.resolveSelector(userId, this.parseSelector(raw, field));
  }

  /** The shape checks of normalizeSelector (400s that need no stored data): run them before a 404 check, and
   *  resolveSelector after it (supplement §1 check order). */
  parseSelector(raw: unknown, field = "secrets"): ParsedSelector {
    if (raw === undefined || raw === null || raw === "none") return "none";
    if (raw === "all") return "all";
    const shapeError = () => invalid(`${field}: must be "none", "all", {"selected": [secret ids or names]} or {"type": "none" | "all" | "selected"}`);
    if (!isPlainObject(raw)) throw shapeError();
    let list: unknown;
    let listField: string;
    if (present(raw.type)) {
      if (raw.type === "none") return "none";
      if (raw.type === "all") return "all";
      if (raw.type !== "selected") throw invalid(`${field}.type: must be none, all or selected`);
      [list, listField] = present(raw.secrets) ? [raw.secrets, `${field}.secrets`] : [raw.selected, `${field}.selected`];
    } else if ("selected" in raw) {
      [list, listField] = [raw.selected, `${field}.selected`];
    } else {
      throw shapeError();
    }
    if (!Array.isArray(list)) throw invalid(`${listField}: must be an array of secret ids or names`);
    if (list.length === 0) return "none";
    list.forEach((entry, i) => {
      if (typeof entry !== "string") throw invalid(`${listField}[${i}]: must be a secret id or name`);
    });
    return { entries: list as string[], listField };
  }

  /** A parsed selector's entries → secret ids of the user (400 naming an entry that is none of them). */
  async resolveSelector(userId: string, parsed: ParsedSelector): Promise<SecretsSelector> {
    if (parsed === "none" || parsed === "all") return parsed;
    const refs = await secretsStore.refs(this.rt.db, userId);
    const ids = new Set(refs.map((r) => r.id));
    const byName = new Map(refs.map((r) => [r.name, r.id]));
    const selected = new Set<string>();
    parsed.entries.forEach((entry, i) => {
      const id = isUuid(entry) ? (ids.has(entry.toLowerCase()) ? entry.toLowerCase() : undefined) : byName.get(entry);
      if (id === undefined) throw invalid(`${parsed.listField}[${i}]: unknown secret ${JSON.stringify(entry.slice(0, 200))}`);
      selected.add(id);
    });
    return { selected: [...selected] };
  }

  /**
   * Decrypted values the selector grants, keyed by secret name (`{}` for none). Ids of secrets that no
   * longer exist are skipped.
   */
  async valuesFor(userId: string, selector: SecretsSelector | undefined): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    if (selector === undefined || selector === "none") return out;
    const wanted = selector === "all" ? undefined : new Set(selector.selected);
    if (wanted !== undefined && wanted.size === 0) return out;
    for (const row of await secretsStore.values(this.rt.db, userId)) {
      if (wanted !== undefined && !wanted.has(row.id)) continue;
      try {
        out[row.name] = this.rt.secretBox.openString(row.value_enc, row.id);
      } catch {
        // Wrong master key or tampered row: leave it out, and never log the value.
        this.rt.log.error("secrets: cannot decrypt a stored value", { secretId: row.id });
      }
    }
    return out;
  }

  // ---- user data: export, import, clone (features/user-data). Writes take the import transaction's handle. ----

  /** Every secret of the user with its decrypted value, name ascending. A value that cannot be decrypted (wrong
   *  master key, tampered row) is left out (`value` undefined) and logged without the value. */
  async exportAll(userId: string): Promise<(SecretMeta & { value?: string })[]> {
    return (await secretsStore.allWithValues(this.rt.db, userId)).map((row) => {
      let value: string | undefined;
      try {
        value = this.rt.secretBox.openString(row.value_enc, row.id);
      } catch {
        this.rt.log.error("secrets: cannot decrypt a stored value", { secretId: row.id });
      }
      return { ...toSecretMeta(row), ...(value !== undefined ? { value } : {}) };
    });
  }

  importRefs = (db: Db, userId: string) => secretsStore.refs(db, userId);
  importCount = (db: Db, userId: string) => secretsStore.count(db, userId);

  /** Inserts a secret (name from normalizeSecretName, value from checkSecretValue), sealed under the master key. */
  async importInsert(tx: Db, userId: string, s: { id: string; name: string; value: string; createdAt: number; updatedAt: number }): Promise<void> {
    await secretsStore.insert(tx, {
      id: s.id,
      user_id: userId,
      name: s.name,
      created_at: s.createdAt,
      updated_at: s.updatedAt,
      value_enc: this.rt.secretBox.seal(s.value, s.id),
    });
  }

  async importSetValue(tx: Db, userId: string, id: string, value: string, now: number): Promise<void> {
    await secretsStore.setValue(tx, userId, id, this.rt.secretBox.seal(value, id), now);
  }

  /** Deletes the secret, its tag links and (through the onDelete listeners) its id from every selector. */
  async importDelete(tx: Db, userId: string, id: string): Promise<void> {
    if ((await secretsStore.delete(tx, userId, id)).changes === 0) return;
    await this.tags.removeEntity(tx, "secret", id);
    for (const listener of this.deleteListeners) await listener(tx, { userId, secretId: id });
  }
}
