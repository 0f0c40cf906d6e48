// How an execution ends: its value exported as data (succeed), a thrown value or a limit turned into a ScriptError
// (fail, finishError), and the result message posted to the pool (post, wire.ts text). Each execution ends once.
// Owns: the wording of script errors (name prefix, clipped message and stack). Must never: free a runtime (the run
// loop's reap() does, after the slice) or post a second result for an execution.
import type { QuickJSHandle } from "quickjs-emscripten-core";
import type { EngineState } from "./state";
import type { ExecHeader } from "../protocol";
import type { ScriptError } from "../types";
import { encodeDone } from "../wire";
import { clip, ExportError, memoryError, ScriptThrew, timeoutError, type Exec } from "./exec";
import { describe, exportJson } from "./marshal";

const MAX_MESSAGE = 1000;
const MAX_STACK_LINES = 20;
const MAX_STACK_CHARS = 2000;

/** The execution's value (a handle in its context) is its result, if it is data. */
export function succeed(eng: EngineState, exec: Exec, value: QuickJSHandle): void {
  let out: { json: string | undefined; bytes: Uint8Array[] };
  try {
    out = exportJson(exec, value, true);
  } catch (err) {
    if (err instanceof ExportError) {
      finishError(eng, exec, { kind: "error", message: err.message });
      return;
    }
    if (err instanceof ScriptThrew) {
      fail(eng, exec, err.handle);
      return;
    }
    throw err;
  }
  post(eng, exec, { ok: true, json: out.json, bytes: out.bytes });
  exec.finished = true;
  eng.reapList.push(exec);
}

/** A syntax check that found nothing (engine/check.ts): the result is null. */
export function checked(eng: EngineState, exec: Exec): void {
  if (exec.finished) return;
  exec.finished = true;
  post(eng, exec, { ok: true, json: "null" });
  eng.reapList.push(exec);
}

/** Ends the execution with the thrown value `err` (a handle in its context), and disposes `err`. */
export function fail(eng: EngineState, exec: Exec, err: QuickJSHandle): void {
  try {
    if (exec.reason === "timeout" || Date.now() >= exec.deadline) {
      finishError(eng, exec, timeoutError());
      return;
    }
    if (exec.reason === "memory") {
      finishError(eng, exec, memoryError());
      return;
    }
    const d = describe(exec, err);
    if (d.name === "InternalError" && d.message === "out of memory") {
      finishError(eng, exec, memoryError());
      return;
    }
    const message = d.name && d.name !== "Error" && !d.code ? `${d.name}: ${d.message}` : d.message;
    const error: ScriptError = { kind: "error", message: clip(message, MAX_MESSAGE) };
    if (d.name) error.name = d.name;
    if (d.code) error.code = d.code;
    const stack = trimStack(d.stack);
    if (stack) error.stack = stack;
    finishError(eng, exec, error);
  } finally {
    if (err.alive) err.dispose();
  }
}

export function finishError(eng: EngineState, exec: Exec, error: ScriptError): void {
  if (exec.finished) return;
  exec.finished = true;
  post(eng, exec, { ok: false, error });
  eng.reapList.push(exec);
}

/** The result message (wire.ts): `json` is the value's JSON text, its byte arrays as placeholders (exec.key). */
export function post(eng: EngineState, exec: Exec, r: { ok: boolean; json?: string; bytes?: Uint8Array[]; error?: ScriptError }): void {
  const header: ExecHeader = {
    id: exec.id,
    ok: r.ok,
    logs: exec.logs,
    durationMs: Math.round((performance.now() - exec.startedAt) * 1000) / 1000,
    heapBytes: eng.heapBytes,
  };
  if (exec.fromImage) header.image = true;
  const bytes = r.bytes ?? [];
  if (!r.ok) header.error = r.error;
  else if (bytes.length > 0) {
    header.key = exec.key!;
    header.bytes = bytes.length;
  }
  const { data, transfer } = encodeDone(header, r.json, bytes);
  eng.send(data, transfer);
}

function trimStack(stack: string): string {
  if (!stack) return "";
  const lines = stack.split("\n").filter((l) => l.trim() !== "");
  let out = lines.slice(0, MAX_STACK_LINES).join("\n");
  if (lines.length > MAX_STACK_LINES) out += `\n    … ${lines.length - MAX_STACK_LINES} more`;
  return clip(out, MAX_STACK_CHARS);
}
