// Dispatch: which waiting job goes to which worker, as a revocable offer (see ../pool.ts "Scheduling"). A job goes
// to the least loaded worker; a busy worker may hold offers behind its running job (prefetch, up to OFFER_DEPTH),
// each a token in a shared cell that the worker must compare-and-swap to 0 before it starts the job, and that this
// thread takes back with the same CAS (revoke) when the job should run elsewhere. The run messages of one event-loop
// turn go to a worker as one batch (flush).
// Owns: Slot.offered/.outbox/.active/.lastIdleDispatch, Job.offered/.prefetched/.cell/.token/.slot, the offer
// counters of the pool and of each owner. Must never: start a job twice (a revoked offer's token is never reused),
// offer a job behind a hog's running job, or give an extra worker a "wide" owner's job (fairness.ts says who may go).
import { DEFAULT_STACK_KIB } from "../types";
import { batch, encodeRun } from "../wire";
import { failure, OFFER_CELLS, OFFER_DEPTH, settle, type Job, type Slot, type PoolState } from "./state";

/** Notes the claims of offered jobs that the worker made since this thread last looked. */
export function refresh(pool: PoolState, slot: Slot): void {
  for (let i = slot.offered.length - 1; i >= 0; i--) {
    const job = slot.offered[i]!;
    if (Atomics.load(slot.cells, job.cell) !== job.token) claimed(pool, slot, job);
  }
}

/** `job` (offered to `slot`) was claimed: it runs now, its deadline runs from about now. */
export function claimed(pool: PoolState, slot: Slot, job: Job): void {
  if (!job.offered) return;
  unoffer(pool, slot, job);
  slot.active++;
  job.dispatchedAt = Date.now();
  job.backstopAt = job.dispatchedAt + timeoutOf(job) + pool.grace;
}

/** Drops `job` from `slot`'s offers (claimed, revoked or ended). */
export function unoffer(pool: PoolState, slot: Slot, job: Job): void {
  if (!job.offered) return;
  job.offered = false;
  if (job.prefetched) {
    job.prefetched = false;
    pool.prefetched--;
    job.owner.prefetched--;
  }
  const i = slot.offered.indexOf(job);
  if (i >= 0) slot.offered.splice(i, 1);
}

/** Takes back an offer the worker has not claimed; false when it already did (then it counts as claimed). */
export function revoke(pool: PoolState, slot: Slot, job: Job): boolean {
  if (!job.offered) return false;
  if (Atomics.compareExchange(slot.cells, job.cell, job.token, 0) !== job.token) {
    claimed(pool, slot, job);
    return false;
  }
  unoffer(pool, slot, job);
  slot.jobs.delete(job.id);
  job.slot = null;
  job.owner.held--;
  job.owner.running--;
  return true;
}

/** `job` left its worker (done, failed, or its worker gone): its owner's counts. */
export function left(pool: PoolState, job: Job): void {
  const o = job.owner;
  o.held--;
  if (!job.parked) o.running--;
  if (o.held === 0) pool.queues.release(o, Date.now());
}

