// Page trackers: the list (trackers/tracker-list-page.tsx) and one tracker's page (trackers/tracker-page.tsx) with
// what is particular to this kind.
import type { PageTracker } from "../../../api/types";
import { TrackerListPage } from "../tracker-list-page";
import { Fact, TrackerPage } from "../tracker-page";
import { PAGE_TRACKERS } from "./page-trackers-api";

export function PageTrackersPage() {
  return (
    <TrackerListPage
      kind={PAGE_TRACKERS}
      description="Watch web pages as a browser renders them, keep what you extract, and see what changed, scripts and stylesheets included."
      empty={{
        title: "No page trackers yet",
        body: "Watch a status page, a price or a login page: Secbox loads it in Chromium on your schedule, runs your extractor inside the page, and stores every change as a revision you can diff. With the resource inventory on, a swapped script shows even when the text stays the same.",
      }}
    />
  );
}

export function PageTrackerPage() {
  return (
    <TrackerPage<PageTracker>
      kind={PAGE_TRACKERS}
      details={(t) => (
        <Fact label="Captures">
          {t.target.extractor ? "extractor result" : "visible text"}
          {t.target.resources ? " + scripts and stylesheets" : ""}
        </Fact>
      )}
    />
  );
}
