// The QuickJS execution engine of one sandbox worker (supplement §11.6): its state and its run loop. One WebAssembly
// module per worker, a fresh runtime + context per execution, several executions interleaved: while one waits for a
// host operation (kv, proxy, timers) another runs. Everything here runs on the worker thread. The engine's parts
// (src/sandbox/README.md has the map):
//   engine.ts                   state, start-up, the run loop: start, slice, pump, interrupt, watchdog, reap
//   engine/state.ts             the state the loop and its parts share (EngineState), the pristine runtime's record
//   engine/exec.ts              the execution record and the vocabulary the parts share
//   engine/results.ts           how an execution ends: its value exported, an error described, the result posted
//   engine/marshal.ts           values in and out of QuickJS (packed context, JSON, byte arrays, strings, errors)
//   engine/host-functions.ts    the lazy globals and host functions (encode, decode, atob, seal, timers, op_*, console)
//   engine/compile.ts           source forms, the compiled script and its call
//   engine/check.ts             syntax checks: compile-only (QuickJS) or parse (acorn), nothing run
//   engine/image.ts             memory images: build, restore, keep (per source), reseed
//   engine/faults.ts            fault containment: guard, contain (native stack overflow), abandon, poison
//   engine/memory.ts            the memory limit at the WebAssembly memory's growth (overdraft, interrupt at once)
//   engine/nesting.ts           fairness on the thread: parked jobs resumed from the interrupt handler, priority
//   engine/quickjs-internals.ts every reach into quickjs-emscripten internals: version pin, self-check, fallback
// The engine's state is EngineState (engine/state.ts), shared by those parts (each part's header says which it
// owns); worker.ts uses only the methods above "internal".
//
// Limits
// - Time: one wall-clock deadline per execution. While QuickJS runs, the interrupt handler stops it; while it
//   waits, a timer does. The interrupt handler also ends other executions of this worker whose deadline passed
//   while this one held the thread (their results are posted at once, their runtimes freed after the slice).
// - Memory: QuickJS's own limit (setMemoryLimit) is unreliable in this build: the emscripten malloc reports no
//   usable size, so QuickJS counts 8 bytes per allocation and only bounds single allocations (quickjs-emscripten
//   issue #271). Four measures bound it instead: (1) setMemoryLimit still refuses any single allocation above the
//   limit and bounds the number of allocations; (2) every growth of the worker's WebAssembly memory during an
//   execution's slice is charged to it: beyond its limit the run is stopped at QuickJS's next check, the growth
//   granted within an overdraft (engine/memory.ts), and the memory has a hard per-worker maximum; (3) every MEM_CHECK_MS of running time the runtime's
//   measured heap (JS_ComputeMemoryUsage) is compared with the limit; (4) host data handed into the script
//   (decoded strings, op results…) is admitted against the limit first (marshal.ts admit), and a host-side
//   allocation in the instance that fails anyway is refused, never written at address 0 (faults.ts guard): both
//   end the run as its memory limit (exec.ts OutOfMemory).
// - Stack: setMaxStackSize. A native stack overflow inside the WebAssembly code (see DEFAULT_STACK_KIB) ends only
//   its execution (faults.ts contain()); any other trap leaves the instance untrustworthy: the engine reports
//   "poisoned" and the pool replaces the worker.
// The run loop must never: run a slice while a fault stands or after poisoning, free a runtime while a slice runs
// (reap() waits for the outermost one), or let an execution end without exactly one result.
import type { QuickJSHandle } from "quickjs-emscripten-core";
import { EXPORT_SNIPPET, IMPORT_SNIPPET } from "./bridge";
import { sodiumReady } from "./crypto";
import { compile, invoke, normalizeSource, type Form } from "./engine/compile";
import { MEM_CHECK_MS, MemoryView, memoryError, newExec, OutOfMemory, resetExec, ScriptThrew, timeoutError, type Exec } from "./engine/exec";
import { abandon, contain, guard, isFreeAbort, isNativeOverflow, poison } from "./engine/faults";
import { installGlobals } from "./engine/host-functions";
import { buildTemplate, keepImage, releaseTemplate, reseed, restoreImage, seedFresh } from "./engine/image";
import { EngineState } from "./engine/state";
import { heapUsed, importValue, installContext, newError, own, snippet, toScriptError } from "./engine/marshal";
import { charge, LOW_PRIORITY_AFTER_MS, lower, raise, resumeOthers, takeMail, threadPriority } from "./engine/nesting";
import { limitGrowth, PAGE, startCharge } from "./engine/memory";
import {
  checkFast,
  checkGlue,
  findInterruptCounter,
  loadQuickJS,
  stackPointer,
  stackSave,
  versionMismatch,
  type QuickJSVersions,
} from "./engine/quickjs-internals";
import { acornCheck, compileOnly } from "./engine/check";
import { checked, fail, finishError, succeed } from "./engine/results";
import type { ExecHeader, MainToWorker, OpReply, RunJob } from "./protocol";
import { encodeDone } from "./wire";