export function dispatch(pool: PoolState): void {
  if (pool.closed) return;
  for (const s of pool.slots) refresh(pool, s);
  /** Workers the waiting jobs may not go to (an extra worker while only hogs wait). */
  let skip: Slot[] | null = null;
  /** Offers this call took back: each job at most once, so the loop ends (each other turn offers a waiting job or
   *  skips a worker). Taking offers back for a job that then does not go first brought them back in front of it,
   *  and the rules below could take them back again, forever, on this thread (issue 29; pool.ts "Scheduling"). */
  const taken = new Set<Job>();
  while (pool.queues.size > 0 || pool.prefetched > 0) {
    // the least loaded live worker: running + offered jobs; ties go to the one holding fewer jobs
    let best: Slot | null = null;
    let bestLoad = Infinity;
    for (const s of pool.slots) {
      if (!s.ready || s.dead || s.stuck || s.jobs.size >= pool.maxJobs || s.offered.length >= OFFER_DEPTH) continue;
      const load = s.active + s.offered.length;
      if (load >= OFFER_DEPTH || (skip !== null && skip.includes(s))) continue;
      // While an owner hogs, no job waits behind one of its jobs: that one may run long.
      if (load > 0 && pool.hogs.size > 0 && holdsHog(pool, s)) continue;
      // ties: fewer jobs held (parked ones), then the worker that ran last (its caches are warm)
      if (
        load < bestLoad ||
        (load === bestLoad && (s.jobs.size < best!.jobs.size || (s.jobs.size === best!.jobs.size && s.lastIdleDispatch > best!.lastIdleDispatch)))
      ) {
        best = s;
        bestLoad = load;
      }
    }
    if (!best) {
      if (makeRoom(pool, taken)) continue;
      return;
    }
    const eligible = best.extra ? pool.forExtra : pool.forRegular;
    if (bestLoad === 0) {
      // An idle worker: the oldest waiting job, which may be one offered to a busy worker and not yet claimed.
      let oldest: Job | null = null;
      for (const s of pool.slots) {
        if (s === best) continue;
        for (const j of s.offered) if (j.prefetched && !taken.has(j) && (!oldest || j.id < oldest.id)) oldest = j;
      }
      if (oldest && eligible(oldest.owner) >= 0) {
        const head = pool.queues.next(eligible, true);
        if ((!head || oldest.id < head.id) && revoke(pool, oldest.slot!, oldest)) {
          taken.add(oldest);
          best.lastIdleDispatch = ++pool.dispatchTick;
          assign(pool, best, oldest);
          continue;
        }
      }
    }
    const job = pool.queues.next(eligible);
    if (!job) {
      (skip ??= []).push(best);
      continue;
    }
    if (bestLoad === 0) best.lastIdleDispatch = ++pool.dispatchTick;
    // not behind the offers of an owner running many more jobs: those go back and follow it
    if (best.offered.length > 0 && job.owner.running < 4) takeBack(pool, best, goesAfter(eligible, job), taken);
    assign(pool, best, job);
  }
}

/** Offers that, back in their queues, would go after `head` (OwnerQueues.next by `eligible`): of owners ranked
 *  after it (a hog's jobs after the others', an owner beyond its share after everyone), or of its rank running many
 *  more jobs (at least twice as many, and 2 more). Only those are taken back for it. */
function goesAfter(eligible: (o: Job["owner"]) => number, head: Job): (j: Job) => boolean {
  const rank = eligible(head.owner);
  const mine = head.owner.running;
  return (j) => {
    if (!j.prefetched || j.owner === head.owner) return false;
    const r = eligible(j.owner);
    return r < 0 || r > rank || (r === rank && j.owner.running >= 2 * mine + 2);
  };
}

/** `slot` runs (or was offered) a job of a hogging owner. */
function holdsHog(pool: PoolState, slot: Slot): boolean {
  for (const j of slot.jobs.values()) if (!j.parked && pool.hogs.has(j.owner)) return true;
  return false;
}

/** Every worker's offers are taken while the next waiting job belongs to an owner running few jobs: the offers
 *  of one worker that would go after it (goesAfter: owners running many more, or ranked after it) go back to their
 *  queues, so that job is offered first instead of after them (a flood of one user's short jobs fills every
 *  worker's OFFER_DEPTH; another user's job would wait behind up to that many). dispatch() does the same for the
 *  worker a job goes to. True if any went back (none that `taken` holds: see dispatch()). */
function makeRoom(pool: PoolState, taken: Set<Job>): boolean {
  const head = pool.queues.next(pool.forRegular, true);
  if (head === undefined) return false;
  const after = goesAfter(pool.forRegular, head);
  const over = (j: Job) => !taken.has(j) && after(j);
  let best: Slot | null = null;
  let most = 0;
  for (const s of pool.slots) {
    if (!s.ready || s.dead || s.stuck || s.extra || s.jobs.size >= pool.maxJobs) continue;
    let n = 0;
    for (const j of s.offered) if (over(j)) n++;
    if (n > most) {
      best = s;
      most = n;
    }
  }
  return best !== null && takeBack(pool, best, over, taken);
}

