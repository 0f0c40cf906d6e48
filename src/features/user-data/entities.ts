// One handler per entity type of the export file: how a file entity is checked (with the owning feature's create
// rules, through its service), which stored entities it conflicts with (§19.3), and how it is written, replaced or
// deleted inside the import's transaction (again through the owning service). The import engine (importer.ts) is
// the same for every type; everything type-specific is here.
import type { StorageQuota } from "../../platform/storage/quota";
import type { Tier, TierLimits } from "../../config/schema";
import { strictBase64 } from "../../platform/crypto/base64";
import type { Db } from "../../platform/db/db";
import { invalid } from "../../platform/core/errors";
import type { CertificatesService } from "../certificates/service";
import type { CspService } from "../csp/service";
import { methodsOverlap } from "../responders/match";
import type { RespondersService } from "../responders/service";
import { parseTrackedRecord, recordsToRestore, type ResponderDraft, type TrackedInput } from "../responders/transfer";
import type { ScriptsService } from "../scripts/service";
import type { SecretsSelector } from "../secrets/contract";
import { normalizeSecretName, type ParsedSelector, type SecretsService } from "../secrets/service";
import type { SettingsService } from "../settings/service";
import { normalizeTagColor, normalizeTagName, type TaggableType, type TagsService } from "../tags/service";
import type { TrackerKind } from "../trackers/core-types";
import type { TrackersService } from "../trackers/service";
import type { RevisionInput, TrackerDraft } from "../trackers/transfer";
import type { UsersService } from "../users/service";
import { sealedBytes } from "./crypto";
import type { EntityType } from "./contract";
import type { FileEntity } from "./file";

/** The services user data reads and writes through. */
export interface UserDataDeps {
  tags: TagsService;
  secrets: SecretsService;
  scripts: ScriptsService;
  settings: SettingsService;
  responders: RespondersService;
  certificates: CertificatesService;
  csp: CspService;
  trackers: TrackersService;
  users: UsersService;
  /** Per-user storage cap (§28): an import takes the user's storage lock first; history and revisions count. */
  storage: StorageQuota;
}

/** A checked file entity. */
export interface Draft {
  sourceId: string;
  /** Normalized name (what conflicts compare). */
  name: string;
  /** Source ids of its tags. */
  tagIds: string[];
  createdAt?: number;
  updatedAt?: number;
  /** The name a rename gives it, chosen where every name of the file is known (plan.ts). */
  renameTo?: string;
}

export interface CheckContext {
  tier: Tier;
  limits: TierLimits;
}

/** What a write needs besides the draft. */
export interface WriteContext {
  now: number;
  /** History depth and revision count limits to trim to (the importer's tier, or unbounded for a clone). */
  limits: TierLimits;
  /** Restored history and revisions count against the user's max_storage_bytes (400 LIMIT_REACHED beyond it);
   *  false for a clone, whose bytes are counted but not capped (like its other limits). */
  storageCap: boolean;
  /** A file selector in stored form with source secret ids replaced by this user's ids (unknown ones dropped). */
  selector(parsed: ParsedSelector, where: string): SecretsSelector;
  /** The plain value of a secret of the file (decrypted before the transaction), if there is one. */
  secretValue(sourceId: string): string | undefined;
  /** Records of an entity restored from elsewhere than the file (clone); undefined = none to restore. */
  loadRecords?(db: Db, type: EntityType, sourceId: string): Promise<TrackedInput[] | RevisionInput[] | undefined>;
}

/** A stored entity that a file entity may conflict with. */
export interface Existing {
  id: string;
  name: string;
  /** Responders: prefix, pathType, lower-cased path, method. */
  location?: { prefix: string; pathType: string; pathLower: string; method: string };
}

export interface Conflict {
  existingId: string;
  renameAllowed: boolean;
}

export interface TypeHandler<D extends Draft = Draft> {
  type: EntityType;
  /** entity_tags type, for taggable entities. */
  tagType?: TaggableType;
  /** `name` with the n-th rename suffix, within the type's name length. */
  renamed(name: string, n: number): string;
  check(e: FileEntity, ctx: CheckContext): D;
  existing(db: Db, userId: string): Promise<Existing[]>;
  /** The stored entity this one conflicts with: same name (§1), for responders also an overlapping location. */
  conflict(d: D, existing: Existing[]): Conflict | undefined;
  /** Problems among the file's own entities of this type (e.g. two responders on one location). */
  clashes?(drafts: D[]): string[];
  /** False when the entity cannot be written (a secret without a value in the file): it is skipped with a warning. */
  writable?(d: D, w: WriteContext): boolean;
  insert(tx: Db, userId: string, id: string, d: D, w: WriteContext): Promise<void>;
  replace(tx: Db, userId: string, id: string, d: D, w: WriteContext): Promise<void>;
  remove(tx: Db, userId: string, id: string): Promise<void>;
  count(db: Db, userId: string): Promise<number>;
  /** Tier count limit (§22); undefined = none. */
  maxCount(limits: TierLimits): number | undefined;
}

