// Tag colours (supplement §6): the named ones map to Mantine palette colours; "#rgb"/"#rrggbb" are used as given.
import { tags as tagRules } from "../../api/rules.gen";

export const TAG_COLORS = tagRules.TAG_COLORS;
export type NamedTagColor = (typeof TAG_COLORS)[number];

export const TAG_COLOR_LABELS: Record<NamedTagColor, string> = {
  default: "Default (grey)",
  primary: "Primary (blue)",
  success: "Success (green)",
  accent: "Accent (violet)",
  warning: "Warning (orange)",
  danger: "Danger (red)",
};

const PALETTE: Record<NamedTagColor, string> = {
  default: "gray",
  primary: "blue",
  success: "green",
  accent: "violet",
  warning: "orange",
  danger: "red",
};

export const isNamedColor = (c: string): c is NamedTagColor => (TAG_COLORS as readonly string[]).includes(c);
export const HEX_COLOR = tagRules.HEX_COLOR_RE;

/** A Mantine colour for a tag colour value. */
export const mantineColor = (c: string) => (isNamedColor(c) ? PALETTE[c] : HEX_COLOR.test(c) ? c : "gray");
