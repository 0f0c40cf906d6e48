// The tracker pages' routes for app/routes.tsx. The pages load on demand (components/lazy-page): with their
// editors, diff and chart they weigh ~39 KiB gz, kept out of the first load. Both kinds share one chunk (pages.ts).
import { Route } from "wouter";
import { lazyPage } from "../../components/lazy-page";

const pages = () => import("./pages");
const ApiTrackers = lazyPage(() => pages().then((m) => m.ApiTrackersPage));
const ApiTrackerEditor = lazyPage(() => pages().then((m) => m.ApiTrackerEditorPage));
const ApiTracker = lazyPage(() => pages().then((m) => m.ApiTrackerPage));
const PageTrackers = lazyPage(() => pages().then((m) => m.PageTrackersPage));
const PageTrackerEditor = lazyPage(() => pages().then((m) => m.PageTrackerEditorPage));
const PageTracker = lazyPage(() => pages().then((m) => m.PageTrackerPage));

export const TRACKER_ROUTES = [
  <Route key="a" path="/trackers/apis" component={ApiTrackers} />,
  <Route key="a-new" path="/trackers/apis/new" component={ApiTrackerEditor} />,
  <Route key="a-edit" path="/trackers/apis/:id/edit" component={ApiTrackerEditor} />,
  <Route key="a-one" path="/trackers/apis/:id" component={ApiTracker} />,
  <Route key="p" path="/trackers/pages" component={PageTrackers} />,
  <Route key="p-new" path="/trackers/pages/new" component={PageTrackerEditor} />,
  <Route key="p-edit" path="/trackers/pages/:id/edit" component={PageTrackerEditor} />,
  <Route key="p-one" path="/trackers/pages/:id" component={PageTracker} />,
];
