// Home: every tool by area with one line on what it is for.
import { Anchor, Card, Group, SimpleGrid, Stack, Text, Title } from "@mantine/core";
import { Link } from "wouter";
import { PageHeader } from "../components/page-header";
import { NAV } from "./nav";

export function HomePage() {
  return (
    <Stack gap="lg">
      <PageHeader title="Secbox" description="Your self-hosted security toolbox. Pick a tool:" />
      {NAV.map((area) => (
        <section key={area.label} aria-labelledby={`area-${area.label}`}>
          <Title order={2} size="h4" mb="xs" id={`area-${area.label}`}>
            {area.label}
          </Title>
          <SimpleGrid cols={{ base: 1, sm: 2, lg: 3 }} spacing="sm">
            {area.items.map((item) => (
              <Card key={item.path} withBorder padding="md" radius="md">
                <Group justify="space-between" wrap="nowrap" gap="xs" align="flex-start">
                  <Anchor component={Link} href={item.path} fw={600}>
                    {item.label}
                  </Anchor>
                </Group>
                <Text size="sm" c="dimmed" mt={4}>
                  {item.summary}
                </Text>
              </Card>
            ))}
          </SimpleGrid>
        </section>
      ))}
    </Stack>
  );
}
