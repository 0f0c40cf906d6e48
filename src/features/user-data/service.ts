// User data export, import with preview, and operator clone (supplement §19, interface "user-data", "Clone
// behaviour"). This feature owns no table: it reads and writes every other feature's data through that feature's
// service (entities.ts maps each entity type onto it). The pieces:
// - exporter.ts: `include` → the file, streamed (history and revisions paged while the client reads);
// - file.ts + crypto.ts: the §19.2 format and its secret encryption (argon2id + AES-256-GCM);
// - importer.ts: analysis (every entity through its feature's create rules), preview, and the all-or-nothing apply
//   inside one `db.tx` (slow work — argon2id, decryption — happens before it, so the transaction only waits on the
//   database);
// - clone.ts: a new user filled by export-all + merge import, with a recovery link.
import type { Tier, TierLimits } from "../../config/schema";
import type { AuthUser } from "../../platform/auth/principal";
import { ApiError, invalid } from "../../platform/http/errors";
import { charLength } from "../../platform/http/validate";
import { nowSec, tierLimits, type Runtime } from "../../platform/runtime";
import { checkSecretValue } from "../secrets/service";
import { deriveKey, MAX_PASSPHRASE_CHARS, MIN_PASSPHRASE_CHARS, newSecretsEncryption, openValue } from "./crypto";
import { createHandlers, type TypeHandler, type UserDataDeps, type WriteContext } from "./entities";
import { collect, exportFileName, fileChunks, parseInclude, type Include } from "./exporter";
import { isObject, readFile, type EntityType, type FileReading } from "./file";
import {
  analyze,
  apply,
  parseApplyDeletions,
  parseMode,
  parseSelections,
  preview,
  type Analysis,
  type ApplyOptions,
  type ImportResult,
  type Mode,
  type Preview,
  type Resolution,
  type Selection,
} from "./importer";

export type { UserDataDeps } from "./entities";
export type { ImportResult, Preview } from "./importer";

const asBody = (body: unknown): Record<string, unknown> => {
  if (body === undefined || body === null) return {};
  if (!isObject(body)) throw invalid("body: must be a JSON object");
  return body;
};

function passphrase(raw: unknown, field: string, min = MIN_PASSPHRASE_CHARS): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== "string") throw invalid(`${field}: must be a string`);
  const n = charLength(raw);
  if (n < min || n > MAX_PASSPHRASE_CHARS) throw invalid(`${field}: must be ${min} to ${MAX_PASSPHRASE_CHARS} characters`);
  return raw;
}

const badPassphrase = (message: string) => new ApiError(400, "BAD_PASSPHRASE", message);

/** What an import runs with besides the file. */
export interface ImportRun {
  userId: string;
  tier: Tier;
  mode: Mode;
  selections?: Partial<Record<EntityType, Map<string, Selection>>>;
  importSettings: boolean;
  applyDeletions?: Partial<Record<EntityType, string[]>>;
  /** Clone: no tier checks (§19.5). */
  unbounded?: boolean;
  secretValues: Map<string, string>;
  loadRecords?: WriteContext["loadRecords"];
}

export class UserDataService {
  readonly handlers: Record<EntityType, TypeHandler>;

  constructor(
    private readonly rt: Runtime,
    readonly deps: UserDataDeps,
  ) {
    this.handlers = createHandlers(deps);
  }

  private now() {
    return nowSec(this.rt.clock);
  }

  /** Limits an import checks and trims to: the user's tier, or (clone) nothing the source could have stored. */
  limitsFor(tier: Tier, unbounded = false): TierLimits {
    const limits = tierLimits(this.rt.config, tier);
    if (!unbounded) return limits;
    const big = Number.MAX_SAFE_INTEGER;
    const throttles = new Set(Object.values(this.rt.config.subscriptions.tiers).flatMap((t) => t.notification_throttles));
    return { ...limits, max_requests_to_track: big, max_revisions: big, max_tracked_body_bytes: big, min_schedule_interval_sec: 0, notification_throttles: [...throttles] };
  }

