// Host operations answered on the main thread (supplement §11.7, §11.8): a worker's script called Secbox.kv or
// op_proxy_request; the operation runs here (database, network) and its result goes back on the worker's own port,
// counted in its MAIL_CELL so that the worker can take it while a script holds its thread (engine/nesting.ts).
// Owns: Job.kvOps, Job.ops, Job.abort. Must never: answer a job that ended or moved meanwhile, let one job exceed its KV
// budget, or pass a host error's details to the script (opError keeps only our own messages and codes).
import type { Logger } from "../../platform/log";
import type { OpReply, WorkerToMain } from "../protocol";
import { KvError } from "../kv";
import { ProxyError, runProxy } from "../proxy";
import { claimed } from "./offers";
import { MAIL_CELL, type Job, type Slot, type PoolState } from "./state";

export async function operation(pool: PoolState, slot: Slot, msg: Extract<WorkerToMain, { t: "op" }>): Promise<void> {
  const job = slot.jobs.get(msg.id);
  if (!job) return;
  claimed(pool, slot, job);
  job.ops++;
  let reply: OpReply;
  try {
    const value = await perform(pool, job, msg);
    reply = { t: "op-result", id: msg.id, opId: msg.opId, ok: true, value };
  } catch (err) {
    reply = { t: "op-result", id: msg.id, opId: msg.opId, ok: false, error: opError(err, pool.opts.log) };
  }
  if (slot.dead || slot.jobs.get(msg.id) !== job) return;
  if (job.parked) {
    job.parked = false;
    slot.active++;
    job.owner.running++;
  }
  slot.replies.postMessage(reply);
  // counted after it is posted: a worker that sees the count can take it (engine/nesting.ts takeMail)
  Atomics.add(slot.cells, MAIL_CELL, 1);
}

function perform(pool: PoolState, job: Job, msg: Extract<WorkerToMain, { t: "op" }>): Promise<unknown> {
  if (msg.op === "kv") {
    if (job.req.kvOwner === undefined) throw new KvError("Secbox.kv is not available to this script");
    if (!pool.kv) throw new KvError("Secbox.kv is not available (no database)");
    if (++job.kvOps > job.kvLimits.opsPerRun) throw new KvError(`KV operation budget exhausted (${job.kvLimits.opsPerRun} per run)`);
    job.abort ??= new AbortController();
    return pool.kv.call(job.req.kvOwner, msg.args, job.kvLimits, msg.remainingMs, job.abort.signal);
  }
  if (job.req.proxy === false) throw new ProxyError("E_INVALID", "op_proxy_request is not available to this script");
  return runProxy(msg.args, {
    remainingMs: msg.remainingMs,
    defaultTimeoutMs: job.req.limits.proxyTimeoutMs,
    maxBodyBytes: job.req.limits.maxProxyBodyBytes,
    allowPrivate: pool.opts.allowPrivate,
    fetch: pool.fetch,
  });
}

function opError(err: unknown, log: Logger): { message: string; code?: string } {
  if (err instanceof ProxyError) return { message: err.message, code: err.code };
  if (err instanceof KvError) return { message: err.message };
  log.error("sandbox host operation failed", { error: err instanceof Error ? err.message : String(err) });
  return { message: "Internal error in a sandbox host operation" };
}
