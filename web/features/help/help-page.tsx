// The help pages: `/help` lists the topics, `/help/<topic>` shows one (its Markdown, pages.ts, rendered by
// markdown.tsx) with an "On this page" list of its sections on wide screens. Loaded lazily (routes.tsx): the
// renderer and the text are this chunk's, not the first load's. A `#section` in the URL is scrolled to when the
// page opens, also after an in-app link from another topic (history.pushState does not scroll by itself).
import { Anchor, Box, Card, Group, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import { useEffect, useLayoutEffect, useRef, useState } from "react";
import { Link } from "wouter";
import { PageHeader } from "../../components/page-header";
import "./help.css";
import { HelpMarkdown } from "./markdown";
import { HELP_MARKDOWN, HELP_SUMMARIES } from "./pages";
import { findTopic, HELP_TOPICS, helpPath } from "./topics";

export function HelpIndexPage() {
  return (
    <Stack gap="lg" maw={1100}>
      <PageHeader title="Help" description="The manual of every tool, served by this server: it needs no network." />
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="sm">
        {HELP_TOPICS.map((t) => (
          <Card key={t.slug} withBorder padding="md" radius="md">
            <Anchor component={Link} href={helpPath(t.slug)} fw={600}>
              {t.title}
            </Anchor>
            <Text size="sm" c="dimmed" mt={4}>
              {HELP_SUMMARIES[t.slug]}
            </Text>
          </Card>
        ))}
      </SimpleGrid>
      <Text size="sm">
        Every operation of the API, with its parameters and answers, is in the <Anchor href="/api-docs">API docs</Anchor>. How to configure, secure
        and run the server (several instances, the CLI) is in the README that comes with Secbox.
      </Text>
    </Stack>
  );
}

interface Section {
  id: string;
  text: string;
}

export function HelpTopicPage({ params }: { params: { topic: string } }) {
  const topic = findTopic(params.topic);
  const body = useRef<HTMLDivElement>(null);
  const [sections, setSections] = useState<Section[]>([]);

  // The sections, read from what was rendered (the ids are rehype-slug's).
  useLayoutEffect(() => {
    const root = body.current;
    setSections(
      root ? [...root.querySelectorAll<HTMLElement>("h2[id]")].map((h) => ({ id: h.id, text: (h.textContent ?? "").replace(/#$/, "").trim() })) : [],
    );
  }, [topic?.slug]);

  useEffect(() => {
    const id = decodeURIComponent(window.location.hash.slice(1));
    const target = id ? document.getElementById(id) : null;
    if (target) target.scrollIntoView();
    else window.scrollTo(0, 0);
  }, [topic?.slug]);

  if (!topic) {
    return (
      <Stack>
        <PageHeader title="Help topic not found" />
        <Text>
          There is no help topic “{params.topic}”.{" "}
          <Anchor component={Link} href="/help">
            See every help topic
          </Anchor>
          .
        </Text>
      </Stack>
    );
  }
  return (
    <Group align="flex-start" wrap="nowrap" gap="xl">
      <Box style={{ flex: "1 1 0", minWidth: 0 }} maw={960}>
        <Anchor component={Link} href="/help" size="sm">
          ← Help
        </Anchor>
        <div ref={body}>
          <HelpMarkdown source={HELP_MARKDOWN[topic.slug]} />
        </div>
      </Box>
      {sections.length > 2 && (
        <Box component="nav" aria-labelledby="help-toc-title" className="help-toc" visibleFrom="lg" w={240} style={{ flexShrink: 0 }}>
          <Title order={2} size="h6" id="help-toc-title" mb={6}>
            On this page
          </Title>
          <Stack gap={4}>
            {sections.map((s) => (
              <Anchor key={s.id} href={`#${s.id}`} size="sm">
                {s.text}
              </Anchor>
            ))}
          </Stack>
        </Box>
      )}
    </Group>
  );
}
