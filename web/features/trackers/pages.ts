// Every tracker page, in the one lazily loaded chunk (routes.tsx).
export { ApiTrackerEditorPage } from "./api/api-tracker-editor";
export { ApiTrackerPage, ApiTrackersPage } from "./api/api-trackers-page";
export { PageTrackerEditorPage } from "./page/page-tracker-editor";
export { PageTrackerPage, PageTrackersPage } from "./page/page-trackers-page";