/** Measured-heap checks at the end of any slice that ran at least MEM_SLICE_MS (allocating more than a few MiB takes
 *  longer than that, so short scripts skip the ~80 µs cost); during a slice every MEM_CHECK_MS (exec.ts). */
const MEM_SLICE_MS = 1;

export class Engine extends EngineState {
  /** Instantiates the QuickJS module with a private WebAssembly memory capped at `maxMemoryMib`. `shared`: the
   *  compiled QuickJS WebAssembly.Module of another worker (JSC shares a module's compiled and tiered-up code between
   *  the instances of all threads, so a second worker does not JIT-compile QuickJS again). `pinned`: the versions the
   *  internals count as verified for (default quickjs-internals.ts PINNED; tests force a mismatch). Returns the
   *  module this engine runs, for the next worker. Throws when the guard cannot be installed (no safe path). */
  async init(maxMemoryMib: number, shared?: WebAssembly.Module, snapshot = true, pinned?: QuickJSVersions): Promise<WebAssembly.Module | null> {
    const maximum = Math.max(512, Math.ceil((maxMemoryMib * 1024 * 1024) / PAGE));
    const memory = new WebAssembly.Memory({ initial: 256, maximum });
    limitGrowth(this, memory);
    this.memory = memory;
    this.view = new MemoryView(memory);
    const loaded = await loadQuickJS(memory, shared);
    this.mod = loaded.mod;
    this.instance = loaded.instance;
    const compiled = loaded.compiled;
    guard(this);
    const glue = checkGlue(this.mod);
    if (glue !== null) throw new Error(`sandbox: unexpected quickjs-emscripten internals: ${glue}`);
    // The speed internals: only on the pinned versions, and only if they behave as verified (quickjs-internals.ts).
    this.fallback = versionMismatch(pinned) ?? checkFast(this.mod, this.instance, memory);
    this.fast = this.fallback === null;
    if (this.fast) {
      this.counterOffset = findInterruptCounter(this.mod, memory);
      this.stackTop = stackPointer(this.instance);
      if (this.stackTop !== null) this.saveSp = stackSave(this.instance!);
    }
    await sodiumReady();
    if (snapshot && this.fast) {
      try {
        const built = buildTemplate(this);
        if (typeof built === "string") this.fallback = `memory image: ${built}`;
        else this.tpl = built;
      } catch (err) {
        this.tpl = null; // unexpected: every execution then creates its own runtime
        this.fault = null;
        this.fallback = `memory image: ${err instanceof Error ? err.message : String(err)}`;
      }
    }
    [this.tid, this.baseNice] = threadPriority();
    return compiled;
  }

  /** Executions start from a memory image of a pristine runtime + context (see image.ts). */
  get snapshotting(): boolean {
    return this.tpl !== null;
  }

  /** False once the instance is no longer trustworthy (see faults.ts poison()) or drains (see contain()): the worker
   *  leaves its offers unclaimed. */
  get acceptsJobs(): boolean {
    return !this.poisoned && !this.draining;
  }

  handle(msg: MainToWorker): void {
    if (msg.t === "op-result") {
      this.inbox.push(msg);
      this.drain();
    }
  }

