/// <reference path="../../env.d.ts" />
// The help topics, their Markdown and the README's documentation map cannot drift apart: every topic has its
// pages/<slug>.md (and no file is left without a topic), the bundled text is that file, the README links every
// topic's file and names its /help/<slug> route, and every link of every page (and every README link into them, and
// every tool page's Help link) leads to a topic and a heading that exist.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import GithubSlugger from "github-slugger";
import { resolveHelpHref } from "./links";
import { HELP_MARKDOWN } from "./pages";
import { findTopic, HELP_TOPICS } from "./topics";

const HERE = import.meta.dir;
const ROOT = resolve(HERE, "../../..");
const PAGES_DIR = join(HERE, "pages");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const SOURCE = (slug: string) => readFileSync(join(PAGES_DIR, `${slug}.md`), "utf8");

/** The Markdown without its fenced code blocks (a `# comment` in a shell block is no heading, a `[x](y)` no link). */
const prose = (md: string) => md.replace(/^```[^\n]*\n[\s\S]*?^```\s*$/gm, "");

/** GitHub's heading ids (the ones rehype-slug gives in the app), in order. */
function anchors(md: string): Set<string> {
  const slugger = new GithubSlugger();
  const ids = new Set<string>();
  for (const m of prose(md).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    // Inline formatting does not reach the id: `code` and *emphasis* keep their words only.
    ids.add(slugger.slug(m[1]!.replace(/[`*_]/g, "")));
  }
  return ids;
}

/** Every Markdown link target of the prose (images apart: the app leaves them out, see `images`). */
const links = (md: string) => [...prose(md).matchAll(/(?<!!\[[^\]]*)\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
/** The images' paths (screenshots for readers of the source files). */
const images = (md: string) => [...prose(md).matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]!);

describe("help topics", () => {
  test("every topic has its Markdown file, and every Markdown file is a topic", () => {
    const files = readdirSync(PAGES_DIR)
      .filter((f) => f.endsWith(".md"))
      .sort();
    expect(files).toEqual(HELP_TOPICS.map((t) => `${t.slug}.md`).sort());
    expect(new Set(HELP_TOPICS.map((t) => t.slug)).size).toBe(HELP_TOPICS.length);
  });

  test("the bundled text of each topic is its file, and starts with its one top heading", () => {
    expect(Object.keys(HELP_MARKDOWN).sort()).toEqual(HELP_TOPICS.map((t) => t.slug).sort());
    for (const t of HELP_TOPICS) {
      expect(HELP_MARKDOWN[t.slug]).toBe(SOURCE(t.slug));
      expect(SOURCE(t.slug).startsWith("# ")).toBe(true);
      expect(prose(SOURCE(t.slug)).match(/^# /gm)?.length).toBe(1);
    }
  });

  test("the README's documentation map links every topic's file and names its /help route", () => {
    const missing = HELP_TOPICS.flatMap((t) => [`](web/features/help/pages/${t.slug}.md)`, `/help/${t.slug}\``].filter((s) => !README.includes(s)));
    expect(missing).toEqual([]);
  });

  test("every link in the help pages leads somewhere: a topic and heading that exist, the README, or an address", () => {
    const ids = Object.fromEntries(HELP_TOPICS.map((t) => [t.slug, anchors(SOURCE(t.slug))]));
    const readmeIds = anchors(README);
    // `<a id="…">` targets the README keeps for the sections that moved into the help pages.
    for (const m of README.matchAll(/<a id="([\w-]+)"><\/a>/g)) readmeIds.add(m[1]!);
    const broken: string[] = [];
    for (const t of HELP_TOPICS) {
      for (const href of links(SOURCE(t.slug))) {
        const target = resolveHelpHref(href);
        const where = `${t.slug}.md → ${href}`;
        if (target.kind === "none") broken.push(`${where}: leads nowhere in the app`);
        else if (target.kind === "same-page" && !ids[t.slug]!.has(href.slice(1))) broken.push(`${where}: no such heading`);
        else if (target.kind === "topic") {
          const [, slug, anchor] = /^\/help\/([^#]+)(?:#(.+))?$/.exec(target.to)!;
          if (slug === t.slug) broken.push(`${where}: a link within the page is written "#${anchor}"`);
          if (anchor && !ids[slug!]!.has(anchor)) broken.push(`${where}: ${slug}.md has no such heading`);
        } else if (target.kind === "readme") {
          if (!href.startsWith("../../../../README.md")) broken.push(`${where}: the README is ../../../../README.md from here`);
          const anchor = href.split("#")[1];
          if (anchor && !readmeIds.has(anchor)) broken.push(`${where}: the README has no such heading`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  test("the screenshots a help page shows to readers of its source exist", () => {
    const missing = HELP_TOPICS.flatMap((t) =>
      images(SOURCE(t.slug))
        .filter((src) => !existsSync(resolve(PAGES_DIR, src)))
        .map((src) => `${t.slug}.md → ${src}`),
    );
    expect(missing).toEqual([]);
  });

  test("the README's links into the help pages name headings that exist", () => {
    const broken: string[] = [];
    for (const m of README.matchAll(/\]\(web\/features\/help\/pages\/([a-z0-9-]+)\.md(?:#([\w-]+))?\)/g)) {
      const [, slug, anchor] = m;
      if (!findTopic(slug!)) broken.push(`${slug}.md: not a topic`);
      else if (anchor && !anchors(SOURCE(slug!)).has(anchor)) broken.push(`${slug}.md#${anchor}: no such heading`);
    }
    expect(broken).toEqual([]);
  });

  test("every tool page's Help link names a topic and a heading that exist", () => {
    const found: string[] = [];
    const broken: string[] = [];
    const walk = (dir: string): string[] =>
      readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".tsx") ? [join(dir, e.name)] : [],
      );
    for (const file of walk(resolve(HERE, "../.."))) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/<HelpLink topic=(?:"([a-z0-9-]+)"|\{[^}]*\})(?: section="([\w-]+)")?/g)) {
        // topic={kind.kind === "api" ? "api-trackers" : "page-trackers"}: the topics of the expression (not the kinds).
        const slugs = m[1] ? [m[1]] : [...m[0].matchAll(/"([a-z0-9-]+)"/g)].map((s) => s[1]!).filter((s) => !["api", "page"].includes(s));
        for (const slug of slugs) {
          found.push(slug);
          if (!findTopic(slug)) broken.push(`${file}: no topic ${slug}`);
          else if (m[2] && !anchors(SOURCE(slug)).has(m[2])) broken.push(`${file}: ${slug}.md has no heading ${m[2]}`);
        }
      }
    }
    expect(broken).toEqual([]);
    // The list pages of every tool at least (responders, trackers, certificates, keys, CSP, secrets, tags, scripts).
    expect(new Set(found).size).toBeGreaterThanOrEqual(7);
  });

  test("links resolve as the app needs them", () => {
    expect(resolveHelpHref("./csp.md#what-an-import-keeps")).toEqual({ kind: "topic", to: "/help/csp#what-an-import-keeps" });
    expect(resolveHelpHref("api.md")).toEqual({ kind: "topic", to: "/help/api" });
    expect(resolveHelpHref("./nope.md")).toEqual({ kind: "none" });
    expect(resolveHelpHref("#long-hits")).toEqual({ kind: "same-page", to: "#long-hits" });
    expect(resolveHelpHref("../../../../README.md#security-model")).toEqual({ kind: "readme" });
    expect(resolveHelpHref("http://localhost:7070/api-docs")).toEqual({ kind: "server", to: "/api-docs" });
    expect(resolveHelpHref("https://example.com/x")).toEqual({ kind: "external", to: "https://example.com/x" });
    expect(resolveHelpHref("javascript:alert(1)")).toEqual({ kind: "none" });
    expect(resolveHelpHref("../../../../src/main.ts")).toEqual({ kind: "none" });
  });
});
