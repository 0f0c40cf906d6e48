import { Anchor, Stack, Text } from "@mantine/core";
import { Link } from "wouter";
import { PageHeader } from "../components/page-header";

export function NotFoundPage() {
  return (
    <Stack>
      <PageHeader title="Page not found" />
      <Text>
        There is no page at this address.{" "}
        <Anchor component={Link} href="/">
          Go to the start page
        </Anchor>
        .
      </Text>
    </Stack>
  );
}