  /** The port op results arrive on, the shared cell that counts them (see nesting.ts), and the cells where the
   *  running slice is published: `cells[runCell]` its job's token (0: none), `cells[runCell + 1]` its start (ms
   *  since `epoch`, int32). */
  attach(replies: MessagePort, cells: Int32Array, mailCell: number, runCell: number, epoch: number): void {
    this.replies = replies;
    this.cells = cells;
    this.mailCell = mailCell;
    this.runCell = runCell;
    this.epoch = epoch;
    replies.onmessage = (e: { data: unknown }) => {
      this.inbox.push(e.data as OpReply);
      this.drain();
    };
  }

  /** Between two jobs of a batch (worker.ts): op results that arrived and timers that are due go first, not after
   *  the rest of the batch (the port's messages and the timers would otherwise wait for the whole batch). */
  between(): void {
    if (this.current !== null) return;
    takeMail(this);
    this.drain();
    if (this.execs.size === 0) return;
    const now = Date.now();
    for (const e of [...this.execs.values()]) {
      if (!e.parked || e.finished || e.sleeps.size === 0) continue;
      // The timer due first (not the first created: several may have come due during the last job), one per look:
      // the slice may set new timers. Ties go to the one created first, as setTimeout does.
      let due: number | null = null;
      let at = Infinity;
      for (const [id, sl] of e.sleeps) {
        if (sl.at < at) {
          at = sl.at;
          due = id;
        }
      }
      if (due !== null && at <= now) this.fireSleep(e, due);
    }
  }

  /** Starts a job (see wire.ts decodeRun). */
  run(job: RunJob): void {
    this.start(job);
  }

  // ---------------------------------------------------------------- internal: the run loop

  /** Runs the op results waiting in `inbox`, oldest first; only while no slice runs. */
  private drain(): void {
    while (this.inbox.length > 0 && this.current === null) this.opResult(this.inbox.shift()!);
  }

  private start(job: RunJob): void {
    if (this.poisoned || this.draining || !this.mod) {
      this.send(
        encodeDone(
          {
            id: job.id,
            ok: false,
            error: { kind: "internal", message: "Script worker unavailable" },
            logs: [],
            durationMs: 0,
            heapBytes: this.heapBytes,
          },
          undefined,
          [],
        ).data,
      );
      return;
    }
    if (job.check) {
      this.check(job);
      return;
    }
    const tpl = this.tpl;
    // The pristine runtime is free unless another execution uses it, or used it and other runtimes still live in
    // the memory (the image can only be restored when no execution is alive).
    if (tpl && !tpl.inUse && (!tpl.dirty || this.execs.size === 0)) {
      const src = normalizeSource(job.source);
      const key = Bun.hash(src);
      let img = tpl.sources.get(key) ?? null;
      if (img !== null && img.source !== src) img = null; // a hash collision: never another script's function
      if (tpl.dirty || tpl.at !== img) restoreImage(this, tpl, img);
      if (img !== null) {
        tpl.sources.delete(key); // most recently used last
        tpl.sources.set(key, img);
      }
      const exec = resetExec(tpl.exec, job);
      startCharge(this, exec, tpl);
      // the image's helpers, read through the prototype; what this execution adds stays its own
      exec.helpers = Object.create(tpl.helpers) as Exec["helpers"];
      exec.globals = tpl.globals[(job.proxy ? 2 : 0) + (job.kv ? 1 : 0)]!; // complete: never added to, never cleared
      exec.fromImage = img !== null;
      tpl.inUse = true;
      reseed(this, tpl);
      this.begin(exec, () => {
        exec.rt!.setMemoryLimit(job.memoryBytes);
        exec.rt!.setMaxStackSize(job.stackBytes);
        let compiled: { fn: QuickJSHandle; form: Form } | null = img;
        if (compiled === null) {
          const c = compile(exec, src, key);
          if ("error" in c) return fail(this, exec, c.error);
          keepImage(this, tpl, src, key, c);
          compiled = c;
        }
        installContext(exec, job.context);
        const threw = invoke(exec, compiled.fn, compiled.form, img !== null); // an image's function is one (keepImage)
        if (threw) fail(this, exec, threw);
      });
      return;
    }
    const exec = newExec(job);
    this.begin(exec, () => {
      const rt = this.mod!.newRuntime();
      exec.rt = rt;
      rt.setMemoryLimit(job.memoryBytes);
      rt.setMaxStackSize(job.stackBytes);
      rt.setInterruptHandler(() => this.interrupt(exec));
      const ctx = rt.newContext();
      exec.ctx = ctx;
      if (tpl) seedFresh(this, tpl, ctx);
      installGlobals(this, exec);
      // before any code of the script: the built-ins they hold are the pristine ones
      exec.helpers.importData = snippet(exec, IMPORT_SNIPPET);
      exec.helpers.exportJson = snippet(exec, EXPORT_SNIPPET);
      const src = normalizeSource(job.source);
      const c = compile(exec, src, Bun.hash(src));
      if ("error" in c) return fail(this, exec, c.error);
      own(exec, c.fn);
      installContext(exec, job.context);
      const threw = invoke(exec, c.fn, c.form);
      if (threw) fail(this, exec, threw);
    });
  }

