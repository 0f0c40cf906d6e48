// The script runner API trackers need (configurator and extractor, supplement §11.6, §15.3). The QuickJS pool in
// src/sandbox implements it; until it is wired (TrackersDeps.scripts), a tracker with a script fails its run with
// a clear error while trackers without scripts work.

export interface ScriptLimits {
  memoryMib: number;
  timeoutMs: number;
  proxyTimeoutMs: number;
  maxProxyBodyBytes: number;
}

export interface ScriptLogEntry {
  level?: string;
  message?: string;
}

export type ScriptErrorKind = "timeout" | "memory" | "error" | "queue_full" | "internal";

export type ScriptRunResult =
  | { ok: true; value: unknown; logs: unknown[]; durationMs: number }
  | { ok: false; error: { kind: ScriptErrorKind; message: string; code?: string }; logs: unknown[]; durationMs: number };

export interface ScriptRunner {
  run(req: {
    source: string;
    context: unknown;
    limits: ScriptLimits;
    kvOwner?: string;
    kvLimits?: unknown;
    /** `Sandbox.core.ops.op_proxy_request` present; API configurators and extractors run without it (§11.6). */
    proxy?: boolean;
    /** The tracker's user (the pool's fair share between users). */
    owner?: string;
  }): Promise<ScriptRunResult>;
}

export const NO_SANDBOX = "the script sandbox is not available on this server";

/** Message of a failed script run (supplement §11.5 wording where one exists). */
export function scriptErrorMessage(error: { kind: ScriptErrorKind; message: string }): string {
  const msg = typeof error.message === "string" ? error.message.trim() : "";
  switch (error.kind) {
    case "timeout":
      return msg || "Script timed out";
    case "memory":
      return msg || "Script exceeded its memory limit";
    case "queue_full":
      return msg || "Script queue is full";
    default:
      return msg || "Script failed";
  }
}