  // ---- export (§19.1, §19.2) ----

  /** Checks the request and reads the entities; the file is then produced while `chunks` is consumed. */
  async export(userId: string, body: unknown): Promise<{ fileName: string; chunks: AsyncGenerator<string> }> {
    const b = asBody(body);
    const include = parseInclude(b.include);
    return this.exportWith(userId, include, passphrase(b.secretsPassphrase, "secretsPassphrase"));
  }

  /** Export of a selection (the CLI exports everything with history). */
  async exportWith(userId: string, include: Include, secretsPassphrase: string | undefined): Promise<{ fileName: string; chunks: AsyncGenerator<string> }> {
    await this.deps.responders.flushCaptures();
    const collected = await collect(this.deps, userId, include);
    let encryption;
    if (secretsPassphrase !== undefined) {
      const { header, salt } = newSecretsEncryption();
      encryption = { header, key: await deriveKey(secretsPassphrase, salt, header.kdfParams) };
    }
    const now = this.now();
    return { fileName: exportFileName(now), chunks: fileChunks(this.deps, collected, now, encryption) };
  }

  // ---- preview and import (§19.3, §19.4) ----

  private check(reading: FileReading, tier: Tier, unbounded = false) {
    return analyze(reading, this.handlers, { tier, limits: this.limitsFor(tier, unbounded) });
  }

  /** `{data, mode}` → what an import would do; a file that fails the checks is `{valid: false, warnings}`. */
  async preview(user: AuthUser, body: unknown): Promise<Preview> {
    const b = asBody(body);
    const mode = parseMode(b.mode);
    const reading = readFile(b.data);
    const { analysis, problems, warnings } = this.check(reading, user.tier);
    if (!analysis) return { valid: false, ...(reading.version !== undefined ? { version: reading.version } : {}), summary: {}, warnings: [...problems, ...warnings] };
    return preview(this.rt.db, this.deps, this.handlers, analysis, user.id, mode);
  }

  /** Imports a file (see importer.ts): 400 naming the type and source id of the first problem, nothing changed. */
  async import(user: AuthUser, body: unknown): Promise<ImportResult> {
    const b = asBody(body);
    const mode = parseMode(b.mode);
    const analysis = this.analyzed(readFile(b.data), user.tier);
    const selections = parseSelections(b.selections, analysis.file);
    if (b.importSettings !== undefined && b.importSettings !== null && typeof b.importSettings !== "boolean") throw invalid("importSettings: must be a boolean");
    const applyDeletions = parseApplyDeletions(b.applyDeletions, mode, analysis.file);
    const secretValues = await this.openSecrets(analysis, selections, passphrase(b.secretsPassphrase, "secretsPassphrase", 1));
    return this.run(analysis, {
      userId: user.id,
      tier: user.tier,
      mode,
      ...(selections ? { selections } : {}),
      importSettings: b.importSettings !== false,
      ...(applyDeletions ? { applyDeletions } : {}),
      secretValues,
    });
  }

