// /api/web_scraping/api_trackers (interface "Web scraping: API trackers", supplement §15, §17): the endpoints every
// kind has (kind-routes.ts) with the API contract (contract.ts), plus `_test` and the pipeline's `_debug`. Bodies are
// read loosely (looseBody) and checked by the service.
import { Elysia } from "elysia";
import { looseBody, op } from "../../../platform/http/contract";
import { trackerRoutes, type TrackersRoutesDeps } from "../kind-routes";
import { ApiTrackerContract, ApiTrackerDebugResult, ApiTrackerTestParams, ApiTrackerTestResult } from "./contract";

const BASE = "/api/web_scraping/api_trackers";
const tags = ["web_scraping"];

export const apiTrackersRoutes = ({ auth, trackers }: TrackersRoutesDeps) => {
  const api = trackers.api;
  const { DebugParams } = ApiTrackerContract;
  const own = new Elysia({ name: "feature/trackers/api/own" })
    .use(auth)
    .post(`${BASE}/_test`, ({ body }) => api.test(body), {
      auth: "user",
      body: looseBody(ApiTrackerTestParams),
      detail: op({
        tags,
        summary: "Send the primary request without scripts and return the raw response; nothing is stored",
        body: ApiTrackerTestParams,
        responses: { 200: ApiTrackerTestResult },
        errors: { 400: ["TARGET_NOT_ALLOWED", "UPSTREAM_FAILED"] },
        example: { target: { url: "https://example.com/" } },
      }),
    })
    .post(`${BASE}/_debug`, ({ user, body }) => api.debug(user, body), {
      auth: "user",
      body: looseBody(DebugParams),
      detail: op({
        tags,
        summary: "Run configurator, requests and extractor with a trace; nothing is stored",
        body: DebugParams,
        responses: { 200: ApiTrackerDebugResult },
        errors: { 400: ["TARGET_NOT_ALLOWED"] },
        example: { target: { url: "https://example.com/", extractor: "({ body: context.responses[0].status })" } },
      }),
    });
  return trackerRoutes(
    { auth },
    {
      name: "feature/trackers/api",
      base: BASE,
      service: api,
      contract: ApiTrackerContract,
      one: "an API tracker",
      many: "API trackers",
      example: {
        name: "release-feed",
        config: { revisions: 3, job: { schedule: "0 17 9 * * *" } },
        target: { requests: [{ url: "https://example.com/", method: "GET", headers: { accept: "text/html" } }] },
      },
      own,
    },
  );
};
