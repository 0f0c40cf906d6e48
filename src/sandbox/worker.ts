// Entry of a sandbox worker thread (see pool.ts). The message handler is installed synchronously: Bun drops
// messages that arrive before a worker's first `onmessage` is set. In a `bun build --compile` binary this file must
// be an extra entrypoint of the build (src/sandbox/worker.ts), see workerEntry() in pool/workers.ts.
import { Engine } from "./engine";
import type { MainToWorker, WorkerToMain } from "./protocol";
import { batch, decodeRun, isWire, unbatch } from "./wire";

declare const self: Worker;

/** Results (wire.ts) of the batch of jobs being run, posted together when the batch ends, or as soon as a job of
 *  the batch runs long enough to reach QuickJS's interrupt handler (Engine.onRunning). */
let held: { msgs: (string | unknown[])[]; transfer: ArrayBuffer[] } | null = null;

/** Results held at most: the pool refills a worker's offers as results arrive, so posting them in groups of 4
 *  lets the next jobs arrive while the rest of a batch runs (the worker does not sleep between batches). */
const HOLD = 4;
const send = (msg: unknown, transfer: ArrayBuffer[]) => {
  if (transfer.length > 0) self.postMessage(msg, transfer);
  else self.postMessage(msg);
};

const release = () => {
  if (!held || held.msgs.length === 0) return;
  const { msgs, transfer } = held;
  held.msgs = [];
  held.transfer = [];
  send(batch(msgs), transfer);
};

const post = (msg: WorkerToMain | string | unknown[], transfer: ArrayBuffer[] = []) => {
  if (held && isWire(msg)) {
    held.msgs.push(msg);
    held.transfer.push(...transfer);
    if (held.msgs.length >= HOLD) release();
    return;
  }
  // other messages keep their order after the results before them
  release();
  send(msg, transfer);
};

const engine = new Engine(post);
engine.onRunning = release;
let ready = false;
/** Offer cells shared with the pool: a job runs only if this worker claims it before the pool revokes it. */
let cells: Int32Array | null = null;

self.onmessage = (event: MessageEvent<MainToWorker | string | unknown[]>) => {
  const msg = event.data;
  if (isWire(msg)) {
    // run jobs (wire.ts). A poisoned or draining engine leaves its offers unclaimed: the pool gives them to another worker.
    if (!ready) return;
    held = { msgs: [], transfer: [] };
    try {
      for (const one of unbatch(msg)) {
        if (!engine.acceptsJobs) break;
        const { header, context } = decodeRun(one);
        if (Atomics.compareExchange(cells!, header.cell, header.token, 0) !== header.token) continue; // revoked
        const { paths: _, ...job } = header;
        engine.run({ t: "run", ...job, context });
        engine.between(); // parked jobs whose KV result arrived or whose timer is due go before the rest
      }
    } finally {
      release();
      held = null;
    }
    return;
  }
  if (msg.t === "init") {
    cells = new Int32Array(msg.cells);
    engine.attach(msg.replies, cells, msg.mailCell, msg.runCell, msg.epoch);
    engine.init(msg.memoryMib, msg.module, msg.snapshot ?? true, msg.quickjs).then(
      (compiled) => {
        ready = true;
        const fallback = engine.fallback === null ? {} : { fallback: engine.fallback };
        post(
          msg.module || !compiled
            ? { t: "ready", snapshot: engine.snapshotting, ...fallback }
            : { t: "ready", module: compiled, snapshot: engine.snapshotting, ...fallback },
        );
      },
      (err: unknown) => post({ t: "poisoned", reason: `init failed: ${err instanceof Error ? err.message : String(err)}`, results: [] }),
    );
    return;
  }
  if (!ready) return;
  engine.handle(msg);
};
