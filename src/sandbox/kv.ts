// Secbox.kv rules (supplement §11.8, §22): validation, quotas, TTL, listing by byte order, watch. Runs on the main
// thread; scripts reach it through the pool's "kv" operation. Watch waits hold no worker: the waiting happens here,
// on a promise, while the script's runtime sits parked in its worker.
//
// Watchers are in-process (KvNotifier); with several instances on one PostgreSQL database a write is also published
// (Db.publish, topic "kv") and wakes the watchers of the other instances. Writes of one owner take a lock for their
// transaction (Db.lock: PostgreSQL runs them concurrently; SQLite serializes every writer anyway), so quota totals
// stay exact.
//
// Per-user storage (§28, `max_storage_bytes`; wired with useStorage by the composition root, since owners are
// responders): every write, delete, expiry purge and owner deletion changes the owner's user's counter in the same
// transaction (platform/storage/quota.ts), after the user's storage lock and before the owner's lock. A write beyond
// the user's cap fails like one beyond `kv_max_bytes` ("KV size limit reached (…)"); while the server's disk is low
// (`server.min_free_disk_mib`) every set fails; reads and deletes keep working.
//
// Sets off the event loop (issue 29, wired with useWork on SQLite): a set's transaction (kv-write.ts) runs on a work
// thread's own connection while the main thread holds the writer, so a 1 MiB value costs the loop a message, not an
// insert and a commit. Each user's sets go one at a time, in order, to the work pool, where users take turns: a user
// writing as fast as their scripts can holds at most one set in progress, never the writer for a queue of them.
import type { Db } from "../platform/db/db";
import { ApiError } from "../platform/core/errors";
import { storageUsage, type StorageQuota } from "../platform/storage/quota";
import type { Clock } from "../platform/runtime";
import type { Work } from "../platform/work/pool";
import { kvStore, type KvRow } from "./kv-store";
import { KvWriteRate } from "./kv-rate";
import { kvTask } from "./kv-tasks";
import { KV_WRITE_TOPIC, purgeExpired, writeEntry, type KvSetInput, type KvSetOutcome } from "./kv-write";
import type { KvLimits } from "./types";

export const KV_MAX_KEY_BYTES = 256;
export const KV_MAX_VALUE_BYTES = 1_048_576;
export const KV_DEFAULT_LIST_LIMIT = 100;
export const KV_MAX_LIST_LIMIT = 1000;
export const KV_DEFAULT_WATCH_MS = 25_000;
export const KV_SWEEP_MS = 5 * 60 * 1000;

/** A failure the script sees (the promise rejects with this message). */
export class KvError extends Error {}

export interface KvEntry {
  key: string;
  value: string;
  createdAt: number;
  expiresAt: number | null;
}

export interface KvPage {
  entries: KvEntry[];
  cursor: string | null;
}

const utf8 = new TextEncoder();
const byteLength = (s: string) => (s.length * 3 <= 0xffff ? utf8.encode(s).length : Buffer.byteLength(s, "utf8"));
/** UTF-8 byte order (= code point order), unlike `<` on JS strings (UTF-16 units). */
const compareBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));

/** The smallest string greater than every string that starts with `prefix`; undefined when none exists. */
export function prefixUpperBound(prefix: string): string | undefined {
  const cps = [...prefix];
  while (cps.length > 0) {
    const last = cps.pop()!.codePointAt(0)!;
    let next = last + 1;
    if (next >= 0xd800 && next <= 0xdfff) next = 0xe000;
    if (next <= 0x10ffff) return cps.join("") + String.fromCodePoint(next);
  }
  return undefined;
}

type Waiter = { prefix: string; after: string | undefined; wake: () => void };

/** In-process notification of KV writes, per owner. */
export class KvNotifier {
  private readonly byOwner = new Map<string, Set<Waiter>>();

  /** Resolves on the next write by `owner` of a key matching `prefix` and > `after`, or when `signal` aborts. */
  wait(owner: string, prefix: string, after: string | undefined, signal: AbortSignal): { promise: Promise<void>; cancel: () => void } {
    let set = this.byOwner.get(owner);
    if (!set) this.byOwner.set(owner, (set = new Set()));
    const waiters = set;
    let waiter!: Waiter;
    const promise = new Promise<void>((resolve) => {
      waiter = { prefix, after, wake: resolve };
    });
    const cancel = () => {
      waiters.delete(waiter);
      if (waiters.size === 0 && this.byOwner.get(owner) === waiters) this.byOwner.delete(owner);
      signal.removeEventListener("abort", onAbort);
      waiter.wake();
    };
    const onAbort = () => cancel();
    waiters.add(waiter);
    signal.addEventListener("abort", onAbort, { once: true });
    return { promise, cancel };
  }