  /** A syntax check (engine/check.ts): nothing of the source runs; the result is null or the SyntaxError. */
  private check(job: RunJob): void {
    const mode = job.check!;
    if (mode.parser === "acorn") {
      const started = performance.now();
      const e = acornCheck(mode.forms);
      const header: ExecHeader = { id: job.id, ok: e === null, logs: [], durationMs: performance.now() - started, heapBytes: this.heapBytes };
      if (e)
        header.error = { kind: "error", name: "SyntaxError", message: `SyntaxError: ${e.message}`, stack: `    at script.js:${e.line}:${e.column}` };
      this.send(encodeDone(header, e ? undefined : "null", []).data);
      return;
    }
    const exec = newExec(job);
    this.begin(exec, () => {
      const rt = this.mod!.newRuntime();
      exec.rt = rt;
      rt.setMemoryLimit(job.memoryBytes);
      rt.setMaxStackSize(job.stackBytes);
      rt.setInterruptHandler(() => this.interrupt(exec));
      exec.ctx = rt.newContext();
      const err = compileOnly(exec, normalizeSource(job.source));
      if (err) fail(this, exec, err);
      else checked(this, exec);
    });
  }

  private begin(exec: Exec, setup: () => void): void {
    exec.fast = this.fast;
    this.execs.set(exec.id, exec);
    this.watchdogAt = Math.min(this.watchdogAt, exec.deadline);
    this.slice(exec, setup);
    if (!exec.finished && !this.poisoned) {
      exec.deadlineTimer = setTimeout(() => this.timeUp(exec), Math.max(0, exec.deadline - Date.now()));
    }
  }

  /** Runs `fn` and then the execution's pending jobs, with the execution marked current (memory charging). */
  private slice(exec: Exec, fn: () => void): void {
    if (exec.finished || this.poisoned) return;
    exec.parked = false;
    exec.sliceStart = performance.now();
    const outer = this.current;
    this.current = exec;
    this.stack.push(exec);
    const cells = this.cells;
    if (cells !== null) {
      // published for the pool (its "stuck" and "hogging" rules): start first, so a token is never read with an
      // older start than its own
      exec.sliceAt = (Date.now() - this.epoch) | 0;
      Atomics.store(cells, this.runCell + 1, exec.sliceAt);
      Atomics.store(cells, this.runCell, exec.job.token);
    }
    try {
      try {
        fn();
      } catch (err) {
        if (err instanceof OutOfMemory) {
          // host data the execution's memory could not hold (its context, an op result): refused before any write
          exec.reason ??= "memory";
          finishError(this, exec, memoryError());
        } else {
          // The script's own code threw while the host was calling into it (context setup, a helper).
          if (!(err instanceof ScriptThrew)) throw err;
          fail(this, exec, err.handle);
        }
      }
      if (!exec.finished) this.pump(exec);
      if (this.fault) throw this.fault; // swallowed on the way out: still a fault
    } catch (err) {
      const fault = this.fault ?? err;
      this.fault = null;
      if (!isNativeOverflow(fault) || !contain(this, exec)) poison(this, exec, fault);
    } finally {
      this.stack.pop();
      this.current = outer;
      charge(this, exec, performance.now());
      if (cells !== null) {
        if (outer !== null) Atomics.store(cells, this.runCell + 1, outer.sliceAt);
        Atomics.store(cells, this.runCell, outer === null ? 0 : outer.job.token);
      }
      if (outer === null && this.lowered === "slice") raise(this);
    }
    this.reap();
    if (outer === null && this.inbox.length > 0 && !this.drainScheduled) {
      // op results taken while the thread was held that could not run nested
      this.drainScheduled = true;
      setImmediate(() => {
        this.drainScheduled = false;
        this.drain();
      });
    }
  }

