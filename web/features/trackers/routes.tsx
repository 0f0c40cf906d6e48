// The tracker pages' routes. The pages load on demand (React.lazy): with their editors, diff and chart they add
// ~35 KiB gz, which the first load (budget 300 KiB gz) cannot carry. One chunk for both kinds.
import { lazy, Suspense, type ComponentType } from "react";
import { Route } from "wouter";
import { LoadingState } from "../../components/states";

const pages = () => import("./pages");
const page = (name: keyof Awaited<ReturnType<typeof pages>>) => {
  const Lazy = lazy(() => pages().then((m) => ({ default: m[name] as ComponentType })));
  return () => (
    <Suspense fallback={<LoadingState />}>
      <Lazy />
    </Suspense>
  );
};

const ApiTrackers = page("ApiTrackersPage");
const ApiTrackerEditor = page("ApiTrackerEditorPage");
const ApiTracker = page("ApiTrackerPage");
const PageTrackers = page("PageTrackersPage");
const PageTrackerEditor = page("PageTrackerEditorPage");
const PageTracker = page("PageTrackerPage");

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
