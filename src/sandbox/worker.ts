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

self.onmessage = (event: MessageEvent<MainToWorker>) => {
  const msg = event.data;
  if (msg.t === "init") {
    engine.init(msg.memoryMib).then(
      () => {
        ready = true;
        post({ t: "ready" });
      },
      (err: unknown) => post({ t: "poisoned", reason: `init failed: ${err instanceof Error ? err.message : String(err)}`, results: [] }),
    );
    return;
  }
  if (!ready) return;
  engine.handle(msg);
};
