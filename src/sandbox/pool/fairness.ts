// Fair share between owners and the backstop (see ../pool.ts "Fairness"): the periodic check (every CHECK_MS while
// work is queued or in flight) that marks long-running workers stuck and their owners hogs, takes their offers
// back, presumes a worker stuck past a job's deadline + grace, flags the pool as contended, and starts or ends the
// extra workers; and who a worker may take a job from (eligibility).
// Owns: pool.hogs, .contendedUntil, .extraSpawned, .watch, Owner.hogUntil/.wideUntil, Slot.stuck/.busyAt.
// Must never: pause or move a running script (it cannot be), start more extra workers than the pool has, or give an
// extra worker to an owner whose long jobs already held as many workers as the pool has ("wide").
import type { Owner } from "../owners";
import { dispatch, refresh, revoke, timeoutOf } from "./offers";
import { CHECK_MS, CONTENDED_CELL, CONTENDED_MS, EXTRA_HOG_IDLE_MS, EXTRA_IDLE_MS, HOG_MS, runningJob, runsLong, type PoolState } from "./state";
import { kill, replace, spawn } from "./workers";

/** Which waiting owners a regular worker takes, in which rank (see OwnerQueues.next): hogs after the others, and
 *  nobody beyond their share of the workers' jobs. An extra worker takes no job of a "wide" owner. */
export function eligibility(pool: PoolState): { forRegular: (o: Owner) => number; forExtra: (o: Owner) => number } {
  const forRegular = (o: Owner): number => (o.held >= pool.ownerHeldCap ? -1 : pool.hogs.size > 0 && pool.hogs.has(o) ? 1 : 0);
  const forExtra = (o: Owner): number => (o.wideUntil > Date.now() ? -1 : forRegular(o));
  return { forRegular, forExtra };
}

/** More than one owner uses the pool: the workers' long slices lower their priority (CONTENDED_CELL). */
export function contended(pool: PoolState, now: number): void {
  if (pool.contendedUntil === 0) for (const s of [...pool.slots, ...pool.retiring]) Atomics.store(s.cells, CONTENDED_CELL, 1);
  pool.contendedUntil = now + CONTENDED_MS;
}

/** One ref'd timer while any job is queued or in flight: keeps the process alive (workers are unref'd). */
export function busy(pool: PoolState): void {
  if (pool.watch || pool.closed) return;
  pool.watch = setInterval(() => check(pool), CHECK_MS);
}

/** Backstop of in-flight jobs, fairness (see "Fairness"); stops the timer once the pool is idle. */
function check(pool: PoolState): void {
  const now = Date.now();
  let pending = pool.queues.size;
  let moved = false;
  const hogs = new Set<Owner>();
  /** Workers held by a long job, per owner. */
  const held = new Map<Owner, number>();
  for (const slot of [...pool.slots, ...pool.retiring]) {
    refresh(pool, slot);
    const long = !slot.dead && runsLong(slot, pool.epoch, now) ? runningJob(slot) : undefined;
    if (long !== undefined) {
      long.owner.hogUntil = now + HOG_MS;
      hogs.add(long.owner);
      const n = (held.get(long.owner) ?? 0) + 1;
      held.set(long.owner, n);
      if (n >= pool.size) long.owner.wideUntil = now + HOG_MS;
    }
    // a prefetched job whose worker has nothing running must be claimed by now + its time
    if (slot.active === 0) for (const job of slot.offered) if (job.backstopAt === Infinity) job.backstopAt = now + timeoutOf(job) + pool.grace;
    // A long-running job: the jobs offered behind it run elsewhere (a CPU-bound script delays only itself).
    const wasStuck = slot.stuck;
    slot.stuck = !slot.dead && runsLong(slot, pool.epoch, now);
    // its long slice ended without a result (it parked): it takes jobs again
    if (wasStuck && !slot.stuck) moved = true;
    if (slot.stuck && slot.offered.length > 0) {
      for (const job of [...slot.offered]) {
        if (revoke(pool, slot, job)) {
          pool.queues.push(job);
          moved = true;
        }
      }
    }
    for (const job of slot.jobs.values()) {
      if (now > job.backstopAt) {
        replace(pool, slot, "a job outlived its deadline (stuck worker)", job);
        break;
      }
    }
    pending += slot.jobs.size;
    if (slot.jobs.size > 0) slot.busyAt = now;
  }
  for (const o of pool.hogs) {
    if (o.hogUntil > now) hogs.add(o);
    else pool.queues.release(o, now);
  }
  pool.hogs = hogs;
  if (pool.queues.named > 1) contended(pool, now);
  else if (pool.contendedUntil !== 0 && now > pool.contendedUntil) {
    pool.contendedUntil = 0;
    for (const s of [...pool.slots, ...pool.retiring]) Atomics.store(s.cells, CONTENDED_CELL, 0);
  }
  fairShare(pool, now);
  if (moved) dispatch(pool);
  // (an extra worker keeps the timer until fairShare() ends it)
  if (pending === 0 && pool.hogs.size === 0 && pool.watch && !pool.slots.some((s) => s.extra)) {
    clearInterval(pool.watch);
    pool.watch = null;
  }
}

/** Starts an extra worker when every worker is held by a long job while another owner's job waits; ends extra
 *  workers idle for EXTRA_IDLE_MS (EXTRA_HOG_IDLE_MS while an owner hogs; see "Fairness"). */
function fairShare(pool: PoolState, now: number): void {
  if (pool.closed) return;
  const idleFor = pool.hogs.size > 0 ? EXTRA_HOG_IDLE_MS : EXTRA_IDLE_MS;
  for (const s of [...pool.slots]) {
    if (s.extra && !s.dead && s.jobs.size === 0 && now - s.busyAt > idleFor) {
      s.dead = true;
      pool.slots.splice(pool.slots.indexOf(s), 1);
      kill(s);
    }
  }
  if (pool.queues.size === 0 || pool.slots.some((s) => !s.dead && (!s.ready || !s.stuck))) return;
  if (pool.slots.filter((s) => s.extra).length >= pool.size) return;
  if (!pool.queues.some((o) => pool.forExtra(o) >= 0)) return;
  pool.extraSpawned++;
  pool.slots.push(spawn(pool, true));
}
