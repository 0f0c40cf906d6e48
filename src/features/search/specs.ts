// The searchable types (supplement §20) and their search specs, gathered from the features that own the tables: each
// exports its spec as plain data from its own search.ts (never from its store: design.md). With
// platform/db/search.ts's runSearch these are all a search needs — no service, any Db that can read — so a search
// can run wherever a read connection is (the service runs it in-process by default: service.ts).
import type { SearchSpec } from "../../platform/db/search";
import { privateKeySearch, templateSearch } from "../certificates/search";
import { policySearch } from "../csp/search";
import { responderSearch } from "../responders/search";
import { scriptSearch } from "../scripts/search";
import { secretSearch } from "../secrets/search";
import { tagSearch } from "../tags/search";
import { apiTrackerSearch, pageTrackerSearch } from "../trackers/search";

export const SEARCH_TYPES = [
  "tag",
  "secret",
  "script",
  "responder",
  "certificateTemplate",
  "privateKey",
  "contentSecurityPolicy",
  "pageTracker",
  "apiTracker",
] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

export const SEARCH_SPECS: Record<SearchType, SearchSpec> = {
  tag: tagSearch,
  secret: secretSearch,
  script: scriptSearch,
  responder: responderSearch,
  certificateTemplate: templateSearch,
  privateKey: privateKeySearch,
  contentSecurityPolicy: policySearch,
  pageTracker: pageTrackerSearch,
  apiTracker: apiTrackerSearch,
};

/** The specs of `types`, in that order. */
export const specsFor = (types: readonly SearchType[]): SearchSpec[] => types.map((t) => SEARCH_SPECS[t]);
