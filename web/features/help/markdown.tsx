// A help page's Markdown as React elements, with Mantine's look: react-markdown (GitHub-flavoured through
// remark-gfm: tables, autolinks) never renders raw HTML from the text (`skipHtml`) and keeps its URL filter, so
// nothing in a page can run script or style itself (the UI's CSP forbids inline scripts anyway). Headings get
// GitHub's ids (rehype-slug, github-slugger), so `/help/<topic>#<heading>` and a link to
// `web/features/help/pages/<topic>.md#<heading>` on a code host name the same place.
//
// Links (links.ts decides): `./<topic>.md#x` (how the sources link each other, so they also work when read as
// files) becomes the in-app route `/help/<topic>#x`; `#x` stays on the page; a link to the README, which the server
// does not serve, is shown as text; `http://localhost:7070/…` (the default address the pages use) goes to the same
// path on the server this page came from; any other address is an ordinary link. Images (the screenshots readers of
// the source see) are left out: the page is read inside the app they show.
import { Anchor, Code, Table, Title, Typography } from "@mantine/core";
import type { ReactNode } from "react";
import Markdown, { defaultUrlTransform, type Components } from "react-markdown";
import rehypeSlug from "rehype-slug";
import remarkGfm from "remark-gfm";
import { Link } from "wouter";
import { resolveHelpHref } from "./links";

interface HastNode {
  type: string;
  value?: string;
  children?: HastNode[];
}
const textOf = (n: HastNode | undefined): string => (!n ? "" : n.type === "text" ? (n.value ?? "") : (n.children ?? []).map(textOf).join(""));

function MarkdownLink({ href, children }: { href?: string; children?: ReactNode }) {
  const target = resolveHelpHref(href);
  switch (target.kind) {
    case "topic":
      return (
        <Anchor component={Link} href={target.to}>
          {children}
        </Anchor>
      );
    case "same-page":
    case "server":
    case "external":
      return <Anchor href={target.to}>{children}</Anchor>;
    default:
      // README sections and anything else not served here: the words, without a dead link.
      return <em>{children}</em>;
  }
}

/** A section heading with a link to itself (what to copy to point someone at it). */
function heading(order: 2 | 3 | 4, size: "h3" | "h4" | "h5") {
  return function Heading({ id, children, node }: { id?: string; children?: ReactNode; node?: unknown }) {
    return (
      <Title order={order} size={size} id={id} className="help-heading">
        {children}
        {id && (
          <Anchor href={`#${id}`} className="help-heading-link" aria-label={`Link to “${textOf(node as HastNode)}”`} ml={6} c="dimmed">
            #
          </Anchor>
        )}
      </Title>
    );
  };
}

const components: Components = {
  h1: ({ id, children }) => (
    <Title order={1} size="h2" id={id} className="help-heading">
      {children}
    </Title>
  ),
  h2: heading(2, "h3"),
  h3: heading(3, "h4"),
  h4: heading(4, "h5"),
  a: ({ href, children }) => <MarkdownLink href={href}>{children}</MarkdownLink>,
  img: () => null,
  // A fenced block: Mantine's block code, focusable so that a long line can be scrolled with the keyboard.
  pre: ({ node }) => (
    <Code block tabIndex={0} className="help-code">
      {textOf(node as HastNode).replace(/\n$/, "")}
    </Code>
  ),
  code: ({ children }) => <Code>{children}</Code>,
  table: ({ children }) => (
    <Table.ScrollContainer minWidth={560} type="native" className="help-table">
      <Table striped withTableBorder withColumnBorders verticalSpacing={6} fz="sm">
        {children}
      </Table>
    </Table.ScrollContainer>
  ),
  thead: ({ children }) => <Table.Thead>{children}</Table.Thead>,
  tbody: ({ children }) => <Table.Tbody>{children}</Table.Tbody>,
  tr: ({ children }) => <Table.Tr>{children}</Table.Tr>,
  th: ({ children, style }) => <Table.Th style={style}>{children}</Table.Th>,
  td: ({ children, style }) => <Table.Td style={style}>{children}</Table.Td>,
};

/** One help page's Markdown, rendered. */
export function HelpMarkdown({ source }: { source: string }) {
  return (
    <Typography className="help-page">
      <Markdown remarkPlugins={[remarkGfm]} rehypePlugins={[rehypeSlug]} components={components} skipHtml urlTransform={defaultUrlTransform}>
        {source}
      </Markdown>
    </Typography>
  );
}