  notify(owner: string, key: string): void {
    const set = this.byOwner.get(owner);
    if (!set) return;
    for (const w of set) {
      if (key.startsWith(w.prefix) && (w.after === undefined || compareBytes(key, w.after) > 0)) w.wake();
    }
  }

  get waiting(): number {
    let n = 0;
    for (const s of this.byOwner.values()) n += s.size;
    return n;
  }
}

const toEntry = (r: KvRow): KvEntry => ({ key: r.key, value: r.value, createdAt: r.created_at, expiresAt: r.expires_at ?? null });

function checkKey(key: unknown): string {
  if (typeof key !== "string" || key === "") throw new KvError("KV key must be a non-empty string");
  if (byteLength(key) > KV_MAX_KEY_BYTES) throw new KvError(`KV key exceeds ${KV_MAX_KEY_BYTES} bytes`);
  return key;
}

function checkValue(value: unknown): string {
  if (typeof value !== "string") throw new KvError("KV value must be a string");
  if (byteLength(value) > KV_MAX_VALUE_BYTES) throw new KvError("KV value exceeds 1 MiB");
  return value;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function listOptions(options: unknown): { prefix: string; after: string | undefined; limit: number } {
  if (options !== undefined && options !== null && !isObject(options)) throw new KvError("KV list options must be an object");
  const o = (options ?? {}) as Record<string, unknown>;
  const prefix = o.prefix ?? "";
  if (typeof prefix !== "string") throw new KvError("KV prefix must be a string");
  const after = o.after ?? undefined;
  if (after !== undefined && typeof after !== "string") throw new KvError("KV after must be a string");
  const limit = o.limit ?? KV_DEFAULT_LIST_LIMIT;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > KV_MAX_LIST_LIMIT) {
    throw new KvError(`KV limit must be an integer from 1 to ${KV_MAX_LIST_LIMIT}`);
  }
  return { prefix, after: after as string | undefined, limit };
}

/** Per-user accounting of KV data (§28): KV owners are responders, whose users the responders feature knows. */
export interface KvStorage {
  quota: StorageQuota;
  /** The user a KV owner (responder id) belongs to; undefined when it no longer exists. */
  userOf(owner: string): Promise<string | undefined>;
  /** The KV owners (responder ids) of a user, for the recount. */
  ownersOf(db: Db, userId: string): Promise<string[]>;
}

/** Cross-instance event: a key was written; payload = "<owner> <key>" (owners are ids, without spaces). */
const WRITE_TOPIC = KV_WRITE_TOPIC;

/** Where sets run off the event loop: the work pool and what the task holds there (the SQLite writer). */
export interface KvWork {
  work: Work;
  holdWriter: () => Promise<() => void>;
}

