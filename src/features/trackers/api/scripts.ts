// How API trackers word a script run (configurator and extractor, supplement §11.6, §15.3). The runner is the
// sandbox's (ScriptRunner in src/sandbox/types.ts, the QuickJS pool); without one (TrackersDeps.scripts unset), a
// tracker with a script fails its run with NO_SANDBOX while trackers without scripts work.
import type { ScriptError } from "../../../sandbox/types";

export const NO_SANDBOX = "the script sandbox is not available on this server";

/** Message of a failed script run (supplement §11.5 wording where one exists). */
export function scriptErrorMessage(error: Pick<ScriptError, "kind" | "message">): string {
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
