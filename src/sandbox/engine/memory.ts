// The execution memory limit at the WebAssembly memory: every growth of the worker's memory during an execution's
// slice is charged to that execution (engine.ts "Limits", measure 2).
// Beyond its limit the growth is still granted, within an overdraft, and the run is stopped as its memory limit at
// QuickJS's next interrupt check, made due at once: QuickJS does not see a failed allocation in the middle of an
// operation. Its out-of-memory paths are not safe in this build (QuickJS 2025-09-13 in quickjs-emscripten 0.32): an
// allocation refused inside a promise job left state behind that later trapped the instance (every other
// execution on the worker lost), and runtimes that cannot be freed (faults.ts isFreeAbort). Only a growth beyond the
// overdraft, which one operation must ask for between two of QuickJS's checks, is refused (QuickJS's catchable
// "out of memory"; the run still ends as its memory limit).
// Memory an execution finds free after a restore of the image is charged as grown (startCharge).
// Owns: the memory's grow(), Exec.grown. Must never: grant an execution more than twice its limit, or run script code.
import type { EngineState, Template } from "./state";
import type { Exec } from "./exec";
import { contextPointer } from "./quickjs-internals";

export const PAGE = 65536;

/** How far past its limit an execution's growth is granted while QuickJS gets to its next check: its limit again. */
export function overdraft(exec: Exec): number {
  return exec.memLimit;
}

/** Charges every growth of `memory` to the execution whose slice runs (see the header). */
export function limitGrowth(eng: EngineState, memory: WebAssembly.Memory): void {
  const realGrow = WebAssembly.Memory.prototype.grow;
  Object.defineProperty(memory, "grow", {
    value: (pages: number) => {
      const exec = eng.current;
      const bytes = pages * PAGE;
      if (exec && exec.grown + bytes > exec.memLimit) {
        // interrupt() stops the run at once, pump() reports the limit, whether or not the script catches anything
        exec.reason ??= "memory";
        interruptNow(eng, exec);
        if (exec.grown + bytes > exec.memLimit + overdraft(exec)) throw new RangeError("sandbox: execution memory limit");
      }
      const before = realGrow.call(memory, pages);
      if (exec) exec.grown += bytes;
      return before;
    },
  });
}

/** Makes QuickJS call the interrupt handler of `exec`'s context at its next check (a call or a loop iteration)
 *  instead of up to 10,000 ticks later (Engine.counterOffset; nothing when it was not found). */
export function interruptNow(eng: EngineState, exec: Exec): void {
  if (eng.counterOffset === null || exec.ctx === null) return;
  const ptr = contextPointer(exec.ctx);
  if (ptr !== null) eng.view.words()[(ptr + eng.counterOffset) >>> 2] = 1;
}

/** An execution starting on the pristine runtime: the memory that earlier executions grew is free again after the
 *  restore, and the allocator uses it before it asks for more; so when this execution first grows the memory, it has
 *  used that much already (else each run on the worker could add its whole limit to the memory, which never shrinks,
 *  until the pool recycles the worker). */
export function startCharge(eng: EngineState, exec: Exec, tpl: Template): void {
  exec.grown = Math.max(0, eng.memory!.buffer.byteLength - tpl.imageBytes);
}
