import { api, call } from "../../../api/client";
import { trackers as trackerRules } from "../../../api/rules.gen";
import type { ListQuery, PageTracker, PageTrackerCreateParams, PageTrackerDebugParams, PageTrackerDebugTrace } from "../../../api/types";
import type { TrackerKind } from "../kind";

const path = (id: string) => ({ params: { path: { tracker_id: id } } });

export const pageTrackersApi = {
  list: (query: ListQuery) => call(api.GET("/api/web_scraping/page_trackers", { params: { query } })),
  get: (id: string) => call(api.GET("/api/web_scraping/page_trackers/{tracker_id}", path(id))),
  create: (body: PageTrackerCreateParams) => call(api.POST("/api/web_scraping/page_trackers", { body })),
  /** Update = create's shape, every member optional (supplement §16.1); the editor sends them all. */
  update: (id: string, body: PageTrackerCreateParams) => call(api.PUT("/api/web_scraping/page_trackers/{tracker_id}", { ...path(id), body })),
  setEnabled: (id: string, enabled: boolean) => call(api.PUT("/api/web_scraping/page_trackers/{tracker_id}", { ...path(id), body: { enabled } })),
  remove: (id: string) => call(api.DELETE("/api/web_scraping/page_trackers/{tracker_id}", path(id))),
  history: (id: string, body: { refresh?: boolean; diff?: boolean }) =>
    call(api.POST("/api/web_scraping/page_trackers/{tracker_id}/_history", { ...path(id), body })),
  clear: (id: string) => call(api.POST("/api/web_scraping/page_trackers/{tracker_id}/_clear", path(id))),
  logs: (id: string) => call(api.GET("/api/web_scraping/page_trackers/{tracker_id}/_logs", path(id))),
  clearLogs: (id: string) => call(api.POST("/api/web_scraping/page_trackers/{tracker_id}/_clear_logs", path(id))),
  logsSummary: () => call(api.GET("/api/web_scraping/page_trackers/_logs_summary")),
  /** Renders the page once in Chromium: result or error, console logs, screenshots (supplement §17.5). */
  debug: (body: PageTrackerDebugParams): Promise<PageTrackerDebugTrace> => call(api.POST("/api/web_scraping/page_trackers/_debug", { body })),
};

export const PAGE_TRACKERS: TrackerKind<PageTracker> = {
  kind: "page",
  key: "page-trackers",
  noun: "page tracker",
  title: "Page trackers",
  path: "/trackers/pages",
  api: pageTrackersApi,
  targetUrl: (t) => t.target.url,
  phases: [...trackerRules.PAGE_PHASES, ...trackerRules.CORE_PHASES],
};

/** Page tracker limits (supplement §16.1): the API's, the timeout in seconds as the editor shows it. */
const { min, max, default: fallback } = trackerRules.PAGE_TIMEOUT_MS;
export const PAGE_TIMEOUT_SEC = { min: min / 1000, max: max / 1000, default: fallback / 1000 };
export const { PAGE_MAX_DELAY_MS: MAX_DELAY_MS, PAGE_MAX_USER_AGENT_CHARS: MAX_USER_AGENT_CHARS } = trackerRules;
