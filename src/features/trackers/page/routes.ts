// /api/web_scraping/page_trackers (interface "Web scraping: page trackers", supplement §16, §17): the endpoints
// every kind has (kind-routes.ts) with the page contract (contract.ts), plus the Chromium `_debug`. Bodies are read
// loosely (looseBody) and checked by the service.
import { Elysia } from "elysia";
import { looseBody, op } from "../../../platform/http/contract";
import { trackerRoutes, type TrackersRoutesDeps } from "../kind-routes";
import { PageTrackerContract, PageTrackerDebugResult } from "./contract";

const BASE = "/api/web_scraping/page_trackers";
const tags = ["web_scraping"];

export const pageTrackersRoutes = ({ auth, trackers }: TrackersRoutesDeps) => {
  const page = trackers.page;
  const { DebugParams } = PageTrackerContract;
  const own = new Elysia({ name: "feature/trackers/page/own" }).use(auth).post(`${BASE}/_debug`, ({ user, body }) => page.debug(user, body), {
    auth: "user",
    body: looseBody(DebugParams),
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
      contract: PageTrackerContract,
      one: "a page tracker",
      many: "page trackers",
      example: { name: "example-title", target: { url: "https://example.com/", extractor: "document.title" } },
      own,
    },
  );
};