/** Revokes `slot`'s unclaimed offers that `which` selects (none that `taken` holds; those taken join it); they wait
 *  in their queues again. True if any did. */
function takeBack(pool: PoolState, slot: Slot, which: (j: Job) => boolean, taken: Set<Job>): boolean {
  let back = false;
  for (const j of [...slot.offered]) {
    if (!taken.has(j) && which(j) && revoke(pool, slot, j)) {
      taken.add(j);
      pool.queues.push(j);
      back = true;
    }
  }
  return back;
}

export function timeoutOf(job: Job): number {
  return Math.max(1, Math.floor(job.req.limits.timeoutMs) - job.spentMs);
}

function assign(pool: PoolState, slot: Slot, job: Job): void {
  let cell = -1;
  for (let c = 0; c < OFFER_CELLS && cell < 0; c++) {
    if (Atomics.load(slot.cells, c) === 0 && !slot.offered.some((j) => j.cell === c)) cell = c;
  }
  if (cell < 0) {
    // cannot happen (OFFER_DEPTH < OFFER_CELLS); keep the job queued
    pool.queues.push(job);
    return;
  }
  job.slot = slot;
  job.dispatchedAt = Date.now();
  job.cell = cell;
  // a token of this offer, never of an earlier offer of the same job: a revoked offer's entry in a batch the
  // worker has not reached yet must not claim the job's new offer in the same cell (it would run before the
  // jobs offered ahead of it, see takeBack())
  job.token = (++pool.offers % 0x7ffffffe) + 1;
  job.offered = true;
  job.prefetched = slot.active + slot.offered.length > 0;
  if (job.prefetched) {
    pool.prefetched++;
    job.owner.prefetched++;
  }
  job.owner.held++;
  job.owner.running++;
  // An idle worker claims at once; a prefetched job's backstop starts once it can be claimed (see fairness.ts check()).
  job.backstopAt = job.prefetched ? Infinity : job.dispatchedAt + timeoutOf(job) + pool.grace;
  slot.offered.push(job);
  slot.jobs.set(job.id, job);
  const { req } = job;
  const msg = encodeRun(
    {
      id: job.id,
      cell,
      token: job.token,
      source: req.source,
      memoryBytes: job.memoryBytes,
      timeoutMs: timeoutOf(job),
      stackBytes: Math.max(16, Math.floor(req.limits.stackKiB ?? DEFAULT_STACK_KIB)) * 1024,
      kv: req.kvOwner !== undefined,
      proxy: req.proxy !== false,
      owner: typeof req.owner === "string" ? req.owner : "",
      ...(req.check ? { check: req.check } : {}),
    },
    job.context,
  );
  Atomics.store(slot.cells, cell, job.token);
  slot.outbox.push({ job, msg });
  if (!pool.flushing) {
    pool.flushing = true;
    setImmediate(pool.flush);
  }
}

/** Posts the run messages of this turn, one message per worker. */
export function flush(pool: PoolState): void {
  pool.flushing = false;
  for (const slot of pool.slots) {
    if (slot.outbox.length === 0) continue;
    const out = slot.outbox;
    slot.outbox = [];
    if (slot.dead) continue; // its jobs were ended or moved by replace()
    try {
      slot.worker.postMessage(batch(out.map((o) => o.msg)));
    } catch {
      // byte arrays that cannot be cloned (a detached buffer): find the job(s), post the others
      for (const { job, msg } of out) {
        if (job.slot !== slot || !job.offered) continue;
        try {
          slot.worker.postMessage(msg);
        } catch (err) {
          Atomics.store(slot.cells, job.cell, 0);
          unoffer(pool, slot, job);
          slot.jobs.delete(job.id);
          left(pool, job);
          settle(job, failure("error", `Script context must be data: ${err instanceof Error ? err.message : String(err)}`));
        }
      }
    }
  }
}
