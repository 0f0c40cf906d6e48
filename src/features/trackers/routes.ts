// Routes of the trackers feature: `POST /api/scheduler/parse_schedule` (tag "scheduler"), the API trackers and the
// page trackers (tag "web_scraping", api/routes.ts and page/routes.ts).
import { Elysia, t } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { TrackersService } from "./service";
import { apiTrackersRoutes } from "./api/routes";
import { pageTrackersRoutes } from "./page/routes";

const ParseScheduleBody = t.Object({
  schedule: t.Optional(
    t.Unknown({
      description:
        "cron: 6 fields `second minute hour day-of-month month day-of-week` (UTC); 5 fields = seconds 0; 7 fields add a year; or @hourly, @daily, @weekly, @monthly",
    }),
  ),
});

const ParseScheduleResult = t.Object({
  minInterval: t.Integer({ description: "smallest gap in ms between consecutive occurrences among the next 1,000" }),
  nextOccurrences: t.Array(t.Integer(), { description: "the next 5 occurrences, unix seconds" }),
});

/** What the routes use: the auth plugin and the feature's own service (app.ts wires them). */
export interface TrackersRoutesDeps {
  auth: AuthPlugin;
  trackers: TrackersService;
}

export const trackersRoutes = ({ auth, trackers }: TrackersRoutesDeps) =>
  new Elysia({ name: "feature/trackers" })
    .use(auth)
    .post("/api/scheduler/parse_schedule", ({ user, body }) => trackers.parseSchedule(user, body), {
      auth: "user",
      body: ParseScheduleBody,
      response: ParseScheduleResult,
      detail: {
        tags: ["scheduler"],
        summary: "Parse a cron schedule: minimum interval and next occurrences (400 INVALID_SCHEDULE / SCHEDULE_TOO_FREQUENT)",
      },
    })
    .use(apiTrackersRoutes({ auth, trackers }))
    .use(pageTrackersRoutes({ auth, trackers }));
