// Where a link in a help page's Markdown leads inside the app (markdown.tsx renders it; topics.test.ts checks every
// link of every page with it). The sources link each other as files (`./csp.md#x`), so they read the same on a code
// host; in the app that is the route `/help/csp#x`.
import { findTopic, helpPath } from "./topics";

/** Where a link of a help page leads, in the app. */
export type HelpHref =
  | { kind: "topic"; to: string }
  | { kind: "same-page"; to: string }
  | { kind: "readme" }
  | { kind: "server"; to: string }
  | { kind: "external"; to: string }
  | { kind: "none" };

/** Classifies a help page's link target. */
export function resolveHelpHref(href: string | undefined): HelpHref {
  if (!href) return { kind: "none" };
  if (href.startsWith("#")) return { kind: "same-page", to: href };
  const topic = /^(?:\.\/)?([a-z0-9-]+)\.md(?:#([\w-]+))?$/.exec(href);
  if (topic) {
    const t = findTopic(topic[1]!);
    return t ? { kind: "topic", to: helpPath(t.slug, topic[2]) } : { kind: "none" };
  }
  if (/(^|\/)README\.md(#[\w-]*)?$/.test(href)) return { kind: "readme" };
  const local = /^http:\/\/localhost:7070(\/[^\s]*)$/.exec(href);
  if (local) return { kind: "server", to: local[1]! };
  if (/^(https?:|mailto:)/i.test(href)) return { kind: "external", to: href };
  return { kind: "none" };
}
