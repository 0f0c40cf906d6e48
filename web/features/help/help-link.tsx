// The "Help" link of a tool's page header: to that tool's help topic (/help/<topic>, optionally a section of it).
import { Button } from "@mantine/core";
import { Link } from "wouter";
import { HelpIcon } from "../../components/icons";
import { findTopic, helpPath, type HelpTopicSlug } from "./topics";

export function HelpLink({ topic, section }: { topic: HelpTopicSlug; section?: string }) {
  return (
    <Button
      component={Link}
      href={helpPath(topic, section)}
      variant="subtle"
      color="gray"
      size="sm"
      leftSection={<HelpIcon />}
      aria-label={`Help: ${findTopic(topic)!.title}`}
    >
      Help
    </Button>
  );
}
