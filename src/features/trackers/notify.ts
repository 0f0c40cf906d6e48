// Tracker emails (supplement §18.2): change detected, check failing, check recovered. Routing, unsubscribe headers
// and the outbox belong to the notification-email feature; this file only writes subjects and bodies.
import type { Notification } from "../notification-email/service";
import { limitLines } from "./revisions";
import type { TrackerKind } from "./core-types";

const KIND_LABEL: Record<TrackerKind, string> = { api: "API tracker", page: "Page tracker" };

/** UI page of a tracker (supplement §18.2 links). */
export const trackerLink = (publicUrl: string, kind: TrackerKind, id: string) => `${publicUrl}/trackers/${kind}/${id}`;

const utc = (sec: number) => new Date(sec * 1000).toISOString().replace(".000Z", "Z");

export interface TrackerRef {
  id: string;
  kind: TrackerKind;
  name: string;
}

export function changeEmail(t: TrackerRef, at: number, diff: string, publicUrl: string): Notification {
  return {
    kind: "tracker_change",
    subject: `[Secbox] Change detected: "${t.name}"`,
    content: {
      heading: `Change detected: ${t.name}`,
      paragraphs: [`${KIND_LABEL[t.kind]} "${t.name}" recorded a new revision at ${utc(at)}.`, "Changes against the previous revision:"],
      preformatted: limitLines(diff),
      link: { label: "Open the tracker", url: trackerLink(publicUrl, t.kind, t.id) },
    },
  };
}

export function failingEmail(t: TrackerRef, failures: number, lastError: string, at: number, publicUrl: string): Notification {
  return {
    kind: "tracker_failing",
    subject: `[Secbox] Check failing: "${t.name}"`,
    content: {
      heading: `Check failing: ${t.name}`,
      paragraphs: [
        `The last ${failures} scheduled checks of ${KIND_LABEL[t.kind]} "${t.name}" failed (latest at ${utc(at)}).`,
        "You will get one more email when it works again. Last error:",
      ],
      preformatted: lastError,
      link: { label: "Open the tracker", url: trackerLink(publicUrl, t.kind, t.id) },
    },
  };
}

export function recoveredEmail(t: TrackerRef, at: number, publicUrl: string): Notification {
  return {
    kind: "tracker_recovered",
    subject: `[Secbox] Check recovered: "${t.name}"`,
    content: {
      heading: `Check recovered: ${t.name}`,
      paragraphs: [`${KIND_LABEL[t.kind]} "${t.name}" works again: the check at ${utc(at)} succeeded.`],
      link: { label: "Open the tracker", url: trackerLink(publicUrl, t.kind, t.id) },
    },
  };
}
