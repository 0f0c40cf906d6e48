// Capture batching (supplement §11.5 step 5, §11.10 durability): the hit path appends the record to an in-memory
// batch; a write puts a batch into the database in one transaction (insert, evict beyond the tracking depth, count
// tracked hits for summaries).
// - batched (default): the hit is answered first; a timer writes the batch `delayMs` (50 ms) after its first
//   record, so with the write (and one still in progress before it) a record is committed within ~100 ms of its
//   response (supplement §11.10), and a crash (kill -9, power loss) loses at most that window: measured 0–59 ms of
//   traffic at 11–22k hits/s (scripts/bench/responders/crash.ts). `flush()` is awaited by management reads and on
//   shutdown (SIGINT/SIGTERM/SIGHUP), so a clean stop loses nothing.
// - strict (`[responders] capture = "strict"`): `pushDurable()` resolves once the batch holding the record is
//   committed, and the hit waits for it before its response goes out. The write starts after the current event-loop
//   turn, so the hits of one turn, and those arriving while a write runs, share a transaction (group commit). A
//   failed write is logged and the hit still answered. Durable against a crash of the process (kill -9); with
//   SQLite's synchronous = NORMAL (WAL) the last commits can still be lost by a power cut or OS crash.
// - storage (supplement §28): a record counts its bytes against its user's max_storage_bytes. A batch takes each
//   user's storage lock (user id order), then adds the user's records in one step when they fit; when they do not,
//   per responder the newest records that fit once the records they push out are given back. A hit beyond the cap is
//   answered but not captured (`notCaptured`); so are all hits while the disk is low (`server.min_free_disk_mib`).
import type { Db } from "../../platform/db/db";
import { newId } from "../../platform/core/ids";
import type { Logger } from "../../platform/log";
import { storageUsage, type StorageQuota } from "../../platform/storage/quota";
import type { RawHeaders } from "./cookies";
import { headerPairs } from "./request-parts";
import type { HeaderList } from "./script-result";
import { recordSize, respondersStore, type TrackedInsert } from "./store";

export interface PendingCapture {
  responderId: string;
  /** The tier's max_requests_to_track when the hit was served. The depth itself, requestsToTrack, is read when the
   *  record is written: an update while the hit ran (depth raised or lowered) applies to it. */
  maxKeep: number;
  /** Arrival time, unix ms (the record's createdAt is its second). */
  createdAtMs: number;
  durationMs: number;
  clientAddress: string | undefined;
  method: string;
  path: string;
  rawQuery: string;
  /** Request headers as copied on the hit path; formatted (sorted pairs, UTF-8) when written. */
  headers: RawHeaders;
  /** Stored bytes (already cut at max_tracked_body_bytes). */
  body: Uint8Array;
  bodySize: number;
  /** Status of the response sent, stored or not (supplement §27). */
  statusCode: number;
  /** The response, when it is stored (§11.5: trackResponse or a failure). */
  response?: { statusCode: number; headers: HeaderList; body: Uint8Array; bodySize: number; truncated: boolean };
  /** The record's id, set when it is written (a record dropped beyond the tracking depth never gets one). */
  id?: string;
}

/** The row of a record; its id is given when it is inserted (in arrival order of the batch: UUID v7 is monotonic
 *  in-process), so a record not captured never gets one. */
const toRow = (c: PendingCapture): TrackedInsert => {
  const row: TrackedInsert = {
    id: "",
    responder_id: c.responderId,
    created_at: Math.floor(c.createdAtMs / 1000),
    created_at_ms: c.createdAtMs,
    duration_ms: c.durationMs,
    client_address: c.clientAddress ?? null,
    method: c.method,
    path: c.path,
    raw_query: c.rawQuery === "" ? null : c.rawQuery,
    headers: JSON.stringify(headerPairs(c.headers)),
    body: c.body.byteLength > 0 ? c.body : null,
    body_size: c.bodySize,
    status_code: c.statusCode,
    response_status: c.response?.statusCode ?? null,
    response_headers: c.response ? JSON.stringify(c.response.headers) : null,
    response_body: c.response && c.response.body.byteLength > 0 ? c.response.body : null,
    response_body_size: c.response?.bodySize ?? null,
    response_truncated: c.response ? (c.response.truncated ? 1 : 0) : null,
    size: 0,
  };
  row.size = recordSize(row);
  return row;
};

