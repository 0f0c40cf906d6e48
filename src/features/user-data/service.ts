// User data export, import with preview, and operator clone (supplement §19, interface "user-data", "Clone
// behaviour"). This feature owns no table: it reads and writes every other feature's data through that feature's
// service (entities.ts maps each entity type onto it). The pieces:
// - exporter.ts: `include` → the file, streamed (history and revisions paged while the client reads, in time slices);
// - file.ts + crypto.ts: the §19.2 format and its secret encryption (argon2id + AES-256-GCM);
// - plan.ts + tasks.ts: a preview or import request decoded, read and checked on a work thread (platform/work) under
//   the user's share, secret values opened there too; one preview or import per user at a time (a second → 429);
// - importer.ts: analysis (every entity through its feature's create rules), preview, and the all-or-nothing apply
//   inside one `db.tx`, which gives the event loop back every few ms;
// - clone.ts: a new user filled by export-all + merge import, with a recovery link;
// - contract.ts: the wire shapes and request bodies (schemas and their types), shared-rules.ts the values the web
//   shares (entity types, modes, passphrase length, clone link lifetime).
import type { Tier, TierLimits } from "../../config/schema";
import type { AuthUser } from "../../platform/auth/principal";
import { ApiError, rateLimited } from "../../platform/core/errors";
import { nowSec, tierLimits, type Runtime } from "../../platform/runtime";
import type { Work } from "../../platform/work/pool";
import { deriveKey, newSecretsEncryption, type KdfParams } from "./crypto";
import { createHandlers, type TypeHandler, type UserDataDeps, type WriteContext } from "./entities";
import { collect, exportFileName, fileChunks, parseInclude, type Include } from "./exporter";
import type { FileReading } from "./file";
import { ENTITY_TYPES } from "./shared-rules";
import type { EntityType, ExportInput, ImportResult, Mode, Preview, Resolution } from "./contract";
import { analyze, apply, existingOf, type Analysis, type ApplyOptions, type Checked, type Selection } from "./importer";
import { analyzeRequest, asBody, passphrase, RawImport, unpackPlan, type AnalyzeInput, type AnalyzeOutput, type Stored, type ToDelete } from "./plan";
import { userDataTask } from "./tasks";