  private pump(exec: Exec): void {
    const rt = exec.rt!;
    const ctx = exec.ctx!;
    for (;;) {
      const r = rt.executePendingJobs(-1);
      if (r.error) {
        const err = r.error;
        fail(this, exec, err);
        return;
      }
      if (!rt.hasPendingJob()) break;
    }
    if (exec.finished) return;
    // The interrupt handler stopped a promise job (time or memory limit): QuickJS makes that a rejection of the
    // job's own promise, which nothing may observe; the execution still ends with the limit it hit.
    if (exec.reason === "timeout") {
      finishError(this, exec, timeoutError());
      return;
    }
    if (exec.reason === "memory") {
      finishError(this, exec, memoryError());
      return;
    }
    if (performance.now() - exec.sliceStart >= MEM_SLICE_MS && this.measuredHeap(exec) > exec.memLimit) {
      finishError(this, exec, memoryError());
      return;
    }
    const state = ctx.getPromiseState(exec.promise!);
    if (state.type === "pending") {
      if (exec.ops.size === 0 && exec.sleeps.size === 0) {
        finishError(this, exec, { kind: "error", message: "Script never settles: it awaits a promise that nothing will resolve" });
        return;
      }
      exec.parked = true;
      this.send({ t: "park", id: exec.id });
      return;
    }
    if (state.type === "fulfilled") {
      if (state.notAPromise) {
        succeed(this, exec, state.value);
        return;
      }
      try {
        succeed(this, exec, state.value);
      } finally {
        state.value.dispose();
      }
      return;
    }
    fail(this, exec, state.error);
  }

  /** QuickJS's interrupt handler of `exec`'s runtime: true stops the running code. */
  interrupt(exec: Exec): boolean {
    this.onRunning?.();
    if (exec.finished || exec.reason !== null || this.poisoned) return true;
    const now = Date.now();
    if (now >= exec.deadline) {
      exec.reason ??= "timeout";
      return true;
    }
    if (now >= exec.nextMemCheck) {
      exec.nextMemCheck = now + MEM_CHECK_MS;
      if (this.measuredHeap(exec) > exec.memLimit) {
        exec.reason ??= "memory";
        return true;
      }
    }
    if (now >= this.watchdogAt) this.watchdog(now);
    const outermost = this.stack[0];
    if (
      this.lowered === null &&
      this.tid !== null &&
      outermost !== undefined &&
      this.cells !== null &&
      ((now - this.epoch) | 0) - outermost.sliceAt > LOW_PRIORITY_AFTER_MS
    ) {
      // only while other users want the CPU too (the pool says so)
      if (Atomics.load(this.cells, this.runCell + 2) === 1) lower(this);
    }
    if (now >= this.nextPoll && this.execs.size > this.stack.length) {
      resumeOthers(this, exec, now);
      return exec.finished || this.poisoned;
    }
    return false;
  }

  /** Ends executions whose deadline passed while another one held the thread. */
  private watchdog(now: number): void {
    let next = Infinity;
    for (const e of this.execs.values()) {
      if (e.finished || e === this.current || e.frozen > 0) continue;
      if (now >= e.deadline) finishError(this, e, timeoutError());
      else next = Math.min(next, e.deadline);
    }
    if (this.current && !this.current.finished) next = Math.min(next, this.current.deadline);
    this.watchdogAt = next;
  }

