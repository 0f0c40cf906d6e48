// One page run's state (see engine.ts): what the run's work and its deadline share (abort, logs, blocked and failed
// requests, screenshots, the prepared context), its phase clock, and the messages a run fails with.
// Owns: the per-run bounds of logs (MAX_LOGS of MAX_LOG_BYTES). Must never: outlive its run (nothing here is shared
// between runs) or hold an unbounded list of what a page does.
import type { PageLog, PagePhase, PagePhaseName, PageResource, PageScreenshot } from "./run-types";
import type { Prepared } from "./run-types";

const MAX_LOGS = 200;
const MAX_LOG_BYTES = 2048;

export const MSG_BROWSER_GONE = "Browser crashed or disconnected";
export const MSG_PAGE_CRASHED = "Page crashed";
export const MSG_PAGE_CLOSED = "Page was closed during the run";
export const MSG_SELECTOR = "Selector not found";
export const MSG_ENGINE_CLOSED = "Page engine is shut down";
export const timeoutMessage = (ms: number) => `Run timed out after ${ms} ms`;

export class RunAborted extends Error {}

/** Cuts a string to at most `max` UTF-8 bytes on a character boundary. */
export function cutUtf8(s: string, max: number): string {
  if (s.length * 3 <= max) return s;
  const bytes = new TextEncoder().encode(s);
  if (bytes.length <= max) return s;
  let end = max;
  while (end > 0 && ((bytes[end] as number) & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(bytes.subarray(0, end));
}

/** Per-run mutable state shared by the run's work and its deadline. */
export class RunState {
  finished = false;
  abortMessage: string | null = null;
  /** The run's context (set as soon as it exists, so teardown always finds it). */
  prep?: Prepared;
  resources?: { pending: Promise<void>[]; items: Map<string, PageResource> };
  readonly logs: PageLog[] = [];
  /** Refused plain HTTP URLs and refused tunnels (host:port), MAX_BLOCKED in all; `blockedDropped` counts the rest. */
  readonly blockedUrls = new Set<string>();
  readonly blockedTunnels = new Set<string>();
  blockedDropped = 0;
  readonly failedUrls: string[] = [];
  readonly screenshots: PageScreenshot[] = [];
  screenshotBytes = 0;
  private abortFn: ((msg: string) => void) | null = null;
  readonly aborted: Promise<never>;

  constructor(readonly deadline: number) {
    this.aborted = new Promise<never>((_, reject) => {
      this.abortFn = (msg) => reject(new RunAborted(msg));
    });
    this.aborted.catch(() => {});
  }

  abort(message: string): void {
    if (this.abortMessage !== null) return;
    this.abortMessage = message;
    this.abortFn?.(message);
  }

  /** Throws once the run was aborted (deadline, crash) so late steps of the work never start. */
  check(): void {
    if (this.abortMessage !== null || this.finished) throw new RunAborted(this.abortMessage ?? "finished");
  }

  remaining(): number {
    return Math.max(0, this.deadline - Date.now());
  }

  log(level: PageLog["level"], message: string): void {
    if (this.logs.length >= MAX_LOGS) return;
    this.logs.push({ level, message: cutUtf8(message, MAX_LOG_BYTES) });
  }

  /** Races a step against the abort signal. */
  step<T>(p: Promise<T>): Promise<T> {
    p.catch(() => {});
    return Promise.race([p, this.aborted]);
  }
}

export class PhaseClock {
  readonly phases: PagePhase[] = [];
  private current: { phase: PagePhaseName; start: number } | null = null;

  begin(phase: PagePhaseName): void {
    this.current = { phase, start: performance.now() };
  }
  end(status: "success" | "failure", error?: string): void {
    if (!this.current) return;
    const p: PagePhase = { phase: this.current.phase, durationMs: Math.round(performance.now() - this.current.start), status };
    if (error !== undefined) p.error = error;
    this.phases.push(p);
    this.current = null;
  }
  get running(): PagePhaseName | null {
    return this.current?.phase ?? null;
  }
  /** All three phases in order; missing ones skipped. */
  finish(): PagePhase[] {
    const order: PagePhaseName[] = ["browser", "navigate", "extract"];
    return order.map((name) => this.phases.find((p) => p.phase === name) ?? { phase: name, durationMs: 0, status: "skipped" as const });
  }
}
