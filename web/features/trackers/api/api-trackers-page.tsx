// API trackers: the list (trackers/tracker-list-page.tsx) and one tracker's page (trackers/tracker-page.tsx) with
// what is particular to this kind: the words, and how many requests a tracker sends.
import { Code } from "@mantine/core";
import type { ApiTracker } from "../../../api/types";
import { TrackerListPage } from "../tracker-list-page";
import { Fact, TrackerPage } from "../tracker-page";
import { API_TRACKERS } from "./api-trackers-api";

export function ApiTrackersPage() {
  return (
    <TrackerListPage
      kind={API_TRACKERS}
      description="Call HTTP APIs on a schedule, keep the part you care about, and see what changed between runs."
      empty={{
        title: "No API trackers yet",
        body: (
          <>
            Watch a release feed, a price or a status endpoint: Secbox calls it on your schedule, an optional extractor keeps the part you care about,
            and every change is a revision you can diff (and get by email). Scripts can sign requests with your secrets; <Code>Debug</Code> shows
            every step.
          </>
        ),
      }}
    />
  );
}

export function ApiTrackerPage() {
  return (
    <TrackerPage<ApiTracker>
      kind={API_TRACKERS}
      details={(t) => (
        <Fact label="Requests">
          {t.target.requests.length} ·{" "}
          {[t.target.configurator ? "configurator" : "", t.target.extractor ? "extractor" : ""].filter(Boolean).join(" + ") || "no scripts"}
        </Fact>
      )}
    />
  );
}