/** One responder's share of a batch: the records to write (oldest first) and the depth to keep. */
interface Plan {
  responderId: string;
  keep: number;
  items: PendingCapture[];
  rows: TrackedInsert[];
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

export interface CaptureOptions {
  /** Delay between the first pending record and the write (ms). */
  delayMs: number;
  /** A batch this large (records, or stored body bytes) is written at once. */
  maxBatch: number;
  maxBatchBytes: number;
}

interface Group {
  /** Newest records of one responder (older ones beyond the depth are dropped as they arrive). */
  items: PendingCapture[];
  /** Every tracked hit since the last write, dropped ones included (hit-summary counts). */
  hits: number;
}

export class CaptureQueue {
  private groups = new Map<string, Group>();
  private retained = 0;
  private pendingBytes = 0;
  private urgent = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private tail: Promise<void> = Promise.resolve();
  private writes = 0;
  /** Callers of pushDurable() waiting for the next batch taken (resolved when its write ends). */
  private waiters: (() => void)[] = [];

  /** Hits answered but not captured: beyond their user's max_storage_bytes, or while the disk was low. */
  notCaptured = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly storage: StorageQuota,
    private readonly opts: CaptureOptions = { delayMs: 50, maxBatch: 2000, maxBatchBytes: 32 * 1024 * 1024 },
  ) {}

  /** Records waiting for the next write. */
  get size(): number {
    return this.retained;
  }

  /** Number of batch transactions written so far (tests, diagnostics). */
  get batchesWritten(): number {
    return this.writes;
  }

  push(c: PendingCapture): void {
    // The disk is low: nothing is kept (the hit was answered).
    if (this.storage.diskLow) {
      this.notCaptured++;
      return;
    }
    let g = this.groups.get(c.responderId);
    if (g === undefined) this.groups.set(c.responderId, (g = { items: [], hits: 0 }));
    g.hits++;
    g.items.push(c);
    this.retained++;
    this.pendingBytes += sizeOf(c);
    // Records beyond the tier's depth would be evicted at once: drop them now (amortised), so a burst of hits
    // keeps at most 2 × that depth records of a responder in memory (and maxBatchBytes bounds their bodies).
    if (g.items.length > 2 * c.maxKeep) {
      const dropped = g.items.splice(0, g.items.length - c.maxKeep);
      this.retained -= dropped.length;
      for (const d of dropped) this.pendingBytes -= sizeOf(d);
    }
    if (this.retained >= this.opts.maxBatch || this.pendingBytes >= this.opts.maxBatchBytes) {
      if (!this.urgent) {
        this.urgent = true;
        void this.flush();
      }
    } else if (this.timer === undefined) this.timer = setTimeout(() => void this.flush(), this.opts.delayMs);
  }

  /** Pushes the record and resolves once the write of its batch has ended (strict capture). The write starts at
   *  once, or right after the write in progress, together with every record pushed meanwhile. */
  pushDurable(c: PendingCapture): Promise<void> {
    if (this.storage.diskLow) {
      this.notCaptured++;
      return Promise.resolve();
    }
    const done = new Promise<void>((resolve) => this.waiters.push(resolve));
    this.push(c);
    if (!this.urgent) {
      // After the current I/O phase: the hits Bun hands over in one event-loop turn share one transaction (a
      // flush per hit measured 7k hits/s, this ~20k/s, on 2 shared cores with wrk at 50 connections).
      this.urgent = true;
      setImmediate(() => void this.flush());
    }
    return done;
  }

  /** Writes everything pending (serialized with any write in progress). */
  flush(): Promise<void> {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const run = this.tail.then(() => this.drain());
    this.tail = run.catch(() => {});
    return run;
  }

  /** Drops pending records of a responder (deleted, or history cleared). */
  discard(responderId: string): void {
    const g = this.groups.get(responderId);
    if (g === undefined) return;
    this.groups.delete(responderId);
    this.retained -= g.items.length;
    for (const d of g.items) this.pendingBytes -= sizeOf(d);
  }