  /** A checked file, or a 400 with its first problems. */
  analyzed(reading: FileReading, tier: Tier, unbounded = false): Analysis {
    const { analysis, problems, code } = this.check(reading, tier, unbounded);
    if (analysis) return analysis;
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more; _import_preview lists them)` : "";
    throw new ApiError(400, code ?? "INVALID_INPUT", `${problems[0] ?? "data: invalid export file"}${more}`);
  }

  /** The plain values of the secrets the import writes: missing or wrong passphrase → 400 BAD_PASSPHRASE. */
  async openSecrets(analysis: Analysis, selections: ImportRun["selections"], secretsPassphrase: string | undefined): Promise<Map<string, string>> {
    const values = new Map<string, string>();
    const chosen = selections?.secrets;
    const sealed = ((analysis.drafts.secrets ?? []) as (import("./entities").Draft & { sealed?: Uint8Array })[]).filter(
      (d) => d.sealed && (!chosen || chosen.get(d.sourceId)?.action === "import"),
    );
    if (sealed.length === 0) return values;
    if (secretsPassphrase === undefined)
      throw badPassphrase("secretsPassphrase: the file's secret values need the passphrase they were exported with (or leave secrets out through selections)");
    const enc = analysis.file.encryption!;
    const key = await deriveKey(secretsPassphrase, enc.salt, enc.params);
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

  /** Runs an analyzed import in one transaction; the responders' and trackers' in-memory state follows the commit. */
  async run(analysis: Analysis, r: ImportRun): Promise<ImportResult> {
    const options: ApplyOptions = {
      userId: r.userId,
      mode: r.mode,
      ...(r.selections ? { selections: r.selections } : {}),
      importSettings: r.importSettings,
      ...(r.applyDeletions ? { applyDeletions: r.applyDeletions } : {}),
      limits: this.limitsFor(r.tier, r.unbounded),
      countLimits: !r.unbounded,
      tierName: r.tier,
      now: this.now(),
      secretValues: r.secretValues,
      ...(r.loadRecords ? { loadRecords: r.loadRecords } : {}),
    };
    await this.deps.responders.flushCaptures();
    let deletedResponders: string[] = [];
    try {
      const { result, touched } = await this.rt.db.tx(async (tx) => {
        // Before any row of the user: every writer of their counted data takes this lock first (§28).
        await this.deps.storage.lock(tx, r.userId);
        return apply(tx, this.deps, this.handlers, analysis, options);
      });
      deletedResponders = touched.deletedIds.responders ?? [];
      const written = [...(touched.writtenIds.apiTrackers ?? []), ...(touched.writtenIds.pageTrackers ?? [])];
      const deleted = [...(touched.deletedIds.apiTrackers ?? []), ...(touched.deletedIds.pageTrackers ?? [])];
      await this.deps.trackers.transfer.done(r.userId, written, deleted);
      return result;
    } finally {
      // Also after a rollback: a hit served while the transaction ran may have cached what it saw.
      this.deps.responders.transfer.done(r.userId, deletedResponders);
    }
  }

  /**
   * Import of a whole file with one rule for every conflict (CLI `data import`): `resolution` for each conflicting
   * entity (skip where a rename is not allowed), default §19.4 without it; in apply mode every deletion the preview
   * lists is applied (the CLI's `--dry-run` prints that preview first).
   */
  async importAll(user: AuthUser, data: unknown, o: { mode: Mode; resolution?: Resolution; secretsPassphrase?: string }): Promise<ImportResult> {
    const analysis = this.analyzed(readFile(data), user.tier);
    const p = await preview(this.rt.db, this.deps, this.handlers, analysis, user.id, o.mode);
    let selections: ImportRun["selections"];
    if (o.resolution) {
      selections = {};
      for (const [type, drafts] of Object.entries(analysis.drafts) as [EntityType, { sourceId: string }[]][]) {
        const conflicts = new Map((p.summary[type] as { conflicts: { sourceId: string; renameAllowed: boolean }[] }).conflicts.map((c) => [c.sourceId, c]));
        selections[type] = new Map(
          drafts.map((d): [string, Selection] => {
            const c = conflicts.get(d.sourceId);
            if (!c) return [d.sourceId, { action: "import" }];
            return [d.sourceId, { action: "import", conflictResolution: o.resolution === "rename" && !c.renameAllowed ? "skip" : o.resolution! }];
          }),
        );
      }
    }
    const applyDeletions = p.toDelete
      ? (Object.fromEntries(Object.entries(p.toDelete).map(([type, list]) => [type, list.map((e) => e.id)])) as ImportRun["applyDeletions"])
      : undefined;
    const secretValues = await this.openSecrets(analysis, selections, o.secretsPassphrase);
    return this.run(analysis, {
      userId: user.id,
      tier: user.tier,
      mode: o.mode,
      ...(selections ? { selections } : {}),
      importSettings: true,
      ...(applyDeletions ? { applyDeletions } : {}),
      secretValues,
    });
  }
}
