// The transaction of one Secbox.kv set (supplement §11.8, §28), the same wherever it runs: inline on the main
// thread (PostgreSQL, or no work pool), or on a work thread's own SQLite connection while the main thread holds the
// writer (kv.ts: a 1 MiB value's insert and commit would hold the event loop for milliseconds, and for 100 ms and more
// on a busy disk). Everything it needs that is not in the database comes in its input (the user's cap is read before,
// cached by StorageQuota), so a work thread runs it with nothing but a connection; a refusal is an outcome (its
// message goes back to the script), not a thrown error, so it crosses threads as it is.
// Owns: the order of a set's statements (user's storage lock, owner's lock, purge, quotas, write, counters).
import type { Db } from "../platform/db/db";
import { storageUsage } from "../platform/storage/usage-store";
import { kvStore } from "./kv-store";

export interface KvSetInput {
  owner: string;
  key: string;
  value: string;
  /** UTF-8 bytes of key and value. */
  size: number;
  now: number;
  expiresAt: number | null;
  ifAbsent: boolean;
  /** The owner's quotas (tier). */
  maxEntries: number;
  maxBytes: number;
  /** The owner's user and their cap (max_storage_bytes), without storage accounting: absent. Unknown user: maxBytes
   *  null (every addition refused). */
  user?: { id: string; maxBytes: number | null };
}

export type KvSetOutcome = { written: boolean } | { refused: string };

/** Publication topic of writes (other instances' watchers; PostgreSQL only). */
export const KV_WRITE_TOPIC = "kv";

/** Drops an owner's expired rows, giving their bytes back to the owner's and the user's totals. */
export async function purgeExpired(tx: Db, owner: string, userId: string | null, now: number): Promise<number> {
  const expired = await kvStore.expiredTotals(tx, owner, now);
  if (!expired || Number(expired.n) === 0) return 0;
  await kvStore.removeExpired(tx, owner, now);
  await kvStore.adjustUsage(tx, owner, -expired.n, -(expired.bytes ?? 0));
  if (userId !== null) await storageUsage.adjust(tx, userId, "kv", -Number(expired.bytes ?? 0));
  return Number(expired.n);
}

/** Adds `bytes` to the user's KV counter within their cap (≤ 0: gives bytes back, never refused). */
async function addToUser(tx: Db, user: NonNullable<KvSetInput["user"]>, bytes: number): Promise<boolean> {
  if (bytes <= 0) {
    await storageUsage.adjust(tx, user.id, "kv", bytes);
    return true;
  }
  if (user.maxBytes === null) return false;
  return storageUsage.tryAdd(tx, user.id, "kv", bytes, user.maxBytes);
}

/** The set, inside `tx` (a transaction). */
export async function writeEntry(tx: Db, a: KvSetInput): Promise<KvSetOutcome> {
  const { owner, key, size, now, user } = a;
  if (user) await tx.lock(`storage:${user.id}`);
  await tx.lock(`kv:${owner}`);
  let existing = await kvStore.row(tx, owner, key);
  const live = existing !== undefined && (existing.expires_at === null || existing.expires_at > now);
  if (a.ifAbsent && live) return { written: false };
  let usage = await kvStore.usage(tx, owner);
  let purged = false;
  // Quotas count live entries: drop this owner's expired rows first, then decide.
  const purge = async () => {
    purged = true;
    if ((await purgeExpired(tx, owner, user?.id ?? null, now)) === 0) return;
    usage = await kvStore.usage(tx, owner);
    if (existing && !live) existing = undefined;
  };
  const over = () => usage.entries + (existing ? 0 : 1) > a.maxEntries || usage.bytes + size - (existing?.size ?? 0) > a.maxBytes;
  if (over()) {
    await purge();
    if (usage.entries + (existing ? 0 : 1) > a.maxEntries) return { refused: `KV entry limit reached (${a.maxEntries} entries)` };
    if (usage.bytes + size - (existing?.size ?? 0) > a.maxBytes) return { refused: `KV size limit reached (${a.maxBytes} bytes)` };
  }
  if (user) {
    // The user's cap over every responder's KV, history and revisions (§28).
    let added = await addToUser(tx, user, size - (existing?.size ?? 0));
    if (!added && !purged) {
      await purge();
      added = await addToUser(tx, user, size - (existing?.size ?? 0));
    }
    if (!added) return { refused: `KV size limit reached (${user.maxBytes ?? 0} bytes of stored data per user: max_storage_bytes)` };
  }
  if (existing) await kvStore.update(tx, owner, key, a.value, size, now, a.expiresAt);
  else await kvStore.insert(tx, owner, key, a.value, size, now, a.expiresAt);
  await kvStore.adjustUsage(tx, owner, existing ? 0 : 1, size - (existing?.size ?? 0));
  await tx.publish(KV_WRITE_TOPIC, `${owner} ${key}`);
  return { written: true };
}