  private measuredHeap(exec: Exec): number {
    return heapUsed(exec);
  }

  private timeUp(exec: Exec): void {
    exec.deadlineTimer = null;
    if (exec.finished || this.poisoned) return;
    const left = exec.deadline - Date.now();
    if (left > 0) {
      // moved while its slice was held below a nested one (see nesting.ts nested())
      exec.deadlineTimer = setTimeout(() => this.timeUp(exec), left);
      return;
    }
    finishError(this, exec, timeoutError());
    this.reap();
  }

  /** Frees finished executions; never while a slice runs (another runtime may be mid-execution). The pristine
   *  runtime's execution is not freed: its memory image is restored once no execution is alive. */
  private reap(): void {
    if (this.current || this.poisoned) return;
    const list = this.reapList;
    this.reapList = [];
    const tpl = this.tpl;
    for (const exec of list) {
      this.execs.delete(exec.id);
      if (exec.deadlineTimer) clearTimeout(exec.deadlineTimer);
      for (const s of exec.sleeps.values()) clearTimeout(s.timer);
      if (tpl && exec === tpl.exec) {
        releaseTemplate(tpl);
        continue;
      }
      try {
        for (const d of exec.ops.values()) d.dispose();
        for (const s of exec.sleeps.values()) s.d.dispose();
        exec.ops.clear();
        exec.sleeps.clear();
        for (const h of exec.handles) if (h.alive) h.dispose();
        for (const h of exec.globals.values()) if (h.alive) h.dispose();
        exec.globals.clear();
        exec.handles = [];
        if (exec.promise?.alive) exec.promise.dispose();
        exec.ctx?.dispose();
        try {
          exec.rt?.dispose();
        } catch (err) {
          if (!isFreeAbort(err) || !abandon(this, exec)) throw err;
        }
      } catch (err) {
        poison(this, null, err);
        return;
      }
    }
    // Off the serial path: the result is already posted.
    if (tpl && tpl.dirty && !tpl.inUse && this.execs.size === 0) {
      restoreImage(this, tpl, tpl.at);
      this.abandoned = 0;
    }
  }

  /** The main thread answered one of `msg.id`'s host operations (kv, proxy): its promise settles in a slice. */
  opResult(msg: OpReply): void {
    const exec = this.execs.get(msg.id);
    if (!exec || exec.finished) return;
    const d = exec.ops.get(msg.opId);
    if (!d) return;
    exec.ops.delete(msg.opId);
    this.slice(exec, () => {
      try {
        let h: QuickJSHandle | null = null;
        let e: QuickJSHandle | null = null;
        if (msg.ok) {
          try {
            h = importValue(exec, msg.value);
          } catch (err) {
            // more than its memory holds (marshal.ts admit): the await throws, the run ends as its memory limit
            if (!(err instanceof OutOfMemory)) throw err;
            e = toScriptError(exec, err);
          }
        } else {
          e = newError(exec, msg.error?.message ?? "Operation failed", "Error", msg.error?.code);
        }
        try {
          if (h !== null) d.resolve(h);
          else d.reject(e!);
        } finally {
          h?.dispose();
          e?.dispose();
        }
      } finally {
        d.dispose();
      }
    });
  }

  /** Timer `id` of `exec` is due (its setTimeout, or nesting.ts resumeOthers while another slice holds the thread). */
  fireSleep(exec: Exec, id: number): void {
    const s = exec.sleeps.get(id);
    if (s === undefined || exec.finished) return;
    if (Date.now() >= exec.deadline) {
      // Clamped to the remaining time: the run is over (the deferred is freed with the execution).
      this.timeUp(exec);
      return;
    }
    clearTimeout(s.timer);
    exec.sleeps.delete(id);
    if (exec.parked) this.send({ t: "wake", id: exec.id });
    this.slice(exec, () => {
      s.d.resolve();
      s.d.dispose();
    });
  }
}
