// Routes of the trackers feature: `POST /api/scheduler/parse_schedule` (tag "scheduler"), the API trackers and the
// page trackers (tag "web_scraping", api/routes.ts and page/routes.ts). The schemas are contract.ts's (and the kinds'
// contract.ts); bodies are read loosely (looseBody) and checked by the services.
import { Elysia } from "elysia";
import { looseBody, op } from "../../platform/http/contract";
import { SchedulerParseScheduleParams, SchedulerParseScheduleResult } from "./contract";
import type { TrackersRoutesDeps } from "./kind-routes";
import { apiTrackersRoutes } from "./api/routes";
import { pageTrackersRoutes } from "./page/routes";

export const trackersRoutes = ({ auth, trackers }: TrackersRoutesDeps) =>
  new Elysia({ name: "feature/trackers" })
    .use(auth)
    .post("/api/scheduler/parse_schedule", ({ user, body }) => trackers.parseSchedule(user, body), {
      auth: "user",
      body: looseBody(SchedulerParseScheduleParams),
      detail: op({
        tags: ["scheduler"],
        summary: "Parse a cron schedule: minimum interval and next occurrences",
        description: "A schedule whose minimum interval is below the caller's tier minimum is 400 SCHEDULE_TOO_FREQUENT.",
        body: SchedulerParseScheduleParams,
        responses: { 200: SchedulerParseScheduleResult },
        errors: { 400: ["INVALID_SCHEDULE", "SCHEDULE_TOO_FREQUENT"] },
        example: { schedule: "0 0 * * * *" },
      }),
    })
    .use(apiTrackersRoutes({ auth, trackers }))
    .use(pageTrackersRoutes({ auth, trackers }));
