// What the tracker core lends its two helpers, runs.ts (one run) and scheduling.ts (which trackers this process
// schedules): the core's shared parts and the three questions they ask it, as a plain record. TrackerCore (core.ts)
// passes itself; the helpers depend on this record instead of on the class that owns them, so core.ts and
// runs.ts / scheduling.ts no longer import each other.
// Owns: declarations only. Must never: import core.ts, runs.ts or scheduling.ts.
import type { TierLimits } from "../../config/schema";
import type { JobLanes } from "../../platform/jobs/queue";
import type { Scheduler } from "../../platform/jobs/scheduler";
import type { StorageQuota } from "../../platform/storage/quota";
import type { KindHandler, TrackerKind } from "./core-types";
import type { TrackerRow } from "./store";

export interface CoreAccess {
  /** The bounded job lanes trackers run on (one per kind). */
  readonly lanes: JobLanes;
  /** The jobs of the scheduled trackers. */
  readonly scheduler: Scheduler;
  /** The registered kinds' handlers. */
  readonly kinds: ReadonlyMap<TrackerKind, KindHandler<any>>;
  /** Per-user storage cap (§28): revisions count against it. */
  readonly storage: StorageQuota;
  hasKind(kind: TrackerKind): boolean;
  /** The user's tier limits; undefined when the user is gone. */
  limitsFor(userId: string): Promise<TierLimits | undefined>;
  /** (Re)arms the job of a stored tracker (removes it when it should not run). */
  schedule(row: TrackerRow, limits: TierLimits, recover?: boolean): void;
}
