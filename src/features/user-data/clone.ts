// Operator clone (supplement §19.5, interface "Clone behaviour"): a fresh activated user without a password,
// filled as an export-all + merge import of the source would fill it (new ids, secrets with their values, history
// and revisions read straight from the source when `includeHistory`), without tier checks; never logs, KV data,
// shares, API keys, sessions or the notification email. The answer carries a one-time recovery link (the users
// feature's recovery flow) with which the operator sets a password and signs in as the clone.
import type { Db } from "../../platform/db/db";
import { ApiError, invalid, notFound } from "../../platform/core/errors";
import { isUuid } from "../../platform/core/ids";
import { normalizeEmail } from "../../platform/core/validate";
import { collect } from "./exporter";
import { FILE_FORMAT, FILE_VERSION, isObject, readFile } from "./file";
import { CLONE_LINK_TTL_SEC, ENTITY_TYPES } from "./shared-rules";
import type { EntityType } from "./contract";
import type { CloneInput, CloneResponse, ImportResult } from "./contract";
import type { UserDataService } from "./service";
import { toBase64 } from "../../platform/crypto/base64";

const { min: MIN_LINK_TTL, max: MAX_LINK_TTL, default: DEFAULT_LINK_TTL } = CLONE_LINK_TTL_SEC;

const bool = (raw: unknown, field: string, fallback: boolean) => {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw !== "boolean") throw invalid(`${field}: must be a boolean`);
  return raw;
};

/** Body checks first (the destination handle's format included), then the source (404), then the destination
 *  (400 EMAIL_TAKEN / HANDLE_TAKEN): §1 check order. */
export async function cloneUser(svc: UserDataService, body: CloneInput): Promise<CloneResponse> {
  const { users, trackers, responders } = svc.deps;
  if (!isObject(body)) throw invalid("body: must be a JSON object {source, destination, ...}");
  const source = body.source;
  if (!isObject(source)) throw invalid("source: must be {email} or {id}");
  const hasEmail = source.email !== undefined && source.email !== null;
  const hasId = source.id !== undefined && source.id !== null;
  if (hasEmail === hasId) throw invalid("source: give exactly one of email or id");
  if (hasId && !isUuid(source.id)) throw invalid("source.id: must be a UUID");
  const sourceEmail = hasEmail ? normalizeEmail(source.email, "source.email") : undefined;
  const dest = body.destination;
  if (!isObject(dest)) throw invalid("destination: must be {email, handle?}");
  const email = normalizeEmail(dest.email, "destination.email");
  if (dest.handle !== undefined && dest.handle !== null && typeof dest.handle !== "string") throw invalid("destination.handle: must be a string");
  const handle = users.checkHandle(dest.handle, "destination.handle");
  const includeHistory = bool(body.includeHistory, "includeHistory", true);
  const copySubscription = bool(body.copySubscription, "copySubscription", true);
  let ttl: number = DEFAULT_LINK_TTL;
  if (body.recoveryLinkExpiresIn !== undefined && body.recoveryLinkExpiresIn !== null) {
    const v = body.recoveryLinkExpiresIn;
    if (typeof v !== "number" || !Number.isInteger(v) || v < MIN_LINK_TTL || v > MAX_LINK_TTL)
      throw invalid(`recoveryLinkExpiresIn: must be an integer from ${MIN_LINK_TTL} to ${MAX_LINK_TTL} (seconds)`);
    ttl = v;
  }

  const sourceRow = sourceEmail !== undefined ? await users.getRowByEmail(sourceEmail) : await users.getRow((source.id as string).toLowerCase());
  if (!sourceRow) throw notFound("Source user");

  // An account an operator creates counts as having proven control of its email (supplement §3.5).
  const row = await users.create({ email, handle, activated: true, emailProof: "clone" });
  let summary: ImportResult;
  try {
    if (copySubscription) await users.copySubscription(sourceRow.id, row.id);
    const include = { types: Object.fromEntries(ENTITY_TYPES.map((t) => [t, { history: false }])), settings: true };
    await responders.flushCaptures();
    const collected = await collect(svc.deps, sourceRow.id, include);
    // The collected entities in file form (keys as base64, secrets without values: they travel in secretValues).
    const data: Record<string, unknown> = {};
    for (const type of ENTITY_TYPES) {
      const items = collected.entities[type];
      if (items) data[type] = type === "privateKeys" ? items.map((k) => ({ ...k, pkcs8: toBase64(k.pkcs8 as Uint8Array) })) : items;
    }
    if (collected.settings) data.settings = collected.settings;
    const tier = users.effectiveTier(row);
    const analysis = svc.analyzed(readFile({ format: FILE_FORMAT, version: FILE_VERSION, data }), tier, true);
    analysis.warnings = analysis.warnings.filter((w) => w !== "secrets: file has no secret values");
    summary = await svc.run(analysis, {
      userId: row.id,
      tier,
      mode: "merge",
      importSettings: true,
      unbounded: true,
      secretValues: collected.secretValues,
      ...(includeHistory
        ? {
            loadRecords: async (tx: Db, type: EntityType, sourceId: string) =>
              type === "responders"
                ? responders.transfer.historyRows(tx, sourceId)
                : type === "pageTrackers" || type === "apiTrackers"
                  ? trackers.transfer.revisionRows(tx, sourceId)
                  : undefined,
          }
        : {}),
    });
  } catch (err) {
    await users.removeUser(row.id);
    if (err instanceof ApiError && err.status === 400) throw new ApiError(400, err.code, `cloning failed, nothing was created: ${err.message}`);
    throw err;
  }
  const recoveryLink = await users.issueRecoveryToken(row.id, ttl);
  const user = await users.self(row.id);
  return { id: row.id, user, recoveryLink, summary };
}
