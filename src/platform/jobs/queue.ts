// Bounded job queues (design: "the bounded job queues trackers run on"). Work runs in lanes: each lane (a tracker
// kind: "api", "page") has a fixed number of slots; a key (a tracker id) never runs twice at once: a second run of
// the same key waits for the first to finish before it even asks for a slot.
//
// Fair share between owners (users): a run names its owner (the tracker's or the `_debug` caller's user id). A free
// slot goes to the waiting owner that holds the fewest slots of the lane, first come first served among equals, so
// another user's run never waits behind one user's queue, only (at most) for a running run to end. A lane of 3 or
// more slots also keeps one back from any single owner (it holds at most all but one): one user's ten looping
// `_debug` calls leave a slot for another user's run at once, and the slots they free go to the others first until
// the users hold about equal shares. (A lane of 2, chromium.max_concurrency's default, lets a lone user use both:
// reserving one would halve a single-user server's page runs.) Runs without an owner are each their own owner.
// Single-process implementation; the interface is what a multi-instance deployment would replace.

export class QueueClosedError extends Error {
  constructor() {
    super("Job queue is shut down");
    this.name = "QueueClosedError";
  }
}

interface Waiter {
  seq: number;
  grant: () => void;
  fail: (e: Error) => void;
}

/** A counting semaphore shared fairly between owners (see the header); FIFO for one owner. */
export class Slots {
  private active = 0;
  private seq = 0;
  /** Slots held per owner. */
  private readonly held = new Map<string, number>();
  /** Waiters per owner, oldest first; owners in the order they started waiting. */
  private readonly queues = new Map<string, Waiter[]>();
  private count = 0;
  private closed = false;

  constructor(private limit: number) {}

  get inUse(): number {
    return this.active;
  }

  get waiting(): number {
    return this.count;
  }

  /** Slots `owner` holds now. */
  heldBy(owner: string): number {
    return this.held.get(owner) ?? 0;
  }

  setLimit(limit: number): void {
    this.limit = Math.max(1, limit);
    this.pump();
  }

  /** Resolves with the slot's release function once `owner` gets a slot. */
  acquire(owner?: string): Promise<() => void> {
    if (this.closed) return Promise.reject(new QueueClosedError());
    const seq = ++this.seq;
    const key = owner ?? `\0${seq}`;
    return new Promise((resolve, reject) => {
      let q = this.queues.get(key);
      if (q === undefined) this.queues.set(key, (q = []));
      q.push({ seq, grant: () => resolve(this.releaser(key)), fail: reject });
      this.count++;
      this.pump();
    });
  }

  /** What one owner may hold: all slots but one in a lane of 3 or more (see the header). */
  private get cap(): number {
    return this.limit >= 3 ? this.limit - 1 : this.limit;
  }

  private releaser(key: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      const n = (this.held.get(key) ?? 1) - 1;
      if (n <= 0) this.held.delete(key);
      else this.held.set(key, n);
      this.pump();
    };
  }

  private pump() {
    while (this.active < this.limit && this.count > 0) {
      // the waiting owner holding the fewest slots (below the cap); ties: the oldest waiter
      let best: string | null = null;
      let bestHeld = Infinity;
      let bestSeq = Infinity;
      for (const [key, q] of this.queues) {
        const held = this.held.get(key) ?? 0;
        if (held >= this.cap) continue;
        if (held < bestHeld || (held === bestHeld && q[0]!.seq < bestSeq)) {
          best = key;
          bestHeld = held;
          bestSeq = q[0]!.seq;
        }
      }
      if (best === null) return;
      const q = this.queues.get(best)!;
      const w = q.shift()!;
      if (q.length === 0) this.queues.delete(best);
      this.count--;
      this.active++;
      this.held.set(best, bestHeld + 1);
      w.grant();
    }
  }

  /** Rejects every waiter; later acquires reject at once. Holders keep their slot until they release. */
  close(): void {
    this.closed = true;
    const waiters = [...this.queues.values()].flat();
    this.queues.clear();
    this.count = 0;
    for (const w of waiters) w.fail(new QueueClosedError());
  }
}

export class JobLanes {
  private readonly lanes = new Map<string, Slots>();
  /** Per key: the tail of its chain of runs, and how many runs (waiting or running) it holds. */
  private readonly keys = new Map<string, { tail: Promise<void>; count: number }>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;

  constructor(limits: Record<string, number>) {
    for (const [lane, limit] of Object.entries(limits)) this.lanes.set(lane, new Slots(Math.max(1, limit)));
  }

  private lane(name: string): Slots {
    let s = this.lanes.get(name);
    if (!s) {
      s = new Slots(1);
      this.lanes.set(name, s);
    }
    return s;
  }

  setLimit(lane: string, limit: number): void {
    this.lane(lane).setLimit(limit);
  }

  /** True while a run of `key` is waiting or running. */
  isBusy(key: string): boolean {
    return this.keys.has(key);
  }

  stats(lane: string): { running: number; waiting: number } {
    const s = this.lane(lane);
    return { running: s.inUse, waiting: s.waiting };
  }

  /**
   * Runs `fn` in `lane` once earlier runs of `key` have finished and a slot is free for `owner` (see the header).
   * Without a key only the slot is awaited. Rejects with QueueClosedError when the lanes are closed before `fn`
   * starts.
   */
  run<T>(lane: string, key: string | undefined, fn: () => Promise<T>, owner?: string): Promise<T> {
    if (this.closed) return Promise.reject(new QueueClosedError());
    let done!: () => void;
    const mine = new Promise<void>((r) => (done = r));
    let prev: Promise<void> | undefined;
    if (key !== undefined) {
      const entry = this.keys.get(key);
      prev = entry?.tail;
      const tail = (prev ?? Promise.resolve()).then(() => mine);
      this.keys.set(key, { tail, count: (entry?.count ?? 0) + 1 });
    }
    const p = (async () => {
      try {
        if (prev) await prev;
        const release = await this.lane(lane).acquire(owner);
        try {
          return await fn();
        } finally {
          release();
        }
      } finally {
        done();
        if (key !== undefined) {
          const entry = this.keys.get(key)!;
          if (--entry.count === 0) this.keys.delete(key);
        }
      }
    })();
    this.inFlight.add(p);
    p.then(
      () => this.inFlight.delete(p),
      () => this.inFlight.delete(p),
    );
    return p;
  }

  /** Resolves when nothing is waiting or running. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Refuses new work and drops waiting work; running work continues (await idle() to let it finish). */
  close(): void {
    this.closed = true;
    for (const s of this.lanes.values()) s.close();
  }
}
