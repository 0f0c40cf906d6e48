// Bounded job queues (design: "the bounded job queues trackers run on"). Work runs in lanes: each lane (a tracker
// kind: "api", "page") has a fixed number of slots served first come, first served; a key (a tracker id) never runs
// twice at once: a second run of the same key waits for the first to finish before it even asks for a slot.
// Single-process implementation; the interface is what a multi-instance deployment would replace.

export class QueueClosedError extends Error {
  constructor() {
    super("Job queue is shut down");
    this.name = "QueueClosedError";
  }
}

/** A counting semaphore with a FIFO wait list. */
export class Slots {
  private active = 0;
  private readonly waiters: { grant: () => void; fail: (e: Error) => void }[] = [];
  private closed = false;

  constructor(private limit: number) {}

  get inUse(): number {
    return this.active;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  setLimit(limit: number): void {
    this.limit = Math.max(1, limit);
    this.pump();
  }

  acquire(): Promise<() => void> {
    if (this.closed) return Promise.reject(new QueueClosedError());
    return new Promise((resolve, reject) => {
      this.waiters.push({ grant: () => resolve(this.releaser()), fail: reject });
      this.pump();
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.active--;
      this.pump();
    };
  }

  private pump() {
    while (this.active < this.limit && this.waiters.length > 0) {
      this.active++;
      this.waiters.shift()!.grant();
    }
  }

  /** Rejects every waiter; later acquires reject at once. Holders keep their slot until they release. */
  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w.fail(new QueueClosedError());
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
   * Runs `fn` in `lane` once earlier runs of `key` have finished and a slot is free. Without a key only the
   * slot is awaited. Rejects with QueueClosedError when the lanes are closed before `fn` starts.
   */
  run<T>(lane: string, key: string | undefined, fn: () => Promise<T>): Promise<T> {
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
        const release = await this.lane(lane).acquire();
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
