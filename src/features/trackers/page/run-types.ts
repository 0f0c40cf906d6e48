// The public types of a page run and of the page engine (engine.ts): the request, the result and its parts (phases,
// logs, screenshots, resources), the engine's options and stats, and the prepared context a run is given
// (session.ts makes it). A leaf of the engine (types only; it imports none of the engine's parts): session.ts,
// navigation.ts, run-state.ts, resources.ts, extraction.ts and the page-tracker service import the types from here,
// not from engine.ts or session.ts, so no part depends on the engine it serves or on a sibling for a type.
import type { BrowserContext, CDPSession, Page } from "puppeteer-core";
import type { Logger } from "../../../platform/log";
import type { Resolver } from "../../../platform/net/guard";
import type { BrowserHandle } from "./browser";
import type { ProxySession } from "./proxy";

export interface PageRunRequest {
  url: string;
  extractor?: string | null;
  waitFor?: { selector?: string; delayMs?: number };
  userAgent?: string;
  headers?: Record<string, string>;
  acceptInvalidCertificates?: boolean;
  resources?: boolean;
  secrets: Record<string, string>;
  /** The newest revision's `data` (§17.1); omitted from `context` when undefined. */
  previousContent?: unknown;
  /** Hard deadline of the whole run in ms (config.timeout). Starts when the run gets a slot. */
  timeoutMs: number;
  /** Private targets allowed for this run (§1.1). */
  allowPrivate: boolean;
  /** Collect screenshots (navigated, final/error) for `_debug`. Console logs are always collected. */
  debug?: boolean;
  /** Whose run it is (a user id): the Chromium slots' fair share between users (platform/jobs/queue.ts Slots). */
  owner?: string;
}

export type PagePhaseName = "browser" | "navigate" | "extract";

export interface PagePhase {
  phase: PagePhaseName;
  durationMs: number;
  status: "success" | "failure" | "skipped";
  error?: string;
}

export interface PageLog {
  level: "log" | "info" | "warn" | "error" | "debug";
  message: string;
}

export interface PageScreenshot {
  label: "navigated" | "final" | "error";
  mimeType: "image/png";
  /** base64 PNG of the viewport. */
  data: string;
}

export interface PageResource {
  url: string;
  type: "script" | "stylesheet";
  size: number;
  sha256: string;
}

export interface PageRunResult {
  ok: boolean;
  /** Stored bytes (§16.2/§17.1): UTF-8 of a string result, else JSON text; the `{content, resources}` JSON with resources. */
  value?: Uint8Array;
  error?: string;
  /** Always the three phases, in order; `skipped` after a failure. */
  phases: PagePhase[];
  /** Page console output, uncaught page errors and blocked/failed requests (warn); ≤ 200 entries of ≤ 2 KiB. */
  logs: PageLog[];
  /** URLs (or host:port for refused tunnels) the proxy refused under the private-target rule; at most
   * MAX_BLOCKED entries, URLs cut to 2 KiB. */
  blocked: string[];
  /** Only with `debug`: ≤ 5 MiB in total. */
  screenshots?: PageScreenshot[];
  /** Wall time of the run once it had a slot (the `_debug` `elapsedMs`). */
  elapsedMs: number;
}

export interface ChromiumEngineOptions {
  executable: string;
  maxConcurrency: number;
  log: Logger;
  /** Replace the browser after this many runs (bounds slow leaks). Default 500. */
  maxRunsPerBrowser?: number;
  /** Contexts kept ready (context + page + CDP session, no network) so a run skips the renderer start. Default 1. */
  spareContexts?: number;
  /** Replace the browser when its process tree's memory (PSS where readable, else RssAnon) exceeds this. Default 1 GiB. */
  maxBrowserMemoryBytes?: number;
  /** Launch timeout. Default 30 s. */
  launchTimeoutMs?: number;
  /** Test/ops hooks of the private-target guard (see platform/net/guard.ts resolveAllowed). */
  resolver?: Resolver;
  refuseAddress?: (ip: string) => boolean;
  extraArgs?: string[];
  /** `[chromium] user` (see browser.ts): the user Chromium runs as when Secbox runs as root. */
  user?: string;
}

export interface ChromiumEngineStats {
  browserPid?: number;
  launches: number;
  runs: number;
  active: number;
  queued: number;
  /** Sum of VmRSS of the current browser's process tree in bytes (null when none runs or /proc is missing);
   * overcounts pages shared between Chromium's processes. */
  browserRss: number | null;
  /** Sum of RssAnon of the same tree: the processes' own heap memory (the leak indicator). */
  browserAnon: number | null;
  /** Sum of PSS of the same tree (shared pages split), null where smaps is unreadable. */
  browserPss: number | null;
  browserProcesses: number;
}

/** An incognito context with its page, CDP session and (not yet configured, deny-all) proxy session. */
export interface Prepared {
  h: BrowserHandle;
  proxy: ProxySession;
  ctx: BrowserContext;
  page: Page;
  cdp: CDPSession;
  disposed?: Promise<void>;
}
