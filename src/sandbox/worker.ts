// Entry of a sandbox worker thread (see pool.ts). The message handler is installed synchronously: Bun drops
// messages that arrive before a worker's first `onmessage` is set. In a `bun build --compile` binary this file must
// be an extra entrypoint of the build (src/sandbox/worker.ts), see workerEntry() in pool.ts.
import { Engine } from "./engine";
import type { MainToWorker, WorkerToMain } from "./protocol";

declare const self: Worker;

const post = (msg: WorkerToMain, transfer?: ArrayBuffer[]) => {
  if (transfer && transfer.length > 0) self.postMessage(msg, transfer);
  else self.postMessage(msg);
};

const engine = new Engine(post);
let ready = false;
/** Offer cells shared with the pool: a job runs only if this worker claims it before the pool revokes it. */
let cells: Int32Array | null = null;

self.onmessage = (event: MessageEvent<MainToWorker>) => {
  const msg = event.data;
  if (msg.t === "init") {
    cells = new Int32Array(msg.cells);
    engine.init(msg.memoryMib, msg.module, msg.snapshot ?? true).then(
      (compiled) => {
        ready = true;
        post(msg.module || !compiled ? { t: "ready", snapshot: engine.snapshotting } : { t: "ready", module: compiled, snapshot: engine.snapshotting });
      },
      (err: unknown) => post({ t: "poisoned", reason: `init failed: ${err instanceof Error ? err.message : String(err)}`, results: [] }),
    );
    return;
  }
  if (!ready) return;
  if (msg.t === "run") {
    // A poisoned engine leaves its offers unclaimed: the pool gives them to the replacement worker.
    if (engine.isPoisoned) return;
    if (Atomics.compareExchange(cells!, msg.cell, msg.token, 0) !== msg.token) return; // revoked
  }
  engine.handle(msg);
};
