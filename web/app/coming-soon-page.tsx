// A tool whose page is not built yet: what it does, and where its API is meanwhile.
import { Anchor, Code, Paper, Stack, Text } from "@mantine/core";
import { Link } from "wouter";
import { PageHeader } from "../components/page-header";
import type { NavItem } from "./nav";

export function ComingSoonPage({ item }: { item: NavItem }) {
  return (
    <Stack>
      <PageHeader title={item.label} description={item.summary} />
      <Paper withBorder p="lg" radius="md">
        <Text size="sm">
          This tool works through the API today; its page here is coming. Meanwhile use <Code>{item.api}</Code> with an API key from{" "}
          <Anchor component={Link} href="/settings">Settings</Anchor> — the <Anchor href="/api-docs">API documentation</Anchor> lists every field and lets you try calls in
          the browser.
        </Text>
      </Paper>
    </Stack>
  );
}