export class KvService {
  readonly notifier = new KvNotifier();
  private sweeper: ReturnType<typeof setInterval> | null = null;
  private unsubscribe: (() => void) | null = null;
  private storage: KvStorage | null = null;
  private offLoop: KvWork | null = null;
  /** Per user (or owner without accounting): the tail of their sets sent to the work pool, one after another. */
  private readonly queued = new Map<string, Promise<unknown>>();
  /** Each user's write rate (tier kv_write_bytes_per_second, kv-rate.ts). */
  private readonly rate = new KvWriteRate();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  private nowSec(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  /** Counts KV bytes per user against `max_storage_bytes` from now on, and registers the KV recount. */
  useStorage(storage: KvStorage): void {
    this.storage = storage;
    storage.quota.counter("kv", async (db, userId) => kvStore.bytesOfOwners(db, await storage.ownersOf(db, userId)));
  }

  /** The user whose counter an owner's writes change (null without storage accounting). */
  private async userOf(owner: string): Promise<string | null> {
    if (!this.storage) return null;
    const userId = await this.storage.userOf(owner);
    if (userId === undefined) throw new KvError("KV: the responder no longer exists");
    return userId;
  }

  /** Sets run on the work pool from now on (SQLite: see the file comment). */
  useWork(offLoop: KvWork): void {
    this.offLoop = offLoop;
  }

  /** A set's transaction: on the work pool after the user's earlier sets, or inline. */
  private write(input: KvSetInput): Promise<KvSetOutcome> {
    const offLoop = this.offLoop;
    if (!offLoop) return this.db.tx((tx) => writeEntry(tx, input));
    const who = input.user?.id ?? input.owner;
    const before = this.queued.get(who) ?? Promise.resolve();
    const mine = before.then(() => offLoop.work.run(who, kvTask.set, input, { hold: offLoop.holdWriter }));
    const tail = mine.catch(() => {});
    this.queued.set(who, tail);
    void tail.then(() => {
      if (this.queued.get(who) === tail) this.queued.delete(who);
    });
    return mine;
  }

  /** Sweeps expired entries every 5 minutes (§11.8). */
  start(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => void this.sweep().catch(() => {}), KV_SWEEP_MS);
    this.sweeper.unref?.();
    this.unsubscribe = this.db.subscribe(WRITE_TOPIC, (payload) => {
      const i = payload.indexOf(" ");
      if (i > 0) this.notifier.notify(payload.slice(0, i), payload.slice(i + 1));
    });
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  async get(owner: string, key: unknown): Promise<string | null> {
    const row = await kvStore.liveRow(this.db, owner, checkKey(key), this.nowSec());
    return row ? row.value : null;
  }

  async getEntry(owner: string, key: unknown): Promise<KvEntry | null> {
    const row = await kvStore.liveRow(this.db, owner, checkKey(key), this.nowSec());
    return row ? toEntry(row) : null;
  }

  /** `remainingMs`/`signal`: the run's time left and its end (a set waits for the user's write rate within them). */
  async set(
    owner: string,
    keyIn: unknown,
    valueIn: unknown,
    options: unknown,
    limits: KvLimits,
    remainingMs = Infinity,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const key = checkKey(keyIn);
    const value = checkValue(valueIn);
    if (options !== undefined && options !== null && !isObject(options)) throw new KvError("KV set options must be an object");
    const o = (options ?? {}) as Record<string, unknown>;
    let ttl: number | null = null;
    if (o.ttlSec !== undefined && o.ttlSec !== null) {
      if (typeof o.ttlSec !== "number" || !Number.isInteger(o.ttlSec) || o.ttlSec < 1) throw new KvError("KV ttlSec must be an integer >= 1");
      ttl = Math.min(o.ttlSec, limits.maxTtlSec);
    }
    const ifAbsent = o.ifAbsent === true;
    const size = byteLength(key) + byteLength(value);
    const quota = this.storage?.quota;
    if (quota?.diskLow) throw new KvError("KV write refused: the server is low on disk space");
    const userId = await this.userOf(owner);
    const slow = await this.rate.take(userId ?? owner, size, limits.writeBytesPerSecond, remainingMs, signal);
    if (slow !== null) throw new KvError(slow);
    const now = this.nowSec();
    // the user's cap (tier, cached by the quota) is read before the transaction, which may run on another thread
    const cap = quota && userId !== null ? await quota.limit(userId) : undefined;
    const outcome = await this.write({
      owner,
      key,
      value,
      size,
      now,
      expiresAt: ttl === null ? null : now + ttl,
      ifAbsent,
      maxEntries: limits.maxEntries,
      maxBytes: limits.maxBytes,
      ...(quota && userId !== null ? { user: { id: userId, maxBytes: cap?.maxBytes ?? null } } : {}),
    });
    if ("refused" in outcome) throw new KvError(outcome.refused);
    if (outcome.written) this.notifier.notify(owner, key);
    return outcome.written;
  }

  async delete(owner: string, keyIn: unknown): Promise<boolean> {
    const key = checkKey(keyIn);
    const now = this.nowSec();
    const userId = await this.userOf(owner);
    return this.db.tx(async (tx) => {
      if (userId !== null) await this.storage!.quota.lock(tx, userId);
      await tx.lock(`kv:${owner}`);
      const row = await kvStore.row(tx, owner, key);
      if (!row) return false;
      await kvStore.remove(tx, owner, key);
      await kvStore.adjustUsage(tx, owner, -1, -row.size);
      if (userId !== null) await storageUsage.adjust(tx, userId, "kv", -row.size);
      return row.expires_at === null || row.expires_at > now;
    });
  }

  async list(owner: string, options: unknown): Promise<KvPage> {
    const o = listOptions(options);
    return this.page(owner, o);
  }

  private async page(owner: string, o: { prefix: string; after: string | undefined; limit: number }): Promise<KvPage> {
    const rows = await kvStore.list(this.db, owner, {
      lower: o.prefix,
      upper: o.prefix === "" ? undefined : prefixUpperBound(o.prefix),
      after: o.after,
      limit: o.limit,
      now: this.nowSec(),
    });
    const entries = rows.filter((r) => r.key.startsWith(o.prefix)).map(toEntry);
    return { entries, cursor: rows.length === o.limit ? rows[rows.length - 1]!.key : null };
  }

  /** §11.8 watch: as list; when the page would be empty, waits for a matching set (from any execution), then lists
   *  again; `timeoutMs` default 25 s, capped at the remaining script time − 1 s. */
  async watch(owner: string, options: unknown, remainingMs: number, signal: AbortSignal): Promise<KvPage & { timedOut: boolean }> {
    const o = listOptions(options);
    const raw = isObject(options) ? options.timeoutMs : undefined;
    if (raw !== undefined && raw !== null && (typeof raw !== "number" || !Number.isFinite(raw) || raw < 0)) {
      throw new KvError("KV timeoutMs must be a number >= 0");
    }
    const timeoutMs = Math.max(0, Math.min(typeof raw === "number" ? raw : KV_DEFAULT_WATCH_MS, remainingMs - 1000));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // Register before listing, so a write between the two is not missed.
      const waiter = this.notifier.wait(owner, o.prefix, o.after, signal);
      try {
        const page = await this.page(owner, o);
        if (page.entries.length > 0) return { ...page, timedOut: false };
        const left = deadline - Date.now();
        if (left <= 0 || signal.aborted) return { entries: [], cursor: null, timedOut: true };
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timedOut = await Promise.race([
          waiter.promise.then(() => false),
          new Promise<boolean>((r) => {
            timer = setTimeout(() => r(true), left);
          }),
        ]);
        clearTimeout(timer);
        if (timedOut || signal.aborted) return { entries: [], cursor: null, timedOut: true };
      } finally {
        waiter.cancel();
      }
    }
  }

