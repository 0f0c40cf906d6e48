// Every tracker page, in the one lazily loaded chunk (routes.tsx).
export { ApiTrackerEditorPage } from "../api-trackers/api-tracker-editor";
export { ApiTrackerPage, ApiTrackersPage } from "../api-trackers/api-trackers-page";
export { PageTrackerEditorPage } from "../page-trackers/page-tracker-editor";
export { PageTrackerPage, PageTrackersPage } from "../page-trackers/page-trackers-page";
