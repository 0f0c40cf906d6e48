// Fair share of one worker thread between owners (see ../pool.ts "Fairness"): parked executions resumed from the
// interrupt handler of another owner's long slice, the running time each owner used recently, and the thread's
// scheduling priority during long slices.
//
// Resuming from the interrupt handler
// A parked execution's runtime lives in this worker's memory and cannot move to another thread, and the thread is
// held by whatever slice runs: without help, a job of user B that awaits a KV result or a timer would resume only
// once user A's `while (true) {}` on the same worker hit its time limit. So QuickJS's interrupt handler of a slice
// that has run NEST_AFTER_MS polls (at most every NEST_POLL_MS) for parked executions that can go on: the pool
// sends op results on a MessagePort of their own and counts them in a shared cell, so they are taken synchronously
// (receiveMessageOnPort) while the thread is busy; timers are due by their time. Such an execution runs its slice
// right there, nested above the interrupted one: a different runtime of the same module, entered from a host
// callback as any host function would, on the same emscripten stack above the interrupted frames (QuickJS sets
// each runtime's stack limit from where it is entered, so the nested one keeps its whole stack). Who may go first:
// an execution of another owner (never one of an owner already on the slice stack) whose owner has used less of
// this worker's time recently (decayed, half-life USAGE_HALF_LIFE_MS) than the interrupted slice's owner,
// including that slice's time so far: a looping user's resumed jobs do not cut into other users' long slices, other
// users' jobs cut into the loop. The slices held below do not run meanwhile: their deadlines move by the time held
// (the pool's backstop too: "freeze"/"thaw"), their owner is not charged for it. Not deeper than MAX_NEST slices,
// and not while the interrupted slice's stack is deeper than NEST_STACK_BYTES (its native frames plus the nested
// slice's could exhaust the thread's stack; faults.ts contain() would still hold, ending the nested one). A native
// stack overflow inside a nested slice is contained as elsewhere, with the stack pointer put back where that slice
// was entered; what cannot run nested (an op result of an owner on the stack) waits in `inbox` until the thread is
// free. Off on the slow safe path (no verified stack pointer: Engine.saveSp is null).
//
// Priority
// A slice that has run LOW_PRIORITY_AFTER_MS while more than one user uses the pool (the pool's CONTENDED_CELL)
// lowers its thread's scheduling priority (nice LOW_NICE, Linux: the thread's own id from /proc/thread-self) until
// it ends: a loop then takes the CPU only from other long runners, not from the HTTP thread or a worker running
// another user's short script (on 2 cores, two loops at normal priority made the other user's requests wait for
// CPU time: p99 ×10). A lone user's long scripts keep their priority (at nice 10 a busy host's other processes
// would stretch them towards their wall-clock limit). Raising it back needs privilege (CAP_SYS_NICE or RLIMIT_NICE;
// root has it): without, the thread stays at the lower priority for good.
//
// Owns: Engine.nestSp, .inbox (taken mail), .mailSeen, .nextPoll, .usage, .tid, .baseNice, .lowered. Must never:
// resume an execution of an owner already on the slice stack, run a slice while a fault stands or the worker drains,
// or charge an owner for time its slice was held below another.
import { readlinkSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { receiveMessageOnPort } from "node:worker_threads";
import type { EngineState } from "./state";
import type { OpReply } from "../protocol";
import type { Exec } from "./exec";

/** Resuming parked executions from the interrupt handler (see the header): after the running slice has run this
 *  long, polling at most this often, at most this many slices deep, and only while the slices below use at most
 *  this much of the emscripten stack. */
export const NEST_POLL_MS = 1;
const NEST_AFTER_MS = 5;
const MAX_NEST = 4;
const NEST_STACK_BYTES = 64 * 1024;
/** A slice running this long lowers its thread's priority to this nice value until it ends (see the header). */
export const LOW_PRIORITY_AFTER_MS = 50;
const LOW_NICE = 10;
/** Running time per owner, halved every USAGE_HALF_LIFE_MS; at most MAX_USAGE owners remembered. */
const USAGE_HALF_LIFE_MS = 10_000;
const MAX_USAGE = 4096;

/** Adds the slice that ended at `end` to its owner's running time. */
export function charge(eng: EngineState, exec: Exec, end: number): void {
  const owner = exec.job.owner;
  if (!owner) return;
  let u = eng.usage.get(owner);
  if (u === undefined) {
    if (eng.usage.size >= MAX_USAGE) {
      for (const [o, v] of eng.usage) if (v.ms * 0.5 ** ((end - v.at) / USAGE_HALF_LIFE_MS) < 1) eng.usage.delete(o);
      if (eng.usage.size >= MAX_USAGE) eng.usage.clear();
    }
    u = { ms: 0, at: end };
    eng.usage.set(owner, u);
  } else if (end - u.at > 1) {
    u.ms *= 0.5 ** ((end - u.at) / USAGE_HALF_LIFE_MS);
    u.at = end;
  }
  u.ms += end - exec.sliceStart;
}

/** An owner's decayed running time at `now` (performance.now()); 0 for jobs without owner. */
function usageOf(eng: EngineState, owner: string, now: number): number {
  const u = owner ? eng.usage.get(owner) : undefined;
  return u === undefined ? 0 : u.ms * 0.5 ** ((now - u.at) / USAGE_HALF_LIFE_MS);
}

/** A long slice: the thread yields the CPU to normal-priority threads until the slice ends. */
export function lower(eng: EngineState): void {
  try {
    setPriority(eng.tid!, Math.max(eng.baseNice, LOW_NICE));
    eng.lowered = "slice";
  } catch {
    eng.tid = null; // not permitted here: leave it
  }
}

/** The long slice ended: the thread's priority back, if it may (else it stays lower for good). */
export function raise(eng: EngineState): void {
  try {
    setPriority(eng.tid!, eng.baseNice);
    eng.lowered = null;
  } catch {
    eng.lowered = "always";
  }
}

/** From the interrupt handler of `top`'s slice: runs, nested above it, the slices of parked executions that can
 *  go on and may go first (see the header). */
export function resumeOthers(eng: EngineState, top: Exec, now: number): void {
  if (eng.current !== top) return; // QuickJS code outside a slice (the pristine runtime being built)
  const perf = performance.now();
  if (perf - top.sliceStart < NEST_AFTER_MS) return;
  eng.nextPoll = now + NEST_POLL_MS;
  if (eng.stack.length > MAX_NEST || eng.draining || eng.fault !== null || eng.saveSp === null || eng.stackTop === null) return;
  if (eng.stackTop - eng.saveSp() > NEST_STACK_BYTES) return;
  takeMail(eng);
  const limit = usageOf(eng, top.job.owner, perf) + (perf - top.sliceStart);
  const stackOwners = eng.stack.map((e) => e.job.owner).filter((o) => o !== "");
  const mayGo = (b: Exec) => b.parked && !b.finished && !stackOwners.includes(b.job.owner) && usageOf(eng, b.job.owner, perf) < limit;
  for (let i = 0; i < eng.inbox.length;) {
    const msg = eng.inbox[i]!;
    const b = eng.execs.get(msg.id);
    if (b === undefined || b.finished) {
      eng.inbox.splice(i, 1); // its execution ended: nothing waits for it
      continue;
    }
    if (!mayGo(b)) {
      i++;
      continue;
    }
    eng.inbox.splice(i, 1);
    nested(eng, () => eng.opResult(msg));
    if (top.finished || eng.poisoned || eng.draining) return;
  }
  for (const b of eng.execs.values()) {
    if (b.sleeps.size === 0 || !mayGo(b)) continue;
    let due: number | null = null;
    let at = Infinity;
    for (const [id, sl] of b.sleeps) {
      if (sl.at < at) {
        at = sl.at;
        due = id;
      }
    }
    if (due === null || at > Date.now()) continue;
    const id = due;
    nested(eng, () => eng.fireSleep(b, id)); // one per poll: the slice may have set new timers
    if (top.finished || eng.poisoned || eng.draining) return;
  }
}

/** Takes the op results the pool sent since the last look (see the header). */
export function takeMail(eng: EngineState): void {
  const mail = eng.cells;
  if (mail === null || eng.replies === null) return;
  const n = Atomics.load(mail, eng.mailCell);
  if (n === eng.mailSeen) return;
  eng.mailSeen = n;
  for (let m = receiveMessageOnPort(eng.replies); m !== undefined; m = receiveMessageOnPort(eng.replies)) eng.inbox.push(m.message as OpReply);
}

/** Runs `fn` (a slice of another execution) above the slices on the stack, which are held meanwhile: their
 *  deadlines move by the time held, and so does the pool's backstop (freeze/thaw); their owners are not charged. */
function nested(eng: EngineState, fn: () => void): void {
  const held: Exec[] = [];
  for (const e of eng.stack) if (e.frozen++ === 0) held.push(e);
  const ids = held.map((e) => e.id);
  if (ids.length > 0) eng.send({ t: "freeze", ids });
  eng.nestSp.push(eng.saveSp!());
  const t0 = performance.now();
  try {
    fn();
  } finally {
    eng.nestSp.pop();
    const ms = performance.now() - t0;
    for (const e of eng.stack) e.frozen--;
    for (const e of held) {
      e.deadline += ms;
      e.sliceStart += ms;
    }
    if (ids.length > 0) eng.send({ t: "thaw", ids, ms: Math.ceil(ms) });
    eng.onRunning?.();
  }
}

/** This thread's id (Linux: /proc/thread-self) and its nice value, or [null, 0] where that is not available. */
export function threadPriority(): [number | null, number] {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isInteger(tid) || tid <= 0) return [null, 0];
    return [tid, getPriority(tid)];
  } catch {
    return [null, 0];
  }
}
