import { api, call } from "../../../api/client";
import { trackers as trackerRules } from "../../../api/rules.gen";
import type {
  ApiTracker,
  ApiTrackerCreateParams,
  ApiTrackerDebugParams,
  ApiTrackerDebugTrace,
  ApiTrackerTestParams,
  ApiTrackerTestResult,
  ListQuery,
} from "../../../api/types";
import type { TrackerKind } from "../kind";

const path = (id: string) => ({ params: { path: { tracker_id: id } } });

export const apiTrackersApi = {
  list: (query: ListQuery) => call(api.GET("/api/web_scraping/api_trackers", { params: { query } })),
  get: (id: string) => call(api.GET("/api/web_scraping/api_trackers/{tracker_id}", path(id))),
  create: (body: ApiTrackerCreateParams) => call(api.POST("/api/web_scraping/api_trackers", { body })),
  /** Update = create's shape, every member optional (supplement §15.1); the editor sends them all. */
  update: (id: string, body: ApiTrackerCreateParams) => call(api.PUT("/api/web_scraping/api_trackers/{tracker_id}", { ...path(id), body })),
  setEnabled: (id: string, enabled: boolean) => call(api.PUT("/api/web_scraping/api_trackers/{tracker_id}", { ...path(id), body: { enabled } })),
  remove: (id: string) => call(api.DELETE("/api/web_scraping/api_trackers/{tracker_id}", path(id))),
  history: (id: string, body: { refresh?: boolean; diff?: boolean }) =>
    call(api.POST("/api/web_scraping/api_trackers/{tracker_id}/_history", { ...path(id), body })),
  clear: (id: string) => call(api.POST("/api/web_scraping/api_trackers/{tracker_id}/_clear", path(id))),
  logs: (id: string) => call(api.GET("/api/web_scraping/api_trackers/{tracker_id}/_logs", path(id))),
  clearLogs: (id: string) => call(api.POST("/api/web_scraping/api_trackers/{tracker_id}/_clear_logs", path(id))),
  logsSummary: () => call(api.GET("/api/web_scraping/api_trackers/_logs_summary")),
  /** Sends one request without scripts (supplement §17.4). */
  test: (body: ApiTrackerTestParams): Promise<ApiTrackerTestResult> => call(api.POST("/api/web_scraping/api_trackers/_test", { body })),
  debug: (body: ApiTrackerDebugParams): Promise<ApiTrackerDebugTrace> => call(api.POST("/api/web_scraping/api_trackers/_debug", { body })),
};

export const API_TRACKERS: TrackerKind<ApiTracker> = {
  kind: "api",
  key: "api-trackers",
  noun: "API tracker",
  title: "API trackers",
  path: "/trackers/apis",
  api: apiTrackersApi,
  targetUrl: (t) => t.target.requests[0]?.url ?? "",
  phases: [...trackerRules.API_PHASES, ...trackerRules.CORE_PHASES],
};

/** API tracker limits (supplement §15.1): the API's, the timeout in seconds as the editor shows it. */
export const MAX_REQUESTS = trackerRules.API_MAX_REQUESTS;
const { min, max, default: fallback } = trackerRules.API_TIMEOUT_MS;
export const API_TIMEOUT_SEC = { min: min / 1000, max: max / 1000, default: fallback / 1000 };
