// /api/web_scraping/page_trackers (interface "Web scraping: page trackers", supplement §16, §17): the endpoints
// every kind has (kind-routes.ts) with the page target, plus the Chromium `_debug`.
import { Elysia } from "elysia";
import { Dict, Named, op, Opt, StringEnum, T } from "../../../platform/http/contract";
import type { TrackersRoutesDeps } from "../routes";
import { debugParams, DebugBody, trackerRoutes } from "../kind-routes";

const BASE = "/api/web_scraping/page_trackers";
const tags = ["web_scraping"];

const WaitFor = T.Object(
  {
    selector: T.Optional(T.String({ maxLength: 1024, description: "CSS selector to wait for after the load event (missing → the run fails)" })),
    delayMs: T.Optional(T.Integer({ minimum: 0, maximum: 30_000, description: "extra wait in ms" })),
  },
  { description: "what to wait for before extracting" },
);
const Target = T.Object({
  url: T.String({ description: "http or https URL of the page" }),
  extractor: T.Optional(T.String({ description: "runs inside the page (isolated world): an expression or async function body; context = {previousContent?, params: {secrets}}" })),
  waitFor: T.Optional(WaitFor),
  userAgent: T.Optional(T.String()),
  headers: Dict(T.String(), { description: "extra request headers for the page" }),
  acceptInvalidCertificates: T.Boolean(),
  resources: T.Boolean({ description: "also store the inventory of loaded scripts and stylesheets (url, type, size, sha256)" }),
});
export const PageTrackerTargetParam = Named(
  "PageTrackerTargetParam",
  T.Object({
    url: T.String({ format: "uri", maxLength: 2048, description: "http or https URL of the page" }),
    extractor: Opt(T.String({ minLength: 1, description: `1..51,200 UTF-8 bytes; ${Target.properties.extractor.description}` })),
    waitFor: Opt(WaitFor),
    userAgent: Opt(T.String({ maxLength: 512, description: "default: Chromium's" })),
    headers: Opt(Dict(T.String(), { description: "extra request headers for the page, default {}" })),
    acceptInvalidCertificates: Opt(T.Boolean({ description: "default false" })),
    resources: Opt(T.Boolean({ description: "default false; true stores {content, resources: [{url, type, size, sha256}]}" })),
  }),
);
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

export const pageTrackersRoutes = ({ auth, trackers }: TrackersRoutesDeps) => {
  const page = trackers.page;
  const DebugParams = debugParams("PageTracker", PageTrackerTargetParam);
  const own = new Elysia({ name: "feature/trackers/page/own" }).use(auth).post(`${BASE}/_debug`, ({ user, body }) => page.debug(user, body), {
    auth: "user",
    body: DebugBody,
    detail: op({
      tags,
      summary: "Render the page once in Chromium: result or error, console logs and screenshots; nothing is stored",
      body: DebugParams,
      responses: { 200: PageTrackerDebugResult },
      errors: { 400: ["TARGET_NOT_ALLOWED"] },
      example: { target: { url: "https://example.com/", extractor: "document.title" } },
    }),
  });
  return trackerRoutes(
    { auth },
    {
      name: "feature/trackers/page",
      base: BASE,
      service: page,
      schemaName: "PageTracker",
      one: "a page tracker",
      many: "page trackers",
      target: Target,
      targetParam: PageTrackerTargetParam,
      timeout: { minimum: 5000, maximum: 120_000, default: 30_000, description: "ms for the whole run, 5,000..120,000" },
      phases: ["browser", "navigate", "extract", "compare", "persist", "notify"],
      example: { name: "example-title", target: { url: "https://example.com/", extractor: "document.title" } },
      own,
    },
  );
};
