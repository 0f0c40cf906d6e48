// The help topics: one per tool reference, in the order the help index lists them. Only slugs and titles live here
// (this module is on the first load: each tool page's Help link uses it); the Markdown itself is in pages/<slug>.md,
// loaded with the help page's own chunk (pages.ts, with the index's one-line summaries). The README's
// "Documentation" map links every pages/<slug>.md; topics.test.ts keeps the three from drifting apart.
export const HELP_TOPICS = [
  { slug: "responders", title: "Webhook responders" },
  { slug: "sandbox", title: "Script sandbox" },
  { slug: "api-trackers", title: "API trackers" },
  { slug: "page-trackers", title: "Page trackers" },
  { slug: "certificates", title: "Certificates and private keys" },
  { slug: "csp", title: "Content security policies" },
  { slug: "data", title: "Your data" },
  { slug: "search", title: "Search" },
  { slug: "email", title: "Email" },
  { slug: "api", title: "API: docs, first user and API key" },
] as const;

export type HelpTopicSlug = (typeof HELP_TOPICS)[number]["slug"];
export type HelpTopic = (typeof HELP_TOPICS)[number];

export const helpPath = (slug: HelpTopicSlug, anchor?: string) => `/help/${slug}${anchor ? `#${anchor}` : ""}`;

export const findTopic = (slug: string): HelpTopic | undefined => HELP_TOPICS.find((t) => t.slug === slug);
