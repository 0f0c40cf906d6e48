// /api/web_scraping/page_trackers (interface "Web scraping: page trackers", supplement §16, §17): the endpoints
// every kind has (kind-routes.ts) with the page target, plus the Chromium `_debug`.
import { Elysia, t } from "elysia";
import type { TrackersRoutesDeps } from "../routes";
import { DebugBody, detail, trackerRoutes } from "../kind-routes";

const BASE = "/api/web_scraping/page_trackers";

const TargetSchema = t.Object({
  url: t.String({ description: "http or https URL of the page (≤ 2,048 characters)" }),
  extractor: t.Optional(t.String({ description: "runs inside the page: an expression or async function body; global context = {previousContent?, params: {secrets}}" })),
  waitFor: t.Optional(
    t.Object({
      selector: t.Optional(t.String({ description: "CSS selector to wait for after the load event" })),
      delayMs: t.Optional(t.Integer({ description: "extra wait in ms, 0..30,000" })),
    }),
  ),
  userAgent: t.Optional(t.String()),
  headers: t.Record(t.String(), t.String(), { description: "extra request headers for the page" }),
  acceptInvalidCertificates: t.Boolean(),
  resources: t.Boolean({ description: "also store the inventory of loaded scripts and stylesheets (url, type, size, sha256)" }),
});

const DebugSchema = t.Object({
  result: t.Optional(t.Unknown({ description: "the value as revision data would show it (absent on failure)" })),
  error: t.Optional(t.String({ description: "why the run failed (absent on success)" })),
  logs: t.Array(t.Object({ level: t.String({ description: "log, info, warn, error or debug" }), message: t.String() }), {
    description: "page console output, uncaught page errors and blocked requests (≤ 200 entries)",
  }),
  screenshots: t.Array(
    t.Object({
      label: t.String({ description: "navigated, final or error" }),
      mimeType: t.String(),
      data: t.String({ description: "base64 PNG of the 1280×800 viewport" }),
    }),
  ),
  elapsedMs: t.Integer(),
});

export const pageTrackersRoutes = ({ auth, trackers }: TrackersRoutesDeps) => {
  const page = trackers.page;
  const own = new Elysia({ name: "feature/trackers/page/own" }).use(auth).post(`${BASE}/_debug`, ({ user, body }) => page.debug(user, body), {
    auth: "user",
    body: DebugBody,
    response: DebugSchema,
    detail: detail("Render the page once in Chromium: result or error, console logs and screenshots; nothing is stored"),
  });
  return trackerRoutes(
    { auth },
    {
      name: "feature/trackers/page",
      base: BASE,
      service: page,
      one: "a page tracker",
      many: "page trackers",
      target: TargetSchema,
      timeout: "ms for the whole run, 5,000..120,000",
      phases: "browser, navigate, extract, compare, persist, notify",
      configBody: "{revisions?: 1..tier max (3), timeout?: ms 5,000..120,000 (30,000), job?: {schedule, retryStrategy?}}",
      targetBody:
        "{url, extractor?, waitFor?: {selector?, delayMs?}, userAgent?, headers?, acceptInvalidCertificates?, resources?}; the extractor runs inside the page",
      own,
    },
  );
};
