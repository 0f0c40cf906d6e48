// The shapes the tracker core and its kinds share (design: "trackers/ shared tracker core"): the tracker kinds,
// stored trackers, a kind's handler and its run input/output, and the bounds of logs (supplement §17.2, §17.3, §22). The wire shapes
// (TrackerWire, TrackerLog, PhaseRecord, Revision, TrackerConfig) are contract.ts's, re-exported here; core.ts
// re-exports all of it, so a kind imports from "./core" as before.
// Owns: declarations and constants only. Must never: import a service or the store's functions, or hold state.
import type { StorageQuota } from "../../platform/storage/quota";
import type { TierLimits } from "../../config/schema";
import type { NotificationEmailService } from "../notification-email/service";
import type { SecretsSelector } from "../secrets/contract";
import type { SecretsService } from "../secrets/service";
import type { TagsService, TaggableType } from "../tags/service";
import type { UsersService } from "../users/service";
import type { PhaseRecord, TrackerConfig } from "./contract";

export type { PhaseRecord, PhaseStatus, Revision, TrackerConfig, TrackerLog, TrackerWire } from "./contract";

/** The kinds of tracker the core runs (the trackers table's `kind`). */
export type TrackerKind = "api" | "page";

export { MAX_LOG_ERROR_CHARS, MAX_LOGS, SUMMARY_LOGS } from "./contract";

/** A stored tracker with its JSON columns parsed. `target` is in its stored (echoed) form, kind-specific. */
export interface StoredTracker<Target = unknown> {
  id: string;
  userId: string;
  kind: TrackerKind;
  name: string;
  enabled: boolean;
  config: TrackerConfig;
  target: Target;
  notifications: boolean;
  secrets: SecretsSelector;
  createdAt: number;
  updatedAt: number;
  lastRanAt?: number;
}

export interface ExecuteInput<Target = unknown> {
  tracker: StoredTracker<Target>;
  /** The newest revision's `data` (supplement §15.3), absent when there is none. */
  previousContent?: unknown;
  /** Secret values the selector grants, by name. */
  secrets: Record<string, string>;
  /** The owner's effective tier limits. */
  limits: TierLimits;
}

/** What a kind's fetching produces: its own phases, and the value on success or the error on failure. */
export interface ExecuteOutput {
  phases: PhaseRecord[];
  value?: Uint8Array;
  error?: string;
}

export interface KindHandler<Target = unknown> {
  kind: TrackerKind;
  tagType: TaggableType;
  /** The kind's own phases in order (listed as failed/skipped when a run breaks before them). */
  phases: string[];
  /** Runs the fetching phases. Must not throw (failures are reported in the output). */
  execute(input: ExecuteInput<Target>): Promise<ExecuteOutput>;
}

/** Validated common members of a create/update body (absent members are undefined). */
export interface CommonInput {
  name?: string;
  enabled?: boolean;
  notifications?: boolean;
  /** Raw selector / tag list, resolved against stored data after the 404 check. */
  secrets?: unknown;
  tagIds?: unknown;
}

export interface TrackerWrite<Target> {
  name: string;
  enabled: boolean;
  config: TrackerConfig;
  target: Target;
  notifications: boolean;
}

export interface TrackersCoreDeps {
  tags: TagsService;
  secrets: SecretsService;
  users: UsersService;
  notificationEmail: NotificationEmailService;
  /** Per-user storage cap and the free-disk guard (supplement §28): revisions count against it. */
  storage: StorageQuota;
}