  private take(): { groups: Map<string, Group>; waiters: (() => void)[] } {
    const groups = this.groups;
    const waiters = this.waiters;
    this.groups = new Map();
    this.waiters = [];
    this.retained = 0;
    this.pendingBytes = 0;
    this.urgent = false;
    return { groups, waiters };
  }

  private async drain(): Promise<void> {
    // Waiters whose records were discarded (responder deleted or cleared) are released by the pass as well.
    while (this.groups.size > 0 || this.waiters.length > 0) {
      const { groups, waiters } = this.take();
      try {
        if (groups.size > 0) {
          await this.write(groups);
          this.writes++;
        }
      } catch (err) {
        let count = 0;
        for (const g of groups.values()) count += g.items.length;
        this.log.error("responders: writing tracked requests failed", { count, error: String(err) });
      } finally {
        for (const w of waiters) w();
      }
    }
  }

  private async write(groups: Map<string, Group>): Promise<void> {
    await this.db.tx(async (tx) => {
      const byUser = new Map<string, Plan[]>();
      const notify: { id: string; hits: number }[] = [];
      for (const state of await respondersStore.trackingState(tx, [...groups.keys()])) {
        const { items, hits } = groups.get(state.id)!;
        const keep = Math.min(state.requests_to_track, items[items.length - 1]!.maxKeep);
        if (keep <= 0) continue;
        const kept = items.length > keep ? items.slice(items.length - keep) : items;
        const plans = byUser.get(state.user_id) ?? [];
        plans.push({ responderId: state.id, keep, items: kept, rows: kept.map(toRow) });
        byUser.set(state.user_id, plans);
        if (state.notify_enabled === 1) notify.push({ id: state.id, hits });
      }
      // One storage lock per user, taken in the same order by every writer (several instances).
      for (const userId of [...byUser.keys()].sort()) await this.writeUser(tx, userId, byUser.get(userId)!);
      for (const n of notify) await respondersStore.addNotifyCount(tx, n.id, n.hits);
    });
  }

  /** Writes one user's records within their max_storage_bytes (see the file comment). */
  private async writeUser(tx: Db, userId: string, plans: Plan[]): Promise<void> {
    if (this.storage.diskLow) {
      for (const p of plans) this.notCaptured += p.rows.length;
      return;
    }
    await this.storage.lock(tx, userId);
    const insert = async (p: Plan, from: number) => {
      for (let i = from; i < p.rows.length; i++) {
        const row = p.rows[i]!;
        row.id = p.items[i]!.id = newId();
        row.responder_id = p.responderId;
        await respondersStore.insertTracked(tx, row);
      }
      await respondersStore.trim(tx, userId, p.responderId, p.keep);
    };
    // Fast path: everything fits even before the records it pushes out are given back.
    if (await this.storage.tryAdd(tx, userId, "history", sum(plans.flatMap((p) => p.rows.map((r) => r.size))))) {
      for (const p of plans) await insert(p, 0);
      return;
    }
    const limit = (await this.storage.limit(userId, tx))?.maxBytes ?? 0;
    let used = (await storageUsage.get(tx, userId)).total;
    for (const p of plans) {
      const n = p.rows.length;
      // Under the user's lock these are exactly the records the trim after inserting m ≤ n new ones deletes:
      // stored[n - m ..] (stored = those after the newest keep − n, newest first).
      const stored = await respondersStore.sizesAfter(tx, p.responderId, p.keep - n);
      // From m = n down: the newest m records added, stored[n - m ..] given back (suffix sums, one pass).
      let added = sum(p.rows.map((r) => r.size));
      let freed = sum(stored);
      let m = n;
      for (; m > 0; m--) {
        if (used + added - freed <= limit) break;
        added -= p.rows[n - m]!.size;
        freed -= stored[n - m] ?? 0;
      }
      this.notCaptured += n - m;
      if (m === 0) continue;
      await insert(p, n - m);
      await this.storage.force(tx, userId, "history", added);
      used = (await storageUsage.get(tx, userId)).total;
    }
  }
}

const sizeOf = (c: PendingCapture) => c.body.byteLength + (c.response?.body.byteLength ?? 0);