// ---- names ----

/** Cuts `base` (by code points) so that `base + suffix` has at most `max` characters. */
function fit(base: string, suffix: string, max: number): string {
  const chars = [...base];
  const room = max - [...suffix].length;
  return (chars.length > room ? chars.slice(0, room).join("").trimEnd() : base) + suffix;
}

const parenRename = (max: number) => (name: string, n: number) => fit(name, ` (${n})`, max);

/** Stored entities by name, per list (built on first use: a file of 100,000 entities against as many stored ones
 *  would otherwise compare every pair). */
const nameIndexes = new WeakMap<Existing[], Map<string, Existing>>();

export function existingNamed(existing: Existing[], name: string): Existing | undefined {
  let index = nameIndexes.get(existing);
  if (!index) {
    index = new Map();
    for (const e of existing) if (!index.has(e.name)) index.set(e.name, e);
    nameIndexes.set(existing, index);
  }
  return index.get(name);
}

/** Changes a stored entity of `existing` in place (an overwrite renamed or moved it); the name index follows. */
export function updateExisting(existing: Existing[], entry: Existing, next: Existing): void {
  const index = nameIndexes.get(existing);
  if (index && index.get(entry.name) === entry) index.delete(entry.name);
  Object.assign(entry, next);
  if (index && !index.has(entry.name)) index.set(entry.name, entry);
}

const byName = (d: Draft, existing: Existing[]): Conflict | undefined => {
  const hit = existingNamed(existing, d.name);
  return hit ? { existingId: hit.id, renameAllowed: true } : undefined;
};

const timesOf = (d: Draft, now: number) => ({ createdAt: d.createdAt ?? now, updatedAt: d.updatedAt ?? d.createdAt ?? now });

// ---- drafts of the types with more than a name ----

interface TagDraft extends Draft {
  color: string;
}
interface ScriptDraft extends Draft {
  scriptType: string;
  content: string;
}
interface SecretDraft extends Draft {
  /** The sealed value in the file, when it has one. */
  sealed?: Uint8Array;
}
interface ResponderFileDraft extends Draft {
  responder: ResponderDraft;
  history?: TrackedInput[];
}
interface TemplateDraft extends Draft {
  template: ReturnType<CertificatesService["templates"]["checkImport"]>;
}
interface KeyDraft extends Draft {
  key: ReturnType<CertificatesService["keys"]["checkImport"]>;
}
interface PolicyDraft extends Draft {
  policy: ReturnType<CspService["checkImport"]>;
}
interface TrackerFileDraft extends Draft {
  tracker: TrackerDraft;
  revisions?: RevisionInput[];
}

const base = (e: FileEntity, name: string): Draft => ({
  sourceId: e.sourceId,
  name,
  tagIds: e.tagIds,
  ...(e.createdAt !== undefined ? { createdAt: e.createdAt } : {}),
  ...(e.updatedAt !== undefined ? { updatedAt: e.updatedAt } : {}),
});

/** Records of a draft from the file, else from the clone's loader; undefined when there are none to restore. */
async function records<T>(tx: Db, fromFile: T[] | undefined, w: WriteContext, type: EntityType, sourceId: string): Promise<T[] | undefined> {
  if (fromFile !== undefined) return fromFile;
  return (await w.loadRecords?.(tx, type, sourceId)) as T[] | undefined;
}

/** The `keep` newest revisions (createdAt descending, file order breaking ties), oldest first. */
function revisionsToRestore(revisions: RevisionInput[], keep: number): RevisionInput[] {
  const indexed = revisions.map((r, i) => ({ r, i }));
  indexed.sort((a, b) => b.r.createdAt - a.r.createdAt || a.i - b.i);
  return indexed
    .slice(0, Math.max(0, keep))
    .reverse()
    .map((x) => x.r);
}

