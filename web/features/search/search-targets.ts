// Where each kind of search result (supplement §20 `types`) lives in the UI, grouped and ordered as the navigation.
// Pure: unit-tested in search-targets.test.ts.

import { db as dbRules } from "../../api/rules.gen";
import type { SearchHit, SearchType } from "../../api/types";

export type { SearchType };

export interface SearchTarget {
  /** The group's heading (the tool's name). */
  group: string;
  href: (id: string) => string;
  /** What a `content` match means for this kind. */
  content?: string;
}

/** In navigation order: the palette shows its groups in this order. */
export const SEARCH_TARGETS: Record<SearchType, SearchTarget> = {
  responder: { group: "Responders", href: (id) => `/responders/${id}`, content: "path" },
  certificateTemplate: { group: "Certificate templates", href: (id) => `/certificates/templates/${id}` },
  privateKey: { group: "Private keys", href: (id) => `/certificates/private-keys?edit=${id}` },
  contentSecurityPolicy: { group: "Content security policies", href: (id) => `/csp/${id}` },
  pageTracker: { group: "Page trackers", href: (id) => `/trackers/pages/${id}`, content: "URL" },
  apiTracker: { group: "API trackers", href: (id) => `/trackers/apis/${id}`, content: "URL" },
  secret: { group: "Secrets", href: (id) => `/secrets?edit=${id}` },
  script: { group: "Scripts", href: (id) => `/scripts/${id}`, content: "source" },
  tag: { group: "Tags", href: (id) => `/tags?edit=${id}` },
};

/** What grouping needs of a result. */
export type SearchItem = Pick<SearchHit, "type" | "id" | "name" | "matched">;

/** Results grouped by tool in navigation order, each group keeping the API's rank order. */
export function groupResults(items: SearchItem[]): { type: SearchType; target: SearchTarget; items: SearchItem[] }[] {
  const order = Object.keys(SEARCH_TARGETS) as SearchType[];
  return order.flatMap((type) => {
    const mine = items.filter((i) => i.type === type);
    return mine.length > 0 ? [{ type, target: SEARCH_TARGETS[type], items: mine }] : [];
  });
}

/** Queries shorter than this match names and ids only (the search API's rule). */
export const CONTENT_MIN = dbRules.MIN_CONTENT_CHARS;

/** What a result's match says next to its name ("matched in source"), or null for a name match. */
export function matchNote(item: SearchItem): string | null {
  if (item.matched === "id") return "id";
  if (item.matched === "content") return `in ${SEARCH_TARGETS[item.type].content ?? "content"}`;
  return null;
}
