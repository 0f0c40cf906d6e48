// The page trackers contract (interface "Web scraping: page trackers", supplement §16, §17.5): the target (stored and
// in requests), `_debug`, and the kind's tracker, log and bodies (trackerKindContract, ../contract.ts), each with its
// TypeScript type (`Static`). target.ts checks and produces the target; the limits are ../shared-rules.ts's.
// Owns: declarations only. Must never: hold a rule's value or import a service.
import { Dict, Named, Opt, StringEnum, T, type Static } from "../../../platform/http/contract";
import { trackerKindContract } from "../contract";
import {
  CORE_PHASES,
  MAX_URL_CHARS,
  PAGE_MAX_DELAY_MS,
  PAGE_MAX_SELECTOR_CHARS,
  PAGE_MAX_USER_AGENT_CHARS,
  PAGE_PHASES,
  PAGE_TIMEOUT_MS,
} from "../shared-rules";

const WaitFor = T.Object(
  {
    selector: T.Optional(
      T.String({ maxLength: PAGE_MAX_SELECTOR_CHARS, description: "CSS selector to wait for after the load event (missing → the run fails)" }),
    ),
    delayMs: T.Optional(T.Integer({ minimum: 0, maximum: PAGE_MAX_DELAY_MS, description: "extra wait in ms" })),
  },
  { description: "what to wait for before extracting" },
);
export type WaitFor = Static<typeof WaitFor>;

const Target = T.Object({
  url: T.String({ description: "http or https URL of the page" }),
  extractor: T.Optional(
    T.String({
      description: "runs inside the page (isolated world): an expression or async function body; context = {previousContent?, params: {secrets}}",
    }),
  ),
  waitFor: T.Optional(WaitFor),
  userAgent: T.Optional(T.String()),
  headers: Dict(T.String(), { description: "extra request headers for the page" }),
  acceptInvalidCertificates: T.Boolean(),
  resources: T.Boolean({ description: "also store the inventory of loaded scripts and stylesheets (url, type, size, sha256)" }),
});
/** The stored and echoed target (target.ts parsePageTarget produces it): optional members omitted when unset. */
export type PageTarget = Static<typeof Target>;

export const PageTrackerTargetParam = Named(
  "PageTrackerTargetParam",
  T.Object({
    url: T.String({ format: "uri", maxLength: MAX_URL_CHARS, description: "http or https URL of the page" }),
    extractor: Opt(T.String({ minLength: 1, description: `1..51,200 UTF-8 bytes; ${Target.properties.extractor.description}` })),
    waitFor: Opt(WaitFor),
    userAgent: Opt(T.String({ maxLength: PAGE_MAX_USER_AGENT_CHARS, description: "default: Chromium's" })),
    headers: Opt(Dict(T.String(), { description: "extra request headers for the page, default {}" })),
    acceptInvalidCertificates: Opt(T.Boolean({ description: "default false" })),
    resources: Opt(T.Boolean({ description: "default false; true stores {content, resources: [{url, type, size, sha256}]}" })),
  }),
);

export const PageTrackerContract = trackerKindContract({
  name: "PageTracker",
  many: "page trackers",
  target: Target,
  targetParam: PageTrackerTargetParam,
  timeout: {
    minimum: PAGE_TIMEOUT_MS.min,
    maximum: PAGE_TIMEOUT_MS.max,
    default: PAGE_TIMEOUT_MS.default,
    description: "ms for the whole run, 5,000..120,000",
  },
  phases: [...PAGE_PHASES, ...CORE_PHASES],
});
export type PageTracker = Static<typeof PageTrackerContract.Tracker>;

export const PageTrackerDebugResult = Named(
  "PageTrackerDebugResult",
  T.Object({
    result: T.Optional(T.Unknown({ description: "the value as revision data would show it (absent on failure)" })),
    error: T.Optional(T.String({ description: "why the run failed (absent on success)" })),
    logs: T.Array(T.Object({ level: StringEnum(["log", "info", "warn", "error", "debug"]), message: T.String() }), {
      description: "page console output, uncaught page errors and blocked requests (≤ 200 entries)",
    }),
    screenshots: T.Array(
      T.Object({
        label: StringEnum(["navigated", "final", "error"]),
        mimeType: T.String(),
        data: T.String({ contentEncoding: "base64", description: "PNG of the 1280×800 viewport" }),
      }),
    ),
    elapsedMs: T.Integer({ minimum: 0 }),
  }),
);
/** The `_debug` answer (service.ts builds it from the engine's run). */
export type PageTrackerDebugResult = Static<typeof PageTrackerDebugResult>;