export type { UserDataDeps } from "./entities";
export type { ImportResult, Preview } from "./contract";
export { RawImport } from "./plan";

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
  /** Users with a preview or import running (one at a time each; in this process). */
  private readonly busy = new Set<string>();

  constructor(
    private readonly rt: Runtime,
    readonly deps: UserDataDeps,
    /** The work pool (absent: everything runs inline, as a direct construction in a script may want). */
    private readonly work?: Work,
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
    return {
      ...limits,
      max_requests_to_track: big,
      max_revisions: big,
      max_tracked_body_bytes: big,
      min_schedule_interval_sec: 0,
      notification_throttles: [...throttles],
    };
  }

  // ---- export (§19.1, §19.2) ----

  /** Checks the request and reads the entities; the file is then produced while `chunks` is consumed (records
   *  serialized on the work pool: chunks of text or of UTF-8 bytes). */
  async export(userId: string, body: ExportInput): Promise<{ fileName: string; chunks: AsyncGenerator<string | Uint8Array> }> {
    const b = asBody(body);
    const include = parseInclude(b.include);
    return this.exportChunks(userId, include, passphrase(b.secretsPassphrase, "secretsPassphrase"), true);
  }

  /** argon2id on a work thread, under the user's share. */
  private derive(userId: string, secretsPassphrase: string, salt: Uint8Array, params: KdfParams): Promise<Uint8Array> {
    if (!this.work) return deriveKey(secretsPassphrase, salt, params);
    return this.work.run(userId, userDataTask.deriveKey, { passphrase: secretsPassphrase, salt, params });
  }

  /** Export of a selection as text chunks (the CLI exports everything with history). */
  async exportWith(
    userId: string,
    include: Include,
    secretsPassphrase: string | undefined,
  ): Promise<{ fileName: string; chunks: AsyncGenerator<string> }> {
    const { fileName, chunks } = await this.exportChunks(userId, include, secretsPassphrase, false);
    return { fileName, chunks: asText(chunks) };
  }

  private async exportChunks(userId: string, include: Include, secretsPassphrase: string | undefined, pooled: boolean) {
    await this.deps.responders.flushCaptures();
    const collected = await collect(this.deps, userId, include);
    let encryption;
    if (secretsPassphrase !== undefined) {
      const { header, salt } = newSecretsEncryption();
      encryption = { header, key: await this.derive(userId, secretsPassphrase, salt, header.kdfParams) };
    }
    const now = this.now();
    const pool = pooled && this.work ? { work: this.work, owner: userId, reads: this.rt.db.dialect === "sqlite" } : undefined;
    return { fileName: exportFileName(now), chunks: fileChunks(this.deps, collected, now, encryption, pool) };
  }

  // ---- preview and import (§19.3, §19.4) ----

  /** One preview or import per user at a time: a second one meanwhile → 429. */
  private async exclusive<T>(userId: string, fn: () => Promise<T>): Promise<T> {
    if (this.busy.has(userId)) throw rateLimited(2, "A preview or import of yours is already running");
    this.busy.add(userId);
    try {
      return await fn();
    } finally {
      this.busy.delete(userId);
    }
  }

  /** The request analysed on a work thread (inline without a pool). */
  private async analyzeOff(user: AuthUser, body: unknown, kind: AnalyzeInput["kind"], all?: AnalyzeInput["all"]): Promise<AnalyzeOutput> {
    // read now (a declared-length body was left unread until this user's import slot was taken)
    const bytes = body instanceof RawImport ? await body.bytes() : undefined;
    const input: AnalyzeInput = {
      request: body instanceof RawImport ? { bytes: bytes!, contentType: body.contentType } : { body },
      kind,
      userId: user.id,
      tier: user.tier,
      limits: this.limitsFor(user.tier),
      ...(all ? { all } : {}),
    };
    // SQLite: the work thread reads what it compares with on its own connection; PostgreSQL: read here, sent along.
    if (!this.work || this.rt.db.dialect !== "sqlite") input.stored = await this.stored(user.id);
    if (!this.work) return (await analyzeRequest(input, { deps: this.deps, handlers: this.handlers, db: this.rt.db })).output;
    // The body's bytes move to the thread (a buffer of their own when readBodyBytes joined several chunks).
    const own = bytes !== undefined && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    return this.work.run(user.id, userDataTask.analyze, input, own ? { transfer: [bytes.buffer as ArrayBuffer] } : {});
  }

  private async stored(userId: string): Promise<Stored> {
    return {
      existing: await existingOf(this.rt.db, this.handlers, ENTITY_TYPES, userId),
      hasSettings: Object.keys(await this.deps.settings.get(userId)).length > 0,
    };
  }

  /** `{data, mode}` (a RawImport from the route) → what an import would do; a file that fails the checks is
   *  `{valid: false, warnings}`. */
  async preview(user: AuthUser, body: unknown): Promise<Preview> {
    return this.exclusive(user.id, async () => {
      const out = await this.analyzeOff(user, body, "preview");
      if (!("preview" in out)) throw new Error("preview: the analysis answered a plan");
      return out.preview;
    });
  }

  /** Imports a file (see importer.ts): 400 naming the type and source id of the first problem, nothing changed. */
  async import(user: AuthUser, body: unknown): Promise<ImportResult> {
    return this.exclusive(user.id, async () => (await this.planned(user, body, "import")).result);
  }

  private async planned(
    user: AuthUser,
    body: unknown,
    kind: "import" | "importAll",
    all?: AnalyzeInput["all"],
  ): Promise<{ result: ImportResult; notDeleted?: ToDelete }> {
    const out = await this.analyzeOff(user, body, kind, all);
    if (!("plan" in out)) throw new Error("import: the analysis answered a preview");
    const plan = await unpackPlan(out.plan);
    const result = await this.run(plan.checked, {
      userId: user.id,
      tier: user.tier,
      mode: plan.mode,
      ...(plan.selections ? { selections: plan.selections } : {}),
      importSettings: plan.importSettings,
      ...(plan.applyDeletions ? { applyDeletions: plan.applyDeletions } : {}),
      secretValues: plan.secretValues,
    });
    return { result, ...(plan.notDeleted ? { notDeleted: plan.notDeleted } : {}) };
  }

  /** A checked file (main thread: the clone's data, read from this server), or a 400 with its first problems. */
  analyzed(reading: FileReading, tier: Tier, unbounded = false): Analysis {
    const { analysis, problems, code } = analyze(reading, this.handlers, { tier, limits: this.limitsFor(tier, unbounded) });
    if (analysis) return analysis;
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more; _import_preview lists them)` : "";
    throw new ApiError(400, code ?? "INVALID_INPUT", `${problems[0] ?? "data: invalid export file"}${more}`);
  }

  /** Runs an analyzed import in one transaction; the responders' and trackers' in-memory state follows the commit. */
  async run(analysis: Checked, r: ImportRun): Promise<ImportResult> {
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
   * entity (skip where a rename is not allowed), default §19.4 without it. In apply mode the deletions the preview
   * lists in toDelete are applied only with `deleteMissing` (§27: exactly those); without it nothing is deleted and
   * they come back as `notDeleted` (the CLI prints them).
   */
  async importAll(
    user: AuthUser,
    data: unknown,
    o: { mode: Mode; resolution?: Resolution; secretsPassphrase?: string; deleteMissing?: boolean },
  ): Promise<{ result: ImportResult; notDeleted?: ToDelete }> {
    return this.exclusive(user.id, () =>
      this.planned(user, { data }, "importAll", {
        mode: o.mode,
        ...(o.resolution ? { resolution: o.resolution } : {}),
        ...(o.secretsPassphrase !== undefined ? { secretsPassphrase: o.secretsPassphrase } : {}),
        deleteMissing: o.deleteMissing === true,
      }),
    );
  }
}

async function* asText(chunks: AsyncGenerator<string | Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  for await (const chunk of chunks) yield typeof chunk === "string" ? chunk : decoder.decode(chunk);
}
