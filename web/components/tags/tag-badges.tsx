import { Badge, Group, useMantineTheme, type MantineTheme } from "@mantine/core";
import { HEX_COLOR, mantineColor } from "./colors";

/** The badge's background as hex: a palette colour at the theme's filled shade, or the tag's own hex. */
function backgroundHex(color: string, theme: MantineTheme): string {
  const c = mantineColor(color);
  if (HEX_COLOR.test(c)) return c.length === 4 ? `#${c[1]}${c[1]}${c[2]}${c[2]}${c[3]}${c[3]}` : c;
  // Shade 9: dark enough for white text on every palette colour but orange (which gets black).
  return theme.colors[c]?.[9] ?? "#495057";
}

const luminance = (hex: string) => {
  const ch = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
  return 0.2126 * ch[0]! + 0.7152 * ch[1]! + 0.0722 * ch[2]!;
};

/** Black or white, whichever contrasts more with `hex` (WCAG relative luminance): orange and light custom colours get black. */
export function readableOn(hex: string): "#000" | "#fff" {
  const l = luminance(hex);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? "#000" : "#fff";
}

export function TagBadge({ tag }: { tag: { name: string; color: string } }) {
  const theme = useMantineTheme();
  const bg = backgroundHex(tag.color, theme);
  return (
    <Badge
      color={bg}
      c={readableOn(bg)}
      variant="filled"
      tt="none"
      radius="sm"
      styles={{ root: { flexShrink: 0, maxWidth: "none" }, label: { overflow: "visible" } }}
    >
      {tag.name}
    </Badge>
  );
}

export function TagBadges({ tags }: { tags: { id: string; name: string; color: string }[] }) {
  if (tags.length === 0) return null;
  return (
    <Group gap={4} wrap="wrap">
      {tags.map((t) => (
        <TagBadge key={t.id} tag={t} />
      ))}
    </Group>
  );
}
