// What the shared tracker pieces (list, detail page, revisions, logs, schedule) need to know about a kind: its
// API calls and its words and paths. api/ and page/ each provide one.
import type { ApiTracker, ListQuery, PageTracker, TrackerLog, TrackerLogsSummary, TrackerRevision } from "../../api/types";

export type AnyTracker = ApiTracker | PageTracker;

export interface TrackerKindApi<T extends AnyTracker> {
  list: (q: ListQuery) => Promise<{ items: T[]; total: number }>;
  get: (id: string) => Promise<T>;
  /** The list's enabled switch (an update with `enabled` only). Create and update are typed per kind (editors). */
  setEnabled: (id: string, enabled: boolean) => Promise<unknown>;
  remove: (id: string) => Promise<unknown>;
  history: (id: string, body: { refresh?: boolean; diff?: boolean }) => Promise<TrackerRevision[]>;
  clear: (id: string) => Promise<unknown>;
  logs: (id: string) => Promise<TrackerLog[]>;
  clearLogs: (id: string) => Promise<unknown>;
  logsSummary: () => Promise<TrackerLogsSummary>;
}

export interface TrackerKind<T extends AnyTracker> {
  kind: "api" | "page";
  /** Query key root: every query of this kind starts with it. */
  key: string;
  /** "API tracker" / "page tracker" (lower-case inside sentences). */
  noun: string;
  title: string;
  /** "/trackers/apis" */
  path: string;
  api: TrackerKindApi<T>;
  /** What the tracker watches, for lists and headers. */
  targetUrl: (t: T) => string;
  /** The phases of a run, in order (supplement §17.2). */
  phases: readonly string[];
}
