// The Markdown of every help topic (and the index's one-line summaries), bundled as text at build time (Bun's
// `with { type: "text" }`): from a checkout the in-memory UI build and in the binary the embedded one carry it, so
// the manual needs no network and no file on disk. Only the help page imports this module, so the text is in its
// lazily loaded chunk, not on the first load.
import api from "./pages/api.md" with { type: "text" };
import apiTrackers from "./pages/api-trackers.md" with { type: "text" };
import certificates from "./pages/certificates.md" with { type: "text" };
import csp from "./pages/csp.md" with { type: "text" };
import data from "./pages/data.md" with { type: "text" };
import email from "./pages/email.md" with { type: "text" };
import pageTrackers from "./pages/page-trackers.md" with { type: "text" };
import responders from "./pages/responders.md" with { type: "text" };
import sandbox from "./pages/sandbox.md" with { type: "text" };
import search from "./pages/search.md" with { type: "text" };
import type { HelpTopicSlug } from "./topics";

export const HELP_MARKDOWN: Record<HelpTopicSlug, string> = {
  responders,
  sandbox,
  "api-trackers": apiTrackers,
  "page-trackers": pageTrackers,
  certificates,
  csp,
  data,
  search,
  email,
  api,
};

/** One line per topic, for the help index. */
export const HELP_SUMMARIES: Record<HelpTopicSlug, string> = {
  responders: "Programmable HTTP endpoints on your own subdomain: matching, scripts, captured requests, cookies, domains, a LAN setup.",
  sandbox: "How responder and tracker scripts run: QuickJS, limits, what a script sees, syntax checked on save.",
  "api-trackers": "Watch an HTTP API on a schedule; the tracker pages (revisions, diffs, logs, Test and Debug); schedules.",
  "page-trackers": "Watch a web page as Chromium renders it: waiting, in-page extractors, the resource inventory, Chromium's sandbox.",
  certificates: "Certificate templates, generating and sharing certificates, fetching a site's chain, stored private keys.",
  csp: "Build, import, serialize, share and evaluate Content-Security-Policy headers.",
  data: "Tags, secrets, scripts and settings; exporting, importing and moving everything you own.",
  search: "Search everything (Ctrl+K): what is matched, in what order, and what it costs.",
  email: "What Secbox emails you, when mail is off, your notification address and unsubscribing.",
  api: "The browsable API docs, errors, a typed client, and calling the API with an API key.",
};