export function createHandlers(deps: UserDataDeps): Record<EntityType, TypeHandler<any>> {
  const { tags, secrets, scripts, responders, certificates, csp, trackers } = deps;

  const tagHandler: TypeHandler<TagDraft> = {
    type: "tags",
    renamed: parenRename(50),
    check: (e) => ({ ...base(e, normalizeTagName(e.raw.name)), color: normalizeTagColor(e.raw.color ?? "default") }),
    existing: (db, userId) => tags.importRefs(db, userId),
    conflict: byName,
    insert: (tx, userId, id, d, w) => tags.importInsert(tx, userId, { id, name: d.name, color: d.color, ...timesOf(d, w.now) }),
    replace: (tx, userId, id, d, w) => tags.importUpdate(tx, userId, id, { name: d.name, color: d.color }, w.now),
    remove: (tx, userId, id) => tags.importDelete(tx, userId, id),
    count: (db, userId) => tags.importCount(db, userId),
    maxCount: (l) => l.max_tags,
  };

  const scriptHandler: TypeHandler<ScriptDraft> = {
    type: "scripts",
    tagType: "script",
    renamed: parenRename(128),
    check: (e) => {
      const s = scripts.checkImport(e.raw);
      return { ...base(e, s.name), scriptType: s.scriptType, content: s.content };
    },
    existing: (db, userId) => scripts.importRefs(db, userId),
    conflict: byName,
    insert: (tx, userId, id, d, w) => {
      const t = timesOf(d, w.now);
      return scripts.importInsert(tx, {
        id,
        user_id: userId,
        name: d.name,
        script_type: d.scriptType,
        content: d.content,
        created_at: t.createdAt,
        updated_at: t.updatedAt,
      });
    },
    replace: (tx, userId, id, d, w) =>
      scripts.importReplace(tx, {
        id,
        user_id: userId,
        name: d.name,
        script_type: d.scriptType,
        content: d.content,
        created_at: 0,
        updated_at: w.now,
      }),
    remove: (tx, userId, id) => scripts.importDelete(tx, userId, id),
    count: (db, userId) => scripts.importCount(db, userId),
    maxCount: (l) => l.max_scripts,
  };

  const secretHandler: TypeHandler<SecretDraft> = {
    type: "secrets",
    tagType: "secret",
    renamed: (name, n) => fit(name, `_${n}`, 128),
    check: (e) => {
      const d: SecretDraft = base(e, normalizeSecretName(e.raw.name));
      const v = e.raw.encryptedValue;
      if (v !== undefined && v !== null) {
        const sealed = sealedBytes(v);
        if (!sealed) throw invalid("encryptedValue: must be base64 of nonce, ciphertext and tag");
        d.sealed = sealed;
      }
      return d;
    },
    existing: (db, userId) => secrets.importRefs(db, userId),
    conflict: byName,
    writable: (d, w) => w.secretValue(d.sourceId) !== undefined,
    insert: (tx, userId, id, d, w) => secrets.importInsert(tx, userId, { id, name: d.name, value: w.secretValue(d.sourceId)!, ...timesOf(d, w.now) }),
    replace: (tx, userId, id, d, w) => secrets.importSetValue(tx, userId, id, w.secretValue(d.sourceId)!, w.now),
    remove: (tx, userId, id) => secrets.importDelete(tx, userId, id),
    count: (db, userId) => secrets.importCount(db, userId),
    maxCount: (l) => l.max_secrets,
  };

  const responderKeep = (d: ResponderFileDraft, w: WriteContext) => Math.min(d.responder.settings.requestsToTrack, w.limits.max_requests_to_track);
  const sameLocation = (a: Existing["location"], b: Existing["location"]) =>
    !!a && !!b && a.prefix === b.prefix && a.pathType === b.pathType && a.pathLower === b.pathLower && methodsOverlap(a.method, b.method);
  const locationOf = (r: ResponderDraft): NonNullable<Existing["location"]> => ({
    prefix: r.location.prefix,
    pathType: r.location.pathType,
    pathLower: r.location.path.toLowerCase(),
    method: r.method,
  });

  const responderHandler: TypeHandler<ResponderFileDraft> = {
    type: "responders",
    tagType: "responder",
    renamed: parenRename(100),
    check: (e, ctx) => {
      const responder = responders.transfer.checkImport(e.raw, ctx.tier, ctx.limits);
      const d: ResponderFileDraft = { ...base(e, responder.name), responder };
      const h = e.raw.history;
      if (h !== undefined && h !== null) {
        if (!Array.isArray(h)) throw invalid("history: must be an array of tracked requests");
        d.history = h.map((rec, i) => parseTrackedRecord(rec, `history[${i}]`, ctx.limits.max_tracked_body_bytes));
      }
      return d;
    },
    async existing(db, userId) {
      return (await responders.transfer.refs(db, userId)).map((r) => ({
        id: r.id,
        name: r.name,
        location: { prefix: r.subdomain_prefix, pathType: r.path_type, pathLower: r.path_lower, method: r.method },
      }));
    },
    conflict(d, existing) {
      const loc = locationOf(d.responder);
      const sameName = existingNamed(existing, d.name);
      const overlap = existing.find((e) => sameLocation(e.location, loc));
      if (!sameName && !overlap) return undefined;
      // Renaming cannot resolve an overlap: the location would still be served twice (supplement §19.3).
      return { existingId: (sameName ?? overlap)!.id, renameAllowed: overlap === undefined };
    },
    clashes(drafts) {
      const out: string[] = [];
      drafts.forEach((d, i) => {
        const other = drafts.slice(0, i).find((o) => sameLocation(locationOf(o.responder), locationOf(d.responder)));
        if (other) out.push(`responders[${d.sourceId}]: location and method overlap responder ${other.sourceId} of the file`);
      });
      return out;
    },
    async insert(tx, userId, id, d, w) {
      const t = timesOf(d, w.now);
      await responders.transfer.insert(
        tx,
        userId,
        id,
        { ...d.responder, name: d.name },
        w.selector(d.responder.settings.secrets, "settings.secrets"),
        t.createdAt,
        t.updatedAt,
      );
      const recs = await records(tx, d.history, w, "responders", d.sourceId);
      if (recs) await responders.transfer.restoreHistory(tx, userId, id, recordsToRestore(recs as TrackedInput[], responderKeep(d, w)), w.storageCap);
    },
    async replace(tx, userId, id, d, w) {
      await responders.transfer.replace(
        tx,
        userId,
        id,
        { ...d.responder, name: d.name },
        w.selector(d.responder.settings.secrets, "settings.secrets"),
        responderKeep(d, w),
      );
      const recs = await records(tx, d.history, w, "responders", d.sourceId);
      // Existing history is replaced only when the file has some (§19.4).
      if (recs) await responders.transfer.restoreHistory(tx, userId, id, recordsToRestore(recs as TrackedInput[], responderKeep(d, w)), w.storageCap);
    },
    remove: (tx, userId, id) => responders.transfer.delete(tx, userId, id),
    count: (db, userId) => responders.transfer.count(db, userId),
    maxCount: (l) => l.max_responders,
  };

  const templateHandler: TypeHandler<TemplateDraft> = {
    type: "certificateTemplates",
    tagType: "certificateTemplate",
    renamed: parenRename(100),
    check: (e) => {
      const template = certificates.templates.checkImport(e.raw);
      return { ...base(e, template.name), template };
    },
    existing: (db, userId) => certificates.templates.importRefs(db, userId),
    conflict: byName,
    insert: (tx, userId, id, d, w) => {
      const t = timesOf(d, w.now);
      return certificates.templates.importInsert(tx, userId, id, { ...d.template, name: d.name }, t.createdAt, t.updatedAt);
    },
    replace: (tx, userId, id, d, w) => certificates.templates.importReplace(tx, userId, id, { ...d.template, name: d.name }, w.now),
    remove: (tx, userId, id) => certificates.templates.importDelete(tx, userId, id),
    count: (db, userId) => certificates.templates.importCount(db, userId),
    maxCount: () => undefined,
  };

  const keyHandler: TypeHandler<KeyDraft> = {
    type: "privateKeys",
    tagType: "privateKey",
    renamed: parenRename(100),
    check: (e) => {
      const der = strictBase64(e.raw.pkcs8);
      if (!der || der.byteLength === 0) throw invalid("pkcs8: must be the standard base64 of a PKCS#8 DER key");
      const key = certificates.keys.checkImport(e.raw, der);
      return { ...base(e, key.name), key };
    },
    existing: (db, userId) => certificates.keys.importRefs(db, userId),
    conflict: byName,
    insert: (tx, userId, id, d, w) => {
      const t = timesOf(d, w.now);
      return certificates.keys.importInsert(tx, userId, id, { ...d.key, name: d.name }, t.createdAt, t.updatedAt);
    },
    replace: (tx, userId, id, d, w) => certificates.keys.importReplace(tx, userId, id, { ...d.key, name: d.name }, w.now),
    remove: (tx, userId, id) => certificates.keys.importDelete(tx, userId, id),
    count: (db, userId) => certificates.keys.importCount(db, userId),
    maxCount: () => undefined,
  };

  const policyHandler: TypeHandler<PolicyDraft> = {
    type: "contentSecurityPolicies",
    tagType: "contentSecurityPolicy",
    renamed: parenRename(100),
    check: (e) => {
      const policy = csp.checkImport(e.raw);
      return { ...base(e, policy.name), policy };
    },
    existing: (db, userId) => csp.importRefs(db, userId),
    conflict: byName,
    insert: (tx, userId, id, d, w) => {
      const t = timesOf(d, w.now);
      return csp.importInsert(tx, userId, id, { ...d.policy, name: d.name }, t.createdAt, t.updatedAt);
    },
    replace: (tx, userId, id, d, w) => csp.importReplace(tx, userId, id, { ...d.policy, name: d.name }, w.now),
    remove: (tx, userId, id) => csp.importDelete(tx, userId, id),
    count: (db, userId) => csp.importCount(db, userId),
    maxCount: () => undefined,
  };

  const trackerHandler = (type: "pageTrackers" | "apiTrackers", kind: TrackerKind): TypeHandler<TrackerFileDraft> => {
    const service = kind === "api" ? trackers.api : trackers.page;
    const transfer = trackers.transfer;
    const keep = (d: TrackerFileDraft, w: WriteContext) => Math.min(d.tracker.config.revisions, w.limits.max_revisions);
    return {
      type,
      tagType: kind === "api" ? "apiTracker" : "pageTracker",
      renamed: parenRename(100),
      check: (e, ctx) => {
        const tracker = (service.checkImport as (raw: Record<string, unknown>, limits: TierLimits) => TrackerDraft)(e.raw, ctx.limits);
        const d: TrackerFileDraft = { ...base(e, tracker.name), tracker };
        const revs = e.raw.revisions;
        if (revs !== undefined && revs !== null) {
          if (!Array.isArray(revs)) throw invalid("revisions: must be an array of {createdAt, body}");
          d.revisions = revs.map((r, i) => {
            const field = `revisions[${i}]`;
            if (typeof r !== "object" || r === null || Array.isArray(r)) throw invalid(`${field}: must be an object {createdAt, body}`);
            return transfer.checkRevision((r as Record<string, unknown>).createdAt, strictBase64((r as Record<string, unknown>).body), field);
          });
        }
        return d;
      },
      existing: (db, userId) => transfer.refs(db, userId, kind),
      conflict: byName,
      async insert(tx, userId, id, d, w) {
        const t = timesOf(d, w.now);
        await transfer.insert(
          tx,
          userId,
          kind,
          id,
          { ...d.tracker, name: d.name },
          w.selector(d.tracker.secrets, "secrets"),
          t.createdAt,
          t.updatedAt,
        );
        const revs = await records(tx, d.revisions, w, type, d.sourceId);
        if (revs) await transfer.restoreRevisions(tx, userId, id, revisionsToRestore(revs as RevisionInput[], keep(d, w)), w.storageCap);
      },
      async replace(tx, userId, id, d, w) {
        await transfer.replace(tx, userId, kind, id, { ...d.tracker, name: d.name }, w.selector(d.tracker.secrets, "secrets"), keep(d, w));
        const revs = await records(tx, d.revisions, w, type, d.sourceId);
        if (revs) await transfer.restoreRevisions(tx, userId, id, revisionsToRestore(revs as RevisionInput[], keep(d, w)), w.storageCap);
      },
      remove: (tx, userId, id) => transfer.delete(tx, userId, kind, id),
      count: (db, userId) => transfer.count(db, userId, kind),
      maxCount: (l) => (kind === "api" ? l.max_api_trackers : l.max_page_trackers),
    };
  };

  return {
    tags: tagHandler,
    scripts: scriptHandler,
    secrets: secretHandler,
    responders: responderHandler,
    certificateTemplates: templateHandler,
    privateKeys: keyHandler,
    contentSecurityPolicies: policyHandler,
    pageTrackers: trackerHandler("pageTrackers", "page"),
    apiTrackers: trackerHandler("apiTrackers", "api"),
  };
}