  /** One script call: `{m, key, value, options}` from Secbox.kv. */
  async call(owner: string, call: unknown, limits: KvLimits, remainingMs: number, signal: AbortSignal): Promise<unknown> {
    try {
      return await this.dispatch(owner, call, limits, remainingMs, signal);
    } catch (err) {
      // Bad input the database refused (PostgreSQL text holds no NUL character): the script's error, not ours.
      if (err instanceof ApiError && err.status === 400) throw new KvError(`KV: ${err.message}`);
      throw err;
    }
  }

  private dispatch(owner: string, call: unknown, limits: KvLimits, remainingMs: number, signal: AbortSignal): Promise<unknown> {
    if (!isObject(call)) throw new KvError("KV: invalid call");
    switch (call.m) {
      case "get":
        return this.get(owner, call.key);
      case "getEntry":
        return this.getEntry(owner, call.key);
      case "set":
        return this.set(owner, call.key, call.value, call.options, limits, remainingMs, signal);
      case "delete":
        return this.delete(owner, call.key);
      case "list":
        return this.list(owner, call.options);
      case "watch":
        return this.watch(owner, call.options, remainingMs, signal);
      default:
        throw new KvError("KV: unknown method");
    }
  }

  /** Deletes expired entries of every owner (runs every 5 minutes, on every instance): one transaction per owner,
   *  under the owner's lock, re-reading what is expired (another instance may have swept it meanwhile). */
  async sweep(): Promise<number> {
    const now = this.nowSec();
    let n = 0;
    for (const { owner_id } of await kvStore.expiredByOwner(this.db, now)) {
      const userId = this.storage ? ((await this.storage.userOf(owner_id)) ?? null) : null;
      n += await this.db.tx(async (tx) => {
        if (userId !== null) await this.storage!.quota.lock(tx, userId);
        await tx.lock(`kv:${owner_id}`);
        return purgeExpired(tx, owner_id, userId, now);
      });
    }
    return n;
  }

  /** Deleting a responder deletes its KV (§11.8): the owner's entries, inside the caller's `tx` when given (the
   *  responder's delete transaction), their bytes given back to `userId`'s counter. */
  deleteOwner(owner: string, tx?: Db, userId?: string): Promise<void> {
    const remove = async (t: Db) => {
      if (userId !== undefined && this.storage) await this.storage.quota.lock(t, userId);
      await t.lock(`kv:${owner}`);
      const freed = await kvStore.removeOwner(t, owner);
      if (userId !== undefined) await storageUsage.adjust(t, userId, "kv", -freed);
    };
    return tx ? remove(tx) : this.db.tx(remove);
  }
}
