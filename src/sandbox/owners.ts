// The script pool's waiting jobs, kept per owner (a user id; see pool.ts "Fairness"). Each owner has its own FIFO;
// the pool asks for the next job with a rule of its own (which owners may go where) and gets the job of the owner
// that runs the fewest jobs right now, ties going to the oldest job. So one user's thousand waiting jobs do not
// stand in front of another user's one: that one goes next. The counts here are what the pool's limits read:
// jobs waiting (queued, or offered to a busy worker and not claimed), jobs held in workers, jobs running.

export interface Owner {
  key: string;
  /** Its jobs waiting for a worker, by job id (oldest first). */
  queue: { id: number }[];
  /** Its jobs offered to a busy worker and not claimed yet (they count as waiting). */
  prefetched: number;
  /** Its jobs in workers: offered, running or parked. */
  held: number;
  /** Its jobs offered or running (not parked). */
  running: number;
  /** It counts as hogging until then (epoch ms): it had a job running longer than the pool's STUCK_MS. */
  hogUntil: number;
  /** Until then (epoch ms) it held as many workers with long-running jobs as the pool has: no extra worker takes
   *  its jobs. */
  wideUntil: number;
}

export class OwnerQueues<J extends { id: number; owner: Owner }> {
  private readonly owners = new Map<string, Owner>();
  /** Owners with waiting jobs, in the order they started waiting. */
  private readonly ready = new Set<Owner>();
  /** Jobs in all queues (prefetched ones not included). */
  size = 0;

  /** Named owners (not jobs without one) with something in the pool, or hogging. */
  named = 0;

  /** The record of `key` (made on first use; dropped by release() once it has nothing in the pool). */
  owner(key: string): Owner {
    let o = this.owners.get(key);
    if (o === undefined) {
      o = { key, queue: [], prefetched: 0, held: 0, running: 0, hogUntil: 0, wideUntil: 0 };
      this.owners.set(key, o);
      if (!key.startsWith("\0")) this.named++;
    }
    return o;
  }

  /** Jobs of `o` waiting: queued or prefetched. */
  waiting(o: Owner): number {
    return o.queue.length + o.prefetched;
  }

  push(job: J): void {
    const q = job.owner.queue;
    // appended in id order; a job coming back (revoked offer) goes to its place
    if (q.length === 0 || q[q.length - 1]!.id < job.id) q.push(job);
    else q.splice(lowerBound(q, job.id), 0, job);
    this.size++;
    this.ready.add(job.owner);
  }

  /** The next job by the rule above among the owners `eligible` admits; taken out of its queue unless `peek`. */
  next(eligible: (o: Owner) => number, peek = false): J | undefined {
    let best: Owner | undefined;
    let bestRank = 0;
    for (const o of this.ready) {
      const rank = eligible(o);
      if (rank < 0) continue;
      if (
        best === undefined ||
        rank < bestRank ||
        (rank === bestRank && (o.running < best.running || (o.running === best.running && o.queue[0]!.id < best.queue[0]!.id)))
      ) {
        best = o;
        bestRank = rank;
      }
    }
    if (best === undefined) return undefined;
    if (peek) return best.queue[0] as J;
    const job = best.queue.shift() as J;
    this.size--;
    if (best.queue.length === 0) this.ready.delete(best);
    return job;
  }

  /** Any waiting owner `eligible` admits. */
  some(eligible: (o: Owner) => boolean): boolean {
    for (const o of this.ready) if (eligible(o)) return true;
    return false;
  }

  /** Every waiting job, emptying the queues (close). */
  drain(): J[] {
    const out: J[] = [];
    for (const o of this.ready) out.push(...(o.queue.splice(0) as J[]));
    this.ready.clear();
    this.size = 0;
    return out;
  }

  /** Forgets `o` when nothing of it is in the pool and it is not hogging at `now`. */
  release(o: Owner, now: number): void {
    if (o.queue.length === 0 && o.held === 0 && o.prefetched === 0 && o.hogUntil <= now && this.owners.get(o.key) === o) {
      this.owners.delete(o.key);
      if (!o.key.startsWith("\0")) this.named--;
    }
  }
}

function lowerBound(q: { id: number }[], id: number): number {
  let lo = 0;
  let hi = q.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (q[mid]!.id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
